"""Prefect's temporary API dies with the process that started it, even one killed without clean-up."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

pytestmark = pytest.mark.integration
DIES_HARD = ("import os; from flows.temporary_api import start_temporary_api; "
             "print(start_temporary_api(), flush=True); os._exit(1)")


def test_the_server_stops_when_its_process_is_killed(tmp_path) -> None:
    # the session's Prefect home: its database holds Prefect's schema once a server started on it (a new home's
    # server migrated a new database first, ~10 s of CPU)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    proc = subprocess.run([sys.executable, "-c", DIES_HARD], capture_output=True, text=True, env=env, timeout=180,
                          check=False, stdin=subprocess.DEVNULL)
    server = int(proc.stdout.split()[-1])
    deadline = time.monotonic() + 60
    while psutil.pid_exists(server) and psutil.Process(server).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the temporary API outlived the process that started it"
        time.sleep(0.2)
