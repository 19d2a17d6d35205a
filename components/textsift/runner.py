"""Stage runner: one entry point shared by the CLI (so DVC) and the Prefect flow.

``run_stage`` loads params, opens one MLflow run for the stage instance (a child of the
pipeline's parent run when there is one), logs the params the stage declares under their
params.yaml keys, runs the stage module's ``run(ctx)`` (``textsift.stages.<name>``), logs its
metrics and closes the run FINISHED or FAILED.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from pathlib import Path

from textsift import secret_key, stage_cache
from textsift.artifacts import MODEL_CACHE, MODEL_POINTERS, model_present
from textsift.config import Params, load_params
from textsift.corpus import disk_full_named, remove_stale_temporaries
from textsift.datasets import stage_datasets
from textsift.device import resolve_detector_precision, resolve_device
from textsift.errors import StageError
from textsift.registry import StageInstance, get_stage
from textsift.stage_context import StageContext, stage_params
from textsift.tracking import Tracker

log = logging.getLogger("textsift")
# transformers resolves its names lazily and not thread-safely: two stage tasks importing it at
# once (train_detectors beside train_fill_in on the thread runner) failed with "cannot import
# name 'AutoModel'". Stage modules import what they use at module level, under this lock.
_IMPORT_LOCK = threading.Lock()


def log_datasets(tracker: Tracker, run_id: str, instance: StageInstance, params: Params, root: Path) -> None:
    """The datasets the instance read and wrote, in its MLflow run (name, digest, size; no rows)."""
    for record in stage_datasets(instance, params, root):
        tracker.log_dataset(run_id, record.name, record.path, record.digest, record.context, record.profile)


def _models_present(instance: StageInstance, root: Path, tracker: Tracker) -> bool:
    """Whether every model pointer among the instance's outputs names a model that can still be had."""
    return all(model_present(root / out, tracker, root / MODEL_CACHE) for out in instance.outs if out in MODEL_POINTERS)


def run_stage(
    name: str, root: str | Path = ".", params_path: str | Path | None = None,
    key: str | None = None, parent_run_id: str | None = None, use_cache: bool = False,
    deadline: float | None = None,
) -> dict[str, float]:
    """Run one stage instance and return its metrics.

    Args:
        name: stage name from the registry.
        root: project folder; all stage paths are relative to it.
        params_path: params.yaml to load (default ``<root>/params.yaml``).
        key: fan-out key for ``foreach`` stages.
        parent_run_id: MLflow run id of the pipeline run, if any.
        use_cache: skip the work when the instance's inputs and outputs are those of its last successful
            run (:mod:`textsift.stage_cache`; the flow's default). The skipped instance still gets its MLflow
            run, tagged ``textsift.cached``, with the recorded metrics. DVC decides for itself and never asks.
        deadline: a ``time.monotonic()`` instant (the flow's stage time limit): past it, the stage does not
            start (StageError, never retried); a running stage is stopped by Prefect's timeout.
    """
    root = Path(root).resolve()
    with disk_full_named(root, f"stage {name}{'@' + key if key else ''} ran"):
        return _run_stage(name, root, params_path, key, parent_run_id, use_cache, deadline)


def precision_tags(declared: dict[str, object], device: str) -> dict[str, str]:
    """``textsift.precision.<param>``: what each inference precision the stage declares resolved to here. ``auto``
    resolves per machine (bfloat16 where the CPU computes it natively) under one params hash, so the run records
    which one made its bytes."""
    return {f"textsift.precision.{name}": resolve_detector_precision(value, resolve_device(device))  # type: ignore[arg-type]
            for name, value in declared.items() if name.endswith(".inference_precision")}


def _run_stage(name: str, root: Path, params_path: str | Path | None, key: str | None, parent_run_id: str | None,
               use_cache: bool, deadline: float | None) -> dict[str, float]:
    params = load_params(params_path or root / "params.yaml")
    instance = StageInstance(get_stage(name), key)
    declared = stage_params(params, instance)
    key_fingerprint = secret_key.ensure(root).fingerprint if instance.stage.keyed else None
    use_cache = use_cache and not instance.stage.always
    digest = stage_cache.input_digest(instance, params, declared, root) if use_cache else None
    cached = stage_cache.lookup(instance, digest, root) if digest else None
    with _IMPORT_LOCK:
        module = None if cached is not None else importlib.import_module(f"textsift.stages.{instance.stage.name}")
    tracker = Tracker(params.tracking, root)
    if cached is not None and not _models_present(instance, root, tracker):
        log.info("stage %s: a model it made is gone (MLflow store and model cache): running it again", instance.name)
        cached = None
        with _IMPORT_LOCK:
            module = importlib.import_module(f"textsift.stages.{instance.stage.name}")
    if parent_run_id is None:  # a top-level start (dvc repro, the CLI): end what a killed run left RUNNING
        tracker.end_orphaned_runs()
    tags = {"textsift.stage": instance.stage.name, "textsift.instance": instance.name,
            "textsift.cached": str(cached is not None).lower()}
    if key_fingerprint is not None:
        tags["textsift.key_fingerprint"] = key_fingerprint
    if deadline is not None and time.monotonic() > deadline:  # the flow's time limit: checked, not only signalled
        raise StageError(f"stage {instance.name} ran past its time limit (timeout) before it started")
    started, ok, run_id = time.perf_counter(), False, None
    # Everything after the run starts is inside the try: an exception anywhere (a Prefect time limit lands
    # as one, at any Python step) ends the MLflow run FAILED instead of leaving it RUNNING.
    try:
        run_id = tracker.start_run(instance.name, parent_id=parent_run_id, tags=tags)
        tracker.log_params(run_id, declared)
        if cached is not None:
            log_datasets(tracker, run_id, instance, params, root)
            tracker.log_metrics(run_id, cached)
            ok = True
            log.info("stage %s unchanged since its last run: skipped (cached)", instance.name)
            return cached
        tracker.set_tags(run_id, precision_tags(declared, params.device))  # what makes these bytes, not cached ones
        ctx = StageContext(root, params, instance, tracker, run_id, parent_run_id)
        for output in (*instance.outs, *instance.metrics):  # what a killed earlier run of this instance left
            for stale in remove_stale_temporaries(root / output):
                log.info("stage %s: removed %s, left by an interrupted run", instance.name, stale.name)
        log.info("stage %s started", instance.name)
        module.run(ctx)
        ok = True
        log_datasets(tracker, run_id, instance, params, root)
        if digest:
            stage_cache.store(instance, digest, root, ctx.metrics)
    finally:
        if run_id is not None:
            if cached is None:
                tracker.log_metrics(run_id, {"stage.wall_seconds": time.perf_counter() - started})
            tracker.end_run(run_id, ok)
        if cached is None:
            log.info("stage %s %s in %.1fs", instance.name, "finished" if ok else "failed",
                     time.perf_counter() - started)
    return dict(ctx.metrics)
