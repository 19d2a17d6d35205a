"""Consistent protected spans and the redact mechanism on hand-made documents."""

from __future__ import annotations

import re

import pytest

from textsift.corpus import Span
from textsift.mechanisms.protected_spans import consistent_spans, outermost
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.redactor import redact, redact_text

TEXT = "John Smith called from Lyon. Later SMITH wrote: smith@acme.com. Smithson is unrelated. Lyon is cold."


def _span(text: str, value: str, label: str, nth: int = 0) -> Span:
    start = [m.start() for m in re.finditer(re.escape(value), text)][nth]
    return Span(start, start + len(value), label)


def test_a_marked_string_and_its_name_parts_are_protected_everywhere_in_the_document() -> None:
    spans = consistent_spans(TEXT, [_span(TEXT, "John Smith", "PERSON"), _span(TEXT, "Lyon", "LOC")])
    covered = {(TEXT[s.start:s.end], s.label) for s in spans}
    assert ("SMITH", "PERSON") in covered and ("John", "PERSON") in covered
    assert [TEXT[s.start:s.end] for s in spans if s.label == "LOC"] == ["Lyon", "Lyon"]
    assert "Smithson" not in {TEXT[s.start:s.end] for s in spans}  # whole words only
    assert spans == sorted(spans, key=lambda s: (s.start, -s.end))


def test_outermost_merges_nested_and_overlapping_spans_keeping_the_longest_label() -> None:
    nested = [Span(0, 37, "ORG"), Span(0, 6, "LOC"), Span(30, 40, "DATE"), Span(50, 55, "PERSON")]
    assert outermost(nested) == [Span(0, 40, "ORG"), Span(50, 55, "PERSON")]


def test_placeholders_replace_every_occurrence() -> None:
    setting = RedactSetting(kind="redact", style="placeholder")
    out, count = redact_text(TEXT, [_span(TEXT, "John Smith", "PERSON"), _span(TEXT, "Lyon", "LOC")], setting, 1, "d")
    assert out == ("[PERSON] called from [LOC]. Later [PERSON] wrote: [PERSON]@acme.com. Smithson is unrelated. "
                   "[LOC] is cold.")  # the name inside an address would reveal it too
    assert count == 5


def test_pseudonyms_are_consistent_within_a_document_and_keyed_by_seed_and_id() -> None:
    setting = RedactSetting(kind="redact", style="pseudonym")
    spans = [_span(TEXT, "John Smith", "PERSON"), _span(TEXT, "Lyon", "LOC")]
    out, _ = redact_text(TEXT, spans, setting, 1, "doc-1")
    for secret in ("John", "Lyon"):
        assert not re.search(rf"\b{secret}\b", out)
    assert not re.search(r"\bSMITH\b|\bSmith\b", out)
    first, last = out.split(" called")[0].split()
    assert f"Later {last.upper()} wrote" in out  # the bare, upper-cased surname gets the pseudonym's surname
    city = out.split("called from ")[1].split(".")[0]
    assert out.endswith(f"{city} is cold.")
    assert redact_text(TEXT, spans, setting, 1, "doc-1")[0] == out
    assert redact_text(TEXT, spans, setting, 2, "doc-1")[0] != out
    assert redact_text(TEXT, spans, setting, 1, "doc-2")[0] != out


@pytest.mark.parametrize("style", ["placeholder", "pseudonym"])
def test_redact_keeps_documents_without_spans_and_reports_counts(style: str) -> None:
    setting = RedactSetting(kind="redact", style=style)
    texts = [TEXT, "Nothing personal here."]
    out, metrics = redact(texts, ["a", "b"], [[_span(TEXT, "Lyon", "LOC")], []], setting, key=3)
    assert out[1] == texts[1] and "Lyon" not in out[0]
    assert metrics == {"spans_given": 1.0, "regions_replaced": 2.0, "docs_redacted_fraction": 0.5}


