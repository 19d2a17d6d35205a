"""Failure notification of flow runs: a JSON POST to the webhook in ``TEXTSIFT_FAILURE_WEBHOOK``.

The body is Slack/Teams-compatible (``{"text": ...}``) plus the flow run's id, name, state and the
error's class (``ConfigError``, ``InputError``, ...) — never the exception's text: an error raised by a
library can quote data (an id column holding text, a value), and a webhook leaves the trust boundary.
The reason is in the run's logs. A webhook that cannot be reached is logged and never masks the failure.
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
log = logging.getLogger("textsift")


def failure_payload(flow_run_name: str, flow_run_id: str, state_name: str, error: str | None) -> dict[str, str]:
    """The JSON body: one readable line in ``text`` and the run's id, name, state and error class (no message)."""
    kind = error or "no exception"
    return {"text": f"textsift pipeline run {flow_run_name} {state_name.lower()}: {kind} (details in the run's logs)",
            "flow_run_id": flow_run_id, "flow_run_name": flow_run_name, "state": state_name, "error": kind}


def error_class(state: Any) -> str | None:
    """The class name of the exception a failed state holds, or None (a crash may hold none)."""
    try:
        result = state.result(raise_on_failure=False)
    except Exception:  # noqa: BLE001 - a crashed run's result may not be retrievable at all
        return None
    return type(result).__name__ if isinstance(result, BaseException) else None


def notify_failure(_flow: Any, flow_run: Any, state: Any) -> None:
    """Prefect ``on_failure``/``on_crashed`` hook: POST the payload when ``TEXTSIFT_FAILURE_WEBHOOK`` is set."""
    url = os.environ.get(WEBHOOK_ENV)
    if not url:
        return
    body = json.dumps(failure_payload(flow_run.name, str(flow_run.id), state.name, error_class(state))).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10):
            pass
    except OSError as err:
        log.warning("failure webhook not reached (%s): %s", type(err).__name__, err)
