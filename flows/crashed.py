"""A killed pipeline's Prefect runs, marked CRASHED by the next run in the same project.

A flow killed with ``kill -9`` (or by the OOM killer, or a CI time limit) reports nothing: its flow run and
the task runs it had started stay RUNNING in Prefect's database for good, and the UI shows a run in
progress that will never end. The project's run record names the flow run holding the project; the record
a killed run leaves is kept (:func:`textsift.locks.take_killed_runs`) until the next flow run marks that flow
run and its unfinished task runs CRASHED, as it marks the killed run's MLflow runs KILLED.
"""

from __future__ import annotations

from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.exceptions import ObjectNotFound
from prefect.states import Crashed

REASON = "its process died without reporting (killed); marked by the next run in the project"


def mark_crashed(flow_run_id: str) -> int:
    """Mark the flow run and its unfinished task runs CRASHED; how many runs changed (0 if all had ended)."""
    marked = 0
    with get_client(sync_client=True) as client:
        try:
            flow_run = client.read_flow_run(UUID(flow_run_id))
        except ObjectNotFound:  # another Prefect database (a temporary API's was reset): nothing to mark here
            return 0
        if flow_run.state is None or not flow_run.state.is_final():
            client.set_flow_run_state(flow_run.id, Crashed(message=REASON), force=True)
            marked += 1
        task_runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id])))
        for task_run in task_runs:
            if task_run.state is None or not task_run.state.is_final():
                client.set_task_run_state(task_run.id, Crashed(message=REASON), force=True)
                marked += 1
    return marked
