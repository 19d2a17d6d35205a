"""A failed flow run notifies the webhook in TEXTSIFT_FAILURE_WEBHOOK (a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from flows.notify import WEBHOOK_ENV, error_class, failure_payload

pytestmark = pytest.mark.integration


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict]]]:
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook", received
    server.shutdown()


def test_a_failed_run_posts_its_name_state_and_reason(webhook: tuple[str, list[dict]], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.pipeline import pipeline

    url, received = webhook
    monkeypatch.setenv(WEBHOOK_ENV, url)
    (tmp_path / "params.yaml").write_text("privatize:\n  settings:\n    bad: {kind: metric_dp, index: w2v, "
                                          "epsilon: -1}\n", encoding="utf-8")
    state = pipeline(root=str(tmp_path), return_state=True)
    assert state.is_failed()
    assert len(received) == 1
    body = received[0]
    assert body["state"] == "Failed" and body["flow_run_id"] == str(state.state_details.flow_run_id)
    assert body["text"].startswith(f"textsift pipeline run {body['flow_run_name']} failed: ConfigError")
    assert body["error"] == "ConfigError" and "epsilon" not in json.dumps(body)  # the class, never the message


def test_no_webhook_configured_sends_nothing_and_an_unreachable_one_is_only_logged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from flows.notify import notify_failure

    class Run:
        name, id = "calm-fox", "r1"

    class State:
        name, message = "Crashed", "worker lost\nsecond line"

        def result(self, raise_on_failure: bool) -> BaseException:
            return RuntimeError("a message quoting data")

    monkeypatch.delenv(WEBHOOK_ENV, raising=False)
    notify_failure(None, Run(), State())  # nothing configured: nothing happens
    monkeypatch.setenv(WEBHOOK_ENV, "http://127.0.0.1:9/unreachable")
    notify_failure(None, Run(), State())
    assert "failure webhook not reached" in caplog.text
    assert failure_payload("calm-fox", "r1", "Crashed", "RuntimeError")["text"] == (
        "textsift pipeline run calm-fox crashed: RuntimeError (details in the run's logs)")
    assert error_class(State()) == "RuntimeError"
