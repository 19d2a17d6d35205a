"""Skip a stage instance whose inputs are unchanged, as ``dvc repro`` does: the flow's cache.

What a stage's result depends on is defined once, in the registry, and rendered for both runners: DVC
gets it as ``deps`` and ``params`` in ``dvc.yaml`` (:func:`textsift.dvc_render.stage_deps`), the flow
hashes the very same list here. An instance's *input digest* is the SHA-256 of its name, the values of
the params it declares (its own setting included) and the content of every dependency (data, upstream
outputs, library code). After a successful run the flow records that digest with the digests of the
instance's outputs and its metrics in ``.textsift/stage-cache/<instance>.json``; a later run skips the
instance when the input digest matches and every output still has its recorded content. A run that
failed half-way therefore resumes at the failed stage. Records hold digests and aggregate metrics only.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from textsift.config import Params
from textsift.corpus import remove_stale_temporaries, write_json
from textsift.dvc_render import stage_deps
from textsift.registry import StageInstance

CACHE_DIR = ".textsift/stage-cache"
_CHUNK = 1 << 20
_IGNORED = ("__pycache__", ".pyc")


@lru_cache(maxsize=4096)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    """A file's SHA-256, computed once per (path, mtime, size) in a process: a flow hashes the same
    upstream outputs and code for every instance that depends on them."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def content_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, of a folder's (relative path, file digest) pairs, or ``"missing"``."""
    if path.is_file():
        stat = path.stat()
        return _file_digest(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if path.is_dir():
        digest = hashlib.sha256()
        for child in sorted(p for p in path.rglob("*") if p.is_file() and not any(i in str(p) for i in _IGNORED)):
            digest.update(f"{child.relative_to(path).as_posix()}\0{content_digest(child)}\n".encode())
        return digest.hexdigest()
    return "missing"


def input_digest(instance: StageInstance, params: Params, stage_params: dict[str, Any], root: Path) -> str:
    """The digest of everything the instance's result depends on (the registry's deps and params)."""
    deps = sorted({instance.path(d) for d in stage_deps(instance.stage, params, instance.key)})
    payload = {"instance": instance.name, "params": stage_params,
               "deps": {d: content_digest(root / d) for d in deps}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _outputs(instance: StageInstance, root: Path) -> dict[str, str]:
    return {p: content_digest(root / p) for p in (*instance.outs, *instance.metrics)}


def _record_path(instance: StageInstance, root: Path) -> Path:
    return root / CACHE_DIR / f"{instance.name}.json"


def lookup(instance: StageInstance, digest: str, root: Path) -> dict[str, float] | None:
    """The recorded metrics when ``digest`` matches the record and every output is unchanged, else None."""
    path = _record_path(instance, root)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if record.get("inputs") != digest or record.get("outputs") != _outputs(instance, root):
        return None
    return {k: float(v) for k, v in record.get("metrics", {}).items()}


def store(instance: StageInstance, digest: str, root: Path, metrics: dict[str, float]) -> None:
    """Record a successful run: its input digest, its outputs' digests and its metrics (atomically), once the
    temporaries a run of this instance killed while recording left are gone (the caller holds the run lock)."""
    remove_stale_temporaries(_record_path(instance, root))
    write_json({"inputs": digest, "outputs": _outputs(instance, root), "metrics": metrics},
               _record_path(instance, root))
