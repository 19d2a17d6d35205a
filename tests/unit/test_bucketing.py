"""Length buckets: every example once per epoch, far less padding than random batches, seeded and random."""

from __future__ import annotations

import numpy as np

from textsift.models.bucketing import length_batches


def test_length_batches_cover_every_window_once_in_batches_of_similar_length() -> None:
    rng = np.random.default_rng(3)
    lengths = rng.integers(5, 128, size=1000)
    batches = length_batches(lengths, 16, np.random.default_rng(0), bucket_batches=10)
    assert len(batches) == 63 and sorted(np.concatenate(batches).tolist()) == list(range(1000))
    padded = sum(len(b) * lengths[b].max() for b in batches)
    shuffled = np.random.default_rng(0).permutation(1000)
    random_padded = sum(len(b) * lengths[b].max() for b in np.array_split(shuffled, 63))
    assert padded < 0.7 * random_padded  # far less padding than random batches
    again = length_batches(lengths, 16, np.random.default_rng(0), bucket_batches=10)
    assert all(np.array_equal(a, b) for a, b in zip(batches, again, strict=True))  # seeded
    other = length_batches(lengths, 16, np.random.default_rng(1), bucket_batches=10)
    assert not all(np.array_equal(a, b) for a, b in zip(batches, other, strict=True))  # and random
