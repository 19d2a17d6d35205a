"""Prefect's temporary local API, started up front and tied to the life of this process.

Without a server (no ``PREFECT_API_URL``) Prefect starts a uvicorn subprocess on the first API
call and stops it in an ``atexit`` hook. A run killed with ``kill -9`` (or by the OOM killer)
runs no hook, and the server lived on for good. Here the server is started explicitly and a
small watchdog process is given the read end of a pipe: when this process dies, however it
dies, the kernel closes the write end, the watchdog reads end-of-file and stops the server.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

WATCHDOG = """
import sys
import psutil
server = psutil.Process(int(sys.argv[1]))
sys.stdin.buffer.read()  # returns when the process that started us has exited, however it died
try:
    server.terminate()
    server.wait(5)
except psutil.TimeoutExpired:
    server.kill()
except psutil.NoSuchProcess:
    pass
"""

_watchdogs: list[subprocess.Popen[Any]] = []  # kept referenced: their pipes must stay open while we live


def start_temporary_api() -> int | None:
    """Start the temporary API (unless a server is configured) with its watchdog; return the server's pid."""
    if os.environ.get("PREFECT_API_URL"):
        return None
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")  # busy 2-core machines
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the singleton Prefect's client uses when no server is configured
    server.start()
    if server.server_process is None:
        return None
    pid = server.server_process.pid
    if not _watchdogs:
        _watchdogs.append(subprocess.Popen([sys.executable, "-c", WATCHDOG, str(pid)], stdin=subprocess.PIPE,
                                           start_new_session=True))
    return pid
