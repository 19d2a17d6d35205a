"""DVC reads validated params: a stale dvc.yaml fails before any stage runs; defaults are enough."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import dvc_ran, dvc_run, sha256

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def _edit(root: Path, edit: callable) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(params)
    path.write_text(yaml.safe_dump(params), encoding="utf-8")


def test_a_setting_added_without_rendering_fails_before_any_output_is_deleted(dvc_project: Path) -> None:
    root = dvc_project
    assert dvc_ran(dvc_run(["dvc", "repro", "ingest"], root)) == {"ingest"}
    corpus = sha256(root / "data/ingest/corpus.parquet")

    def add_setting_and_resplit(params: dict) -> None:
        params["privatize"]["settings"]["mdp_low"] = {"kind": "metric_dp", "index": "w2v", "epsilon": 5}
        params["ingest"]["split"]["test"] = 0.3  # ingest would re-run (deleting its outputs first) if DVC got there
    _edit(root, add_setting_and_resplit)

    failed = dvc_run(["dvc", "repro"], root, check=False)
    assert "textsift dvc render" in failed and "privatize@mdp_low" in failed
    assert dvc_ran(failed) == set()  # the params stage failed first: no stage ran, nothing was deleted
    assert sha256(root / "data/ingest/corpus.parquet") == corpus

    dvc_run(["textsift", "dvc", "render"], root)
    status = dvc_run(["dvc", "status"], root)
    assert "ingest" in status and "privatize@mdp_low" in status


def test_a_params_file_relying_on_defaults_runs_under_dvc(dvc_project: Path) -> None:
    root = dvc_project
    sparse = {"seed": 7, "device": "cpu", "ingest": {"demo": {"n_docs": 60}}}  # no quality, detectors, ...
    (root / "params.yaml").write_text(yaml.safe_dump(sparse), encoding="utf-8")
    dvc_run(["textsift", "dvc", "render"], root)
    ran = dvc_run(["dvc", "repro", "ingest"], root)
    assert dvc_ran(ran) == {"ingest"}
    rendered = yaml.safe_load((root / "dvc.params.yaml").read_text(encoding="utf-8"))
    assert rendered["quality"] and rendered["ingest"]["demo"]["n_docs"] == 60  # defaults filled in, edits kept
    status = dvc_run(["dvc", "status", "ingest"], root)
    assert "changed" not in status.replace("always changed", "")
