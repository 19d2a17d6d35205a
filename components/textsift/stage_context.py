"""What a stage sees: :class:`StageContext`, the project root, its validated params, its instance and its run.

A stage module (``textsift.stages.<name>``) reads catalog artifacts through ``ctx.load``/``ctx.model``, writes
through ``ctx.save`` (``ctx.load``/``ctx.save`` know each artifact's form) and draws with ``ctx.secret_key``; the runner
(:mod:`textsift.runner`) builds the context and opens the stage's MLflow run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textsift import secret_key
from textsift.artifacts import MODEL_CACHE, materialize, read_pointer
from textsift.catalog import artifact
from textsift.catalog import path as catalog_path
from textsift.config import Params, flatten, select
from textsift.dataset_forms import form
from textsift.declared_params import DeclaredParams
from textsift.errors import StageError
from textsift.registry import StageInstance
from textsift.secret_key import SecretKey
from textsift.tracking import Tracker


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
            self.declared = stage_params(self.params, self.instance)
            self.params = DeclaredParams(self.params, self.instance.declared_params(self.params),
                                         self.instance.name)
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

    def load(self, name: str, key: str | None = None) -> Any:
        """Catalog artifact ``name`` (a keyed one at ``key``) as its form loads it (:mod:`textsift.dataset_forms`):
        a corpus frame, a table, a JSON document; only what the stage declares it reads."""
        return form(artifact(name).form_name).load(self.input(name, key))

    def save(self, name: str, value: Any) -> None:
        """Write ``value`` as this instance's artifact ``name``, atomically, in the artifact's form (a metrics file
        keeps every metric but the timings, which vary run to run and would make ``dvc repro`` outputs differ)."""
        form(artifact(name).form_name).save(value, self.output(name))

    def log_metrics(self, metrics: dict[str, float]) -> None:
        """Record aggregate metrics for this stage (sent to MLflow at the end, and now)."""
        self.metrics.update(metrics)
        self.tracker.log_metrics(self.run_id, metrics)


def stage_params(params: Params, instance: StageInstance) -> dict[str, Any]:
    """The params ``instance`` declares, flat under their params.yaml keys (as logged to MLflow and hashed)."""
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
    for key in instance.own_params(params):
        flat.update(flatten(select(params, key), prefix=f"{key}."))
    return flat
