"""Replacement partners for DataSifterText's obfuscation (METHODS.md §1.4 steps 1, 2 and 4).

D(W) is the TF-IDF matrix of the (masked and filled) documents, clustered by a seeded
MiniBatchKMeans into ``k_clusters`` (at most one per document). For document i, up to
``max_candidates`` other documents of its cluster are sampled, ``dist(i, j) = 1 - cos(D_i, D_j)``
ranks them, and the partner is drawn uniformly from the closest ``partner_pool_frac`` of them
(at least one). Draws come from the document's own generator (key, doc id).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sklearn.cluster import MiniBatchKMeans
from sklearn.feature_extraction.text import TfidfVectorizer

from textsift.rng import Key, generator

NO_PARTNER = -1
BLOCK = 256  # documents whose similarities are computed in one sparse product (speed only)


def tfidf(texts: Sequence[str]) -> sparse.csr_matrix:
    """D(W): L2-normalized TF-IDF rows (so a dot product is the cosine similarity)."""
    return TfidfVectorizer().fit_transform(texts).tocsr()


def cluster(matrix: sparse.csr_matrix, k: int, key: Key) -> np.ndarray:
    """MiniBatchKMeans labels with ``min(k, n_docs)`` clusters, seeded from ``textsift.rng``."""
    n_clusters = min(k, matrix.shape[0])
    if n_clusters <= 1:
        return np.zeros(matrix.shape[0], dtype=np.int64)
    state = int(generator(key, "datasifter.kmeans").integers(2**31 - 1))
    return MiniBatchKMeans(n_clusters=n_clusters, random_state=state).fit_predict(matrix)


def pool_size(n_candidates: int, fraction: float) -> int:
    """How many of the closest candidates form the pool: ``ceil(fraction * n)``, at least 1."""
    return max(1, math.ceil(round(fraction * n_candidates, 9)))


def pick_partner(
    others: np.ndarray, similarity: np.ndarray, rng: np.random.Generator, max_candidates: int, pool_frac: float
) -> int:
    """Sample candidates among ``others``, keep the closest ``pool_frac``, draw one uniformly.

    Args:
        others: indices of the other documents of the cluster.
        similarity: cosine similarity of the document to each of ``others`` (same order).
        rng: the document's generator.
        max_candidates: at most this many candidates are sampled (all when fewer).
        pool_frac: share of the closest candidates the partner is drawn from.
    """
    chosen = np.arange(len(others))
    if len(others) > max_candidates:
        chosen = np.sort(rng.choice(len(others), size=max_candidates, replace=False))
    distance = 1.0 - similarity[chosen]
    closest = np.lexsort((others[chosen], distance))[: pool_size(len(chosen), pool_frac)]
    return int(others[chosen][closest[rng.integers(len(closest))]])


def choose_partners(
    matrix: sparse.csr_matrix, labels: np.ndarray, doc_ids: Sequence[str], key: Key,
    max_candidates: int, pool_frac: float,
) -> np.ndarray:
    """The partner's row index per document, ``NO_PARTNER`` when its cluster has no other document."""
    partners = np.full(matrix.shape[0], NO_PARTNER, dtype=np.int64)
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        if len(members) < 2:
            continue
        block_matrix = matrix[members].T.tocsc()
        for begin in range(0, len(members), BLOCK):
            rows = members[begin:begin + BLOCK]
            sims = (matrix[rows] @ block_matrix).toarray()
            for r, i in enumerate(rows):
                keep = members != i
                rng = generator(key, "datasifter.partner", doc_ids[i])
                partners[i] = pick_partner(members[keep], sims[r][keep], rng, max_candidates, pool_frac)
    return partners
