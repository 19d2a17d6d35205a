"""Pattern recognizers for structured personal data (METHODS.md §4.1), checksums where they exist.

Like Presidio's pattern recognizers: a regular expression per kind, a validator where the kind
has a check digit, a fixed confidence per kind (higher when validated). Kinds, in priority
order (a match overlapping an earlier kind's match is dropped, so a card number is not also a
phone number and an e-mail's domain is not also a URL):

    EMAIL 1.0; URL 0.95; ID: IBAN (ISO 13616 mod-97) 1.0 and payment card (Luhn, 13-19
    digits) 1.0; DATE 0.6 (numeric, ISO, or a month name with a day or year: a bare "May"
    is a word); ID: social-security-like ``123-45-6789`` 0.6; PHONE 0.7 (8-15 digits, an
    international ``+`` or a bracketed area code 0.9); ID: codes of capitals and digits (6+
    characters, both kinds present, e.g. passport, licence, record numbers) 0.55.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textsift.detection.recognizers.base import Detection

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"(?:[0-3]?\d(?:st|nd|rd|th)?)"
_YEAR = r"(?:1[89]\d\d|2[01]\d\d)"


def luhn_valid(digits: str) -> bool:
    """The Luhn check of a card number's digits (ISO/IEC 7812)."""
    total = 0
    for k, ch in enumerate(reversed(digits)):
        d = int(ch)
        if k % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(code: str) -> bool:
    """The ISO 13616 check of an IBAN: the rearranged code, letters as 10-35, is 1 mod 97."""
    code = code.replace(" ", "").upper()
    if not 15 <= len(code) <= 34 or not code[:2].isalpha() or not code[2:4].isdigit():
        return False
    return int("".join(str(int(ch, 36)) for ch in code[4:] + code[:4])) % 97 == 1


def _digits(s: str) -> str:
    return re.sub(r"\D", "", s)


@dataclass(frozen=True)
class Pattern:
    """One kind: its label, expression, confidence, and an optional validator of the match."""

    name: str
    label: str
    regex: re.Pattern[str]
    score: float
    valid: Callable[[str], bool] | None = None
    strong: Callable[[str], bool] | None = None  # a match that earns ``strong_score``
    strong_score: float = 0.0


PATTERNS: tuple[Pattern, ...] = (
    Pattern("email", "EMAIL", re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
            1.0),
    Pattern("url", "URL", re.compile(r"(?<!\w)(?:https?://|www\.)[^\s<>\"'()\[\]]+[^\s<>\"'()\[\].,;:!?]"), 0.95),
    Pattern("iban", "ID", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"), 1.0,
            valid=iban_valid),
    Pattern("card", "ID", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"), 1.0,
            valid=lambda s: luhn_valid(_digits(s))),
    Pattern("date", "DATE", re.compile(
        rf"(?<!\w)(?:{_YEAR}-[01]?\d-[0-3]?\d|[0-3]?\d[/.-][01]?\d[/.-](?:{_YEAR}|\d\d)"
        rf"|{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?|{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?|{_MONTH}\s+{_YEAR})(?!\w)",
        re.IGNORECASE), 0.6),
    Pattern("ssn", "ID", re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"), 0.6),
    Pattern("phone", "PHONE", re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,5}"
                                         r"(?:[ .-]\d{2,5}){0,4}(?![\w-])"), 0.7,
            valid=lambda s: 8 <= len(_digits(s)) <= 15,
            strong=lambda s: s.startswith("+") or "(" in s, strong_score=0.9),
    Pattern("code", "ID", re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{2,}(?:-[A-Z0-9]+)*"
                                     r"(?![\w-])"), 0.55,
            valid=lambda s: len(s.replace("-", "")) >= 6 and sum(c.isdigit() for c in s) >= 2),
)


def find_patterns(text: str, patterns: Sequence[Pattern] = PATTERNS) -> list[Detection]:
    """Every validated match of ``patterns`` in ``text``, earlier kinds winning overlaps, sorted by start."""
    taken: list[tuple[int, int]] = []
    out: list[Detection] = []
    for pattern in patterns:
        for match in pattern.regex.finditer(text):
            start, end, value = match.start(), match.end(), match.group()
            if pattern.valid is not None and not pattern.valid(value):
                continue
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            score = pattern.strong_score if pattern.strong is not None and pattern.strong(value) else pattern.score
            out.append(Detection(start, end, pattern.label, score, PatternRecognizer.name))
    return sorted(out)


class PatternRecognizer:
    """The pattern kinds of :data:`PATTERNS` as a recognizer (pure, no model)."""

    name = "patterns"
    labels = tuple(dict.fromkeys(p.label for p in PATTERNS))

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        """Per text, the validated pattern matches (:func:`find_patterns`) scoring at least ``min_score``."""
        return [[d for d in find_patterns(text) if d.score >= min_score] for text in texts]
