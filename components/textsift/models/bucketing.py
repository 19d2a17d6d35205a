"""Batches of similar length for training loops: padding is compute, and attention's is quadratic.

A random batch is padded to its longest member. On a mix of short and long texts (tweets, synthetic
sentences, documents) that is twice the tokens of the texts themselves, and GlobalPointer's pair scores and
attention grow with the square of the padded length. Sorting within large random chunks keeps batches
similar in length while which examples meet, and the order batches come in, stay random.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BUCKET_BATCHES = 50  # batches per length bucket: sorted within a shuffled chunk of this many batches


def length_batches(lengths: Sequence[int], batch_size: int, rng: np.random.Generator,
                   bucket_batches: int = BUCKET_BATCHES) -> list[np.ndarray]:
    """One epoch's batches: a random permutation cut into chunks of ``bucket_batches`` batches, each chunk sorted
    by length and cut into batches, the batches then shuffled. Every index once; ``ceil(n / batch_size)``
    batches; a batch's windows have similar lengths, and which windows meet stays random."""
    lengths = np.asarray(lengths)
    order, chunk = rng.permutation(len(lengths)), batch_size * bucket_batches
    batches: list[np.ndarray] = []
    for begin in range(0, len(order), chunk):
        part = order[begin:begin + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]
