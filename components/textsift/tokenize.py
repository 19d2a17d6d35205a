"""Word and phrase splitting shared by every mechanism and metric.

Tokens carry character offsets, so a mechanism replaces words in place and the text between
them (spaces, punctuation, line breaks, markup) is kept as it was. Matching is on normalized forms
(case-folded unless a caller asks otherwise).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def _combining_marks() -> str:
    """A regex class body of every combining mark (Unicode categories Mn, Mc, Me: planes 0, 1 and 14 hold them)."""
    ranges: list[list[int]] = []
    for plane in (range(0x20000), range(0xE0000, 0xE1000)):
        for c in plane:
            if unicodedata.category(chr(c))[0] == "M":
                if ranges and ranges[-1][1] == c - 1:
                    ranges[-1][1] = c
                else:
                    ranges.append([c, c])
    return "".join(f"{chr(a)}-{chr(b)}" for a, b in ranges)


COMBINING_MARKS = _combining_marks()
"""Combining marks as a regex class body: they belong to the character before them (a decomposed accent)."""
HTML_BREAK = re.compile(r"<br\s*/?>", flags=re.IGNORECASE)
"""HTML line-break markup (``<br />``, as review corpora carry it): a line break, never a word."""
_LETTERS = rf"[\w{COMBINING_MARKS}]+"
# markup is matched whole (group ``markup``, then dropped) so the "br" inside it is never a word
_WORD = re.compile(rf"(?P<markup>{HTML_BREAK.pattern})|{_LETTERS}(?:['’\-]{_LETTERS})*", flags=re.IGNORECASE)
_PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"“”]+")
QUOTES = frozenset({"'", '"', "`", "``", "''", "‘", "’", "“", "”"})


@dataclass(frozen=True)
class Token:
    """A word at ``text[start:end]``."""

    start: int
    end: int
    text: str


def words(text: str) -> list[Token]:
    """Word tokens (letters, digits, their combining marks, inner apostrophes and hyphens) with offsets; ``<br />``
    markup holds none."""
    return [Token(m.start(), m.end(), m.group()) for m in _WORD.finditer(text) if m.lastgroup is None]


def normal_form(word: str, case_sensitive: bool = False) -> str:
    """The form word lists match on: case-folded unless ``case_sensitive`` (METHODS.md §1.2 choice (b))."""
    return word if case_sensitive else word.casefold()


def phrases(text: str) -> list[str]:
    """Phrases between punctuation marks, as the metric-DP notebook splits text (METHODS.md §2)."""
    return [p.strip() for p in _PHRASE_BREAK.split(text) if p.strip()]


def replace_tokens(text: str, tokens: Sequence[Token], replacements: Mapping[int, str | None]) -> str:
    """Rebuild ``text`` with ``tokens[i]`` replaced by ``replacements[i]``.

    A replacement of ``None`` drops the word and only the word: the text around it (its spaces included) is the
    input's, byte for byte, like everything outside a replaced span. Tokens without an entry are kept.
    """
    out: list[str] = []
    cursor = 0
    for i, token in enumerate(tokens):
        if i not in replacements:
            continue
        out.append(text[cursor:token.start])
        out.append(replacements[i] or "")
        cursor = token.end
    out.append(text[cursor:])
    return "".join(out)


# Metric-DP word splitting (METHODS.md §2), the notebook's rules: phrases end at ! , . ? - ; : ( ) and
# line breaks (``<br />`` markup among them), words are separated by spaces, '/' counts as a space, and quote
# characters are dropped from words (so a quote is never looked up, and never a word of the output).
_MDP_PHRASE_BREAK = frozenset("!,.?-;:()\n")
_MDP_CHAR = r"[^\s!,.?;:()\-/\"'`‘’“”<]"
# ``<br />`` markup is matched whole (group ``markup``) so no word starts inside it; a "<" that opens no such
# tag is a word character
_MDP_TOKEN = re.compile(rf"(?P<markup>{HTML_BREAK.pattern})|(?:{_MDP_CHAR}|<(?!{HTML_BREAK.pattern[1:]}))+",
                        flags=re.IGNORECASE)


def metric_dp_words(text: str) -> list[Token]:
    """Word tokens of the metric-DP notebook, with offsets so punctuation and markup stay in place.

    ``<br />`` markup is no word (it is never looked up nor replaced), and a combining mark belongs to the word it
    follows, so a replaced word takes its accents with it."""
    return [Token(m.start(), m.end(), m.group()) for m in _MDP_TOKEN.finditer(text) if m.lastgroup is None]


def is_metric_dp_word(word: str) -> bool:
    """True when ``word`` is exactly one metric-DP word (filters vocabularies: no quotes, punctuation or markup)."""
    match = _MDP_TOKEN.fullmatch(word)
    return match is not None and match.lastgroup is None


def metric_dp_phrases(text: str) -> list[list[str]]:
    """The words of ``text`` grouped by phrase (training sentences for word2vec/fastText)."""
    out: list[list[str]] = []
    current: list[str] = []
    cursor = 0
    for token in metric_dp_words(text):
        gap = text[cursor:token.start]
        if current and (not _MDP_PHRASE_BREAK.isdisjoint(gap) or HTML_BREAK.search(gap)):
            out.append(current)
            current = []
        current.append(token.text)
        cursor = token.end
    if current:
        out.append(current)
    return out


def lookup_key(word: str, lowercase: bool) -> str:
    """The form under which ``word`` is looked up in an embedding vocabulary."""
    return word.lower() if lowercase else word
