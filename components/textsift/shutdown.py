"""SIGTERM as a clean exit: what a command holds on disk (temporary files and folders) is removed when it is stopped.

SIGTERM's default action ends the process at once: no ``finally`` runs, so a streamed output's temporary file or a
served model's downloaded copy stays behind. Inside :func:`sigterm_exits` it raises ``SystemExit(143)`` (128 + 15,
the status a shell reports for SIGTERM) in the main thread instead, as Ctrl-C raises KeyboardInterrupt: context
managers unwind, then the process exits. uvicorn, which handles SIGTERM itself while it serves, restores this handler
and raises the signal again once it has shut down, so a served model is cleaned up the same way.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn


def _exit(signum: int, frame: FrameType | None) -> NoReturn:
    raise SystemExit(128 + signum)


@contextmanager
def sigterm_exits() -> Iterator[None]:
    """While inside, SIGTERM raises ``SystemExit(143)``; the previous handler is restored on the way out. Outside the
    main thread (Python handles signals only there) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
