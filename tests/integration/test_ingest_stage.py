"""The ingest stage on bad input: a clear error, rejects kept, no half-written corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from mlflow.tracking import MlflowClient

from tests.integration.conftest import make_project
from textsift.config import TrackingParams
from textsift.errors import InputError
from textsift.locks import RUN_RECORD
from textsift.runner import run_stage
from textsift.tracking import resolve_uri

pytestmark = pytest.mark.integration
SECRET = "Zebulon Quartermaine"
SOURCE = {"kind": "file", "path": "input.jsonl", "id_field": "id"}


def _write_input(root: Path, n_good: int, n_bad: int) -> None:
    good = [{"id": f"g{i}", "text": f"good review {i} {SECRET}", "label": "pos" if i % 2 else "neg"}
            for i in range(n_good)]
    bad = [{"id": f"b{i}", "text": f"{SECRET} but no label", "label": None} for i in range(n_bad)]
    lines = [json.dumps(row) for row in good + bad]
    (root / "input.jsonl").write_text("\n".join(lines), encoding="utf-8")


def test_too_many_rejects_fail_with_counts_and_ids_but_no_text(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", ingest__source=SOURCE, ingest__max_reject_fraction=0.1)
    _write_input(root, n_good=40, n_bad=10)
    with pytest.raises(InputError) as excinfo:
        run_stage("ingest", root=root)
    message = str(excinfo.value)
    assert "10 of 50 records rejected" in message and "missing_label" in message and "b0" in message
    assert SECRET not in message
    rejects = pq.read_table(root / "data/ingest/rejects.parquet").to_pylist()
    assert sorted(r["doc_id"] for r in rejects) == sorted(f"b{i}" for i in range(10))
    assert all(SECRET.encode() in r["raw"] for r in rejects)  # originals kept locally, nothing lost
    assert not (root / "data/ingest/corpus.parquet").exists()  # no corpus a later stage could trust
    client = MlflowClient(resolve_uri(TrackingParams(), root))
    runs = client.search_runs([client.get_experiment_by_name("textsift").experiment_id])
    assert [r.info.status for r in runs] == ["FAILED"]


def test_rejects_below_the_limit_are_reported_and_the_rest_ingested(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", ingest__source=SOURCE, ingest__max_reject_fraction=0.1)
    _write_input(root, n_good=60, n_bad=3)
    metrics = run_stage("ingest", root=root)
    assert metrics["docs.accepted"] == 60 and metrics["rejected.missing_label"] == 3
    assert pq.read_table(root / "data/ingest/corpus.parquet").num_rows == 60


def test_cli_stage_log_is_quiet_and_outputs_are_group_readable(project: Path) -> None:
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "textsift", "stage", "ingest", "--root", str(project)],
                          capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 0, done.stderr[-2000:]
    noisy = [line for line in done.stderr.splitlines() if " INFO " in line and " textsift: " not in line]
    assert noisy == []  # GX's and MLflow's routine INFO lines stay out of a run's log
    for output in ("data/ingest/corpus.parquet", "data/ingest/rejects.parquet", "metrics/ingest.json"):
        assert (project / output).stat().st_mode & 0o777 == 0o644, output
    # the process left without the interpreter's teardown (cli.main): nothing it owed was lost
    printed = json.loads(done.stdout)
    assert printed == json.loads((project / "metrics/ingest.json").read_text(encoding="utf-8"))
    client = MlflowClient(resolve_uri(TrackingParams(), project))
    [stage_run] = client.search_runs([client.get_experiment_by_name("textsift").experiment_id])
    assert stage_run.info.status == "FINISHED" and "stage.wall_seconds" in stage_run.data.metrics  # logged last
    assert {name: stage_run.data.metrics[name] for name in printed} == printed
    assert not (project / RUN_RECORD).exists()


def test_a_rerun_removes_what_a_killed_run_left_beside_its_outputs(tmp_path: Path) -> None:
    """A writer killed mid-write (SIGKILL: no finally) leaves `.corpus.parquet.<random>.tmp`; the next successful run
    of the stage no longer leaves it there (issue 22, item 7)."""
    root = make_project(tmp_path / "p", ingest__source=SOURCE, ingest__max_reject_fraction=0.5)
    _write_input(root, n_good=40, n_bad=1)
    folder = root / "data/ingest"
    folder.mkdir(parents=True)
    left = [folder / ".corpus.parquet.k1ll3d.tmp", folder / ".rejects.parquet.x.tmp"]
    for path in left:
        path.write_bytes(b"half a parquet file")
    (folder / ".unrelated.tmp").write_bytes(b"not ours")
    run_stage("ingest", root=root)
    assert not any(path.exists() for path in left)
    assert (folder / ".unrelated.tmp").exists() and (folder / "corpus.parquet").exists()
