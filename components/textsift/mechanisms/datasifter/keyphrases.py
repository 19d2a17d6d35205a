"""Ranked keyphrases per document for DataSifterText's obfuscation (METHODS.md §1.4 step 3).

RAKE (Rose et al. 2010), own implementation with the shipped stop words (rake-nltk needs nltk
data): candidate phrases are maximal runs of words with no stop word and no punctuation between
them; a word scores degree/frequency over all candidate occurrences, a phrase the sum of its
words' scores. TextRank: as the reference code, the key sentences of a TextRank summary (summa),
ranked by their PageRank score. Both return every occurrence's character offsets, so a swap
replaces text in place. Ties rank by first position, so results are deterministic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from summa import summarizer

from textsift.tokenize import normal_form, words


@dataclass(frozen=True)
class Keyphrase:
    """A ranked phrase (or sentence): its normal form, score and ``(start, end)`` of each occurrence."""

    key: str
    score: float
    spans: tuple[tuple[int, int], ...]

    def surface(self, text: str) -> str:
        """The phrase as first written in ``text``."""
        start, end = self.spans[0]
        return text[start:end]


def candidate_runs(text: str, stop_words: Collection[str]) -> list[tuple[tuple[str, ...], int, int]]:
    """RAKE's candidates: ``(normal-form words, start, end)`` of each run, in text order."""
    runs: list[tuple[tuple[str, ...], int, int]] = []
    current: list[str] = []
    start = end = 0
    for token in words(text):
        form = normal_form(token.text)
        broken = bool(text[end:token.start].strip())  # punctuation between the words
        if current and (broken or form in stop_words):
            runs.append((tuple(current), start, end))
            current = []
        if form not in stop_words:
            if not current:
                start = token.start
            current.append(form)
        end = token.end
    if current:
        runs.append((tuple(current), start, end))
    return runs


def rake(text: str, stop_words: Collection[str]) -> list[Keyphrase]:
    """RAKE keyphrases of ``text``, best first (ties: earlier first occurrence first)."""
    runs = candidate_runs(text, stop_words)
    frequency: dict[str, int] = defaultdict(int)
    degree: dict[str, int] = defaultdict(int)
    spans: dict[tuple[str, ...], list[tuple[int, int]]] = defaultdict(list)
    for phrase, start, end in runs:
        spans[phrase].append((start, end))
        for word in phrase:
            frequency[word] += 1
            degree[word] += len(phrase)
    scored = [
        Keyphrase(" ".join(phrase), sum(degree[w] / frequency[w] for w in phrase), tuple(where))
        for phrase, where in spans.items()
    ]
    return sorted(scored, key=lambda k: (-k.score, k.spans[0][0]))


def textrank_sentences(text: str) -> list[Keyphrase]:
    """Sentences of ``text`` that TextRank scores above zero, best first, with their offsets."""
    ranked = summarizer.summarize(text, ratio=1.0, scores=True)
    found: list[Keyphrase] = []
    cursor = 0
    for sentence, score in ranked:  # summa returns them in text order
        start = text.find(sentence, cursor)
        if start < 0 or score <= 0:
            continue
        cursor = start + len(sentence)
        found.append(Keyphrase(normal_form(sentence), float(score), ((start, cursor),)))
    return sorted(found, key=lambda k: (-k.score, k.spans[0][0]))
