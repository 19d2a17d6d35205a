"""DVC reads validated params: defaults are enough (a stale dvc.yaml failing before any stage runs is in
test_dvc_repro, on its reproduced project)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import dvc_ran, dvc_run

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


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
