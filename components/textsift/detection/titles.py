"""Titles before a name ("Dr.", "Chief Justice", "President") are not part of a PERSON span.

That is the convention of every corpus the detector learns from and is scored on (GUM's rule, WNUT-17, BTC, the
synthetic sentences, which put an honorific before the span), and redaction relies on it: the honorific stays in
the text and the stand-in agrees with it (:mod:`textsift.mechanisms.redact.persons`). The model still puts a title
inside a span now and then, or marks a title alone ("the Secretary"); :func:`without_titles` takes it off. Where a
title may be a name it stays: a title alone without an article or possessive before it ("King said": a surname),
and an abbreviation that is also a given name without its dot ("Gen Hoshino", "Sen Nakamura").
"""

from __future__ import annotations

import re
from dataclasses import replace

from textsift.detection.recognizers.base import Detection

TITLES = tuple(tuple(title.split()) for title in (
    "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "dame", "lord", "lady", "general", "gen",
    "justice", "chief justice", "judge", "president", "vice president", "senator", "sen", "governor", "gov",
    "secretary", "minister", "prime minister", "chairman", "chairwoman", "chair", "king", "queen", "prince",
    "princess", "pope", "mayor", "speaker", "director", "administrator", "commissioner", "sheriff", "rev",
    "reverend", "captain", "capt", "colonel", "col"))
_WORD = re.compile(r"\S+")
NAMES_WITHOUT_DOT = frozenset({"gen", "sen", "gov", "col", "capt", "rev"})  # a title with its dot, else maybe a name
_DETERMINER = re.compile(r"(?i)\b(?:the|a|an|this|our|your|his|her|their|my|its)\s+$")


def plain(word: str) -> str:
    """A word lower-cased without dots, as titles are compared."""
    return word.lower().replace(".", "")


def title_length(words: list[str], at: int) -> int:
    """How many of ``words`` (plain) from ``at`` make a title; 0: none."""
    ahead = tuple(words[at:at + 2])
    return max((len(t) for t in TITLES if ahead[:len(t)] == t), default=0)


def _leading_titles(words: list[str]) -> int:
    """How many of ``words`` (as written) are titles before the rest, titles in a row counted together; after a
    title the last word is the name, whatever it reads as ("the Rev. King", "Mr. President")."""
    plains = [plain(w) for w in words]
    at = 0
    while at < len(words) and (length := title_length(plains, at)):
        if length == 1 and plains[at] in NAMES_WITHOUT_DOT and not words[at].endswith("."):
            break
        if at and at + length >= len(words):
            break
        at += length
    return at


def without_titles(text: str, detection: Detection) -> Detection | None:
    """A PERSON ``detection`` of ``text`` starting after its leading titles; None when it is titles only and an
    article or possessive comes before it ("the Secretary"); any other detection as it is."""
    if detection.label != "PERSON":
        return detection
    found = list(_WORD.finditer(text, detection.start, detection.end))
    titles = _leading_titles([m.group() for m in found])
    if not titles:
        return detection
    if titles < len(found):
        rest = text[found[titles].start():detection.end]
        return replace(detection, start=found[titles].start()) if any(c.isalnum() for c in rest) else detection
    before = text[max(detection.start - 16, 0):detection.start]
    return None if _DETERMINER.search(before) else detection
