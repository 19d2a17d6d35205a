"""Text re-identification risk (TRIR, the TAB evaluation's attack; Pilán et al. 2022): who is this document about?

The attacker holds background knowledge about individuals — public text about each person, names included, and
the person's name itself — fits a classifier that maps text to the individual, and applies it to the published
documents. TRIR is the share of published documents whose individual it names (top-1; a document about several
persons is a hit when the guess is any of them), among the documents about a person the background knows; the
**gain** puts it on the privacy criteria's 0-1 scale: (rate − chance) / (1 − chance), clipped to [0, 1], where
chance is the better of two attackers that never read the document (a uniform guess among the known persons, or
among the ones the background mentions most). A gain of 0: the published text tells the attacker nothing about
who it is about; 1: every document is re-identified.

The classifier (the ``taeval`` package fine-tunes a transformer; no model can be downloaded here) is the strongest
of those tried on the demo corpus: TF-IDF over word 1-2-grams and character 2-5-grams within word boundaries
(sublinear tf), each feature weighted by its idf once more (idf², so a rare word a person shares with few others
counts for more than a common template word both happen to use), and the nearest person centroid by cosine. Each
person's centroid averages their background documents and one more background text, their name: the attacker
knows whom each text is about. On the original test documents about a known person (the project's demo: 22; two
larger demo draws: 92 and 205) it re-identifies 98.5-100%; a document that keeps only its person's surname,
34-41%; with the gold spans redacted, no more than chance. A linear SVM on the same features was no stronger (a
document more or less on the originals, as many or fewer kept surnames) at 5-20x the time; without the name text
and with plain idf the centroid found 5-39% of the original documents (the other rare entities of a demo document
outweighed a name).

Person labels are names: they stay inside the fitted attacker; what leaves this module are rates and counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

from textsift.corpus import Span
from textsift.evaluation.privacy import NAME_LABELS

PREDICT_BLOCK = 1024  # texts scored at once: 1,024 x 10,000 persons of float64 scores is 82 MB


def document_persons(text: str, spans: Iterable[Span], labels: Collection[str] = NAME_LABELS) -> frozenset[str]:
    """Who a document is about: the case-folded, whitespace-collapsed full names of its person-name spans."""
    return frozenset(" ".join(text[s.start:s.end].split()).casefold() for s in spans if s.label in labels)


@dataclass(frozen=True)
class Reidentifier:
    """A fitted TRIR attacker: the vectorizers (word and character n-grams, fitted on the background), the idf
    weights of their joined features, the L2-normalized person centroids [persons, features] and the persons (row
    order) with how many background documents mention each."""

    vectorizers: tuple[TfidfVectorizer, ...]
    idf: np.ndarray
    centroids: sp.csr_matrix
    persons: tuple[str, ...]
    mentions: dict[str, int]

    def predict(self, texts: Sequence[str]) -> list[str]:
        """The person whose centroid is nearest (cosine) to each text; ties go to the first in sorted order. Texts go
        in blocks of ``PREDICT_BLOCK``: the dense scores of a block are [block, persons]."""
        best: list[int] = []
        for start in range(0, len(texts), PREDICT_BLOCK):
            scores = _features(self.vectorizers, self.idf, texts[start:start + PREDICT_BLOCK]) @ self.centroids.T
            best.extend(scores.toarray().argmax(axis=1).tolist())
        return [self.persons[i] for i in best]


def _features(vectorizers: Sequence[TfidfVectorizer], idf: np.ndarray, texts: Sequence[str]) -> sp.csr_matrix:
    """TF-IDF of ``texts`` (the vectorizers' features side by side) weighted by idf once more, rows L2-normalized."""
    return normalize(sp.hstack([v.transform(texts) for v in vectorizers]).tocsr() @ sp.diags(idf))


def fit_reidentifier(texts: Sequence[str], persons: Sequence[Collection[str]]) -> Reidentifier | None:
    """The attacker fitted on ``texts`` and who each is about: a text about several persons is background for each;
    one about no one only tells which words are common (the idf: on the demo, a kept surname re-identifies 34-41%
    of documents with it, 24-32% with the idf of the person documents alone; the published corpus would tell the
    attacker as much). None when no text names anyone."""
    mentions = Counter(person for about in persons for person in about)
    if not mentions:
        return None
    vectorizers = (TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2)),
                   TfidfVectorizer(sublinear_tf=True, analyzer="char_wb", ngram_range=(2, 5)))
    for vectorizer in vectorizers:
        vectorizer.fit(texts)
    idf = np.concatenate([v.idf_ for v in vectorizers])
    names = tuple(sorted(mentions))
    samples = [(text, person) for text, about in zip(texts, persons, strict=True) for person in sorted(about)]
    samples += [(name, name) for name in names]  # the attacker knows each person's name
    row = {name: i for i, name in enumerate(names)}
    owner = sp.csr_matrix((np.ones(len(samples)), ([row[p] for _, p in samples], np.arange(len(samples)))),
                          shape=(len(names), len(samples)))
    centroids = normalize(owner @ _features(vectorizers, idf, [text for text, _ in samples])).tocsr()
    return Reidentifier(vectorizers, idf, centroids, names, dict(mentions))


