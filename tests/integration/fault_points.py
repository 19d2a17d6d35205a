"""The fault-injection test's child: the pipeline flow run in this process, SIGKILLed at a commit point.

A commit point is one file or folder of the project taking its place (``os.replace``: every atomic write of
:mod:`textsift.corpus` ends with one, and an atomic folder swap is two), just before it (the temporary is written,
the output not yet replaced) or just after (the output replaced, the stage's next step not done). The child kills
itself at the first point not killed at before (:func:`run_killed`'s ``used`` file) that a seeded draw picks,
after writing it to ``used``: every kill of a chain is at a new point, so the chain always ends.

Imported by the forkserver before any child starts (``set_forkserver_preload``): each child is a fork of an
interpreter that has imported the pipeline once, with no thread running yet.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import random
import re
import signal
from pathlib import Path

import mlflow.store.tracking.sqlalchemy_store  # noqa: F401 - imported once here, not in every child (~5 s each)

import textsift.stages
from flows.pipeline import pipeline

for _stage in pkgutil.iter_modules(textsift.stages.__path__, "textsift.stages."):
    importlib.import_module(_stage.name)
TEMPORARY = re.compile(r"(^|/)(\.[^/]+)\.[a-z0-9_]{8}(?=/|\.tmp$|$)")  # mkstemp/mkdtemp's 8 random characters


def _point(phase: str, target: Path, root: str) -> str:
    """``before|after <path in the project>``, a temporary's random part as ``*`` (the same point in every run)."""
    where = TEMPORARY.sub(r"\1\2.*", str(target.relative_to(root)))
    return f"{phase} {where}"


def run_killed(root: str, used: str, seed: int, chance: float) -> None:
    """Run the flow in ``root``; at a new commit point, with probability ``chance``, record it in ``used`` and
    SIGKILL this process (``chance`` 0: run to the end)."""
    done = set(Path(used).read_text(encoding="utf-8").split("\n")) if Path(used).exists() else set()
    draw, real_replace = random.Random(seed), os.replace

    def maybe_killed(point: str) -> None:
        if chance and point not in done and draw.random() < chance:
            with open(used, "a", encoding="utf-8") as out:
                out.write(point + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.kill(os.getpid(), signal.SIGKILL)

    def replace(src: object, dst: object, *args: object, **kwargs: object) -> None:
        target = Path(os.fspath(dst)).resolve()  # type: ignore[arg-type]
        inside = target.is_relative_to(root)
        if inside:
            maybe_killed(_point("before", target, root))
        real_replace(src, dst, *args, **kwargs)  # type: ignore[arg-type]
        if inside:
            maybe_killed(_point("after", target, root))

    os.replace = replace  # type: ignore[assignment]
    state = pipeline(root=root, return_state=True)
    if not state.is_completed():
        raise SystemExit(f"the flow ended {state.type}: {state.message}")
