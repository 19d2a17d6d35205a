"""Failure notification of flow runs: a JSON POST to the webhook in ``TEXTSIFT_FAILURE_WEBHOOK``.

The body is Slack/Teams-compatible (``{"text": ...}``) plus the flow run's id, name and state. It
holds the failure's message, which for textsift's own errors names stages, keys, files and counts,
never document text. A webhook that cannot be reached is logged and never masks the failure itself.
With a Prefect server, an automation on "flow run failed" does the same without this variable
(infra/README.md).
"""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from typing import Any

WEBHOOK_ENV = "TEXTSIFT_FAILURE_WEBHOOK"
MAX_MESSAGE = 500
log = logging.getLogger("textsift")


def failure_payload(flow_run_name: str, flow_run_id: str, state_name: str, message: str | None) -> dict[str, str]:
    """The JSON body: one readable line in ``text`` (the message's lines joined, cut at 500 characters),
    and the run's id, name and state."""
    reason = " ".join((message or "").split())[:MAX_MESSAGE] or "no message"
    return {"text": f"textsift pipeline run {flow_run_name} {state_name.lower()}: {reason}",
            "flow_run_id": flow_run_id, "flow_run_name": flow_run_name, "state": state_name}


def notify_failure(_flow: Any, flow_run: Any, state: Any) -> None:
    """Prefect ``on_failure``/``on_crashed`` hook: POST the payload when ``TEXTSIFT_FAILURE_WEBHOOK`` is set."""
    url = os.environ.get(WEBHOOK_ENV)
    if not url:
        return
    body = json.dumps(failure_payload(flow_run.name, str(flow_run.id), state.name, state.message)).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10):
            pass
    except OSError as err:
        log.warning("failure webhook not reached (%s): %s", type(err).__name__, err)