def known_targets(attacker: Reidentifier, persons: Sequence[Collection[str]]) -> list[int]:
    """The rows of the targets the attack is scored on: those about at least one person the background knows."""
    return [i for i, about in enumerate(persons) if any(p in attacker.mentions for p in about)]


def reidentification_hits(attacker: Reidentifier, texts: Sequence[str], persons: Sequence[Collection[str]]
                          ) -> list[bool]:
    """Per target of :func:`known_targets` (in order): is the attacker's guess for its text one of its persons?
    ``texts`` are the published documents, ``persons`` who their originals are about (same order)."""
    rows = known_targets(attacker, persons)
    guesses = attacker.predict([texts[i] for i in rows])
    return [guess in persons[i] for guess, i in zip(guesses, rows, strict=True)]


def chance_rate(attacker: Reidentifier, persons: Sequence[Collection[str]]) -> float:
    """The hit rate, on the known targets, of the better no-information attacker: one that guesses uniformly among
    the background's persons, or among those it mentions most (the prior's mode); NaN without a known target."""
    rows = known_targets(attacker, persons)
    if not rows:
        return float("nan")
    most = max(attacker.mentions.values())
    mode = {p for p, n in attacker.mentions.items() if n == most}

    def expected(guessed: Collection[str]) -> float:
        return float(np.mean([len(guessed & set(persons[i])) / len(guessed) for i in rows]))

    return max(expected(set(attacker.mentions)), expected(mode))


def gain_over_chance(rate: float, chance: float) -> float:
    """(rate − chance) / (1 − chance) clipped to [0, 1]: the share of documents re-identified beyond what a guess
    achieves; NaN when chance is 1 (one known person: nothing to tell apart) or either is NaN."""
    if not np.isfinite(rate) or not np.isfinite(chance) or chance >= 1.0:
        return float("nan")
    return float(np.clip((rate - chance) / (1.0 - chance), 0.0, 1.0))


def trir_metrics(hits: Sequence[bool], chance: float) -> dict[str, float]:
    """``trir.rate`` (share of hits), ``trir.documents`` (how many targets), ``trir.chance`` and ``trir.gain``
    (:func:`gain_over_chance`; absent when undefined); empty without a target (nothing measured, not a rate of 0)."""
    if not hits:
        return {}
    rate = sum(hits) / len(hits)
    metrics = {"trir.rate": rate, "trir.documents": float(len(hits)), "trir.chance": chance}
    gain = gain_over_chance(rate, chance)
    return metrics if np.isnan(gain) else {**metrics, "trir.gain": gain}

