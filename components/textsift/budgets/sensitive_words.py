"""Which sensitive words are filled (step 1) and which are masked for candidates (step 2), METHODS.md §3.

A document's sensitive spans (detector or gold) split by label: spans whose label is in
``replace_labels`` do not matter for the task and become the neutral filler before embedding; the
others stay in the text, and a seeded sample of them (training split only) gives the candidate sets of
the sensitivity step. Every choice is a pure function of (seed, document id, offsets).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from textsift import rng
from textsift.budgets.candidates import CharRange, neutral_fill
from textsift.corpus import Span
from textsift.mechanisms.protected_spans import outermost
from textsift.tokenize import words

WORD_SAMPLE_STAGE = "lrp_budgets.words"


def step_one(text: str, spans: Sequence[Span], replace_labels: Collection[str], filler: str
             ) -> tuple[str, list[CharRange]]:
    """Fill the task-irrelevant spans and locate the task-relevant ones in the filled text (§3 step 1).

    Args:
        text: One document.
        spans: Its sensitive spans (any order; nested or overlapping allowed).
        replace_labels: Labels of the spans that do not matter for the task.
        filler: The neutral filler.

    Returns:
        The filled text, and the outermost regions of the kept spans shifted to their offsets in it.
        A kept span that overlaps a filled one is dropped (part of it is gone already).
    """
    replaced = outermost(s for s in spans if s.label in replace_labels)
    kept = outermost(s for s in spans if s.label not in replace_labels)
    filled = neutral_fill(text, [(s.start, s.end) for s in replaced], filler)
    out: list[CharRange] = []
    for span in kept:
        if any(r.start < span.end and span.start < r.end for r in replaced):
            continue
        shift = sum(len(filler) - (r.end - r.start) for r in replaced if r.end <= span.start)
        out.append((span.start + shift, span.end + shift))
    return filled, out


def sample_words(doc_ids: Sequence[str], spans_per_doc: Sequence[Sequence[CharRange]], max_words: int,
                 seed: int) -> list[tuple[int, CharRange]]:
    """A seeded sample of at most ``max_words`` (document index, span) pairs (§3 step 2).

    Each candidate pair gets the key ``stable_key(seed, stage, "<doc id>:<start>")`` and the smallest keys
    win, so the sample does not depend on document order or on how the corpus was batched.
    """
    pairs = [(i, span) for i, spans in enumerate(spans_per_doc) for span in spans]
    pairs.sort(key=lambda p: rng.stable_key(seed, WORD_SAMPLE_STAGE, f"{doc_ids[p[0]]}:{p[1][0]}"))
    return sorted(pairs[:max_words])


def random_words(doc_ids: Sequence[str], texts: Sequence[str], n: int, seed: int,
                 exclude: Collection[tuple[int, CharRange]] = ()) -> list[tuple[int, CharRange]]:
    """``n`` seeded word tokens of ``texts`` (letters only, 3+ characters), avoiding ``exclude``.

    The top-up of step 2 when a corpus has too few task-relevant sensitive words to estimate Δf_d: the
    sensitivity then covers the substitution of an ordinary word, which the caller reports.
    """
    taken = set(exclude)
    pairs = [(i, (t.start, t.end)) for i, text in enumerate(texts) for t in words(text)
             if len(t.text) >= 3 and t.text.isalpha() and (i, (t.start, t.end)) not in taken]
    pairs.sort(key=lambda p: rng.stable_key(seed, f"{WORD_SAMPLE_STAGE}.random", f"{doc_ids[p[0]]}:{p[1][0]}"))
    return sorted(pairs[:n])
