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
    setting = RedactSetting(kind="redact", style="pseudonym", dates="fake")  # a shift depends on no clock at all
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
    from textsift.secret_key import SecretKey
    from textsift.vault import reveal, seal, unseal

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
    with pytest.raises(ConfigError, match=f"sealed with secret key {key.fingerprint}, not yours .{other.fingerprint}"):
        unseal(blob, "red", other)
    with pytest.raises(ConfigError, match="fails authentication"):
        unseal(blob, "other_setting", key)  # a vault opens only as the setting it was sealed for
    tampered = bytearray(blob)
    tampered[-5] ^= 1  # one bit of the ciphertext
    with pytest.raises(ConfigError, match="damaged or tampered"):
        unseal(bytes(tampered), "red", key)
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
        assert all(a[0] != b[0] for a, b in zip(name.split(), stand_in.split(), strict=True))  # "J. S." neither


def _stand_ins(text: str, spans: list[Span], setting: RedactSetting, key: int = 7, doc: str = "doc-1"
               ) -> tuple[str, dict[str, str]]:
    """The redacted text and, per original region text, its stand-in (from the vault's record)."""
    record: list[tuple[str, str, str]] = []
    out, _ = redact_text(text, spans, setting, key, doc, record)
    return out, {original: stand_in for _, stand_in, original in record}


