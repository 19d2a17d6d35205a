"""Keyword inference from sentence embeddings: does the embedding tell whether a sensitive word was there? (§3)

The attacker holds the encoder and auxiliary labelled text (the training split), embeds it *clean* (original
text, no step-1 filling, no noise) and trains one logistic-regression classifier per target: "a word of
label L is in the document" for each sensitive label, and "this exact word is in the document" for the most
frequent sensitive words. It then attacks the published test embeddings. Success is balanced accuracy
(chance 0.5), averaged over targets; on clean BERT-like embeddings about 0.75 is the published bar.

Two attackers, and the stronger is the one reported (:func:`strongest`): the clean-trained one above, and the
noise-aware one (:func:`train_noise_aware_attackers`), which trains on its clean embeddings plus Laplace noise of
the scales a setting's manifest publishes (λ_d = Δf_d / ε_d), drawn with the public seed (it does not know the
key): it learns which dimensions still carry the word under that noise, where the clean-trained one is fooled by
the noise (issue 32 measured 0.526 against 0.698 at lrp_eps300 on the demo). :func:`advantage` puts a balanced
accuracy on the privacy criteria's 0-1 scale (gain over chance).

Word targets are numbered by frequency (``word#1`` ...), never named: the names would be raw text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

GROUPS = ("all", "kept", "filled")


class Attacker(Protocol):
    """A fitted classifier: presence of a target from an embedding."""

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Predicted presence (bool or 0/1) per row of ``x``."""
        ...


@dataclass(frozen=True)
class Target:
    """One attacked property: its public name, its group (filled in step 1 or kept) and its presence per doc."""

    name: str
    group: str  # "filled" | "kept"
    present: np.ndarray  # bool [n_docs]


def targets(labels_per_doc: Sequence[Collection[str]], words_per_doc: Sequence[Collection[tuple[str, str]]],
            train: np.ndarray, replace_labels: Collection[str], min_positives: int, max_words: int) -> list[Target]:
    """Label and word targets with at least ``min_positives`` training documents that have them and as many without.

    Args:
        labels_per_doc: The sensitive labels present in each document.
        words_per_doc: The (label, casefolded surface) of each sensitive word in each document.
        train: Boolean mask of the training rows (where the attacker learns).
        replace_labels: Labels filled in step 1 (their targets are in group ``filled``).
        min_positives: Least training documents with, and without, the property.
        max_words: Most frequent words attacked one by one.
    """
    n_train = int(train.sum())

    def enough(present: np.ndarray) -> bool:
        positives = int(present[train].sum())
        return min_positives <= positives <= n_train - min_positives

    out = []
    for label in sorted({lab for labs in labels_per_doc for lab in labs}):
        present = np.array([label in labs for labs in labels_per_doc])
        if enough(present):
            out.append(Target(f"label:{label}", "filled" if label in replace_labels else "kept", present))
    counts = Counter(word for i, words in enumerate(words_per_doc) if train[i] for word in set(words))
    rank = 0
    for (label, word), _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if rank >= max_words:
            break
        present = np.array([(label, word) in words for words in words_per_doc])
        if enough(present):
            rank += 1
            out.append(Target(f"word#{rank}", "filled" if label in replace_labels else "kept", present))
    return out


def train_attackers(x_clean: np.ndarray, train: np.ndarray, attacked: Sequence[Target], seed: int
                    ) -> list[Attacker]:
    """One class-balanced logistic regression per target, on the clean training embeddings."""
    return [LogisticRegression(C=10.0, class_weight="balanced", max_iter=2000, random_state=seed)
            .fit(x_clean[train], t.present[train]) for t in attacked]


def train_noise_aware_attackers(x_clean: np.ndarray, train: np.ndarray, attacked: Sequence[Target],
                                scale: np.ndarray, rng: np.random.Generator, seed: int) -> list[Attacker]:
    """One class-balanced logistic regression per target, on the clean training embeddings plus Lap(0, λ_d).

    ``scale`` is the setting's published per-dimension Laplace scale λ_d (its manifest); ``rng`` draws the noise and
    must come from the public seed (the attacker does not hold the key). The features are standardized on the noisy
    training set first: without it, dimensions whose noise is orders of magnitude larger than the signal (tiny ε_d)
    swamp the penalty and the solver, and the attacker is weaker than one that simply rescales.
    """
    noisy = x_clean[train].astype(np.float64) + rng.laplace(0.0, 1.0, size=(int(train.sum()), x_clean.shape[1])) * (
        np.asarray(scale, np.float64))
    return [make_pipeline(StandardScaler(), LogisticRegression(C=10.0, class_weight="balanced", max_iter=2000,
                                                               random_state=seed)).fit(noisy, t.present[train])
            for t in attacked]


def strongest(*successes: Mapping[str, float]) -> dict[str, float]:
    """Per group (``success.all/kept/filled``), the largest success over attackers (NaN ones ignored; NaN when
    none measured it): the strongest attacker is the one reported."""
    out: dict[str, float] = {}
    for group in GROUPS:
        values = [float(s[f"success.{group}"]) for s in successes
                  if f"success.{group}" in s and not np.isnan(s[f"success.{group}"])]
        out[f"success.{group}"] = max(values) if values else float("nan")
    return out


def advantage(balanced_accuracy: float) -> float:
    """2 · balanced accuracy − 1 clipped to [0, 1] (Youden's J: true-positive minus false-positive rate): the
    attacker's gain over chance, on the privacy criteria's 0-1 scale like the outsider's gain; NaN stays NaN."""
    if np.isnan(balanced_accuracy):
        return float("nan")
    return float(np.clip(2.0 * balanced_accuracy - 1.0, 0.0, 1.0))


def attack_success(attackers: Sequence[Attacker], attacked: Sequence[Target], x: np.ndarray,
                   rows: np.ndarray) -> dict[str, float]:
    """Balanced accuracy per target on embeddings ``x[rows]``, and the means overall and per group.

    A target whose tested rows hold one class only gets NaN (it is left out of the means).
    """
    out: dict[str, float] = {}
    for attacker, target in zip(attackers, attacked, strict=True):
        truth = target.present[rows]
        out[target.name] = (float(balanced_accuracy_score(truth, attacker.predict(x[rows])))
                            if 0 < truth.sum() < truth.size else float("nan"))
    for group in GROUPS:
        values = [out[t.name] for t in attacked
                  if group in ("all", t.group) and not np.isnan(out[t.name])]
        out[f"success.{group}"] = float(np.mean(values)) if values else float("nan")
    return out
