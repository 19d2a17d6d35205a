"""``textsift serve`` leaves no model copy in the temporary folder: not after SIGTERM, not after a failed start."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import tiny_params
from textsift.cli import app

# the serve command's lifetime around a stand-in app: a copy of the "model" in served_copy(), then uvicorn
SERVER = """
import sys
import uvicorn
from fastapi import FastAPI
from textsift.serving.model import served_copy

with served_copy() as copy:
    (copy / "model.bin").write_bytes(b"0" * 1000)
    uvicorn.run(FastAPI(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(tmp: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen([sys.executable, "-c", SERVER, str(port)], env=env, stderr=subprocess.PIPE)


def _copies(tmp: Path) -> list[str]:
    """The served copies in ``tmp`` (torch, imported on the way, keeps a cache folder there too)."""
    return [p.name[:15] for p in tmp.glob("textsift-serve-*")]


def _wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"the server did not start: {process.stderr.read().decode() if process.stderr else ''}")


def test_sigterm_stops_the_server_and_removes_its_model_copy(tmp_path: Path) -> None:
    port = _free_port()
    server = _serve(tmp_path, port)
    _wait_until_listening(port, server)
    assert _copies(tmp_path) == ["textsift-serve-"]  # the copy, while it serves
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=30) == 128 + signal.SIGTERM
    assert _copies(tmp_path) == []


def test_a_server_that_cannot_bind_removes_its_model_copy(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = _serve(tmp_path, taken.getsockname()[1])
        assert server.wait(timeout=60) != 0
    assert _copies(tmp_path) == []


def test_a_serve_command_that_fails_to_load_its_model_leaves_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(tiny_params()), encoding="utf-8")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setenv("TEXTSIFT_SERVE_TOKEN", "s" * 20)
    result = CliRunner().invoke(app, ["serve", "--root", str(tmp_path), "--model", "models:/absent@recommended"])
    assert result.exit_code == 2 and "no model at models:/absent@recommended" in result.output
    assert _copies(temporary) == []
