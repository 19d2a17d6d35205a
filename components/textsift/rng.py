"""Random generators keyed by (key, stage, document id).

Every random draw in textsift comes from a generator derived here, so a document's draws depend
only on the key, the stage and the document's id — never on batch size, row order or worker count.
The key is either the public ``seed`` of params.yaml, for what is not secret (splits, model
initialisation, bootstrap, the demo corpus), or the project's :class:`~textsift.secret_key.SecretKey`,
for every draw that decides what is released: then the digest is BLAKE2b *keyed* with the secret
(a PRF), and nobody without it can regenerate a draw.
"""

from __future__ import annotations

import hashlib
from typing import TypeAlias

import numpy as np

from textsift.secret_key import SecretKey

Key: TypeAlias = int | SecretKey  # the public seed, or the secret key of privacy draws


def _digest(key: Key, stage: str, name: str) -> bytes:
    if isinstance(key, SecretKey):
        return hashlib.blake2b(f"{stage}\x1f{name}".encode(), key=key.material, digest_size=16).digest()
    payload = f"{key}\x1f{stage}\x1f{name}".encode()
    return hashlib.blake2b(payload, digest_size=16).digest()


def stable_key(key: Key, stage: str, name: str) -> int:
    """A 64-bit integer that is a pure function of (key, stage, name); used as a sort key or a seed."""
    return int.from_bytes(_digest(key, stage, name)[:8], "little")


def generator(key: Key, stage: str, name: str = "") -> np.random.Generator:
    """A numpy Generator for one (key, stage, name) triple, e.g. name = document id."""
    entropy = int.from_bytes(_digest(key, stage, name), "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def torch_seed(key: Key, stage: str, name: str = "") -> int:
    """A 63-bit seed for ``torch.Generator.manual_seed`` derived the same way."""
    return stable_key(key, stage, name) & ((1 << 63) - 1)
