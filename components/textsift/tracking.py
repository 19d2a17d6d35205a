"""MLflow tracking with explicit run ids — the only module that imports mlflow.

MLflow's fluent "active run" is thread-local and Prefect runs tasks on other threads (or
other processes under Dask), so every call here names its run id. Default store: a sqlite
database and an artifact folder inside the project (embedded, nothing to start);
``MLFLOW_TRACKING_URI`` or ``tracking.uri`` point it at a real server instead.

Privacy: callers pass params, aggregate metrics and privatized artifacts only. Nothing here
accepts document text.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from textsift.config import TrackingParams
from textsift.errors import ConfigError, StorageError
from textsift.locks import exclusive, is_alive, process_identity

PARENT_ENV = "TEXTSIFT_PARENT_RUN_ID"
OWNER_TAG = "textsift.owner"  # host:pid:start of the process that runs it (see end_orphaned_runs)
# a registered version's link to what was judged: the SHA-256 of the released corpus its setting made. An outsider
# stage (which registers it) taken from the cache registers nothing, so its privatizer is found by what it released,
# not by pipeline run
RELEASE_TAG = "textsift.release"
PRIVATIZER_TAG = "textsift.privatizer_version"  # on a classifier: the privatizer version judged with it, or "none"
_MAX_PARAM_CHARS = 6000


def newest_version(versions: list[dict[str, Any]], setting: str, run_id: str | None = None,
                   release: str | None = None) -> dict[str, Any] | None:
    """The newest of ``versions`` (:meth:`Tracker.model_versions`) tagged with ``setting``, registered by pipeline run
    ``run_id`` when given (its ``textsift.pipeline_run`` tag or its own run) and made from the released corpus of
    digest ``release`` when given (its :data:`RELEASE_TAG`); None when none is."""
    found = [v for v in versions if v["tags"].get("textsift.setting") == setting
             and (run_id is None or run_id in (v["tags"].get("textsift.pipeline_run"), v["run_id"]))
             and (release is None or v["tags"].get(RELEASE_TAG) == release)]
    return max(found, key=lambda v: int(v["version"])) if found else None


def resolve_uri(params: TrackingParams, root: Path) -> str:
    """MLFLOW_TRACKING_URI, else ``tracking.uri``, else ``sqlite:///<root>/mlruns.db``."""
    uri = os.environ.get("MLFLOW_TRACKING_URI") or params.uri
    return uri or f"sqlite:///{(root / 'mlruns.db').resolve()}"


@contextmanager
def _sqlite_store_lock(uri: str) -> Iterator[None]:
    """Serialize the creation and schema migration of a sqlite store across processes.

    Two processes opening a new ``mlruns.db`` at once both run MLflow's migrations and leave it
    half-migrated ("table _alembic_tmp_experiments already exists" on every later run). Under
    the lock, tables a killed migration left behind are dropped so it can run again.
    """
    if not uri.startswith("sqlite:///"):
        yield
        return
    database = Path(uri.removeprefix("sqlite:///"))
    with exclusive(database.with_name(f".{database.name}.lock")):
        try:
            if database.exists():
                with closing(sqlite3.connect(database)) as db, db:
                    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
                    leftovers = [name for name in tables if name.startswith("_alembic_tmp_")]
                    for table in leftovers:
                        db.execute(f'DROP TABLE "{table}"')
            yield
        except sqlite3.DatabaseError as err:
            raise damaged_store(database, err) from None
        except Exception as err:
            if isinstance(err.__cause__ or err.__context__, sqlite3.DatabaseError):  # SQLAlchemy's wrapper
                raise damaged_store(database, err.__cause__ or err.__context__) from None
            raise


def damaged_store(database: Path, err: BaseException) -> StorageError:
    """The one-line error for an MLflow sqlite store that cannot be read (not a database, malformed, full disk)."""
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    return StorageError(f"the MLflow store {database} cannot be used ({reason}): restore it from a backup, or move "
                        "it aside and run again (a new store is created; the stage cache re-trains models it lacks)")


