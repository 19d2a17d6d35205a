"""DataSifterText keyphrase-swap obfuscation, Algorithm 1 lines 32-50 (METHODS.md §1.4).

Replacement methods, each between document i and its partner j* (``partners.py``):
- ``rake_keyphrase`` (q): every occurrence of i's r-th RAKE keyphrase becomes j*'s r-th
  keyphrase, for r = 1..q (ranks j* lacks are skipped);
- ``rake_index`` (1): i's text from the first occurrence of its top RAKE keyphrase to the end
  becomes j*'s text from its top keyphrase to the end;
- ``textrank`` (q): i's r-th TextRank key sentence becomes j*'s r-th, r = 1..q;
- ``none``: no obfuscation.
The input is the masked-and-filled corpus: partners' text is never raw text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np

from textsift.mechanisms.datasifter.keyphrases import Keyphrase, rake, textrank_sentences
from textsift.mechanisms.datasifter.partners import NO_PARTNER, choose_partners, cluster, tfidf
from textsift.rng import Key


@dataclass(frozen=True)
class ObfuscationResult:
    """Output texts (row order kept), whether each changed, and the partner row (``-1``: none)."""

    texts: list[str]
    replaced: np.ndarray
    partners: np.ndarray


def _rebuild(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, cursor = [], 0
    for start, end, new in sorted(edits):
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def swap_ranked(text: str, own: Sequence[Keyphrase], partner_text: str, partner: Sequence[Keyphrase], q: int) -> str:
    """Replace every occurrence of ``own[r]`` by ``partner[r]``'s surface, r < q (rake_keyphrase, textrank)."""
    edits = [
        (start, end, partner[r].surface(partner_text))
        for r in range(min(q, len(own), len(partner)))
        for start, end in own[r].spans
    ]
    return _rebuild(text, edits)


def swap_tail(text: str, own: Sequence[Keyphrase], partner_text: str, partner: Sequence[Keyphrase]) -> str:
    """From ``own``'s top phrase to the end, take ``partner_text`` from its top phrase on (rake_index)."""
    if not own or not partner:
        return text
    return text[: own[0].spans[0][0]] + partner_text[partner[0].spans[0][0]:]


def obfuscate(
    texts: Sequence[str], doc_ids: Sequence[str], method: str, q: int, k_clusters: int, max_candidates: int,
    pool_frac: float, key: Key, stop_words: Collection[str],
) -> ObfuscationResult:
    """Swap keyphrases (or sentences) of each document with its partner's (``method != "none"``).

    Args:
        texts: the masked-and-filled documents.
        doc_ids: their ids (key the per-document generators).
        method: ``none``, ``rake_keyphrase``, ``rake_index`` or ``textrank``.
        q: phrases or sentences swapped per document.
        k_clusters: MiniBatchKMeans clusters (capped at the number of documents).
        max_candidates: candidates sampled per document.
        pool_frac: share of the closest candidates the partner is drawn from.
        key: the release key (the project's secret key derived for the setting; a public seed in tests).
        stop_words: RAKE's phrase delimiters.
    """
    if method == "none" or len(texts) < 2:
        return ObfuscationResult(list(texts), np.zeros(len(texts), bool), np.full(len(texts), NO_PARTNER))
    matrix = tfidf(texts)
    partners = choose_partners(matrix, cluster(matrix, k_clusters, key), doc_ids, key, max_candidates, pool_frac)
    extract: Callable[[str], list[Keyphrase]] = (
        textrank_sentences if method == "textrank" else (lambda text: rake(text, stop_words))
    )
    phrases = [extract(text) for text in texts]
    out = []
    for i, j in enumerate(partners.tolist()):
        if j == NO_PARTNER:
            out.append(texts[i])
        elif method == "rake_index":
            out.append(swap_tail(texts[i], phrases[i], texts[j], phrases[j]))
        else:
            out.append(swap_ranked(texts[i], phrases[i], texts[j], phrases[j], q))
    replaced = np.array([a != b for a, b in zip(texts, out, strict=True)], dtype=bool)
    return ObfuscationResult(out, replaced, partners)
