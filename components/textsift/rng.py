"""Seeded random generators keyed by (seed, stage, document id).

Every random draw in textsift comes from a generator derived here, so a document's
draws depend only on the seed, the stage and the document's id — never on batch size,
row order or worker count (DEVELOPERS.md, "Reproducible").
"""

from __future__ import annotations

import hashlib

import numpy as np


def _digest(seed: int, stage: str, key: str) -> bytes:
    payload = f"{seed}\x1f{stage}\x1f{key}".encode()
    return hashlib.blake2b(payload, digest_size=16).digest()


def stable_key(seed: int, stage: str, key: str) -> int:
    """A 64-bit integer that is a pure function of (seed, stage, key); used as a sort key."""
    return int.from_bytes(_digest(seed, stage, key)[:8], "little")


def generator(seed: int, stage: str, key: str = "") -> np.random.Generator:
    """A numpy Generator for one (seed, stage, key) triple, e.g. key = document id."""
    entropy = int.from_bytes(_digest(seed, stage, key), "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def torch_seed(seed: int, stage: str, key: str = "") -> int:
    """A 63-bit seed for ``torch.Generator.manual_seed`` derived the same way."""
    return stable_key(seed, stage, key) & ((1 << 63) - 1)
