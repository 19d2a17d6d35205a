"""Annoy index over projected vectors: built once, queried in batches (METHODS.md §2).

The index file is memory-mapped when loaded, so a searcher pickles as its path and a
Dask/process worker re-opens it in milliseconds instead of receiving the index bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from annoy import AnnoyIndex

METRIC = "euclidean"


def build_annoy(vectors: np.ndarray, n_trees: int, seed: int, path: str | Path) -> None:
    """Build a Euclidean Annoy index over the rows of ``vectors`` and save it to ``path``.

    Item i is row i. One build thread and a fixed seed make the file reproducible.

    Args:
        vectors: (n, m) float array, the projected vocabulary (or contextual pairs).
        n_trees: number of random-projection trees (more: better recall, larger file).
        seed: Annoy's tree-building seed (derived from textsift.rng by the caller).
        path: file to write (the caller writes inside an atomic folder).
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    index = AnnoyIndex(vectors.shape[1], METRIC)
    index.set_seed(int(seed) % (2**31))
    for item, row in enumerate(vectors.tolist()):
        index.add_item(item, row)
    index.build(n_trees, n_jobs=1)
    index.save(str(path))
    index.unload()


class AnnoySearcher:
    """Nearest item of each query row, by Annoy on the CPU.

    Args:
        path: a saved Annoy file (memory-mapped).
        dim: its vector dimension m.
        search_k: nodes inspected per query; -1 is Annoy's default (n_trees for one neighbour).
    """

    def __init__(self, path: str | Path, dim: int, search_k: int = -1) -> None:
        self.path = str(path)
        self.dim = dim
        self.search_k = search_k
        self._index = AnnoyIndex(dim, METRIC)
        self._index.load(self.path)

    def __reduce__(self) -> tuple[type, tuple[str, int, int]]:
        return (AnnoySearcher, (self.path, self.dim, self.search_k))

    def nearest(self, queries: np.ndarray) -> np.ndarray:
        """Index of the (approximately) nearest item for each row of ``queries`` (n, m)."""
        get = self._index.get_nns_by_vector
        k = self.search_k
        rows = np.asarray(queries, dtype=np.float32).tolist()
        return np.fromiter((get(row, 1, k)[0] for row in rows), dtype=np.int64, count=len(rows))

