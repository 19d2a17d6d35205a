"""Exact nearest neighbour by batched matrix products (METHODS.md §2, the GPU path).

argmin_j ||q − v_j||² = argmin_j (||v_j||² − 2 q·v_j): one matrix product per block of
queries, on CUDA when available. It returns the true nearest neighbour (Annoy returns it up to
its approximation error); on a CPU it is the faster choice for small indexes and the reference
that Annoy is checked against. torch is imported when a searcher is built, not with the module: the metric-DP
mechanism imports this module, and `textsift dvc params` (every `dvc repro`) imports the mechanisms to list their
code, which paid ~2.5 s for torch.
"""

from __future__ import annotations

import numpy as np

# queries × items scored at once: 64 MiB of float32 on a CPU (cache-friendly), 1 GiB on a GPU
_BLOCK_ELEMENTS = {"cpu": 1 << 24, "cuda": 1 << 28}


class ExactSearcher:
    """Exact Euclidean nearest item for batches of queries.

    Args:
        vectors: (n, m) items (projected vocabulary or contextual pairs).
        device: ``cpu`` or ``cuda``; the items are moved there once.
    """

    def __init__(self, vectors: np.ndarray, device: str = "cpu") -> None:
        import torch

        self.device = device
        self._items = torch.as_tensor(np.asarray(vectors, dtype=np.float32), device=device)
        self._sq_norms = (self._items * self._items).sum(dim=1)
        budget = _BLOCK_ELEMENTS["cuda" if str(device).startswith("cuda") else "cpu"]
        self._block = max(1, budget // max(1, len(self._items)))

    def nearest(self, queries: np.ndarray) -> np.ndarray:
        """Index of the nearest item for each row of ``queries`` (n, m)."""
        import torch

        queries = np.asarray(queries, dtype=np.float32)
        out = np.empty(len(queries), dtype=np.int64)
        with torch.inference_mode():
            for start in range(0, len(queries), self._block):
                block = torch.as_tensor(queries[start:start + self._block], device=self.device)
                scores = self._sq_norms - 2.0 * (block @ self._items.T)
                out[start:start + len(block)] = scores.argmin(dim=1).cpu().numpy()
        return out

    def k_nearest_distances(self, queries: np.ndarray, k: int) -> np.ndarray:
        """Euclidean distances (n, k) from each query to its k nearest items, ascending."""
        import torch

        queries = np.asarray(queries, dtype=np.float32)
        k = min(k, len(self._items))
        out = np.empty((len(queries), k), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(queries), self._block):
                block = torch.as_tensor(queries[start:start + self._block], device=self.device)
                sq = self._sq_norms - 2.0 * (block @ self._items.T) + (block * block).sum(dim=1, keepdim=True)
                smallest = torch.topk(sq, k, dim=1, largest=False).values.clamp_min(0).sqrt()
                out[start:start + len(block)] = smallest.cpu().numpy()
        return out
