"""The LRP budgets fit as a dataset: what ``lrp_budgets`` writes into its folder and its readers load.

The folder (catalog artifact ``budgets``) holds ``embeddings.parquet`` (doc_id, split, label, the published-basis
``embedding``, the ``clean`` embedding of the original text, the sensitive labels and words per document) and
``budgets.npz`` (Δf_d, the training rows' relevance and the published relevance). Embeddings of raw text stay here,
local: they never go to MLflow. Readers (``embedding_dp``, ``evaluate_embeddings``, ``textsift embed``) go through
this module, never through the file names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from textsift.corpus import Span, atomic_dir, write_table

EMBEDDINGS = "embeddings.parquet"
BUDGETS = "budgets.npz"
WORD_SEP = "\x1f"  # "<label>\x1f<casefolded word>" in the sensitive_words column


@dataclass(frozen=True)
class Basis:
    """What a noisy-embedding setting publishes from: the rows, their published-basis embeddings, Δf_d, relevance."""

    rows: pd.DataFrame  # doc_id, split, label
    x: np.ndarray
    sensitivity: np.ndarray
    relevance: np.ndarray


def _vectors(matrix: np.ndarray) -> pa.Array:
    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1), type=pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, matrix.shape[1])


def vectors_table(rows: pd.DataFrame, vectors: dict[str, np.ndarray]) -> pa.Table:
    """``doc_id, split, label`` of ``rows`` and one fixed-size float32 list column per matrix in ``vectors``."""
    columns = {name: pa.array(rows[name].tolist(), pa.string()) for name in ("doc_id", "split", "label")}
    return pa.table({**columns, **{name: _vectors(matrix) for name, matrix in vectors.items()}})


def embeddings_table(corpus: pd.DataFrame, basis: np.ndarray, clean: np.ndarray, spans: list[list[Span]]) -> pa.Table:
    """The fit's rows: published-basis and clean embeddings, and the sensitive labels and words per document."""
    texts = corpus["text"].tolist()
    table = vectors_table(corpus, {"embedding": basis, "clean": clean})
    table = table.append_column("sensitive_labels", pa.array(
        [sorted({s.label for s in doc}) for doc in spans], pa.list_(pa.string())))
    return table.append_column("sensitive_words", pa.array(
        [sorted({f"{s.label}{WORD_SEP}{text[s.start:s.end].casefold()}" for s in doc})
         for text, doc in zip(texts, spans, strict=True)], pa.list_(pa.string())))


def save_fit(folder: Path, table: pa.Table, sensitivity: np.ndarray, train_relevance: np.ndarray,
             relevance: np.ndarray) -> None:
    """Write the fit into ``folder`` atomically (the old folder stays whole until the new one is complete)."""
    with atomic_dir(folder) as tmp:
        write_table(table, tmp / EMBEDDINGS)
        np.savez(tmp / BUDGETS, sensitivity=sensitivity, train_relevance=train_relevance, relevance=relevance)


def budgets_file(folder: Path) -> Path:
    """The fit's ``budgets.npz`` (Δf_d and relevance: aggregates that may go to MLflow)."""
    return folder / BUDGETS


def load_basis(folder: Path) -> Basis:
    """The rows, published-basis embeddings, Δf_d and relevance of the fit in ``folder``."""
    frame = pq.read_table(folder / EMBEDDINGS, columns=["doc_id", "split", "label", "embedding"]).to_pandas()
    x = np.stack(frame.pop("embedding").to_numpy()).astype(np.float32)
    with np.load(folder / BUDGETS) as budgets:
        return Basis(frame, x, budgets["sensitivity"], budgets["relevance"])


def load_rows(folder: Path) -> pd.DataFrame:
    """Every column of the fit's rows, the sensitive words split into (label, word) pairs."""
    fit = pq.read_table(folder / EMBEDDINGS).to_pandas()
    fit["sensitive_words"] = [[tuple(w.split(WORD_SEP, 1)) for w in doc] for doc in fit["sensitive_words"]]
    return fit
