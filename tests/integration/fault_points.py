"""The fault-injection test's child: the pipeline flow run in this process, SIGKILLed at a commit point.

A commit point is an output area of the project (a folder under ``data/`` or ``reports/``, a model pointer, a
metrics file, the stage and model caches) where a file or folder takes its place (``os.replace``: every atomic
write of :mod:`textsift.corpus` ends with one, an atomic folder swap is two), just before it (the temporary
written, the output not yet replaced) or, for data, just after (replaced, the stage's next step not
done). The child kills itself at the first point not killed at before (:func:`run_killed`'s ``used`` file), after
writing it there: every kill of a chain is at a new point, so the chain ends, having killed once at every point
of the run, in every stage. Which file of an area is hit depends on the stages running side by side.

Imported by the forkserver before any child starts (``set_forkserver_preload``): each child is a fork of an
interpreter that has imported the pipeline once, with no thread running yet.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import signal
import threading
from pathlib import Path

import mlflow.store.tracking.sqlalchemy_store  # noqa: F401 - imported once here, not in every child (~5 s each)

import textsift.stages
from flows.pipeline import pipeline

for _stage in pkgutil.iter_modules(textsift.stages.__path__, "textsift.stages."):
    importlib.import_module(_stage.name)
ONE_KILL = threading.Lock()
OUTPUT_FOLDERS = ("data", "models", "metrics", "reports", ".textsift")
TEMPORARY = re.compile(r"(^|/)(\.[^/]+)\.[a-z0-9_]{8}(?=/|\.tmp$|$)")  # mkstemp/mkdtemp's 8 random characters


def point(phase: str, target: Path, root: str) -> str | None:
    """``before|after <area>`` of a commit to ``target``; None where no kill goes (outside the project's outputs,
    or after a commit that is not data)."""
    if not target.is_relative_to(root):
        return None
    area = "/".join(TEMPORARY.sub(r"\1\2.*", str(target.relative_to(root))).split("/")[:2])
    if area.split("/")[0] not in OUTPUT_FOLDERS:  # MLflow's store: new run folders every run, never a point
        return None
    if phase == "after" and not area.startswith("data/"):
        return None
    return f"{phase} {area}"


def run_killed(root: str, used: str, armed: bool) -> None:
    """Run the flow in ``root``; when ``armed``, at the first commit point not in ``used``, record it there and
    SIGKILL this process."""
    done = set(Path(used).read_text(encoding="utf-8").split("\n")) if Path(used).exists() else set()
    real_replace = os.replace

    def maybe_killed(at: str | None) -> None:
        if armed and at is not None and at not in done:
            ONE_KILL.acquire()  # stages run side by side: one thread records its point and kills, the others wait
            with open(used, "a", encoding="utf-8") as out:
                out.write(at + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.kill(os.getpid(), signal.SIGKILL)

    def replace(src: object, dst: object, *args: object, **kwargs: object) -> None:
        target = Path(os.fspath(dst)).resolve()  # type: ignore[arg-type]
        maybe_killed(point("before", target, root))
        real_replace(src, dst, *args, **kwargs)  # type: ignore[arg-type]
        maybe_killed(point("after", target, root))

    os.replace = replace  # type: ignore[assignment]
    state = pipeline(root=root, return_state=True)
    if not state.is_completed():
        raise SystemExit(f"the flow ended {state.type}: {state.message}")
