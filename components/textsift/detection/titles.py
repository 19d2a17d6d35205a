"""Titles before a name ("Dr.", "Chief Justice", "President") are not part of a PERSON span.

That is the convention of every corpus the detector learns from and is scored on (GUM's rule, WNUT-17, BTC, the
synthetic sentences, which put an honorific before the span), and redaction relies on it: the honorific stays in
the text and the stand-in agrees with it (:mod:`textsift.mechanisms.redact.persons`). The model still puts a title
inside a span now and then, or marks a title alone ("the Secretary"); :func:`without_titles` takes it off.
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


def plain(word: str) -> str:
    """A word lower-cased without dots, as titles are compared."""
    return word.lower().replace(".", "")


def title_length(words: list[str], at: int) -> int:
    """How many of ``words`` (plain) from ``at`` make a title; 0: none."""
    ahead = tuple(words[at:at + 2])
    return max((len(t) for t in TITLES if ahead[:len(t)] == t), default=0)


def without_titles(text: str, detection: Detection) -> Detection | None:
    """A PERSON ``detection`` of ``text`` starting after its leading title, None when it is a title and nothing
    else; any other detection as it is."""
    if detection.label != "PERSON":
        return detection
    found = list(_WORD.finditer(text, detection.start, detection.end))
    words = [plain(m.group()) for m in found]
    length = title_length(words, 0)
    if not length:
        return detection
    if length >= len(words):
        return None
    return replace(detection, start=found[length].start())
