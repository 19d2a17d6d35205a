"""Redaction's operators per entity type (placeholder, hash, pseudonym, mask) and what a served request may ask."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from textsift.corpus import Span
from textsift.errors import InputError
from textsift.mechanisms.redact.operators import NO_MORE_THAN, requested
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.redactor import redact_text

TEXT = "Dr. Maria Lopez met Maria Lopez in New  York on 3 May 2001; Tom Baker left New  York on 9 May 2001."


def _spans(text: str = TEXT) -> list[Span]:
    out = []
    for needle, label in (("Maria Lopez", "PERSON"), ("Tom Baker", "PERSON"), ("New  York", "CITY"),
                          ("3 May 2001", "DATE"), ("9 May 2001", "DATE")):
        start = text.index(needle)
        out.append(Span(start, start + len(needle), label))
    return out


def _setting(**operators: str) -> RedactSetting:
    return RedactSetting(kind="redact", labels=["all"], operators=operators)


def _pieces(text: str, placed: list[Span]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for span in placed:
        out.setdefault(span.label, []).append(text[span.start:span.end])
    return out


def test_each_operator_writes_its_own_stand_in_and_leaves_the_rest_of_the_text_as_it_was() -> None:
    placed: list[Span] = []
    out, count = redact_text(TEXT, _spans(), _setting(PERSON="hash", LOC="mask", DATE="placeholder"), 7, "d1",
                             placed=placed)
    pieces = _pieces(out, placed)
    assert count == 7 and pieces["DATE"] == ["[DATE]", "[DATE]"]
    assert pieces["CITY"] == ["***  ****", "***  ****"]  # an alias is its type's (CITY is LOC); spaces kept
    first, again, other = pieces["PERSON"]
    assert first == again != other and all(len(h) == 12 and int(h, 16) >= 0 for h in (first, other))
    assert "Maria" not in out and "Baker" not in out and "York" not in out
    assert out.startswith("Dr. ") and " met " in out and out.endswith(".")


def test_a_digest_is_keyed_and_owned_and_equal_strings_share_it() -> None:
    setting = _setting(PERSON="hash")

    def digest_of(key: int, owner: str) -> str:
        placed: list[Span] = []
        out, _ = redact_text(TEXT, _spans(), setting, key, owner, placed=placed)
        return _pieces(out, placed)["PERSON"][0]

    base = digest_of(7, "d1")
    assert digest_of(7, "d1") == base and digest_of(8, "d1") != base and digest_of(7, "d2") != base
    casefolded = TEXT.replace("Maria Lopez met", "MARIA LOPEZ met")
    placed: list[Span] = []
    out, _ = redact_text(casefolded, _spans(TEXT), setting, 7, "d1", placed=placed)
    assert _pieces(out, placed)["PERSON"][0] == base  # case folded, as pseudonyms are


def test_types_left_to_the_style_get_the_stand_ins_they_got_without_operators() -> None:
    def pieces(setting: RedactSetting) -> dict[str, list[str]]:
        placed: list[Span] = []
        out, _ = redact_text(TEXT, _spans(), setting, 7, "d1", placed=placed)
        return _pieces(out, placed)

    plain, masked = pieces(_setting()), pieces(_setting(LOC="mask"))
    assert masked["PERSON"] == plain["PERSON"] and masked["DATE"] == plain["DATE"]  # the same draws and date shift
    assert masked["CITY"] == ["***  ****"] * 2 != plain["CITY"]


def test_only_pseudonyms_enter_the_vault() -> None:
    record: list[tuple[str, str, str]] = []
    redact_text(TEXT, _spans(), _setting(PERSON="placeholder"), 7, "d1", record=record)
    assert record and {label for label, _, _ in record} == {"CITY", "DATE"}


def test_a_setting_names_known_types_and_operators_only() -> None:
    with pytest.raises(ValidationError, match="operators name types no recognizer emits: NAMES"):
        _setting(NAMES="hash")
    with pytest.raises(ValidationError):
        _setting(PERSON="encrypt")


@pytest.mark.parametrize(("own", "asked", "allowed"), [
    ("pseudonym", "placeholder", True), ("pseudonym", "hash", True), ("pseudonym", "pseudonym", True),
    ("pseudonym", "mask", False),  # a mask gives each word's length away
    ("placeholder", "hash", False), ("hash", "placeholder", True), ("hash", "pseudonym", False),
    ("mask", "mask", True), ("mask", "placeholder", True),
    ("mask", "pseudonym", False),  # a pseudonym gives a date's interval or a code's shape away
    ("mask", "hash", False),  # a digest says which strings are equal
])
def test_a_request_may_ask_for_an_operator_that_reveals_no_more_than_the_settings_own(
        own: str, asked: str, allowed: bool) -> None:
    setting = _setting(PERSON=own)
    if allowed:
        assert requested(setting, {"PERSON": asked}).operators == {"PERSON": asked}
        assert setting.operators == {"PERSON": own}  # the served setting itself is left as it was
    else:
        with pytest.raises(InputError, match=f"PERSON: {asked} reveals what the served setting's {own} does not"):
            requested(setting, {"PERSON": asked})
    assert (asked in NO_MORE_THAN[own]) == allowed


def test_a_refused_request_is_named_by_type_never_by_its_value() -> None:
    names_only = RedactSetting(kind="redact", labels=["PERSON"])
    with pytest.raises(InputError, match="names LOC, which the request does not protect") as caught:
        requested(names_only, {"LOC": "placeholder"})
    with pytest.raises(InputError, match="is not an operator") as caught:
        requested(names_only, {"PERSON": "Maria Lopez"})
    assert "Maria" not in str(caught.value)
    with pytest.raises(InputError, match="key is not an entity type") as caught:
        requested(names_only, {"Maria Lopez": "hash"})
    assert "Maria" not in str(caught.value)
