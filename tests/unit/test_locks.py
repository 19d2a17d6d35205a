"""The project's run record: what a killed run leaves is kept until a flow run handles it."""

from __future__ import annotations

import json
from pathlib import Path

from textsift.locks import RUN_RECORD, project_run, take_killed_runs


def test_a_killed_runs_record_outlives_later_lock_holders_until_handed_over(tmp_path: Path) -> None:
    """A killed flow's record (its flow run) must survive an ad-hoc stage run taking the lock before the next flow."""
    (tmp_path / RUN_RECORD).parent.mkdir(parents=True)
    (tmp_path / RUN_RECORD).write_text(json.dumps({"owner": "host:1:2", "flow_run_id": "f-1"}))  # left by a kill
    with project_run(tmp_path):  # e.g. `textsift stage ingest`
        pass
    with project_run(tmp_path, flow_run_id="f-2"):  # the next flow run
        assert [r["flow_run_id"] for r in take_killed_runs(tmp_path)] == ["f-1"]
    assert take_killed_runs(tmp_path) == [] and not (tmp_path / RUN_RECORD).exists()
