"""Stage runner: one entry point shared by the CLI (so DVC) and the Prefect flow.

``run_stage`` loads params, opens one MLflow run for the stage instance (a child of the
pipeline's parent run when there is one), logs the params the stage declares under their
params.yaml keys, runs the stage module's ``run(ctx)``, logs its metrics and closes the run
FINISHED or FAILED. Each ``stages/<name>.py`` holds only its stage's I/O and wiring.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textsift import secret_key, stage_cache
from textsift.artifacts import MODEL_CACHE, MODEL_POINTERS, materialize, model_present, read_pointer
from textsift.catalog import artifact
from textsift.catalog import path as catalog_path
from textsift.config import Params, flatten, load_params, select
from textsift.corpus import disk_full_named, remove_stale_temporaries, write_json
from textsift.datasets import stage_datasets
from textsift.declared_params import DeclaredParams
from textsift.errors import StageError
from textsift.registry import StageInstance, get_stage
from textsift.secret_key import SecretKey
from textsift.tracking import Tracker

log = logging.getLogger("textsift")
# transformers resolves its names lazily and not thread-safely: two stage tasks importing it at
# once (train_detectors beside train_fill_in on the thread runner) failed with "cannot import
# name 'AutoModel'". Stage modules import what they use at module level, under this lock.
_IMPORT_LOCK = threading.Lock()


@dataclass
class StageContext:
    """What a stage sees: the project root, validated params, its instance and its run.

    ``params`` is seen through :class:`~textsift.declared_params.DeclaredParams`: a key the stage does not
    declare in the registry cannot be read, so no undeclared key can change an output behind DVC's back.
    """

    root: Path
    params: Params
    instance: StageInstance
    tracker: Tracker
    run_id: str
    parent_run_id: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    declared: dict[str, Any] = field(default_factory=dict, init=False)  # the declared params, flat (as logged)
    reads: tuple[str, ...] = field(default=(), init=False)  # the catalog artifacts this instance may read

    def __post_init__(self) -> None:
        if isinstance(self.params, Params):
            self.reads = self.instance.stage.reads_for(self.params, self.instance.key)
            self.declared = _stage_params(self.params, self.instance)
            self.params = DeclaredParams(self.params, self.instance.declared_params, self.instance.name)
        else:
            self.reads = self.instance.stage.reads

    @property
    def secret_key(self) -> SecretKey:
        """The project's secret key (:mod:`textsift.secret_key`), for the draws that decide what is released.

        Raises:
            StageError: the stage is not ``keyed`` in the registry (its DVC deps would miss the key's fingerprint).
            ConfigError: outputs here were made with a key that is gone.
        """
        if not self.instance.stage.keyed:
            raise StageError(f"stage {self.instance.name} draws with the secret key but is not keyed in the registry")
        return secret_key.ensure(self.root)

    def path(self, relative: str) -> Path:
        """``relative`` under the project root (a file params name; catalog artifacts go through ``input``)."""
        return self.root / relative

    def input(self, name: str, key: str | None = None) -> Path:
        """Where catalog artifact ``name`` is (a keyed one at ``key``); only what the stage declares it reads.

        Raises:
            StageError: the stage does not declare ``name`` in its ``reads`` (its DVC deps would miss it).
        """
        if name not in self.reads:
            raise StageError(f"stage {self.instance.name} reads {name!r}, which it does not declare "
                             f"(registry reads for its params: {', '.join(self.reads) or 'none'})")
        return self.root / catalog_path(name, key)

    @property
    def corpus_is_demo(self) -> bool:
        """Whether the corpus is the generated demo (seeded synthetic documents: nobody's data), so models trained on
        it may go to the per-user cache (:mod:`textsift.user_cache`); a corpus read from a file never does."""
        return self.params.ingest.source.kind == "demo"

    def model(self, name: str) -> Path | None:
        """The local folder of model artifact ``name`` (a pointer in the catalog; the model itself in MLflow,
        fetched once into the model cache); None when the pointer says the model was not trained."""
        pointer = read_pointer(self.input(name))
        return materialize(pointer, self.tracker, self.root / MODEL_CACHE) if pointer.get("sha256") else None

    def output(self, name: str) -> Path:
        """Where this instance writes catalog artifact ``name`` (one the stage produces)."""
        entry = artifact(name)
        if entry.producer != self.instance.stage.name:
            raise StageError(f"stage {self.instance.stage.name} cannot write {name!r}: {entry.producer} does")
        return self.root / entry.at(self.instance.key)

    def write_metrics(self, name: str, metrics: dict[str, float]) -> None:
        """Write the stage's DVC metrics file (catalog artifact ``name``): every metric except timings
        (``*_per_s``, ``*seconds``), which vary run to run and would make ``dvc repro`` outputs differ, each as a
        float (a count is 9 when just trained and 9.0 when read back from a cache: one value, one set of bytes)."""
        write_json({k: float(v) for k, v in metrics.items() if not _is_timing(k)}, self.output(name))

    def log_metrics(self, metrics: dict[str, float]) -> None:
        """Record aggregate metrics for this stage (sent to MLflow at the end, and now)."""
        self.metrics.update(metrics)
        self.tracker.log_metrics(self.run_id, metrics)


def _is_timing(key: str) -> bool:
    return key.endswith(("_per_s", "seconds", "per_second"))


def _stage_params(params: Params, instance: StageInstance) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key in instance.stage.params:
        value = select(params, key)
        if hasattr(value, "model_dump"):
            flat.update(flatten(value, prefix=f"{key}."))
        else:
            flat[key] = value
    if instance.key and instance.stage.foreach:
        setting = select(params, instance.stage.foreach)[instance.key]
        flat.update(flatten(setting, prefix=f"{instance.stage.foreach}.{instance.key}."))
    return flat


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


def _run_stage(name: str, root: Path, params_path: str | Path | None, key: str | None, parent_run_id: str | None,
               use_cache: bool, deadline: float | None) -> dict[str, float]:
    params = load_params(params_path or root / "params.yaml")
    instance = StageInstance(get_stage(name), key)
    stage_params = _stage_params(params, instance)
    key_fingerprint = secret_key.ensure(root).fingerprint if instance.stage.keyed else None
    use_cache = use_cache and not instance.stage.always
    digest = stage_cache.input_digest(instance, params, stage_params, root) if use_cache else None
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
        tracker.log_params(run_id, stage_params)
        if cached is not None:
            log_datasets(tracker, run_id, instance, params, root)
            tracker.log_metrics(run_id, cached)
            ok = True
            log.info("stage %s unchanged since its last run: skipped (cached)", instance.name)
            return cached
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
