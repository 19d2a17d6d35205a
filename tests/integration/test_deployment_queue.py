"""Scheduled runs queue instead of failing: the deployment ``prefect.yaml`` declares (and ``python -m
flows.deployments`` serves) lets one run at a time, and a run due while another runs waits for its slot.

Against the real Prefect API (the session's temporary server): two runs of the deployment, the first RUNNING;
the server's orchestration puts the second in ``AwaitingConcurrencySlot`` (not failed, not cancelled), and lets it
start once the first has finished.
"""

from __future__ import annotations

import uuid

import pytest
from prefect.client.orchestration import get_client
from prefect.states import Completed, Pending, Running

from flows.deployments import declared
from flows.pipeline import pipeline

pytestmark = pytest.mark.integration


def test_a_run_due_while_another_runs_waits_for_it_then_starts() -> None:
    spec = declared()
    assert spec["concurrency"].limit == 1 and spec["concurrency"].collision_strategy.value == "ENQUEUE"
    deployment = pipeline.to_deployment(name=f"queue-{uuid.uuid4().hex[:8]}", cron=spec["cron"],
                                        parameters=spec["parameters"], concurrency_limit=spec["concurrency"])
    deployment_id = deployment.apply()
    with get_client(sync_client=True) as client:
        first, second = (client.create_flow_run_from_deployment(deployment_id) for _ in range(2))
        client.set_flow_run_state(first.id, Pending())
        client.set_flow_run_state(first.id, Running())
        client.set_flow_run_state(second.id, Pending())
        waiting = client.read_flow_run(second.id).state
        assert waiting.name == "AwaitingConcurrencySlot" and waiting.is_scheduled()
        client.set_flow_run_state(first.id, Completed())
        client.set_flow_run_state(second.id, Pending())
        assert client.read_flow_run(second.id).state.is_pending()
