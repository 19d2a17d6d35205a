"""Run a command in its own process group; when it ends, however it ends, stop what it left behind.

``make test`` runs pytest through this: a test killed at its time limit, or a worker that dies, can leave
servers it started (Prefect's temporary API, ``dvc repro``'s stage processes) running
for good. Everything the command started stays in its process group unless it asks for a new session, so
terminating the group after the command exits stops them (SIGTERM, then SIGKILL after ``GRACE_S``).

Usage: python -m tests.reap -- COMMAND [ARGS...]; exits with the command's status.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

GRACE_S = 5.0


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def reap(pgid: int) -> None:
    """Terminate every process left in group ``pgid``; kill those still there after ``GRACE_S``."""
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and _group_alive(pgid):
            time.sleep(0.1)


def main(argv: list[str]) -> int:
    """Run ``argv`` (after an optional ``--``) as a new process group leader; reap the group; its status."""
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print(__doc__, file=sys.stderr)
        return 2
    proc = subprocess.Popen(command, start_new_session=True)
    for sig in (signal.SIGTERM, signal.SIGHUP):  # a CI time limit stops us: stop the command, then reap
        signal.signal(sig, lambda number, _frame: proc.send_signal(number))
    try:
        status = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        status = proc.wait()
    finally:
        reap(proc.pid)
    return status if status >= 0 else 128 - status  # killed by a signal: the shell's convention


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
