"""Date stand-ins that keep a document's timeline: every date moves by one keyed offset per document.

A fresh fake date per date (what ``dates: fake`` still does) loses the order of events and the
intervals between them ("admitted 3 March, discharged 12 March"), which a clinical note or a ticket
history needs. Clinical de-identification shifts instead: each document draws one whole number of days
from a PRF of (release key, document), never 0, and every date in it moves by that many days, written in
its own format ("12 March 1994" stays "D Month YYYY", "03/12/1994" keeps its order, separators and
padding). A date without a day moves by whole months (``March 1994``), a year alone by whole years, both
the offset's days rounded to that unit in its direction and at least one, so the intervals between dates
of the same precision are kept exactly. ``month`` and ``year`` write every date at that precision at most,
moved by the month or year offset. The price of a kept timeline: one date a reader knows gives away the
document's offset, so all its dates (``scope: corpus`` draws one offset for the corpus).

The forms read: d Month yyyy and Month d yyyy (either without the year, with an ordinal day, after a
weekday), Month yyyy, dd/mm/yyyy or mm/dd/yyyy (``day_first``; ``/``, ``-`` or ``.``; a 2-digit year),
yyyy-mm-dd, mm/yyyy, yyyy-mm and yyyy. A text in none of them gets ``None`` (the caller draws a fake date).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from textsift import rng
from textsift.mechanisms.redact.shapes import like_case

Precision = Literal["day", "month", "year"]
PRECISIONS: tuple[Precision, ...] = ("year", "month", "day")  # coarse to fine
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DAYS_PER_MONTH, DAYS_PER_YEAR = 30.436875, 365.2425  # Gregorian means: how many months or years an offset is
YEARLESS = 2000  # a leap year: the year "March 12" or "29 February" is moved in, never written
CENTURY_PIVOT = 30  # a 2-digit year below it is 20yy, else 19yy (fixed: a date's reading must not depend on today)

_MONTH = (r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_WEEKDAY = (r"(?:(?P<weekday>mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?"
            r"|sat(?:urday)?|sun(?:day)?)\.?,?\s+)?")
_DAY = r"(?P<day>\d{1,2})(?P<ord>st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_WRITTEN = [re.compile(p, re.IGNORECASE) for p in (
    rf"{_WEEKDAY}{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?",  # 12 March 1994, Monday 12th of March
    rf"{_WEEKDAY}{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?",  # March 12, 1994; March 12th
    rf"{_MONTH},?\s+{_YEAR}",  # March 1994
)]
_NUMERIC = re.compile(r"(?P<first>\d{1,2})(?P<sep>[/.-])(?P<second>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})")
_NUMBERS = [re.compile(p) for p in (
    rf"{_YEAR}(?P<sep>[-/.])(?P<month>\d{{1,2}})(?P=sep)(?P<day>\d{{1,2}})",  # 1994-03-12
    rf"(?P<month>\d{{1,2}})(?P<sep>[/.-]){_YEAR}",  # 03/1994
    rf"{_YEAR}(?P<sep>-)(?P<month>\d{{1,2}})",  # 1994-03
    _YEAR,  # 1994
)]


@dataclass(frozen=True)
class Date:
    """A date read from a text: its fields, and which group of ``match`` holds each (day, month, year, ...)."""

    match: re.Match[str]
    groups: dict[str, str]  # field -> the match group that holds it
    year: int | None
    month: int | None
    day: int | None

    @property
    def precision(self) -> Precision:
        """The finest field it has."""
        return "day" if self.day is not None else "month" if self.month is not None else "year"

    def field(self, name: str) -> str | None:
        """The text of field ``name`` (None when the date has none)."""
        group = self.groups.get(name)
        return self.match.group(group) if group is not None else None


def offset_days(key: rng.Key, owner: str | None, largest: int) -> int:
    """The document's date offset: a whole number of days in [-largest, largest] other than 0, a PRF of (key,
    owner) (``owner`` None: one offset for the corpus, ``scope: corpus``)."""
    draw = rng.stable_key(key, "redact.date_shift", owner if owner is not None else "\x1e")
    size = draw % largest + 1
    return size if (draw >> 32) & 1 else -size


def moved(text: str, days: int, precision: Precision = "day", day_first: bool = False) -> str | None:
    """``text``'s date moved by ``days`` and written in its own format, at ``precision`` at most; None when
    ``text`` is no date read here or the move leaves it unchanged."""
    found = read(text, day_first)
    if found is None:
        return None
    wanted = min(found.precision, precision, key=PRECISIONS.index)
    if found.year is None:  # "March 12" has no year to keep alone: its month at least
        wanted = max(wanted, "month", key=PRECISIONS.index)
    try:
        year, month, day = _shift(found, wanted, days)
    except (ValueError, OverflowError):  # moved outside the years 1-9999
        return None
    written = (_in_place(found, year, month, day) if wanted == found.precision
               else _coarser(found, wanted, year, month))
    return written if written != text else None


def read(text: str, day_first: bool = False) -> Date | None:
    """The date ``text`` is, whole (every field valid), or None."""
    for pattern in _WRITTEN:
        if match := pattern.fullmatch(text):
            groups = {name: name for name in ("weekday", "day", "ord", "month", "year")
                      if name in pattern.groupindex and match.group(name)}
            day = match.group("day") if "day" in groups else None
            return _valid(match, groups, match.group("year"), _month_number(match.group("month")), day)
    if match := _NUMERIC.fullmatch(text):
        orders = (("second", "first"), ("first", "second"))
        for day_group, month_group in orders[::-1] if day_first else orders:
            groups = {"day": day_group, "month": month_group, "year": "year"}
            if found := _valid(match, groups, match.group("year"), int(match.group(month_group)),
                               match.group(day_group)):
                return found
        return None
    for pattern in _NUMBERS:
        if match := pattern.fullmatch(text):
            groups = {name: name for name in ("day", "month", "year") if name in pattern.groupindex}
            month = match.group("month") if "month" in groups else None
            return _valid(match, groups, match.group("year"), int(month) if month else None,
                          match.group("day") if "day" in groups else None)
    return None


def _valid(match: re.Match[str], groups: dict[str, str], year: str | None, month: int | None,
           day: str | None) -> Date | None:
    """The date of these fields, or None when they name no day of the calendar (or a weekday has no year)."""
    full_year = None if year is None else int(year) if len(year) == 4 else _century(int(year))
    try:
        if month is not None:
            date(full_year or YEARLESS, month, int(day) if day is not None else 1)
    except ValueError:
        return None
    if full_year is None and "weekday" in groups:
        return None
    return Date(match, groups, full_year, month, int(day) if day is not None else None)


def _century(two_digits: int) -> int:
    """The full year of a 2-digit year (:data:`CENTURY_PIVOT`)."""
    return (2000 if two_digits < CENTURY_PIVOT else 1900) + two_digits


def _month_number(name: str) -> int:
    """1-12 of a month's name or abbreviation (the regex admitted only those)."""
    return next(k for k, month in enumerate(MONTHS, 1) if month.casefold().startswith(name.casefold()[:3]))


