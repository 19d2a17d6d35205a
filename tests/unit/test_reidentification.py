"""The TRIR attacker: background documents about 30 persons, each with a city and an employer of their own."""

from __future__ import annotations

import math

import numpy as np
import pytest

from textsift.corpus import Span
from textsift.evaluation.reidentification import (
    chance_rate,
    document_persons,
    fit_reidentifier,
    gain_over_chance,
    reidentification_hits,
    trir_metrics,
)

FIRST = ("Anna", "Boris", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Katya", "Luis",
         "Mira", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wim", "Xenia", "Yusuf",
         "Zora", "Arne", "Bea", "Cyril", "Dana")
LAST = ("Okafor", "Lindqvist", "Moreau", "Petrov", "Quispe", "Haddad", "Novak", "Tanaka", "Silva", "Berg",
        "Kowalski", "Rossi", "Dubois", "Nguyen", "Fischer", "Horvat", "Jensen", "Costa", "Murphy", "Abe", "Ivanova",
        "Klein", "Lopez", "Meyer", "Olsen", "Pereira", "Sato", "Weber", "Young", "Zhou")
CITIES = ("Tromso", "Gdansk", "Porto", "Lyon", "Kyoto", "Cusco", "Tartu", "Split", "Graz", "Aarhus", "Bergen",
          "Leipzig", "Bilbao", "Turin", "Ghent", "Brno", "Cork", "Malmo", "Sapporo", "Quito", "Tbilisi", "Riga",
          "Oulu", "Bruges", "Kassel", "Nantes", "Parma", "Haifa", "Cadiz", "Rouen")
EMPLOYERS = ("Vandermolen", "Kestrel Labs", "Aldgate Freight", "Bluewick", "Corvid Systems", "Dunmore Foods",
             "Elmsford", "Fairlight", "Grendel Tools", "Halcyon Bank", "Ironbark", "Juniper Print", "Kilnworth",
             "Larkspur", "Mossgiel", "Northwind Glass", "Oakhurst", "Pinemoor", "Quarrybank", "Redfern", "Saltash",
             "Thornbury", "Upland Dairy", "Verity Audio", "Westmoor", "Yarrow Health", "Zephyr Cycles", "Ashcombe",
             "Brackenridge", "Coldharbour")
FILLER = ("The delivery was quick.", "I liked the screen.", "Support was slow.", "The price was fair.",
          "It arrived late.", "The manual was clear.", "Battery life is poor.", "Great value overall.",
          "The staff were kind.", "Packaging was damaged.")
PERSONS = tuple(f"{first} {last}" for first, last in zip(FIRST, LAST, strict=True))
CHANCE = 1 / len(PERSONS)


def _document(rng: np.random.Generator, city: int, employer: int, name: str | None = None) -> str:
    sentences = [f"I live in {CITIES[city]}.", f"I work at {EMPLOYERS[employer]}.", *rng.choice(FILLER, 3, False)]
    if name is not None:
        sentences.append(f"My name is {name}.")
    rng.shuffle(sentences)
    return " ".join(sentences)


def _background(rng: np.random.Generator) -> tuple[list[str], list[frozenset[str]]]:
    """Three documents per person: their name, their city, their employer and generic sentences."""
    pairs = [(_document(rng, i, i, name), frozenset({name.casefold()})) for i, name in enumerate(PERSONS)
             for _ in range(3)]
    return [text for text, _ in pairs], [about for _, about in pairs]


def test_published_documents_that_keep_a_persons_city_and_employer_are_re_identified_without_the_name() -> None:
    rng = np.random.default_rng(0)
    attacker = fit_reidentifier(*_background(rng))
    assert attacker is not None
    about = [frozenset({name.casefold()}) for name in PERSONS for _ in range(2)]
    published = [_document(rng, i, i) for i in range(len(PERSONS)) for _ in range(2)]  # name removed
    hits = reidentification_hits(attacker, published, about)
    metrics = trir_metrics(hits, chance_rate(attacker, about))
    assert metrics["trir.documents"] == 60 and metrics["trir.chance"] == pytest.approx(CHANCE)
    assert metrics["trir.rate"] >= 0.9 and metrics["trir.gain"] >= 0.9  # chance: 1/30


def test_documents_whose_context_is_independent_of_the_person_stay_near_chance() -> None:
    """City and employer drawn at random (seed 1): the attacker names whoever they belong to, right 1 time in 30 on
    average; over 60 documents its rate stays within 0.1 of chance (binomial sd 0.023) and its gain under 0.1."""
    rng = np.random.default_rng(1)
    attacker = fit_reidentifier(*_background(rng))
    assert attacker is not None
    about = [frozenset({name.casefold()}) for name in PERSONS for _ in range(2)]
    published = [_document(rng, int(rng.integers(30)), int(rng.integers(30))) for _ in range(60)]
    metrics = trir_metrics(reidentification_hits(attacker, published, about), chance_rate(attacker, about))
    assert abs(metrics["trir.rate"] - CHANCE) <= 0.1 and metrics["trir.gain"] <= 0.1


def test_the_original_text_names_its_person_and_a_document_about_several_is_a_hit_on_any() -> None:
    rng = np.random.default_rng(2)
    attacker = fit_reidentifier(*_background(rng))
    assert attacker is not None
    texts = [f"Please forward this to {PERSONS[4]}.", f"{PERSONS[7]} and {PERSONS[9]} came by.", "Nobody here."]
    about = [frozenset({PERSONS[4].casefold()}), frozenset({PERSONS[7].casefold(), PERSONS[9].casefold()}),
             frozenset({"someone unknown"})]
    assert reidentification_hits(attacker, texts, about) == [True, True]  # the third is about no known person


def test_persons_are_the_case_folded_full_names_of_name_spans() -> None:
    text = "Hi, I am MARIA  van Dijk; call Maria van Dijk at Acme."
    spans = [Span(9, 24, "PERSON"), Span(31, 45, "NAME"), Span(49, 53, "COMPANY")]
    assert document_persons(text, spans) == frozenset({"maria van dijk"})
    assert document_persons(text, []) == frozenset()


def test_chance_is_the_better_of_a_uniform_guess_and_the_most_mentioned_person() -> None:
    texts = ["Ann lives in Oslo.", "Ann works at Acme.", "Ann likes tea.", "Bob lives in Rome.", "Cy lives in Lima."]
    about = [frozenset({"ann"})] * 3 + [frozenset({"bob"}), frozenset({"cy"})]
    attacker = fit_reidentifier(texts, about)
    assert attacker is not None
    assert chance_rate(attacker, [frozenset({"ann"}), frozenset({"bob"})]) == pytest.approx(0.5)  # always "ann"
    assert chance_rate(attacker, [frozenset({"bob"}), frozenset({"cy"})]) == pytest.approx(1 / 3)  # uniform
    assert math.isnan(chance_rate(attacker, [frozenset({"dee"})]))
    assert fit_reidentifier(["No one is named."], [frozenset()]) is None


def test_the_gain_puts_the_rate_on_a_0_1_scale_and_no_target_measures_nothing() -> None:
    assert gain_over_chance(0.55, 0.1) == pytest.approx(0.5)
    assert gain_over_chance(0.05, 0.1) == 0.0  # worse than a guess gains nothing
    assert math.isnan(gain_over_chance(1.0, 1.0))  # one known person: nothing to tell apart
    assert trir_metrics([True, False, False, False], 0.25) == {"trir.rate": 0.25, "trir.documents": 4.0,
                                                              "trir.chance": 0.25, "trir.gain": 0.0}
    assert trir_metrics([], 0.25) == {}
