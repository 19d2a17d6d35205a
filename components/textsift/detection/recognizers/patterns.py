"""Pattern recognizers for structured personal data (METHODS.md §4.1), checksums where they exist.

Like Presidio's pattern recognizers: a regular expression per kind, a validator where the kind
has a check digit or a plausibility rule, a fixed confidence per kind (higher when validated).
Kinds, in priority order (a match overlapping an earlier kind's match is dropped, so a card
number is not also a phone number, an e-mail's domain is not also a URL and a case number is
not also a year range):

    ======================  =====  ==========================================================
    kind                    score  what
    ======================  =====  ==========================================================
    EMAIL                   1.0
    URL                     0.95
    ID iban                 1.0    ISO 13616 mod-97 checked
    ID card                 1.0    13-19 digits, Luhn checked
    ID case                 0.8    the number after a cue: "no."/"nos." or application(s),
                                   case(s), file, docket, claim, record, account, policy,
                                   patient, reference, ref., MRN, order, invoice, licence,
                                   passport (then maybe no./number/#/:): "no. 36110/97",
                                   "Application no. 12345/06", "nos. 123/04 and 456/05" (each
                                   number a span), "Case No. 1:20-cv-01234", "File No.
                                   A-123-456", "docket 19-1392", "MRN 12345678". The span is
                                   the number alone: the cue names a kind of number and
                                   identifies no one. A number needs 4 digits in a row, or 3
                                   digits and a separator, so "Protocol No. 1" or a cued "3/4"
                                   is no case number; without a cue a number is never one
    DATE date               0.85   day, month name and year: "12 September 1980", "September
                                   12, 1980", "12th of September 1980", "Monday, 12 Sept.
                                   1980", "12-14 September 1980" (one span)
    DATE date_iso           0.85   "1980-09-12", "1980/09/12"
    DATE date_numeric       0.85   "12/09/1980", "9/12/1980", "12.09.1980", "12-09-80": day
                                   and month in either order, one separator; with dots the day
                                   comes first, and a two-digit year needs two-digit day and
                                   month ("12.09.80"), so versions such as "3.4.15" are no dates
    DATE date_day_month     0.7    "12 September", "September 12th" (a lower-case "may" is the
                                   verb)
    DATE date_month_year    0.7    "September 1980", "Sept. 1980", "September-October 1980"
    DATE year_range         0.6    "1982-1984", "1982–84", "1982/83": one span, ascending,
                                   at most 50 years
    DATE decade             0.6    "1980s", "1980's", "'80s", and "90s" after "the" (maybe "the
                                   early/mid/late"): "the 90s" ("the" stays outside; "80s" after
                                   anything else is an age: "in his 80s")
    DATE era_year           0.6    a year with its era: "1230 BC", "500 BCE", "AD 1066", "79 CE"
                                   (the era in capitals: "ad" is a word)
    DATE year               0.6    a year 1900-2099 after a cue (in, since, until, till, from,
                                   between, by, of, during, before, after, through, throughout,
                                   circa, c., ca., year(s), born, died, early, mid(-), late, a
                                   season) or joined to another year by and/or/to/until/till/
                                   through ("between 1982 and 1984": two spans); never followed
                                   by more digits or a currency ("1923 people", "room 2001",
                                   "+44 1923 123456", "of 1950 EUR" are no years)
    ID ssn                  0.6    "123-45-6789"
    PHONE                   0.7    8-15 digits; an international ``+`` or a bracketed area
                                   code 0.9
    ID code                 0.55   capitals and digits, 6+ characters, both present (passport,
                                   licence, record numbers)
    ======================  =====  ==========================================================

Spans follow the synthetic training data's conventions (:mod:`textsift.detection.values`), so the
detector and the patterns agree: a date span holds the date alone, a time after it ("at 10:30")
stays outside (times are distractors there); an ID span holds the code alone, its cue word ("MRN",
"order") outside. Month names are English.

No catastrophic backtracking: the only quantified groups that hold quantifiers are lists and number
parts whose every repetition starts with a separator or word its body cannot start with, and no two
adjacent quantifiers can take the same characters, so there is one way to split any text among them
and the time a match takes grows with the text, not exponentially. Keep new kinds that way.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from textsift.detection.recognizers.base import Detection

# Boundaries of a match that starts or ends with a digit: not inside a number, code, decimal, path or time.
_START = r"(?<![\w.,/:-])"
_END = r"(?![\w/:-]|[.,]\d)"

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?(?!\w)")
_MONTH_NO_YEAR = rf"(?!(?-i:may)(?!\w)){_MONTH}"  # without a year, a lower-case "may" is the verb
_WEEKDAY = r"(?:(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\.?,?\s++)?"
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_DAYS = rf"{_DAY}(?:\s*+[-–—]\s*+{_DAY})?"  # "12" or "12-14"
_YEAR = r"(?:1[89]|2[01])\d\d"
_DAY_MONTH = rf"(?:{_DAYS}\.?\s++(?:of\s++)?{_MONTH}|{_MONTH}\s++{_DAYS})"

_BARE_YEAR = (r"(?:19|20)\d\d"  # not a count, price, decimal or the start of a longer digit string
              r"(?![\w%€$£]|[.,/]\d|\s?-?\s?\d|\s?(?:[€$£]|eur|usd|gbp)(?!\w))")
_YEAR_CUE = (r"(?:in|since|until|till|from|between|by|of|during|before|after|through|throughout|circa|c\.|ca\."
             r"|years?|born|died|early|mid|late|spring|summer|autumn|winter)")
_YEAR_JOIN = r"\s++(?:and|or|to|until|till|through)\s++"

# Plurals only where lists of numbers follow in legal text ("applications nos.", "cases"): "records 1990-1995" is
# a year range, "records no. 12/345" a record number.
_ID_CUE = (r"(?:(?:applications?|cases?|file|docket|claim|record|account|policy|patient|reference|mrn|order|invoice"
           r"|licen[cs]e|passport)\b|ref(?:\.|\b))")
_CASE_NUMBER = r"(?:[A-Z]{1,3}-?)?\d+(?:[/:.-](?:[A-Z]{1,4}[/:.-])?\d+)*"  # 36110/97, 1:20-cv-01234, A-123-456
_CASE_JOIN = r"(?:\s*+[,&]\s*+(?:and\s++)?|\s++(?:and|or)\s++)"


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


def numeric_date_valid(value: str) -> bool:
    """Whether ``d/m/y`` (or ``m/d/y``) names a day: day 1-31 and month 1-12 in either order; with dots (the
    European form) the day first, and with dots and a two-digit year two-digit day and month, so a
    version number such as ``3.4.15`` is no date."""
    sep = "." if "." in value else "/" if "/" in value else "-"
    first, second, year = value.split(sep)
    a, b = int(first), int(second)
    if sep == ".":
        return 1 <= a <= 31 and 1 <= b <= 12 and (len(year) == 4 or len(first) == len(second) == 2)
    return (1 <= a <= 31 and 1 <= b <= 12) or (1 <= a <= 12 and 1 <= b <= 31)


def year_range_valid(value: str) -> bool:
    """Whether ``1982-1984`` / ``1982-84`` runs forward by at most 50 years (``1999-01`` is 1999 to 2001)."""
    first, last = re.findall(r"\d+", value)
    start = int(first)
    end = int(last) if len(last) == 4 else start - start % 100 + int(last)
    if end <= start and len(last) == 2:
        end += 100
    return 0 < end - start <= 50


def case_number_valid(value: str) -> bool:
    """Whether a cued number identifies: 4 digits in a row, or 3 digits and a separator (``36110/97``,
    ``A-123-456``), so "Protocol No. 1" and a cued fraction such as ``3/4`` are not case numbers."""
    return re.search(r"\d{4}", value) is not None or (
        sum(c.isdigit() for c in value) >= 3 and any(c in "/:.-" for c in value))


@dataclass(frozen=True)
class Pattern:
    """One kind: its label, expression, confidence, and an optional validator of the match.

    ``parts``: when set, the detections are its matches inside the match's group ``v``, each validated
    on its own, so a cue word ("no.", "since") stays outside the span and a list ("nos. 123/04 and
    456/05", "between 1982 and 1984") gives one span per item.
    """

    name: str
    label: str
    regex: re.Pattern[str]
    score: float
    valid: Callable[[str], bool] | None = None
    strong: Callable[[str], bool] | None = None  # a match that earns ``strong_score``
    strong_score: float = 0.0
    parts: re.Pattern[str] | None = None


def _date(name: str, expression: str, score: float, valid: Callable[[str], bool] | None = None,
          parts: re.Pattern[str] | None = None) -> Pattern:
    """A DATE kind; month names and cue words match in any case (the training data varies casing)."""
    return Pattern(name, "DATE", re.compile(expression, re.IGNORECASE), score, valid=valid, parts=parts)


PATTERNS: tuple[Pattern, ...] = (
    Pattern("email", "EMAIL", re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
            1.0),
    Pattern("url", "URL", re.compile(r"(?<!\w)(?:https?://|www\.)[^\s<>\"'()\[\]]+[^\s<>\"'()\[\].,;:!?]"), 0.95),
    Pattern("iban", "ID", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"), 1.0,
            valid=iban_valid),
    Pattern("card", "ID", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"), 1.0,
            valid=lambda s: luhn_valid(_digits(s))),
    Pattern("case", "ID", re.compile(
        rf"(?<![\w.])(?:{_ID_CUE}(?:\s*+(?:(?:nos?|numbers?)\b\.?|#))?|nos?\.)(?:\s*+[:#])?\s*+"
        rf"(?P<v>{_CASE_NUMBER}(?:{_CASE_JOIN}{_CASE_NUMBER})*){_END}", re.IGNORECASE), 0.8,
            valid=case_number_valid, parts=re.compile(_CASE_NUMBER, re.IGNORECASE)),
    _date("date", rf"{_START}{_WEEKDAY}{_DAY_MONTH},?\s++{_YEAR}{_END}", 0.85),
    _date("date_iso", rf"{_START}{_YEAR}(?P<sep>[-/.])(?:0?[1-9]|1[0-2])(?P=sep)(?:3[01]|[12]\d|0?[1-9])"
                      rf"(?:(?=T\d)|{_END})", 0.85),
    _date("date_numeric", rf"{_START}\d{{1,2}}(?P<sep>[-/.])\d{{1,2}}(?P=sep)(?:{_YEAR}|\d\d){_END}", 0.85,
          valid=numeric_date_valid),
    _date("date_day_month", rf"{_START}{_WEEKDAY}(?:{_DAYS}\.?\s++(?:of\s++)?{_MONTH_NO_YEAR}"
                            rf"|{_MONTH_NO_YEAR}\s++{_DAYS}(?!\w))", 0.7),
    _date("date_month_year", rf"{_START}{_MONTH}(?:\s*+[-–—/]\s*+{_MONTH})?,?\s++(?:of\s++)?{_YEAR}{_END}", 0.7),
    _date("year_range", rf"{_START}(?:19|20)\d\d\s*+[-–—/]\s*+(?:(?:19|20)\d\d|\d\d){_END}", 0.6,
          valid=year_range_valid),
    _date("decade", r"(?<![\w.,/:])(?<!\d-)(?:(?:1[89]|20)\d0|['’]\d0)['’]?s(?!\w)"
                    r"|(?:(?<=\bthe )|(?<=\bthe early )|(?<=\bthe late )|(?<=\bthe mid-)|(?<=\bthe mid ))\d0s(?!\w)",
          0.6),
    Pattern("era_year", "DATE", re.compile(r"(?<![\w.,])\d{1,4}\s?(?:BCE|BC|CE|AD)\b|\bAD\s?\d{1,4}(?![\w.,])"), 0.6),
    _date("year", rf"(?:(?<![\w.]){_YEAR_CUE}(?:\s++|(?<=mid)-)|{_START}(?={_BARE_YEAR}{_YEAR_JOIN}{_BARE_YEAR}))"
                  rf"(?P<v>{_BARE_YEAR}(?:{_YEAR_JOIN}{_BARE_YEAR})*)", 0.6, parts=re.compile(r"\d{4}")),
    Pattern("ssn", "ID", re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"), 0.6),
    Pattern("phone", "PHONE", re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,5}"
                                         r"(?:[ .-]\d{2,5}){0,4}(?![\w-])"), 0.7,
            valid=lambda s: 8 <= len(_digits(s)) <= 15,
            strong=lambda s: s.startswith("+") or "(" in s, strong_score=0.9),
    Pattern("code", "ID", re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{2,}(?:-[A-Z0-9]+)*"
                                     r"(?![\w-])"), 0.55,
            valid=lambda s: len(s.replace("-", "")) >= 6 and sum(c.isdigit() for c in s) >= 2),
)


def _pieces(pattern: Pattern, match: re.Match[str]) -> Iterator[tuple[int, int, str]]:
    """The spans a match stands for: each of ``pattern.parts`` inside its group ``v``, or the whole match."""
    if pattern.parts is None:
        yield match.start(), match.end(), match.group()
        return
    base = match.start("v")
    for part in pattern.parts.finditer(match.group("v")):
        yield base + part.start(), base + part.end(), part.group()


def _claim(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """Add ``[start, end)`` to ``taken`` (sorted, disjoint) unless it overlaps a span there; whether it was added."""
    k = bisect_left(taken, (start, end))
    if (k and taken[k - 1][1] > start) or (k < len(taken) and taken[k][0] < end):
        return False
    taken.insert(k, (start, end))
    return True


def find_patterns(text: str, patterns: Sequence[Pattern] = PATTERNS) -> list[Detection]:
    """Every validated match of ``patterns`` in ``text``, earlier kinds winning overlaps, sorted by start."""
    taken: list[tuple[int, int]] = []
    out: list[Detection] = []
    for pattern in patterns:
        for match in pattern.regex.finditer(text):
            for start, end, value in _pieces(pattern, match):
                if (pattern.valid is not None and not pattern.valid(value)) or not _claim(taken, start, end):
                    continue
                strong = pattern.strong is not None and pattern.strong(value)
                out.append(Detection(start, end, pattern.label, pattern.strong_score if strong else pattern.score,
                                     PatternRecognizer.name))
    return sorted(out)


class PatternRecognizer:
    """The pattern kinds of :data:`PATTERNS` as a recognizer (pure, no model)."""

    name = "patterns"
    labels = tuple(dict.fromkeys(p.label for p in PATTERNS))

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        """Per text, the validated pattern matches (:func:`find_patterns`) scoring at least ``min_score``."""
        return [[d for d in find_patterns(text) if d.score >= min_score] for text in texts]
