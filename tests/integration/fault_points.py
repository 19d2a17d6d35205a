"""The fault-injection test's child: the pipeline flow run in this process, SIGKILLed at a commit point.

A commit point is an output area of the project (a folder under ``data/`` or ``reports/``, a model pointer, a
metrics file, the stage and model caches) where a file or folder takes its place (``os.replace``: every atomic
write of :mod:`textsift.corpus` ends with one, an atomic folder swap is two), just before it (the temporary
written, the output not yet replaced) or, for data, just after (replaced, the stage's next step not
done). The child kills itself at the first point not killed at before (:func:`run_killed`'s ``used`` file), after
writing it there: every kill of a chain is at a new point, so the chain ends, having killed once at every point
of the run, in every stage. Which file of an area is hit depends on the stages running side by side.

``make test`` kills before each commit to the areas the test names (:data:`REQUIRED_AREAS`: the first and last stages,
the detector, the privatized corpora and the vault), also after it where the stage writes more next (the privatized
corpus before its ledger and metrics, the vault): 9 kills; at a fixed hashed share of the other points with
``TEXTSIFT_FAULT_SHARE`` (default :data:`SHARE`, none). ``make fuzz`` sets the share to 1: every point, ~40.

Imported by the forkserver before any child starts (``set_forkserver_preload``): each child is a fork of an
interpreter that has imported the pipeline once, with no thread running yet.
"""

from __future__ import annotations

import hashlib
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
ONE_SEEN = threading.Lock()
# The test asserts a kill in each: never sampled out. The last two stages write data or a report, then their metrics:
# the kill before the metrics leaves the one half committed (an earlier kill there was a kill before any commit).
REQUIRED_AREAS = frozenset({"data/ingest", "models/detector.json", "data/privatized", "data/vault",
                            "data/lrp_budgets", "metrics/embedding_dp", "metrics/evaluate.json"})
REQUIRED_AFTER = frozenset({"data/privatized", "data/vault"})  # killed after their commit too
SHARE = 0.0  # of the other points, killed at in make test: each kill costs a rerun (~9 s on 2 cores); make fuzz has all
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


def sampled(at: str, share: float) -> bool:
    """Whether a chain kills at point ``at``: always before a commit to a required area (and after it in
    :data:`REQUIRED_AFTER`), else for a fixed hashed ``share`` of points (the same points every run: a failure
    reproduces)."""
    phase, area = at.split(" ", 1)
    if area in REQUIRED_AREAS and (phase == "before" or area in REQUIRED_AFTER):
        return True
    return int.from_bytes(hashlib.sha256(at.encode()).digest()[:8], "big") < share * 2**64


def run_killed(root: str, used: str, armed: bool) -> None:
    """Run the flow in ``root``; when ``armed``, at the first sampled commit point not in ``used``, record it there
    and SIGKILL this process. Every point passed without a kill is appended to ``<used>.seen`` (a thread that waits
    for another's kill records nothing: a rerun may never pass its point again)."""
    done = set(Path(used).read_text(encoding="utf-8").split("\n")) if Path(used).exists() else set()
    real_replace = os.replace
    share = float(os.environ.get("TEXTSIFT_FAULT_SHARE", SHARE))

    def maybe_killed(at: str | None) -> None:
        if at is None:
            return
        if not (armed and at not in done and sampled(at, share)):  # passed: a point this child will not kill at
            with ONE_SEEN, open(f"{used}.seen", "a", encoding="utf-8") as out:
                out.write(at + "\n")
            return
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