def test_a_name_after_a_gendered_honorific_gets_a_first_name_of_that_gender() -> None:
    """"Mr Sarah Molina" (found by a user): the honorific and the stand-in's first name must agree."""
    from faker.providers.person.en_US import Provider as Names

    from textsift.rng import generator

    genders = {"Mr": "male", "Mr.": "male", "Mister": "male", "Sir": "male", "Mrs": "female", "Mrs.": "female",
               "Ms": "female", "Ms.": "female", "Miss": "female", "Lady": "female", "Madam": "female"}
    firsts = {"male": set(Names.first_names_male) - set(Names.first_names_female),
              "female": set(Names.first_names_female) - set(Names.first_names_male)}
    pick = generator(11, "test", "honorifics")
    given, surnames = {g: sorted(names) for g, names in firsts.items()}, sorted(Names.last_names)
    setting, agree, checked = RedactSetting(kind="redact"), 0, 0
    for i in range(240):
        title = sorted(genders)[i % len(genders)]
        # a title before the full name is obeyed whatever the original's first name; a title before the surname
        # alone is the full name's gender unless its first name is of the other gender (two people: Mr and Mrs)
        gender = genders[title] if i % 2 else ("male", "female")[i % 4 // 2]
        name = f"{given[gender][pick.integers(len(given[gender]))]} {surnames[pick.integers(len(surnames))]}"
        if i % 2:  # the full name first without a title, the surname later with one
            text = f"{name} phoned. {title} {name.split()[1]} will call back."
            spans = [_span(text, name, "PERSON")]
        else:
            text = f"Dear {title} {name}, thank you."
            spans = [_span(text, name, "PERSON")]
        out, stand_ins = _stand_ins(text, spans, setting, doc=f"doc-{i}")
        first, surname = stand_ins[name].split()
        checked += 1
        agree += first in firsts[genders[title]]
        if i % 2:
            assert f"{title} {surname} will call back" in out  # the title's surname stays a surname
    assert checked == 240 and agree / checked >= 0.99


def test_a_persons_forms_map_to_one_stand_ins_matching_forms() -> None:
    text = "Mr John Smith came in. Mr Smith was tired; J. Smith signed. John left. J. called later."
    spans = [_span(text, "John Smith", "PERSON"), _span(text, "J. Smith", "PERSON"), _span(text, "J.", "PERSON", 1)]
    out, stand_ins = _stand_ins(text, spans, RedactSetting(kind="redact"))
    first, surname = stand_ins["John Smith"].split()
    assert stand_ins["Smith"] == surname and stand_ins["John"] == first
    assert stand_ins["J. Smith"] == f"{first[0]}. {surname}" and stand_ins["J."] == f"{first[0]}."
    assert out == (f"Mr {first} {surname} came in. Mr {surname} was tired; {first[0]}. {surname} signed. "
                   f"{first} left. {first[0]}. called later.")
    assert first[0] != "J" and surname[0] != "S"  # initials are no hint either


def test_document_dates_move_by_one_keyed_offset_in_their_own_formats() -> None:
    from datetime import date

    from textsift.mechanisms.redact.dates import read

    forms = ["12 March 1994", "March 20, 1994", "03/25/1994", "1994-04-02", "Tuesday, 5th April 1994",
             "March 1994", "June 1995", "1994", "1997"]
    text = "Seen on " + "; then ".join(forms) + "."
    spans = [_span(text, f, "DATE") for f in forms]
    setting = RedactSetting(kind="redact")
    out, stand_ins = _stand_ins(text, spans, setting)
    assert out == _stand_ins(text, spans, setting)[0]  # one document always gets the same output
    new = {f: read(stand_ins[f]) for f in forms}
    assert all(new[f] is not None and new[f].groups == read(f).groups for f in forms), stand_ins  # formats kept
    assert re.fullmatch(r"\d\d/\d\d/\d{4}", stand_ins["03/25/1994"]) and re.fullmatch(r"\d{4}-\d\d-\d\d",
                                                                                       stand_ins["1994-04-02"])
    days = [date(d.year, d.month, d.day) for d in (read(f) for f in forms[:5])]
    moved_days = [date(d.year, d.month, d.day) for d in (new[f] for f in forms[:5])]
    offsets = {(after - before).days for before, after in zip(days, moved_days, strict=True)}
    assert len(offsets) == 1 and 0 not in offsets and abs(next(iter(offsets))) <= 365  # intervals kept exactly
    weekday = stand_ins["Tuesday, 5th April 1994"].split(",")[0]
    assert weekday == moved_days[4].strftime("%A")  # the weekday is the moved date's
    months = {(new[f].year * 12 + new[f].month) - (read(f).year * 12 + read(f).month) for f in forms[5:7]}
    years = {new[f].year - read(f).year for f in forms[7:]}
    assert len(months) == 1 and 0 not in months and len(years) == 1 and 0 not in years
    other, _ = _stand_ins(text, spans, setting, doc="doc-2")
    assert other != out  # another document, another offset
    offsets = {(read(_stand_ins(text, spans, setting, doc=f"d{i}")[1]["12 March 1994"]).day) for i in range(8)}
    assert len(offsets) > 1


@pytest.mark.parametrize(("dates", "expected"), [("month", r"[A-Z][a-z]+ \d{4}"), ("year", r"\d{4}")])
def test_dates_can_be_generalized_to_month_or_year(dates: str, expected: str) -> None:
    text = "Admitted 12 March 1994, discharged 20 March 1994; born 1950."
    spans = [_span(text, "12 March 1994", "DATE"), _span(text, "20 March 1994", "DATE"), _span(text, "1950", "DATE")]
    _, stand_ins = _stand_ins(text, spans, RedactSetting(kind="redact", dates=dates))
    assert re.fullmatch(expected, stand_ins["12 March 1994"]) and stand_ins["1950"] != "1950"
    assert stand_ins["12 March 1994"] == stand_ins["20 March 1994"]  # one month: the same generalized value


def test_numeric_dates_read_month_first_unless_day_first_and_unread_dates_get_a_fake_one() -> None:
    from textsift.mechanisms.redact.dates import moved

    assert moved("03/04/1994", 1) == "03/05/1994" and moved("03/04/1994", 1, day_first=True) == "04/04/1994"
    assert moved("25/12/1994", 7) == "01/01/1995"  # valid only day first: read day first
    assert moved("3/9/94", -3) == "3/6/94" and moved("Sept. 30th", 1) == "Oct. 1st"
    text = "Seen last Tuesday."
    out, stand_ins = _stand_ins(text, [_span(text, "last Tuesday", "DATE")], RedactSetting(kind="redact"))
    assert re.fullmatch(r"\d{2} [A-Z][a-z]+ \d{4}", stand_ins["last Tuesday"])  # the fake date of dates: fake


def test_phone_numbers_and_codes_keep_their_shape() -> None:
    values = {"+44 20 7946 0958": "PHONE", "(555) 123-4567": "PHONE", "AB-1234567": "ID", "mrn 00x7Q-12": "CODE"}
    text = " / ".join(values)
    spans = [_span(text, value, label) for value, label in values.items()]
    _, stand_ins = _stand_ins(text, spans, RedactSetting(kind="redact"))

    def shape(value: str) -> str:
        return re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", value)))

    for value in values:
        assert shape(stand_ins[value]) == shape(value) and stand_ins[value] != value


def test_a_nationality_gets_another_nationality_in_the_same_form() -> None:
    from textsift.mechanisms.redact.nationalities import nationalities

    adjectives, people = ({forms[k] for forms in nationalities()} for k in (0, 2))
    text = "Four Bulgarian nationals and two Turks met an AMERICAN."
    spans = [_span(text, "Bulgarian", "LOC"), _span(text, "Turks", "GPE"), _span(text, "AMERICAN", "ORG")]
    for doc in ("d1", "d2", "d3"):
        _, stand_ins = _stand_ins(text, spans, RedactSetting(kind="redact"), doc=doc)
        assert stand_ins["Bulgarian"] in adjectives - {"Bulgarian"} and stand_ins["Turks"] in people - {"Turks"}
        assert stand_ins["AMERICAN"].isupper() and stand_ins["AMERICAN"].title() in adjectives - {"American"}


def test_a_person_keeps_one_gender_and_one_stand_in_with_or_without_an_honorific() -> None:
    from faker.providers.person.en_US import Provider as Names

    text = "Smith called. Mr Smith said Mary Jones and Ms Lee came."
    spans = [_span(text, "Smith", "PERSON"), _span(text, "Mary Jones", "PERSON"), _span(text, "Lee", "PERSON")]
    out, stand_ins = _stand_ins(text, spans, RedactSetting(kind="redact"))
    surname = stand_ins["Smith"]
    assert len(surname.split()) == 1 and out.startswith(f"{surname} called. Mr {surname} said")
    assert stand_ins["Mary Jones"].split()[0] in Names.first_names_female  # the pronouns ("she") still fit
    assert len(stand_ins["Lee"].split()) == 1
    texts = ["Mr John Smith wrote.", "Later, John Smith called."]  # scope: corpus, with and without the title
    scoped, _ = redact(texts, ["a", "b"], [[_span(t, "John Smith", "PERSON")] for t in texts],
                       RedactSetting(kind="redact", scope="corpus"), key=3)
    assert scoped[0].removeprefix("Mr ").removesuffix(" wrote.") in scoped[1]


def test_a_word_before_the_first_name_keeps_none_of_its_gender() -> None:
    """GUM's person spans hold words before the name ("Scientologist Tom Cruise", "Emperor Joshua Norton"): the
    gender comes from the first word that is a first name, which once drew a stand-in of either gender."""
    from faker.providers.person.en_US import Provider as Names

    from textsift.mechanisms.redact.persons import name_gender

    assert [name_gender(n) for n in ("Scientologist Tom Cruise", "Emperor Joshua Norton", "Attorney Mary Lee",
                                     "Tom", "Jordan Smith", "Smith", "Doctor Smith")] == [
        "male", "male", "female", "male", None, None, None]  # "Jordan": a name of both genders says nothing
    males = set(Names.first_names_male) - set(Names.first_names_female)
    for doc in range(12):
        text = "A video featuring Scientologist Tom Cruise. Later Tom Cruise spoke."
        spans = [_span(text, "Scientologist Tom Cruise", "PERSON"), Span(text.rindex("Tom"), text.rindex("Tom") + 10,
                                                                          "PERSON")]
        _, stand_ins = _stand_ins(text, spans, RedactSetting(kind="redact"), doc=f"doc-{doc}")
        assert stand_ins["Tom Cruise"].split()[0] in males, stand_ins


def test_a_name_part_that_is_a_stop_word_is_repeated_only_where_capitalized() -> None:
    text = "The Scarlet Letter is the film. Will Smith will win; later Will came, and scarlet smith too."
    spans = consistent_spans(text, [_span(text, "The Scarlet Letter", "PERSON"), _span(text, "Will Smith", "PERSON")])
    covered = [text[s.start:s.end] for s in spans]
    assert "the" not in covered and "will" not in covered  # a review's "the" and "will" stay
    assert covered.count("Will") == 2 and "scarlet" in covered and "smith" in covered  # in the span and later


def test_a_stand_in_never_holds_a_name_the_document_gives_another_person() -> None:
    """A person's stand-in that holds another person's real name ("Jason Watson" for Samuel Harris, in a text that
    names Jason) puts that name back into the released text; it is drawn again."""
    from textsift.mechanisms.redact.redactor import pseudonym_of
    from textsift.tokenize import words

    setting = RedactSetting(kind="redact", labels=["PERSON"])
    for doc_id in (f"d{k}" for k in range(50)):
        first = pseudonym_of("PERSON", 7, doc_id, "Samuel Harris")  # what Samuel Harris gets when no one else is named
        other = first.split()[0]  # ... now the real given name of someone else in the document
        text = f"{other} met Samuel Harris. {other} left."
        out, count = redact_text(text, [_span(text, other, "PERSON"), _span(text, "Samuel Harris", "PERSON")],
                                 setting, 7, doc_id)
        assert count == 3 and other.casefold() not in {w.text.casefold() for w in words(out)}, (doc_id, out)
        assert "[PERSON]" not in out  # drawn again, not given up
