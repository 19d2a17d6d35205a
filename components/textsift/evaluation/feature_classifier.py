"""The transformer classifier as a linear head on frozen, cached sentence features (METHODS.md §5).

Fine-tuning the encoder once per corpus is most of the evaluation's cost on a CPU, and the frontier only needs
the settings *ranked* by how much a transformer still learns from their text. Here the encoder stays frozen:
each distinct text is encoded once per evaluation — mean-pooled and L2-normalized, the sentence encoder of
METHODS.md §3 step 1 (:mod:`textsift.budgets.sentence_encoder`) — and a logistic regression is fitted on the
features of each corpus's training split. The original test split, scored by every setting, and the texts
that a setting left unchanged are encoded once, not once per setting.

Deterministic: the encoder runs without dropout and the solver (lbfgs) draws nothing. The encoder runs in the
evaluation's precision (``evaluate.inference_precision``): in bfloat16 on a CPU with native bf16 it is 1.9x
faster, its features within cosine 0.9999 of float32's on the demo corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

from textsift.budgets.sentence_encoder import SentenceEncoder, encode
from textsift.device import Resolved, precision_autocast


class FeatureCache:
    """Sentence features of every text seen so far, keyed by the text's sha256 (the texts are not kept)."""

    def __init__(self, encoder: SentenceEncoder, max_length: int, batch_size: int,
                 precision: Resolved = "float32") -> None:
        self.encoder, self.max_length, self.batch_size, self.precision = encoder, max_length, batch_size, precision
        self._rows: dict[bytes, np.ndarray] = {}
        self.encoded = 0  # texts run through the encoder (the rest came from the cache)

    def features(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32 features in input order; only texts not seen before are encoded."""
        keys = [hashlib.sha256(text.encode("utf-8")).digest() for text in texts]
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in self._rows}
        if missing:
            with precision_autocast(self.encoder.device, self.precision):
                vectors = encode(self.encoder, list(missing.values()), self.batch_size, self.max_length)
            self._rows.update(zip(missing, vectors, strict=True))
            self.encoded += len(missing)
        if not keys:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        return np.stack([self._rows[key] for key in keys])


def train_head(features: np.ndarray, labels: Sequence[str], c: float, max_iter: int) -> LogisticRegression:
    """A multinomial logistic regression on (features, labels); its ``classes_`` are the sorted labels."""
    return LogisticRegression(C=c, max_iter=max_iter).fit(features, list(labels))
