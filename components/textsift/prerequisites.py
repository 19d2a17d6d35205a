"""What an ad-hoc command needs, built from the catalog and the registry instead of lists by hand.

``textsift privatize``, ``detect`` and ``embed`` name the artifacts they need (a privacy setting
says its own: ``setting.needs()``); :func:`ensure` runs, producers first, every stage whose
artifact is missing, with the caller's params file. A stage instance needs what the registry
says it reads (``Stage.needs``, its non-keyed reads unless the stage narrows them per instance),
so the ad-hoc commands build exactly the DAG that ``dvc repro`` and the flow run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from textsift.catalog import artifact
from textsift.config import Params
from textsift.locks import project_run
from textsift.registry import get_stage

log = logging.getLogger("textsift")
Need = tuple[str, str | None]  # (artifact name, fan-out key or None)


def missing(root: Path, params: Params, needs: Iterable[Need]) -> list[tuple[str, str | None]]:
    """The stage instances ``(stage, key)`` to run, in order, so that every artifact of ``needs`` exists."""
    order: list[tuple[str, str | None]] = []

    def visit(name: str, key: str | None) -> None:
        entry = artifact(name)
        instance = (entry.producer, key if entry.keyed else None)
        if (root / entry.at(key)).exists() or instance in order:
            return
        for need in get_stage(entry.producer).instance_needs(params, instance[1]):
            visit(*need)
        order.append(instance)

    for name, key in needs:
        visit(name, key)
    return order


def ensure(root: Path, params: Params, params_path: Path, needs: Iterable[Need]) -> None:
    """Run the stage instances :func:`missing` lists, with ``params_path``, holding the project's run lock
    (:func:`textsift.locks.project_run`): never beside a pipeline run writing the same outputs.

    Raises:
        RunInProgressError: a run holds the project; the message names its process and start time.
    """
    from textsift.runner import run_stage  # the runner imports the registry too: import it when work is due

    todo = missing(root, params, needs)
    if not todo:
        return
    with project_run(root):
        for stage, key in todo:
            log.info("running stage %s%s with %s: an artifact it writes is missing", stage, f"@{key}" if key else "",
                     params_path)
            run_stage(stage, root=root, params_path=params_path, key=key)
