"""An index folder ``data/indexes/<source>/``: one versioned artifact (METHODS.md §2).

Files: ``manifest.json`` (embedding source, d, m, β, δ, ω, seed, vocabulary sizes, sha256
digests and exclusion counts, ``projected``), ``vocab.txt`` (labels of the OUTPUT items, one per
line), ``vectors.npy`` (projected output items), ``index.ann`` (Annoy over the outputs),
``projection.npy`` (the d × m matrix, absent when not projected) and, for static sources, the
INPUT lookup table ``inputs.txt`` + ``input_vectors.npy``: every corpus word with an embedding,
rare and private ones included, so they are perturbed rather than released (see
``indexes.vocabulary``). An index without an input table (contextual pairs) looks words up
among its outputs. The caller writes into a folder from ``corpus.atomic_dir``; both word lists
hold corpus words and stay a local DVC output (only the manifest goes to MLflow).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from textsift.corpus import write_json
from textsift.errors import StageError
from textsift.indexes.annoy_index import AnnoySearcher, build_annoy
from textsift.indexes.exact_index import ExactSearcher
from textsift.indexes.projection import ProjectedVocabulary

MANIFEST = "manifest.json"
VOCAB = "vocab.txt"
VECTORS = "vectors.npy"
PROJECTION = "projection.npy"
ANNOY = "index.ann"
INPUT_WORDS = "inputs.txt"
INPUT_VECTORS = "input_vectors.npy"
FORMAT = 2  # 2: outputs filtered by indexes.vocabulary, separate input table (1 released raw corpus words)
# Below this many item cells (items × dims), exact search on a CPU beats Annoy's default query
# (~30 µs vs ~80 µs per query at 1,224 × 181 on 2 cores) and has no approximation error.
EXACT_CPU_MAX_CELLS = 1_000_000


class Searcher(Protocol):
    """Answers the index of the nearest item for each row of a (n, m) query array."""

    def nearest(self, queries: np.ndarray) -> np.ndarray:
        """Row indices (n,) of the items nearest the (n, m) queries: the output words of METHODS.md §2."""
        ...


def _write_words(path: Path, words: list[str]) -> None:
    path.write_text("\n".join(words) + "\n", encoding="utf-8")


def _read_words(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def save_index(folder: Path, items: ProjectedVocabulary, manifest: dict[str, Any], n_trees: int,
               annoy_seed: int, inputs: ProjectedVocabulary | None = None) -> None:
    """Write every file of an index into ``folder`` (a temporary folder of ``atomic_dir``).

    Args:
        folder: target folder.
        items: the output items (what nearest-neighbour search may return).
        manifest: what the index is (no words); ``format`` is added.
        n_trees, annoy_seed: Annoy's build parameters.
        inputs: the input lookup table of a static index (same projection as ``items``);
            None when words are looked up among the outputs (contextual pairs).
    """
    folder.mkdir(parents=True, exist_ok=True)
    _write_words(folder / VOCAB, items.words)
    np.save(folder / VECTORS, items.vectors)
    if inputs is not None:
        _write_words(folder / INPUT_WORDS, inputs.words)
        np.save(folder / INPUT_VECTORS, inputs.vectors)
    if items.projection is not None:
        np.save(folder / PROJECTION, items.projection)
    build_annoy(items.vectors, n_trees, annoy_seed, folder / ANNOY)
    write_json({"format": FORMAT, **manifest}, folder / MANIFEST)


@dataclass(frozen=True)
class LoadedIndex:
    """A saved index: output labels and vectors, projection, manifest and the input table.

    ``input_words``/``input_vectors`` are the lookup table of a static index (the outputs
    themselves when the index was saved without one).
    """

    folder: Path
    words: list[str]
    vectors: np.ndarray
    projection: np.ndarray | None
    manifest: dict[str, Any]
    input_words: list[str]
    input_vectors: np.ndarray

    def searcher(self, search: str, device: str, search_k: int = -1) -> Searcher:
        """``annoy`` (CPU), ``exact`` (matrix products on ``device``) or ``auto``.

        ``auto`` is exact on CUDA, and on a CPU for small indexes (``EXACT_CPU_MAX_CELLS``),
        where it is both faster and free of ANN error; Annoy otherwise.
        """
        small = self.vectors.size <= EXACT_CPU_MAX_CELLS
        if search == "exact" or (search == "auto" and (device == "cuda" or small)):
            return ExactSearcher(self.vectors, device)
        return AnnoySearcher(self.folder / ANNOY, self.vectors.shape[1], search_k)


def load_index(folder: str | Path) -> LoadedIndex:
    """Read an index folder written by :func:`save_index`."""
    folder = Path(folder)
    if not (folder / MANIFEST).exists():
        raise StageError(f"{folder} holds no index: run build_indexes for this source first")
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise StageError(f"{folder} holds an index of format {manifest.get('format')} (this version reads "
                         f"{FORMAT}; format 1 could output rare corpus words): run build_indexes for this source again")
    words = _read_words(folder / VOCAB)
    vectors = np.load(folder / VECTORS)
    projection = np.load(folder / PROJECTION) if (folder / PROJECTION).exists() else None
    if (folder / INPUT_WORDS).exists():
        input_words, input_vectors = _read_words(folder / INPUT_WORDS), np.load(folder / INPUT_VECTORS)
    else:
        input_words, input_vectors = words, vectors
    return LoadedIndex(folder, words, vectors, projection, manifest, input_words, input_vectors)
