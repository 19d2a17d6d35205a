"""The recognizer set: pattern recognizers with checksums, per-type thresholds, provenance (METHODS.md §4.1)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from textsift.config import parse_params
from textsift.detection.params import DetectionParams
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.build import (
    CPU_WINDOWS,
    build_recognizers,
    model_batch_size,
    run_recognizers,
    thresholds_of,
)
from textsift.detection.recognizers.merge import Thresholds, analyze, merge_detections
from textsift.detection.recognizers.model import ModelRecognizer
from textsift.detection.recognizers.patterns import PatternRecognizer, find_patterns, iban_valid, luhn_valid
from textsift.detection.types import ENTITY_TYPES
from textsift.errors import ConfigError
from textsift.ingest_params import NormalizeParams

TEXT = ("Mail ann.lee@example.co.uk or see https://example.com/a?b=1. Call +44 20 7946 0958 or (555) 123-4567. "
        "IBAN GB82 WEST 1234 5698 7654 32, card 4111 1111 1111 1111, born 12/03/1981 and on March 3rd, 2020; "
        "ssn 123-45-6789, passport X12345678. In May we sold 15 items for 1234 dollars.")


def _found(text: str) -> dict[str, str]:
    return {text[d.start:d.end]: d.label for d in find_patterns(text)}


def test_patterns_find_structured_personal_data_with_their_types() -> None:
    assert _found(TEXT) == {
        "ann.lee@example.co.uk": "EMAIL", "https://example.com/a?b=1": "URL", "+44 20 7946 0958": "PHONE",
        "(555) 123-4567": "PHONE", "GB82 WEST 1234 5698 7654 32": "ID", "4111 1111 1111 1111": "ID",
        "12/03/1981": "DATE", "March 3rd, 2020": "DATE", "123-45-6789": "ID", "X12345678": "ID",
    }  # a bare month ("May"), counts and prices are not personal data


def test_checksums_decide_cards_and_ibans() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB83 WEST 1234 5698 7654 32")
    assert _found("card 4111 1111 1111 1112 here") == {}  # 16 digits failing Luhn: not a card (nor a phone)
    assert "ID" not in _found("iban GB83 WEST 1234 5698 7654 32").values()


def test_an_email_domain_is_not_also_a_url_and_a_card_is_not_a_phone() -> None:
    found = find_patterns("write to bo@www.example.org or pay with 4111-1111-1111-1111")
    assert [d.label for d in found] == ["EMAIL", "ID"]
    assert all(d.source == "patterns" for d in found)


def test_per_type_thresholds_labels_and_provenance_when_merging() -> None:
    model = [Detection(0, 4, "PERSON", 0.3, "model"), Detection(10, 20, "EMAIL", 0.9, "model"),
             Detection(30, 35, "LOC", 0.3, "model")]
    patterns = [Detection(10, 20, "EMAIL", 1.0, "patterns"), Detection(40, 45, "DATE", 0.6, "patterns")]
    merged = merge_detections([model, patterns], Thresholds(0.5, {"PERSON": 0.2}))
    assert merged == [Detection(0, 4, "PERSON", 0.3, "model"), Detection(10, 20, "EMAIL", 1.0, "model+patterns"),
                      Detection(40, 45, "DATE", 0.6, "patterns")]  # LOC 0.3 is under the default 0.5
    only = merge_detections([model, patterns], Thresholds(0.5, {"PERSON": 0.2}), labels=["PERSON"])
    assert [d.label for d in only] == ["PERSON"]


def test_one_type_per_span_the_most_confident_then_the_first_in_entity_types() -> None:
    model = [Detection(0, 7, "LOC", 0.37, "model"), Detection(0, 7, "ORG", 0.37, "model"),
             Detection(0, 7, "PERSON", 0.37, "model"), Detection(10, 20, "PHONE", 0.7, "model"),
             Detection(30, 40, "ORG", 0.6, "model")]
    patterns = [Detection(10, 20, "DATE", 0.85, "patterns"), Detection(10, 20, "PHONE", 0.7, "patterns"),
                Detection(30, 40, "ORG", 0.9, "patterns")]
    assert merge_detections([model, patterns], 0.3) == [
        Detection(0, 7, "PERSON", 0.37, "model"),  # a tie: PERSON comes first in ENTITY_TYPES
        Detection(10, 20, "DATE", 0.85, "patterns"),  # PHONE (0.7, found twice) loses to the more confident DATE
        Detection(30, 40, "ORG", 0.9, "model+patterns")]  # one type: merged, as before
    tie = merge_detections([[Detection(0, 4, "ZZZ", 0.5, "m"), Detection(0, 4, "AAA", 0.5, "m"),
                             Detection(0, 4, "URL", 0.5, "m")]], 0.3)
    assert [d.label for d in tie] == ["URL"]  # types outside ENTITY_TYPES come after it, alphabetically


def test_crossing_types_keep_the_most_confident_and_nested_spans_all_stay() -> None:
    text = "the Regional Court of Plovdiv in 1984"
    court, plovdiv, year = text.index("Regional"), text.index("Plovdiv"), text.index("1984")
    found = [Detection(court, plovdiv + 7, "ORG", 0.8, "model"), Detection(plovdiv, plovdiv + 7, "LOC", 0.4, "model"),
             Detection(court, court + 8, "PERSON", 0.2, "model"),  # nested in the ORG: kept
             Detection(plovdiv, year + 4, "ORG", 0.3, "model"),  # crosses the ORG, same type: kept
             Detection(plovdiv + 4, year + 4, "PERSON", 0.35, "model"),  # crosses the LOC and the ORG: dropped
             Detection(year, year + 4, "DATE", 0.6, "patterns")]
    merged = merge_detections([found], 0.1)
    assert [(text[d.start:d.end], d.label) for d in merged] == [
        ("Regional", "PERSON"), ("Regional Court of Plovdiv", "ORG"), ("Plovdiv", "LOC"), ("Plovdiv in 1984", "ORG"),
        ("1984", "DATE")]
    winner = Detection(plovdiv + 4, year + 4, "PERSON", 0.9, "model")  # now the crossing PERSON is the strongest
    assert [(text[d.start:d.end], d.label) for d in merge_detections([[*found[:5], winner]], 0.1)] == [
        ("Regional", "PERSON"), ("Plovdiv in 1984", "ORG"), ("div in 1984", "PERSON")]  # the ORG and LOC it crosses go


def _strongest_first_pairwise(detections: Sequence[Detection]) -> list[Detection]:
    """The rule as stated, on every pair: strongest claim first, a span kept unless a kept span of another type has
    its extent or crosses it."""
    def rank(d: Detection) -> tuple[float, int, str, int, int]:
        return -d.score, ENTITY_TYPES.index(d.label), d.label, d.start, d.end

    def conflict(a: Detection, b: Detection) -> bool:
        return a.label != b.label and ((a.start, a.end) == (b.start, b.end) or a.start < b.start < a.end < b.end
                                       or b.start < a.start < b.end < a.end)

    kept: list[Detection] = []
    for d in sorted(detections, key=rank):
        if not any(conflict(d, c) for c in kept):
            kept.append(d)
    return sorted(kept)


@pytest.mark.parametrize("spans", [20, 400, 3000])
def test_type_resolution_keeps_what_the_pairwise_rule_keeps_on_runs_of_every_length(spans: int) -> None:
    """A low threshold chains a nested decoder's candidates into one run of thousands of spans: they are resolved as
    arrays, not pair by pair (46 s over four sentences at threshold 0.01), and must keep exactly the same spans."""
    rng = random.Random(spans)
    found = {}
    while len(found) < spans:  # mostly one type, so many spans are kept and nested ones pile up, as at 0.01
        start, label = rng.randrange(spans // 4), rng.choice(["PERSON"] * 6 + ["LOC", "ORG", "DATE"])
        end = start + rng.randint(1, 30)
        found[start, end, label] = Detection(start, end, label, rng.choice([0.2, 0.5, 0.5, 0.9]), "model")
    resolved = merge_detections([list(found.values())], 0.1)
    assert resolved == _strongest_first_pairwise(list(found.values()))
    assert len({d.label for d in resolved}) > 1 and len(resolved) < spans  # types competed, and some spans lost


class _Fixed:
    """A recognizer that finds the same detections in every text."""

    name = "model"
    labels = ("PERSON", "LOC", "ORG")

    def __init__(self, found: Sequence[Detection]) -> None:
        self.found = list(found)

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        return [list(self.found) for _ in texts]


class _Listed:
    """A detector that finds, besides each name, lists of names as one person (as the trained one does at its low
    person threshold), a list of places and a name with a title inside a list."""

    name = "model"
    labels = ("PERSON", "LOC")
    SPANS = (("Julie Rosenthal, Mike Eizenga and Joshua Abraham Norton", "PERSON"), ("Julie Rosenthal", "PERSON"),
             ("Mike Eizenga", "PERSON"), ("Joshua Abraham Norton", "PERSON"), ("Joshua Abraham", "PERSON"),
             ("Norton", "PERSON"), ("Portland, Oregon", "LOC"), ("Portland", "LOC"), ("Oregon", "LOC"),
             ("Mondale, Senator Baker", "PERSON"), ("Mondale", "PERSON"), ("Baker", "PERSON"),
             ("Ann and Bob Lee", "PERSON"))

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        return [[Detection(t.index(s), t.index(s) + len(s), label, 0.5, self.name) for s, label in self.SPANS]
                for t in texts]


def test_a_list_of_names_is_its_names_and_one_name_stays_one() -> None:
    text = ("Julie Rosenthal, Mike Eizenga and Joshua Abraham Norton flew from Portland, Oregon with\n"
            "Mondale, Senator Baker; Ann and Bob Lee stayed.")
    (doc,) = analyze([_Listed()], [text], Thresholds(0.1), view=NormalizeParams())
    found = {text[d.start:d.end] for d in doc}
    assert "Julie Rosenthal, Mike Eizenga and Joshua Abraham Norton" not in found  # a list: its three names stay
    assert {"Julie Rosenthal", "Mike Eizenga", "Joshua Abraham Norton"} <= found
    assert {"Joshua Abraham", "Norton"} <= found  # parts of one name (no separator between them) stay too
    assert {"Portland, Oregon", "Mondale, Senator Baker", "Ann and Bob Lee"} <= found  # a place; a title; no parts


def test_types_are_resolved_among_the_asked_types_so_a_name_another_type_won_is_still_protected() -> None:
    """Asking for names gives every span that passed as a name, also the one a place won (a names-only setting
    must not leave "Bassène, 2007" whole because the model read it as LOC more likely); asking for places, the
    place; asking for both, one type per span as before."""
    found = [Detection(0, 7, "LOC", 0.6, "model"), Detection(0, 7, "PERSON", 0.4, "model"),
             Detection(19, 24, "PERSON", 0.4, "model"), Detection(19, 24, "ORG", 0.2, "model")]
    everything = merge_detections([found], 0.3)
    assert everything == [found[0], found[2]]  # one type per span (ORG is under the threshold)
    names = merge_detections([found], 0.3, labels=["PERSON"])
    assert names == [found[1], found[2]]
    assert merge_detections([found], 0.3, labels=["LOC"]) == [found[0]]
    assert merge_detections([found], 0.3, labels=["LOC", "PERSON"]) == everything
    text = "Bassène (2007) and Sapir"
    (asked,) = analyze([_Fixed(found)], [text], Thresholds(0.3), ["PERSON"], view=NormalizeParams())
    assert asked == names  # the recognizer set resolves as merging does


def test_a_recognizer_set_without_the_model_runs_patterns_alone() -> None:
    params = DetectionParams(recognizers=["patterns"], threshold=0.65)
    (found,) = run_recognizers(build_recognizers(params, None), ["call 555 123 4567 in 1981 or on 12/03/1981"],
                               params, view=NormalizeParams())
    assert [(d.label, d.score) for d in found] == [("PHONE", 0.7), ("DATE", 0.85)]  # the year (0.6) is under 0.65
    with pytest.raises(ValueError, match="no trained detector"):
        build_recognizers(DetectionParams(), None)
    assert PatternRecognizer().analyze(["x@y.org"], 0.99)[0][0].label == "EMAIL"


def test_detection_params_are_checked() -> None:
    with pytest.raises(ConfigError, match="detection.threshold"):
        parse_params({"detection": {"threshold": 0}})
    with pytest.raises(ConfigError, match="detection.thresholds"):
        parse_params({"detection": {"thresholds": {"PERSON": 1.5}}})
    with pytest.raises(ConfigError, match="detection.recognizers"):
        parse_params({"detection": {"recognizers": ["model", "model"]}})
    with pytest.raises(ConfigError, match=r"detectors.calibration.recall"):
        parse_params({"detectors": {"calibration": {"recall": {"PERSON": 0}}}})
    with pytest.raises(ConfigError, match="a recall or a precision target, not both: LOC"):
        parse_params({"detectors": {"calibration": {"recall": {"LOC": 0.9}, "precision": {"LOC": 0.9}}}})
    with pytest.raises(ConfigError, match="detection.recognizers"):
        parse_params({"detection": {"recognizers": ["presidio"]}})
    with pytest.raises(ConfigError, match=r"privatize.settings.r.redact.labels"):
        parse_params({"privatize": {"settings": {"r": {"kind": "redact", "labels": ["person"]}}}})
    params = parse_params({"privatize": {"settings": {"r": {"kind": "redact", "labels": ["PERSON", "EMAIL"]}}}})
    assert params.privatize.settings["r"].labels == ["PERSON", "EMAIL"]


def test_spacy_recognizer_maps_types_when_installed() -> None:
    spacy_ner = pytest.importorskip("textsift.detection.recognizers.spacy_ner")
    pytest.importorskip("spacy")
    try:
        recognizer = spacy_ner.SpacyRecognizer()
    except Exception as err:  # noqa: BLE001 - no pipeline package installed here
        pytest.skip(f"no spaCy pipeline: {err}")
    (found,) = recognizer.analyze(["Barack Obama visited Paris and Microsoft on 4 July 2015."], 0.5)
    labels = {d.label for d in found}
    assert "PERSON" in labels and "LOC" in labels and labels <= {"PERSON", "LOC", "ORG", "DATE"}
    assert all(d.source == "spacy" and d.score == spacy_ner.SCORE for d in found)


def test_the_detectors_calibrated_thresholds_apply_to_its_own_detections_unless_params_override_them() -> None:
    detector = SimpleNamespace(labels=("PERSON", "DATE"), thresholds={"PERSON": 0.6, "DATE": 0.9})
    recognizers = [ModelRecognizer(detector), PatternRecognizer()]  # type: ignore[arg-type]
    needs = thresholds_of(recognizers, DetectionParams(threshold=0.5))
    model_date, pattern_date = Detection(0, 4, "DATE", 0.85, "model"), Detection(0, 4, "DATE", 0.85, "patterns")
    assert (needs.of(model_date), needs.of(pattern_date)) == (0.9, 0.5)  # calibrated on the model's scores only
    assert merge_detections([[model_date], [pattern_date]], needs) == [pattern_date]
    assert needs.of(Detection(0, 4, "PERSON", 0.7, "model")) == 0.6 and needs.floor() == 0.5
    override = thresholds_of(recognizers, DetectionParams(threshold=0.5, thresholds={"DATE": 0.95}))
    assert (override.of(model_date), override.of(pattern_date)) == (0.95, 0.95)  # params name the type: for all
    plain = thresholds_of(recognizers, DetectionParams(calibrated=False, threshold=0.5))
    assert plain.of(model_date) == 0.5 and thresholds_of([PatternRecognizer()], DetectionParams()).model == {}
    capped = needs.at_most(0.4)
    assert (capped.of(model_date), capped.of(pattern_date), capped.floor()) == (0.4, 0.4, 0.4)
    assert needs.at_most(0.95) == needs  # a ceiling above every threshold changes nothing


def test_the_model_recognizer_runs_small_batches_on_a_cpu_and_the_detectors_own_elsewhere_unless_params_say() -> None:
    def detector(device: str, inference_batch_size: int = 64) -> SimpleNamespace:
        return SimpleNamespace(device=device, labels=("PERSON",), thresholds={},
                               params=SimpleNamespace(inference_batch_size=inference_batch_size))

    default, chosen = DetectionParams(recognizers=["model"]), DetectionParams(recognizers=["model"], batch_size=32)
    (on_cpu,) = build_recognizers(default, detector("cpu"))  # type: ignore[arg-type]
    assert on_cpu.batch_size == CPU_WINDOWS < 64  # type: ignore[attr-defined]
    assert model_batch_size(default, detector("cuda:0")) == 64  # type: ignore[arg-type]
    assert model_batch_size(default, detector("cpu", 4)) == 4  # type: ignore[arg-type]  # never above its own
    assert model_batch_size(chosen, detector("cpu")) == model_batch_size(chosen, detector("cuda")) == 32  # type: ignore[arg-type]
