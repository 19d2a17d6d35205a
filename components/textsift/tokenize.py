"""Word and phrase splitting shared by every mechanism and metric.

Tokens carry character offsets, so a mechanism replaces words in place and the text between
them (spaces, punctuation, line breaks) is kept as it was. Matching is on normalized forms
(case-folded unless a caller asks otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"\w+(?:['’\-]\w+)*", flags=re.UNICODE)
_PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"“”]+")
QUOTES = frozenset({"'", '"', "`", "``", "''", "‘", "’", "“", "”"})


@dataclass(frozen=True)
class Token:
    """A word at ``text[start:end]``."""

    start: int
    end: int
    text: str


def words(text: str) -> list[Token]:
    """Word tokens (letters, digits, inner apostrophes and hyphens) with offsets."""
    return [Token(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]


def normal_form(word: str, case_sensitive: bool = False) -> str:
    """The form word lists match on: case-folded unless ``case_sensitive`` (METHODS.md §1.2 choice (b))."""
    return word if case_sensitive else word.casefold()


def phrases(text: str) -> list[str]:
    """Phrases between punctuation marks, as the metric-DP notebook splits text (METHODS.md §2)."""
    return [p.strip() for p in _PHRASE_BREAK.split(text) if p.strip()]


def replace_tokens(text: str, tokens: Sequence[Token], replacements: Mapping[int, str | None]) -> str:
    """Rebuild ``text`` with ``tokens[i]`` replaced by ``replacements[i]``.

    A replacement of ``None`` drops the word together with one following space, so dropped
    words leave no double spaces; tokens without an entry are kept.
    """
    out: list[str] = []
    cursor = 0
    for i, token in enumerate(tokens):
        if i not in replacements:
            continue
        out.append(text[cursor:token.start])
        new = replacements[i]
        cursor = token.end
        if new is None:
            if cursor < len(text) and text[cursor] == " ":
                cursor += 1
        else:
            out.append(new)
    out.append(text[cursor:])
    return "".join(out)


# Metric-DP word splitting (METHODS.md §2), the notebook's rules: phrases end at ! , . ? - ; : ( ) and
# line breaks, words are separated by spaces, '/' counts as a space, and quote characters are dropped
# from words (so a quote is never looked up, and never a word of the output).
_MDP_PHRASE_BREAK = frozenset("!,.?-;:()\n")
_MDP_WORD = re.compile(r"[^\s!,.?;:()\-/\"'`‘’“”]+", flags=re.UNICODE)


def metric_dp_words(text: str) -> list[Token]:
    """Word tokens of the metric-DP notebook, with offsets so punctuation stays in place."""
    return [Token(m.start(), m.end(), m.group()) for m in _MDP_WORD.finditer(text)]


def is_metric_dp_word(word: str) -> bool:
    """True when ``word`` is exactly one metric-DP word (filters vocabularies: no quotes or punctuation)."""
    return _MDP_WORD.fullmatch(word) is not None


def metric_dp_phrases(text: str) -> list[list[str]]:
    """The words of ``text`` grouped by phrase (training sentences for word2vec/fastText)."""
    out: list[list[str]] = []
    current: list[str] = []
    cursor = 0
    for token in metric_dp_words(text):
        if current and not _MDP_PHRASE_BREAK.isdisjoint(text[cursor:token.start]):
            out.append(current)
            current = []
        current.append(token.text)
        cursor = token.end
    if current:
        out.append(current)
    return out
