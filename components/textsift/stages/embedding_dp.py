"""embedding_dp@<setting>: publish one set of noisy sentence embeddings (METHODS.md §3 steps 4-6).

Reads the fit of ``lrp_budgets`` (published-basis embeddings, Δf_d, relevance), picks a, b, γ by
validation score for an ``lrp`` setting (the whole grid goes to MLflow), allocates ε_d (Σ ε_d = ε_max),
adds Lap(0, Δf_d/ε_d) keyed by the setting's release key and each row's id and clean embedding
(:mod:`textsift.releases`: two settings never share a draw) and writes ``data/embeddings/<setting>.parquet``
(doc_id, split, label, embedding) with ``<setting>.manifest.json`` (ε_max, p, a, b, γ, ε_d, Δf_d, the
accounting). Only the noisy set, the manifest and aggregates leave the stage.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from textsift.budgets.allocation import laplace_scale, noise_names, unit_laplace
from textsift.budgets.fit_store import load_basis, vectors_table
from textsift.budgets.publish import Split, choose_shape, epsilon_for, manifest, noisy
from textsift.errors import ConfigError
from textsift.evaluation.outsider import denoise_error_ratio
from textsift.quality.embeddings import check_embeddings
from textsift.releases import release_key
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")
GRID = "grid.csv"


def _split(everything: Split, frame: pd.DataFrame, name: str) -> Split:
    rows = (frame["split"] == name).to_numpy()
    return Split(everything.x[rows], frame["doc_id"][rows].tolist(), frame["label"][rows].tolist(),
                 everything.unit[rows])


def _metrics(setting: Any, shape: tuple[float, float, float] | None, grid: pd.DataFrame, x: np.ndarray,
             published: np.ndarray, epsilon_d: np.ndarray, outsider_noise: np.ndarray) -> dict[str, float]:
    """The set's figures: ε, the chosen shape and its validation score, noise and signal sizes, and how far an
    outsider gets by subtracting noise regenerated under the public seed (``outsider_noise``): ~1.41 (worse than not
    trying) with the secret key, 0 if the noise were keyed by the seed (:mod:`textsift.evaluation.outsider`)."""
    best = grid["score"].max()
    metrics = {
        "epsilon_max": setting.epsilon_max, "p": setting.p, "grid.points": float(len(grid)),
        f"grid.best_validation_{grid['metric'].iloc[0]}": float(best) if np.isfinite(best) else float("nan"),
        "epsilon_d.min": float(epsilon_d.min()), "epsilon_d.max": float(epsilon_d.max()),
        "noise.mean_abs": float(np.abs(published.astype(np.float64) - x).mean()),
        "signal.mean_abs": float(np.abs(x).mean()),
        **({"a": shape[0], "b": shape[1], "gamma": shape[2]} if shape else {}),
        "attack.denoise.error_ratio": denoise_error_ratio(published, x, outsider_noise),
    }
    return {k: v for k, v in metrics.items() if np.isfinite(v)}


def run(ctx: StageContext) -> None:
    """Publish the noisy sentence embeddings of setting ``ctx.instance.key`` (METHODS.md §3 steps 4-6).

    Reads the ``budgets`` fit; picks a, b, γ by validation score (``lrp`` settings), allocates ε_d and adds Laplace
    noise; writes ``noisy_embeddings``, ``embedding_manifest`` and ``embedding_dp_metrics``; logs the metrics, the grid
    and the manifest to MLflow and a line with the allocation, ε_max, the chosen shape and its validation score.
    """
    key = ctx.instance.key or ""
    setting = ctx.params.embedding_dp.settings[key]
    basis = load_basis(ctx.input("budgets"))
    rows, x, sensitivity, relevance = basis.rows, basis.x, basis.sensitivity, basis.relevance
    seed, secret = ctx.params.seed, ctx.secret_key  # the public seed fits classifiers; the noise needs the key
    ids = rows["doc_id"].tolist()
    drawn = release_key(secret, "embedding_dp", key, setting)  # this setting's own noise: no two sets share a draw
    unit = unit_laplace(noise_names(ids, x), x.shape[1], drawn)  # drawn once, scaled per allocation of the grid
    everything = Split(x, ids, rows["label"].tolist(), unit)
    train, validation = _split(everything, rows, "train"), _split(everything, rows, "validation")
    if setting.allocation == "lrp" and not validation.ids:
        raise ConfigError(f"embedding_dp.settings.{key}: choosing a, b, gamma needs a validation split "
                          "(ingest.split.validation > 0)")
    shape, grid = choose_shape(setting, sensitivity, relevance, ctx.params.embedding_dp.grid, train,
                               validation if validation.ids else train, ctx.params.embedding_dp.relevance, seed)
    epsilon_d = epsilon_for(setting, sensitivity, relevance, shape)
    published = noisy(everything, sensitivity, epsilon_d)
    check_embeddings(rows, rows.assign(embedding=list(published)), x.shape[1],
                             name=f"embedding_dp_{key}").raise_if_failed()
    ctx.save("noisy_embeddings", vectors_table(rows, {"embedding": published}))
    ctx.save("embedding_manifest", manifest(key, setting, shape, sensitivity, epsilon_d,
                                            ctx.params.embedding_dp.encoder, len(rows), secret.fingerprint))
    outsider_noise = unit_laplace(ids, x.shape[1], seed) * laplace_scale(sensitivity, epsilon_d)
    metrics = _metrics(setting, shape, grid, x, published, epsilon_d, outsider_noise)
    ctx.save("embedding_dp_metrics", metrics)
    ctx.log_metrics(metrics)
    with tempfile.TemporaryDirectory() as tmp:
        grid.to_csv(Path(tmp) / GRID, index=False, float_format="%.6f")
        ctx.tracker.log_artifact(ctx.run_id, Path(tmp) / GRID, "embedding_dp")
    ctx.tracker.log_artifact(ctx.run_id, ctx.output("embedding_manifest"), "embedding_dp")
    log.info("embedding_dp@%s: %s allocation, epsilon_max %g, shape %s, validation %s %.3f", key,
             setting.allocation, setting.epsilon_max, shape, grid["metric"].iloc[0], grid["score"].max())