def _whole(days: int, unit: float) -> int:
    """``days`` as whole ``unit`` s (months, years): rounded, in its direction, never 0."""
    return (1 if days > 0 else -1) * max(1, round(abs(days) / unit))


def _shift(found: Date, precision: Precision, days: int) -> tuple[int, int, int]:
    """(year, month, day) of ``found`` moved at ``precision``: by ``days``, whole months or whole years."""
    year = found.year if found.year is not None else YEARLESS
    if precision == "day":
        new = date(year, found.month or 1, found.day or 1) + timedelta(days=days)
        return new.year, new.month, new.day
    if precision == "month":
        months = year * 12 + (found.month or 1) - 1 + _whole(days, DAYS_PER_MONTH)
        date(months // 12, 1, 1)  # raises outside the calendar's years
        return months // 12, months % 12 + 1, 1
    new_year = year + _whole(days, DAYS_PER_YEAR)
    date(new_year, 1, 1)
    return new_year, 1, 1


def _in_place(found: Date, year: int, month: int, day: int) -> str:
    """``found``'s text with each field rewritten for the new date, everything between the fields kept."""
    writers: dict[str, Callable[[str], str]] = {
        "year": lambda old: str(year).zfill(4) if len(old) == 4 else f"{year % 100:02d}",
        "month": lambda old: _number(month, found, old) if old.isdigit() else _month_name(month, old),
        "day": lambda old: _number(day, found, old),
        "ord": lambda old: like_case(old, _ordinal(day)),
        "weekday": lambda old: _weekday_name(date(year, month, day).weekday(), old),
    }
    match, edits = found.match, []
    for field, group in found.groups.items():
        edits.append((match.start(group), match.end(group), writers[field](match.group(group))))
    text, cursor, pieces = match.string, 0, []
    for start, end, new in sorted(edits):
        pieces += [text[cursor:start], new]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _coarser(found: Date, precision: Precision, year: int, month: int) -> str:
    """``found`` generalized to ``precision`` (month or year), written like its own fields: "March 1994",
    "03/1994", "1994-03", "1994"."""
    old_year = found.field("year")
    year_text = (str(year).zfill(4) if len(old_year) == 4 else f"{year % 100:02d}") if old_year else ""
    if precision == "year":
        return year_text
    old_month = found.field("month") or ""
    if not old_month.isdigit():
        name = _month_name(month, old_month)
        return f"{name} {year_text}" if year_text else name
    number = _number(month, found, old_month)
    separator = found.match.group("sep")
    return f"{year_text}{separator}{number}" if found.match.start("year") == 0 else f"{number}{separator}{year_text}"


def _number(value: int, found: Date, old: str) -> str:
    """A day or month number padded as ``found`` pads: a numeric date when all its day and month numbers have two
    digits, a written day when it has a leading zero."""
    numbers = [found.field(name) for name in ("day", "month")]
    numeric = all(n is None or n.isdigit() for n in numbers)
    padded = all(n is None or len(n) == 2 for n in numbers) if numeric else old.startswith("0")
    return f"{value:02d}" if padded else str(value)


def _month_name(month: int, old: str) -> str:
    """The name of ``month``: in full if ``old`` was, else its three-letter abbreviation; in ``old``'s case."""
    full = MONTHS[month - 1]
    written = full if old.casefold() in {m.casefold() for m in MONTHS} else full[:3]
    return like_case(old, written)


def _weekday_name(weekday: int, old: str) -> str:
    """The name of ``weekday`` (0 = Monday): in full if ``old`` was, else its three-letter abbreviation."""
    full = WEEKDAYS[weekday]
    written = full if old.casefold() in {w.casefold() for w in WEEKDAYS} else full[:3]
    return like_case(old, written)


def _ordinal(day: int) -> str:
    """The English ordinal suffix of a day of the month (1st, 2nd, 3rd, 11th, 22nd)."""
    return "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