def test_unknown_types_get_a_placeholder_even_in_pseudonym_style() -> None:
    text = "Ticket from Zorblax today"
    out, _ = redact_text(text, [_span(text, "Zorblax", "CREATURE")], RedactSetting(kind="redact"), 1, "d")
    assert out == "Ticket from [CREATURE] today"


def test_a_date_pseudonym_does_not_depend_on_todays_date(monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime as real

    import faker.providers.date_time as faker_dates

    text = "My birthday is 15 July 2025 and hers is 3 May 1990."
    spans = [_span(text, "15 July 2025", "DATE"), _span(text, "3 May 1990", "DATE")]
    setting = RedactSetting(kind="redact", style="pseudonym")
    today = redact_text(text, spans, setting, 7, "doc-1")[0]

    class LaterClock(real.datetime):  # the same run a year and a day later
        @classmethod
        def now(cls, tz=None):  # noqa: ANN001, ANN206 - datetime's own signature
            return real.datetime(2031, 3, 2, 23, 59, tzinfo=tz)

    monkeypatch.setattr(faker_dates, "datetime", LaterClock)
    assert redact_text(text, spans, setting, 7, "doc-1")[0] == today
    years = [int(y) for y in re.findall(r"\b(19\d\d|20\d\d)\b", today)]
    assert len(years) == 2 and all(1940 <= y <= 2020 for y in years)


def test_the_vault_traces_each_pseudonym_back_only_for_the_key_holder() -> None:
    from textsift.errors import ConfigError
    from textsift.mechanisms.redact.vault import reveal, seal, unseal
    from textsift.secret_key import SecretKey

    key, other = SecretKey(bytes(range(32))), SecretKey(bytes(range(1, 33)))
    setting = RedactSetting(kind="redact", vault=True)
    spans = [_span(TEXT, "John Smith", "PERSON"), _span(TEXT, "Lyon", "LOC")]
    entries: dict = {}
    out, _ = redact([TEXT, "Nobody here."], ["d1", "d2"], [spans, []], setting, key, vault=entries)
    assert entries["d2"] == [] and {(label, original) for label, _, original in entries["d1"]} >= {
        ("PERSON", "John Smith"), ("LOC", "Lyon")}
    person = next(stand_in for label, stand_in, original in entries["d1"] if original == "John Smith")
    assert person in out[0] and "John Smith" not in out[0]
    blob = seal(entries, "red", key)
    assert blob == seal(entries, "red", key)  # deterministic: dvc repro writes the same bytes
    assert b"John" not in blob and b"Lyon" not in blob and person.encode() not in blob
    found = reveal(unseal(blob, "red", key), person.upper())
    assert [(row["doc_id"], row["original"]) for row in found] == [("d1", "John Smith")]
    with pytest.raises(ConfigError, match="sealed with another secret key"):
        unseal(blob, "red", other)
    with pytest.raises(ConfigError, match="sealed with another secret key"):
        unseal(blob, "other_setting", key)  # a vault opens only as the setting it was sealed for
    with pytest.raises(ValueError, match="vault: true needs style: pseudonym"):
        RedactSetting(kind="redact", vault=True, style="placeholder")


def test_a_pseudonym_never_repeats_its_original_or_a_name_part() -> None:
    """Faker draws jobs and names from short lists: about one job in 640 drew itself as its own stand-in (found
    in a pipeline run: 'Catering manager' published as its own pseudonym). Such draws are redrawn."""
    from faker.providers.job.en_US import Provider as Jobs

    from textsift.mechanisms.redact.redactor import pseudonym_of
    from textsift.tokenize import words

    jobs = sorted(set(Jobs.jobs))
    assert len(jobs) > 500
    for owner in ("d1", "d2", None):
        assert not [job for job in jobs if pseudonym_of("JOB", 7, owner, job).casefold() == job.casefold()]
    names = [f"{first} {last}" for first in ("Mary", "James", "Linda", "Robert") for last in
             ("Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Wilson", "Moore")]
    for name in names:
        stand_in = pseudonym_of("PERSON", 7, "d1", name)
        assert not {w.text for w in words(name)} & {w.text for w in words(stand_in)}, (name, stand_in)
