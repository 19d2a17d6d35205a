"""`make test`'s reaper stops what a dead test process left behind (a timed-out test's servers lived on)."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

# a "test process" that starts a long-lived server, tells its pid, and dies without any clean-up
ORPHANING = ("import os, subprocess, sys; server = subprocess.Popen([sys.executable, '-c', 'import time; "
             "time.sleep(120)'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
             "print(server.pid, flush=True); os._exit(3)")


def _gone(pid: int, within_s: float = 15.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.1)
    return False


def test_the_reaper_stops_the_servers_a_dead_process_left_and_keeps_its_status() -> None:
    proc = subprocess.run([sys.executable, "-m", "tests.reap", "--", sys.executable, "-c", ORPHANING],
                          capture_output=True, text=True, timeout=60, check=False)
    server = int(proc.stdout.split()[0])
    assert proc.returncode == 3
    assert _gone(server)


def test_without_the_reaper_the_server_outlives_its_parent() -> None:
    """The failure the reaper exists for (and proof the test above can fail)."""
    proc = subprocess.run([sys.executable, "-c", ORPHANING], capture_output=True, text=True, timeout=60,
                          check=False)
    server = int(proc.stdout.split()[0])
    try:
        assert not _gone(server, within_s=1.0)
    finally:
        psutil.Process(server).kill()


def test_a_terminated_reaper_stops_the_command_and_what_it_started() -> None:
    """A CI time limit sends SIGTERM to the reaper: the test process and its server must not outlive it."""
    import signal

    reaper = subprocess.Popen([sys.executable, "-m", "tests.reap", "--", sys.executable, "-c",
                               ORPHANING.replace("os._exit(3)", "import time; time.sleep(120)")],
                              stdout=subprocess.PIPE, text=True)
    server = int(reaper.stdout.readline())
    reaper.send_signal(signal.SIGTERM)
    assert reaper.wait(timeout=30) != 0
    assert _gone(server)
