"""The pattern recognizer's dates and case/application/file numbers: the written forms found, the spans and
scores they get, and the look-alikes left alone (METHODS.md §4.1)."""

from __future__ import annotations

import pytest

from textsift.detection.recognizers.patterns import (
    case_number_valid,
    find_patterns,
    numeric_date_valid,
    year_range_valid,
)


def _found(text: str) -> list[tuple[str, str, float]]:
    return [(text[d.start:d.end], d.label, d.score) for d in find_patterns(text)]


@pytest.mark.parametrize("text,date", [
    ("born on 12 September 1980 in Sofia", "12 September 1980"),
    ("heard on September 12, 1980.", "September 12, 1980"),
    ("on the 12th of September 1980", "12th of September 1980"),
    ("signed 12 Sept. 1980, in Plovdiv", "12 Sept. 1980"),
    ("am 12. September 1980", "12. September 1980"),
    ("on Monday, 12 September 1980", "Monday, 12 September 1980"),
    ("from 12-14 September 1980", "12-14 September 1980"),
    ("on 12 september 1980 at 10:30", "12 september 1980"),  # the time stays outside, as in the training data
    ("dated 1980-09-12", "1980-09-12"),
    ("at 1980-09-12T10:30:00Z", "1980-09-12"),
    ("born 12/09/1980", "12/09/1980"),
    ("born 3/25/2020", "3/25/2020"),  # month first
    ("born 12.09.1980", "12.09.1980"),
    ("born 12-09-80", "12-09-80"),
    ("born 12.09.80", "12.09.80"),
])
def test_full_dates_are_one_span_at_085(text: str, date: str) -> None:
    assert _found(text) == [(date, "DATE", 0.85)]


@pytest.mark.parametrize("text,date", [
    ("in September 1980, the applicant", "September 1980"),
    ("by Sept. 1980", "Sept. 1980"),
    ("in SEPTEMBER OF 1980", "SEPTEMBER OF 1980"),
    ("in September–October 1980", "September–October 1980"),
    ("on 5 May the court", "5 May"),
    ("until September 12th.", "September 12th"),
])
def test_month_and_year_or_day_and_month_are_dates_at_07(text: str, date: str) -> None:
    assert _found(text) == [(date, "DATE", 0.7)]


@pytest.mark.parametrize("text,dates", [
    ("in 1923 he moved", ["1923"]),
    ("In 1980, 12 people", ["1980"]),
    ("since 1999 and until 2004", ["1999", "2004"]),
    ("between 1982 and 1984", ["1982", "1984"]),
    ("from 1982 to 1984", ["1982", "1984"]),
    ("1982 and 1984 were hard years", ["1982", "1984"]),
    ("in 2001, 2002 and 2003", ["2001", "2002", "2003"]),
    ("built c. 1900, ca. 1910 or circa 1920", ["1900", "1910", "1920"]),
    ("in the year 2000, by mid-1985 and in early 1990", ["2000", "1985", "1990"]),
    ("the 1980s, mid-1990s, 1970's and the '60s", ["1980s", "1990s", "1970's", "'60s"]),
    ("in the 90s, The 70s and the early 80s", ["90s", "70s", "80s"]),
    ("founded 1230 BC, razed in 500 BCE, rebuilt AD 1066 and by 79 CE", ["1230 BC", "500 BCE", "AD 1066", "79 CE"]),
    ("during 1982–1984, in 1982-84 and 1999-01, the 1982/83 season", ["1982–1984", "1982-84", "1999-01", "1982/83"]),
])
def test_years_with_a_date_cue_decades_and_year_ranges_are_dates_at_06(text: str, dates: list[str]) -> None:
    assert _found(text) == [(date, "DATE", 0.6) for date in dates]


@pytest.mark.parametrize("text", [
    "1923 people attended",  # a count: no cue
    "in room 2001",  # the cue is the room's
    "call +44 1923 123456",  # a phone's digits (too short for a phone)
    "from 1923 456789",
    "a refund of 1950 EUR, 1950,50 € or 1999.5",
    "1,923 and 1,924",
    "in his 80s",  # an age
    "an ad 1066 times, 12 bc",  # not an era: lower case
    "version 3.4.15 and v1.2.20 on 192.168.1.10",  # versions and addresses, not d.m.yy
    "3/4 of the votes, 13/40/2020",  # no day and month
    "2019-05 and 2010-2005",  # no range runs backwards or over 50 years
    "In May we sold items; question 5 may be skipped",  # a bare month, the verb
    "the 31 Mayors",
])
def test_numbers_without_a_date_cue_are_not_dates(text: str) -> None:
    assert [f for f in _found(text) if f[1] == "DATE"] == []


@pytest.mark.parametrize("text,ids", [
    ("Ivanov v. Bulgaria (no. 36110/97)", ["36110/97"]),
    ("Application no. 12345/06 was lodged", ["12345/06"]),
    ("applications nos. 123/04 and 456/05", ["123/04", "456/05"]),
    ("nos. 123/04, 456/05 and 789/06", ["123/04", "456/05", "789/06"]),
    ("in Case 22-506 the court", ["22-506"]),
    ("Case No. 1:20-cv-01234", ["1:20-cv-01234"]),
    ("File No. A-123-456.", ["A-123-456"]),
    ("docket 19-1392", ["19-1392"]),
    ("Ref: AB-1234, case #12345, no.36110/97", ["AB-1234", "12345", "36110/97"]),
    ("MRN 12345678, order 123456789, licence number 1234567890", ["12345678", "123456789", "1234567890"]),
])
def test_case_and_file_numbers_after_a_cue_are_ids_without_the_cue(text: str, ids: list[str]) -> None:
    assert _found(text) == [(number, "ID", 0.8) for number in ids]


@pytest.mark.parametrize("text", ["Article 1 of Protocol No. 1", "3/4 of them", "ref. 3/4", "the ratio 12/40",
                                  "case 12", "no 36110/97 without the dot"])
def test_short_numbers_fractions_and_uncued_numbers_are_no_case_numbers(text: str) -> None:
    assert _found(text) == []


def test_a_case_number_and_a_date_in_one_sentence_keep_their_own_types() -> None:
    text = "The Regional Court of Plovdiv (no. 36110/97) ruled on 12 September 1980 and again in 1984."
    assert _found(text) == [("36110/97", "ID", 0.8), ("12 September 1980", "DATE", 0.85), ("1984", "DATE", 0.6)]


def test_validators() -> None:
    assert numeric_date_valid("31/12/1999") and numeric_date_valid("12/31/1999") and not numeric_date_valid("13/13/99")
    assert not numeric_date_valid("0/12/1999") and not numeric_date_valid("12.31.1999")  # dots: the day first
    assert numeric_date_valid("03.04.15") and not numeric_date_valid("3.4.15")  # d.m.yy is a version number
    assert year_range_valid("1982-1984") and year_range_valid("1999-01") and not year_range_valid("1984-1982")
    assert not year_range_valid("1900-1999") and not year_range_valid("2019-05")
    assert case_number_valid("36110/97") and case_number_valid("6/02") and case_number_valid("12345")
    assert not case_number_valid("3/4") and not case_number_valid("123")
