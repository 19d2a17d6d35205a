"""Noisy sentence embeddings for users: the library ``embed(texts, ids, setting)`` and ``textsift embed``.

Publish time of METHODS.md §3: new documents get step 1 (the project's detector finds their sensitive
words; ``replace_labels`` become the filler), are embedded with the project's encoder, and receive
Lap(0, Δf_d/ε_d) with the *fitted* allocation of a named ``embedding_dp`` setting — the ε_d and Δf_d of
its manifest, so a new batch is released exactly like the published set (ε_max per document). The
noise is keyed by the setting's release key and each row's id and clean embedding (:mod:`textsift.releases`):
another file's ``row-1`` draws afresh, and only the published (id, text) reproduces a published row. A
project without the fit runs ``ingest``, ``train_detectors``, ``detect``, ``train_fill_in``, ``lrp_budgets`` and
``embedding_dp@<setting>`` first, as ``textsift detect`` does for its detector.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from textsift import secret_key
from textsift.adhoc import check_output, load_file, rejects_path
from textsift.budgets.allocation import laplace_noise
from textsift.budgets.fit_store import vectors_table
from textsift.budgets.sensitive_words import step_one
from textsift.budgets.sentence_encoder import encode, load_sentence_encoder
from textsift.catalog import path as catalog_path
from textsift.config import Params, load_params
from textsift.corpus import Span, write_table
from textsift.detect import detect
from textsift.device import resolve_device
from textsift.embeddings.locate import model_folder
from textsift.errors import ConfigError, InputError
from textsift.ingest_params import SourceParams
from textsift.prerequisites import ensure
from textsift.releases import release_key
from textsift.tracking import Tracker

log = logging.getLogger("textsift")
def _ensure_fit(root: Path, params: Params, params_path: Path, setting: str) -> dict:
    """The setting's manifest, running the stages that produce it when the project lacks them."""
    ensure(root, params, params_path, [("embedding_manifest", setting)])
    return json.loads((root / catalog_path("embedding_manifest", setting)).read_text(encoding="utf-8"))


def _setting(params: Params, setting: str) -> None:
    if setting not in params.embedding_dp.settings:
        known = ", ".join(sorted(params.embedding_dp.settings)) or "none"
        raise ConfigError(f"embedding_dp.settings has no {setting!r} (known: {known})")


def embed(texts: Sequence[str], doc_ids: Sequence[str], setting: str, root: str | Path = ".",
          params_path: str | Path | None = None, device: str | None = None,
          spans: Sequence[Sequence[Span]] | None = None) -> np.ndarray:
    """Noisy document embeddings of ``texts`` with the fitted allocation of ``setting`` (METHODS.md §3).

    Args:
        texts: Documents. Not mutated.
        doc_ids: One unique id per text: the noise is keyed by it and the text's clean embedding.
        setting: A name of ``embedding_dp.settings``.
        root: The textsift project (its fit is built first when missing).
        params_path: Its params file (default ``<root>/params.yaml``).
        device: ``cpu``/``cuda``/``auto`` (default the params' ``device``).
        spans: Sensitive spans per text; default: the project's detector.

    Returns:
        Noisy embeddings, shape [len(texts), dim], float32; each row is ε_max-DP as the manifest states.
    """
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not one string: embed([text], [id], setting)")
    root = Path(root).resolve()
    params_file = Path(params_path).resolve() if params_path else root / "params.yaml"
    params = load_params(params_file)
    _setting(params, setting)
    if len(texts) != len(doc_ids) or len(set(doc_ids)) != len(doc_ids):
        raise InputError(f"embed() needs one unique id per text ({len(texts)} texts, {len(set(doc_ids))} ids)")
    manifest = _ensure_fit(root, params, params_file, setting)
    found = list(spans) if spans is not None else detect(texts, root, params_file, device)
    options = params.embedding_dp
    filled = [step_one(t, s, options.replace_labels, options.filler)[0] for t, s in zip(texts, found, strict=True)]
    folder = model_folder(options.encoder, root, Tracker(params.tracking, root), "embedding_dp.encoder")
    encoder = load_sentence_encoder(folder, resolve_device(device or params.device))
    clean = encode(encoder, filled, options.batch_size, options.max_length)
    return laplace_noise(clean, [str(i) for i in doc_ids], np.asarray(manifest["sensitivity"]),
                         np.asarray(manifest["epsilon_d"]),
                         release_key(secret_key.ensure(root), "embedding_dp", setting, options.settings[setting]))


def embed_file(input_path: Path, output_path: Path, setting: str, source: SourceParams, params_path: Path,
               root: Path, device: str | None = None) -> dict[str, float]:
    """Noisy embeddings of every valid record of a file, written as Parquet ``doc_id, split, label, embedding``.

    Records are read and validated like ingest does (rejects to ``<output>.rejects.parquet``); the
    output keeps the input's ids (``row-N`` when it has none) and holds no text.
    """
    if output_path.suffix.lower() != ".parquet":
        raise InputError(f"{output_path.name}: embedding output must end in .parquet")
    check_output(output_path, input_path)
    params = load_params(params_path)
    _setting(params, setting)
    corpus, _ = load_file(input_path, source, params, rejects=rejects_path(output_path))
    started = time.perf_counter()
    vectors = embed(corpus["text"].tolist(), corpus["doc_id"].tolist(), setting, root, params_path, device)
    seconds = time.perf_counter() - started
    write_table(vectors_table(corpus, {"embedding": vectors}), output_path)
    metrics = {"docs": float(len(corpus)), "dim": float(vectors.shape[1]),
               "docs_per_s": len(corpus) / max(seconds, 1e-9)}
    log.info("embedded %d records with %s (%.0f docs/s)", len(corpus), setting, metrics["docs_per_s"])
    return metrics