def git_commit(root: Path) -> str:
    """The project's HEAD commit, tagged on every run; ``unknown`` outside git or when git fails."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def dvc_lock_digest(root: Path) -> str:
    """A short digest of ``dvc.lock`` (``none`` without one), tagged on runs to tie them to its state."""
    lock = root / "dvc.lock"
    return hashlib.sha256(lock.read_bytes()).hexdigest()[:16] if lock.exists() else "none"


class Tracker:
    """A thin, thread-safe facade over ``MlflowClient`` with explicit run ids."""

    def __init__(self, params: TrackingParams, root: Path) -> None:
        from mlflow.tracking import MlflowClient

        # MLflow logs every database error with its traceback before raising it (set after its import: MLflow
        # configures its loggers then); textsift reports the raised error, a damaged or full store as one line
        logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)
        self.root = root
        self.params = params  # what to log and register (not stage params: they change no output)
        self.uri = resolve_uri(params, root)
        with _sqlite_store_lock(self.uri):  # the first use creates and migrates the database
            self.client = MlflowClient(tracking_uri=self.uri)
            self.experiment_id = self._experiment(params.experiment)

    def _experiment(self, name: str) -> str:
        existing = self.client.get_experiment_by_name(name)
        if existing is not None:
            return existing.experiment_id
        location = None
        if self.uri.startswith("sqlite:"):
            location = (self.root / "mlartifacts").resolve().as_uri()
        try:
            return self.client.create_experiment(name, artifact_location=location)
        except Exception:  # another task created it first
            found = self.client.get_experiment_by_name(name)
            if found is None:
                raise
            return found.experiment_id

    def start_run(
        self, name: str, parent_id: str | None = None, tags: Mapping[str, str] | None = None
    ) -> str:
        """Create a run (a child of ``parent_id`` when given) and return its id."""
        all_tags = {
            OWNER_TAG: process_identity(),
            "textsift.git_commit": git_commit(self.root),
            "textsift.dvc_lock": dvc_lock_digest(self.root),
            **(tags or {}),
        }
        if parent_id:
            all_tags["mlflow.parentRunId"] = parent_id
        run = self.client.create_run(self.experiment_id, run_name=name, tags=all_tags)
        return run.info.run_id

    def log_params(self, run_id: str, params: Mapping[str, Any]) -> None:
        """Log params as strings (cut at ``_MAX_PARAM_CHARS``), sorted, in batches MLflow accepts."""
        from mlflow.entities import Param

        items = [Param(k, str(v)[:_MAX_PARAM_CHARS]) for k, v in sorted(params.items())]
        for start in range(0, len(items), 100):
            self.client.log_batch(run_id, params=items[start : start + 100])

    def log_metrics(self, run_id: str, metrics: Mapping[str, float], step: int = 0) -> None:
        """Log aggregate metrics at ``step`` with one timestamp, in batches MLflow accepts."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        items = [Metric(k, float(v), now, step) for k, v in sorted(metrics.items())]
        for start in range(0, len(items), 500):
            self.client.log_batch(run_id, metrics=items[start : start + 500])

    def log_metric_steps(self, run_id: str, key: str, values: Sequence[tuple[int, float]]) -> None:
        """One metric's history (``(step, value)`` pairs) in batches: one call, not one per step."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        items = [Metric(key, float(value), now, step) for step, value in values]
        for start in range(0, len(items), 1000):
            self.client.log_batch(run_id, metrics=items[start : start + 1000])

    def set_tags(self, run_id: str, tags: Mapping[str, str]) -> None:
        """Set each of ``tags`` on the run."""
        for key, value in tags.items():
            self.client.set_tag(run_id, key, value)

    def log_artifact(self, run_id: str, path: str | Path, artifact_path: str | None = None) -> None:
        """Upload one file to the run, under ``artifact_path`` when given."""
        self.client.log_artifact(run_id, str(path), artifact_path)

    def log_sklearn_model(self, run_id: str, model: Any, name: str, text_column: str | None = None) -> str:
        """Save a fitted estimator in MLflow's sklearn format under the run; return its URI.

        ``text_column``: the model reads a frame with this one string column and predicts a string label;
        that becomes its signature (built from the schema, never from an input example: examples are text).
        """
        import mlflow.sklearn
        from mlflow.models import ModelSignature
        from mlflow.types import ColSpec, Schema

        signature = None
        if text_column:
            signature = ModelSignature(inputs=Schema([ColSpec("string", text_column)]),
                                       outputs=Schema([ColSpec("string")]))
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / name
            mlflow.sklearn.save_model(
                model, str(target), pip_requirements=["scikit-learn==" + _version("scikit-learn")],
                signature=signature,
            )
            self.client.log_artifacts(run_id, str(target), name)
        return f"runs:/{run_id}/{name}"

    def log_privatizer(self, run_id: str, spec_text: str, folders: Mapping[str, Path], roots: Sequence[str],
                       also: Sequence[str] = (), name: str = "privatizer") -> None:
        """Save a privatize setting as an MLflow pyfunc model under the run (:mod:`textsift.serving.model`).

        ``spec_text``: the setting and its validated params; ``folders``: the models and indexes it needs, packed
        with it. Signature: ``id`` (optional), ``text``, ``entities`` (optional: a request's entity types,
        comma-joined), ``threshold`` (optional: a request's detection threshold ceiling) and ``operators`` (optional:
        a JSON object of type -> operator) in; ``id``, ``text``,
        ``epsilon`` (a DP mechanism) and ``replaced`` (where each stand-in lies: redaction) out. Its input example is
        synthetic text; the secret key is never packed. It carries textsift's own code (MLflow ``code_paths``) and
        requires what the code it runs from ``roots`` imports of textsift's requirements and the distributions ``also``
        names, with all they depend on, pinned (:func:`pinned_requirements`), never textsift itself, which no package
        index has: it loads where textsift was never installed.
        """
        import mlflow.pyfunc
        from mlflow.models import ModelSignature
        from mlflow.types import ColSpec, Schema
        from mlflow.types.schema import Array, Object, Property

        from textsift.serving.model import (
            ENTITIES,
            EPSILON,
            EXAMPLE,
            ID,
            OPERATORS,
            REPLACED,
            TEXT,
            THRESHOLD,
            PrivatizerModel,
        )
        from textsift.serving.packing import SPEC

        signature = ModelSignature(  # MLflow drops input columns its signature lacks: optional ones are declared
            inputs=Schema([ColSpec("string", ID, required=False), ColSpec("string", TEXT),
                           ColSpec("string", ENTITIES, required=False),
                           ColSpec("double", THRESHOLD, required=False),
                           ColSpec("string", OPERATORS, required=False)]),
            outputs=Schema([ColSpec("string", ID), ColSpec("string", TEXT),
                            ColSpec("double", EPSILON, required=False),
                            ColSpec(Array(Object([Property("start", "long"), Property("end", "long"),
                                                  Property("type", "string")])), REPLACED, required=False)]))
        with tempfile.TemporaryDirectory() as tmp:
            spec_path = Path(tmp) / "spec.json"
            spec_path.write_text(spec_text, encoding="utf-8")
            target = Path(tmp) / name
            mlflow.pyfunc.save_model(
                str(target), python_model=PrivatizerModel(),
                artifacts={SPEC: str(spec_path), **{k: str(v) for k, v in folders.items()}},
                signature=signature, input_example=EXAMPLE,
                code_paths=[str(packed_code(Path(__file__).resolve().parent, Path(tmp) / "code"))],
                pip_requirements=pinned_requirements(roots, also))
            self.client.log_artifacts(run_id, str(target), name)

    def download_model(self, model_uri: str, dest: Path) -> Path:
        """A registered model (``models:/name@alias`` or ``models:/name/version``) of this store, downloaded into
        ``dest`` (resolved through this store's registry, never the process-wide one)."""
        from mlflow.artifacts import download_artifacts
        from mlflow.exceptions import MlflowException

        reference = model_uri.removeprefix("models:/")
        name, alias = reference.split("@", 1) if "@" in reference else (reference, None)
        name, _, number = name.partition("/") if alias is None else (name, "", "")
        try:
            version = (self.client.get_model_version_by_alias(name, alias) if alias is not None
                       else self.client.get_model_version(name, number))
            return Path(download_artifacts(artifact_uri=version.source, dst_path=str(dest), tracking_uri=self.uri))
        except MlflowException as err:
            raise ConfigError(f"no model at {model_uri} in {self.uri} ({err.error_code}): has a setting been "
                              "promoted (textsift promote)?") from None

    def register_model(self, name: str, run_id: str, artifact_path: str, tags: Mapping[str, str]) -> str:
        """A new version of registered model ``name`` from a model the run logged; returns the version."""
        from mlflow.exceptions import MlflowException

        try:
            self.client.create_registered_model(name)
        except MlflowException as err:
            if err.error_code != "RESOURCE_ALREADY_EXISTS":
                raise
        run = self.client.get_run(run_id)
        version = self.client.create_model_version(name, f"{run.info.artifact_uri}/{artifact_path}", run_id=run_id,
                                                   tags=dict(tags))
        return str(version.version)

    def set_model_alias(self, name: str, alias: str, version: str) -> None:
        """Point ``alias`` of registered model ``name`` at ``version`` (``textsift promote``: ``recommended``)."""
        self.client.set_registered_model_alias(name, alias, version)

    def model_versions(self, name: str) -> list[dict[str, Any]]:
        """Every version of registered model ``name``: ``version``, ``run_id`` and ``tags`` (none: [])."""
        return [{"version": str(v.version), "run_id": v.run_id, "tags": dict(v.tags)}
                for v in self.client.search_model_versions(f"name = '{name}'")]

    def latest_version(self, name: str, setting: str, run_id: str | None = None, release: str | None = None
                       ) -> dict[str, Any] | None:
        """The newest version of ``name`` for ``setting`` (:func:`newest_version`), or None."""
        return newest_version(self.model_versions(name), setting, run_id, release)

    def delete_alias(self, name: str, alias: str) -> None:
        """Remove ``alias`` of ``name`` (nothing when it is not set)."""
        if self.alias_version(name, alias) is not None:
            self.client.delete_registered_model_alias(name, alias)

    def alias_version(self, name: str, alias: str) -> str | None:
        """The version ``alias`` of ``name`` points at, or None."""
        from mlflow.exceptions import MlflowException

        try:
            return str(self.client.get_model_version_by_alias(name, alias).version)
        except MlflowException:
            return None

    def model_tags(self, name: str) -> dict[str, str]:
        """The tags of registered model ``name`` (none when it does not exist)."""
        from mlflow.exceptions import MlflowException

        try:
            return dict(self.client.get_registered_model(name).tags)
        except MlflowException:
            return {}

    def tag_model(self, name: str, tags: Mapping[str, str], version: str | None = None) -> None:
        """Set tags on registered model ``name``, or on one of its versions."""
        for key, value in tags.items():
            if version is None:
                self.client.set_registered_model_tag(name, key, value)
            else:
                self.client.set_model_version_tag(name, version, key, value)

    def run_tags(self, run_id: str) -> dict[str, str]:
        """A run's tags."""
        return dict(self.client.get_run(run_id).data.tags)

    def log_dataset(self, run_id: str, name: str, path: Path, digest: str, context: str,
                    profile: Mapping[str, int]) -> None:
        """Record a dataset the run read or wrote: its name, content digest, location and size — never rows.

        Shown in the run's "Datasets" panel of the MLflow UI; ``context`` says its role (``source``,
        ``training``, ``evaluation``, ``output``).
        """
        import json

        from mlflow.entities import Dataset, DatasetInput, InputTag

        dataset = Dataset(name=name, digest=digest[:36], source_type="local", source=json.dumps({"uri": str(path)}),
                          profile=json.dumps(dict(profile)))
        self.client.log_inputs(run_id, [DatasetInput(dataset, [InputTag("mlflow.data.context", context)])])

    def log_dir(self, run_id: str, local_dir: str | Path, artifact_path: str) -> None:
        """Log every file of a folder (a saved model) under ``artifact_path``."""
        self.client.log_artifacts(run_id, str(local_dir), artifact_path)

    def find_run(self, tag: str, value: str) -> str | None:
        """The newest finished run of this experiment whose tag ``tag`` equals ``value``."""
        runs = self.client.search_runs(
            [self.experiment_id], f"tags.`{tag}` = '{value}' and attributes.status = 'FINISHED'",
            order_by=["attributes.start_time DESC"], max_results=1,
        )
        return runs[0].info.run_id if runs else None

    def has_artifacts(self, run_id: str, artifact_path: str) -> bool:
        """Whether a run still holds files under ``artifact_path`` (a model folder deleted from the store: no)."""
        return bool(self.client.list_artifacts(run_id, artifact_path))

    def download_artifacts(self, run_id: str, artifact_path: str, dest: Path) -> Path:
        """Fetch ``artifact_path`` of a run into ``dest`` (created); with ``find_run``, an ArtifactSource."""
        dest.mkdir(parents=True, exist_ok=True)
        return Path(self.client.download_artifacts(run_id, artifact_path, str(dest)))

    def save_transformers_model(self, model: Any, tokenizer: Any, path: Path, task: str = "fill-mask") -> None:
        """Write a model + tokenizer in MLflow's transformers format to ``path`` (then ``log_dir``)."""
        import mlflow.transformers

        mlflow.transformers.save_model(
            transformers_model={"model": model, "tokenizer": tokenizer}, path=str(path), task=task,
            pip_requirements=[f"transformers=={_version('transformers')}", f"torch=={_version('torch')}"],
        )

    def end_run(self, run_id: str, ok: bool) -> None:
        """Close the run FINISHED when ``ok``, else FAILED."""
        self.client.set_terminated(run_id, "FINISHED" if ok else "FAILED")

    def end_orphaned_runs(self) -> list[str]:
        """Mark KILLED the RUNNING runs whose process on this host is gone (a run killed with -9).

        Returns their ids. Runs of live processes and of other hosts are left alone.
        """
        from mlflow.entities import ViewType

        orphans = []
        for run in self.client.search_runs([self.experiment_id], "attributes.status = 'RUNNING'",
                                           run_view_type=ViewType.ACTIVE_ONLY, max_results=5000):
            owner = run.data.tags.get(OWNER_TAG)
            if owner and is_alive(owner) is False:
                self.client.set_terminated(run.info.run_id, "KILLED")
                orphans.append(run.info.run_id)
        return orphans


def packed_code(package: Path, into: Path) -> Path:
    """A copy of the ``package`` folder (textsift's own) holding its modules and the data files they name (word
    lists), nothing else a working tree may keep there (bytecode, a stray data file): what a registered model carries
    is shared with whoever reads the registry."""
    from textsift.code_deps import data_files

    target = into / package.name
    for module in sorted(package.rglob("*.py")):
        if "__pycache__" in module.parts:
            continue
        for path in (module, *data_files(module)):
            copy = target / path.relative_to(package)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(path.read_bytes())
    return target


def pinned_requirements(roots: Sequence[str] | None = None, also: Sequence[str] = ()) -> list[str]:
    """textsift's own requirements (its extras left out), each pinned to the version installed here: what a model
    carrying textsift's code needs on another machine, resolvable from the wheels this environment came from.

    With ``roots`` (modules): those the code they may run imports (:func:`textsift.code_deps.runtime_closure`, imports
    inside functions included) and the distributions ``also`` names (a spaCy pipeline, loaded by name), with
    everything they depend on as installed here, each pinned: a served redaction installs what it runs, at the
    versions it was judged with, and no DVC, Prefect or Great Expectations.

    Computed once per (roots, also) in a process: walking every installed distribution's metadata took ~2 s of each
    outsider run that registers a served setting, the same answer each time."""
    return list(_pinned_requirements(None if roots is None else tuple(roots), tuple(also)))


@functools.cache
def _pinned_requirements(roots: tuple[str, ...] | None, also: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`pinned_requirements`, as a tuple (a cached value nobody can change)."""
    from importlib.metadata import packages_distributions, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from textsift.code_deps import external_imports, runtime_closure

    wanted = [r for r in map(Requirement, requires("textsift") or ()) if r.marker is None]
    if roots is None:
        return tuple(sorted(f"{r.name}=={_version(r.name)}" for r in wanted))
    provided = packages_distributions()
    imported = {name for root in roots for module in runtime_closure(root) for name in external_imports(module)}
    used = {canonicalize_name(dist) for name in imported for dist in provided.get(name, ())}
    top = [r.name for r in wanted if canonicalize_name(r.name) in used] + list(also)
    return tuple(sorted(f"{name}=={_version(name)}" + (f"; {marker}" if marker else "")
                        for name, marker in installed_closure(top).items()))


def installed_closure(distributions: Iterable[str]) -> dict[str, str | None]:
    """``distributions`` and every installed distribution they require, transitively (extras not followed), by
    canonical name, each with the environment marker it is required under (None: always; the requirement's own
    markers joined, as this Python reads them true, so a platform's dependency stays that platform's)."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    todo: list[tuple[str, str | None]] = [(canonicalize_name(d), None) for d in distributions]
    markers: dict[str, set[str | None]] = {}
    while todo:
        dist, marker = todo.pop()
        if marker in markers.get(dist, ()) or None in markers.get(dist, ()):
            continue
        try:
            needs = [Requirement(line) for line in requires(dist) or ()]
        except PackageNotFoundError:
            continue  # an optional dependency this environment does without
        first = dist not in markers
        markers.setdefault(dist, set()).add(marker)
        if first:
            todo += [(canonicalize_name(r.name), None if r.marker is None else str(r.marker)) for r in needs
                     if r.marker is None or r.marker.evaluate({"extra": ""})]
    return {dist: None if None in found else " or ".join(f"({m})" for m in sorted(m for m in found if m))
            for dist, found in markers.items()}


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)
