"""Pointer files: the small DVC output of a training stage whose model lives in MLflow.

A pointer ``{name, artifact_path, sha256}`` names the model by the digest of its files, not by
the MLflow run that logged it: it changes exactly when the model changes (so DVC re-runs
downstream stages then and only then, and a forced re-run of deterministic training writes a
byte-identical pointer). The logging run carries the tag ``textsift.model_sha256``;
``materialize`` finds such a run, fetches the model into a local cache keyed by the digest
and verifies it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Protocol

from textsift.catalog import path as catalog_path
from textsift.corpus import atomic_dir, remove_stale_temporaries, write_json
from textsift.errors import StageError
from textsift.locks import STATE_DIR, exclusive

SHA_TAG = "textsift.model_sha256"
FILL_IN_POINTER = catalog_path("fill_in")  # the DVC output of train_fill_in
DETECTOR_POINTER = catalog_path("detector")  # the DVC output of train_detectors
INTERESTS_POINTER = catalog_path("interests")  # train_interests' IPI interest model (``enabled: false`` when off)
MODEL_POINTERS = frozenset({FILL_IN_POINTER, DETECTOR_POINTER, INTERESTS_POINTER})  # training stages' outputs
MODEL_CACHE = f"{STATE_DIR}/cache/models"  # models fetched from MLflow, one folder per digest


class ArtifactSource(Protocol):
    def download_artifacts(self, run_id: str, artifact_path: str, dest: Path) -> Path:
        """Fetch ``artifact_path`` of run ``run_id`` into ``dest``; return the local path of what it fetched."""
        ...

    def find_run(self, tag: str, value: str) -> str | None:
        """The id of a finished run whose tag ``tag`` equals ``value`` (a model's sha256), or None."""
        ...

    def has_artifacts(self, run_id: str, artifact_path: str) -> bool:
        """Whether run ``run_id`` still holds something under ``artifact_path``."""
        ...


# MLflow writes a creation time and a random uuid into MLmodel: not part of the model's identity.
VOLATILE_FILES = frozenset({"MLmodel"})


def dir_sha256(folder: str | Path) -> str:
    """Digest of every file's relative path and bytes under ``folder``, except ``VOLATILE_FILES``."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in VOLATILE_FILES):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def write_pointer(target: str | Path, name: str, artifact_path: str, local_dir: str | Path) -> dict:
    """Write the pointer of the model saved in ``local_dir``; tag the logging run with ``SHA_TAG``."""
    pointer = {"name": name, "artifact_path": artifact_path, "sha256": dir_sha256(local_dir)}
    write_json(pointer, target)
    return pointer


def read_pointer(path: str | Path) -> dict:
    """The pointer ``{name, artifact_path, sha256}`` in ``path``.

    Raises:
        StageError: its training stage has not run, or the file is damaged (one line naming it and the fix).
    """
    path = Path(path)
    if not path.exists():
        raise StageError(f"{path} is missing: run the stage that trains this model first")
    try:
        pointer = json.loads(path.read_bytes().decode("utf-8"))
        if not isinstance(pointer, dict) or not {"name", "artifact_path", "sha256"} <= set(pointer):
            raise ValueError("not a model pointer")
    except (UnicodeDecodeError, ValueError):
        raise StageError(f"{path} is damaged (not a model pointer): run the stage that trains this model again "
                         "(the flow and dvc repro do so by themselves), or restore the file") from None
    return pointer


def model_present(pointer_path: Path, source: ArtifactSource, cache_root: str | Path) -> bool:
    """Whether the model a pointer names can still be had: the pointer is intact and the model is in the model cache
    or in a run of the MLflow store. The stage cache trusts a training stage's outputs only then: a pointer to a
    model deleted from the store would otherwise skip the training and fail the stages that load it."""
    try:
        pointer = read_pointer(pointer_path)
    except StageError:
        return False
    if not pointer["sha256"]:  # a model that was not trained (interests: enabled: false)
        return True
    cached = Path(cache_root) / pointer["sha256"]
    if cached.is_dir() and dir_sha256(cached) == pointer["sha256"]:
        return True
    run_id = source.find_run(SHA_TAG, pointer["sha256"]) or source.find_run(
        f"{SHA_TAG}.{pointer['name']}", pointer["sha256"])
    return run_id is not None and source.has_artifacts(run_id, pointer["artifact_path"])


def materialize(pointer: dict, source: ArtifactSource, cache_root: str | Path) -> Path:
    """The model folder in ``cache_root/<sha256>``, downloaded from MLflow when not cached.

    Safe when several tasks (threads or processes) ask at once: they take a per-model file lock,
    the first downloads into a temporary folder and renames it into place, the others then find
    it. A complete cached folder is never replaced, so no task reads a folder being swapped.
    """
    target = Path(cache_root) / pointer["sha256"]
    with exclusive(Path(cache_root) / f".{pointer['sha256']}.lock"):
        remove_stale_temporaries(target)  # a download killed midway: nobody else writes it while we hold the lock
        if target.exists():
            if dir_sha256(target) == pointer["sha256"]:
                return target
            shutil.rmtree(target)  # damaged by hand: no task can be reading it while we hold the lock
        run_id = source.find_run(SHA_TAG, pointer["sha256"]) or source.find_run(  # the second: stores whose
            f"{SHA_TAG}.{pointer['name']}", pointer["sha256"])  # train_detectors run logged the interest model too
        if run_id is None:
            raise StageError(f"no MLflow run holds model {pointer['name']} ({pointer['sha256'][:12]}): "
                             "re-run its stage")
        with atomic_dir(target) as tmp:
            fetched = source.download_artifacts(run_id, pointer["artifact_path"], tmp / "dl")
            for item in Path(fetched).iterdir():
                shutil.move(str(item), tmp / item.name)
            shutil.rmtree(tmp / "dl", ignore_errors=True)
            if dir_sha256(tmp) != pointer["sha256"]:
                raise StageError(f"model {pointer['name']} from run {run_id} does not match its pointer's sha256")
    return target


def fill_in_folder(root: Path, source: ArtifactSource) -> Path:
    """The project's fill-in model (``FILL_IN_POINTER``), fetched into ``MODEL_CACHE`` once."""
    return materialize(read_pointer(root / FILL_IN_POINTER), source, root / MODEL_CACHE)


def detector_folder(root: Path, source: ArtifactSource) -> Path:
    """The project's privacy-entity detector (``DETECTOR_POINTER``), fetched into ``MODEL_CACHE`` once."""
    return materialize(read_pointer(root / DETECTOR_POINTER), source, root / MODEL_CACHE)


def interests_folder(root: Path, source: ArtifactSource) -> Path | None:
    """The project's IPI interest model (``INTERESTS_POINTER``), or None when train_interests did not train one."""
    pointer = read_pointer(root / INTERESTS_POINTER)
    return None if not pointer.get("sha256") else materialize(pointer, source, root / MODEL_CACHE)
