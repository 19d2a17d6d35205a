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

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from textsift import quality
from textsift.budgets.allocation import laplace_scale, noise_names, unit_laplace
from textsift.budgets.publish import Split, choose_shape, epsilon_for, manifest, noisy
from textsift.corpus import write_json, write_table
from textsift.errors import ConfigError
from textsift.evaluation.outsider import denoise_error_ratio
from textsift.releases import release_key
from textsift.stages import StageContext
from textsift.stages.lrp_budgets import BUDGETS, EMBEDDINGS, vectors_table

log = logging.getLogger("textsift")
GRID = "grid.csv"


def read_basis(ctx: StageContext) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """The fit's rows (doc_id, split, label), their published-basis embeddings, Δf_d and relevance."""
    folder = ctx.input("budgets")
    frame = pq.read_table(folder / EMBEDDINGS, columns=["doc_id", "split", "label", "embedding"]).to_pandas()
    x = np.stack(frame.pop("embedding").to_numpy()).astype(np.float32)
    with np.load(folder / BUDGETS) as budgets:
        return frame, x, budgets["sensitivity"], budgets["relevance"]


def _split(everything: Split, frame: pd.DataFrame, name: str) -> Split:
    rows = (frame["split"] == name).to_numpy()
    return Split(everything.x[rows], frame["doc_id"][rows].tolist(), frame["label"][rows].tolist(),
                 everything.unit[rows])


def run(ctx: StageContext) -> None:
    """Publish the noisy sentence embeddings of setting ``ctx.instance.key`` (METHODS.md §3 steps 4-6).

    Reads the ``budgets`` fit; picks a, b, γ by validation score (``lrp`` settings), allocates ε_d and adds Laplace
    noise; writes ``noisy_embeddings``, ``embedding_manifest`` and ``embedding_dp_metrics``; logs the metrics, the grid
    and the manifest to MLflow and a line with the allocation, ε_max, the chosen shape and its validation score.
    """
    key = ctx.instance.key or ""
    setting = ctx.params.embedding_dp.settings[key]
    rows, x, sensitivity, relevance = read_basis(ctx)
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
    output = rows.assign(embedding=list(published))
    quality.check_embeddings(rows, output, x.shape[1], name=f"embedding_dp_{key}").raise_if_failed()
    write_table(vectors_table(rows, {"embedding": published}), ctx.output("noisy_embeddings"))
    described = manifest(key, setting, shape, sensitivity, epsilon_d, ctx.params.embedding_dp.encoder, len(rows),
                         secret.fingerprint)
    write_json(described, ctx.output("embedding_manifest"))
    best = grid["score"].max()
    noise = published.astype(np.float64) - x
    metrics = {
        "epsilon_max": setting.epsilon_max, "p": setting.p, "grid.points": float(len(grid)),
        f"grid.best_validation_{grid['metric'].iloc[0]}": float(best) if np.isfinite(best) else float("nan"),
        "epsilon_d.min": float(epsilon_d.min()), "epsilon_d.max": float(epsilon_d.max()),
        "noise.mean_abs": float(np.abs(noise).mean()), "signal.mean_abs": float(np.abs(x).mean()),
        **({"a": shape[0], "b": shape[1], "gamma": shape[2]} if shape else {}),
        # the outsider subtracts noise regenerated under the public seed: ~1.41 (worse than not trying) with
        # the secret key, 0 if the noise were keyed by the seed (textsift.evaluation.outsider)
        "attack.denoise.error_ratio": denoise_error_ratio(
            published, x, unit_laplace(ids, x.shape[1], seed) * laplace_scale(sensitivity, epsilon_d)),
    }
    metrics = {k: v for k, v in metrics.items() if np.isfinite(v)}
    ctx.write_metrics("embedding_dp_metrics", metrics)
    ctx.log_metrics(metrics)
    with tempfile.TemporaryDirectory() as tmp:
        grid.to_csv(Path(tmp) / GRID, index=False, float_format="%.6f")
        ctx.tracker.log_artifact(ctx.run_id, Path(tmp) / GRID, "embedding_dp")
    ctx.tracker.log_artifact(ctx.run_id, ctx.output("embedding_manifest"), "embedding_dp")
    log.info("embedding_dp@%s: %s allocation, epsilon_max %g, shape %s, validation %s %.3f", key,
             setting.allocation, setting.epsilon_max, shape, grid["metric"].iloc[0], best)
