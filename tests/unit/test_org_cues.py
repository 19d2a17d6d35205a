"""Organisation names their head noun gives away (METHODS.md §4.1)."""

from __future__ import annotations

from textsift.detection.params import DetectionParams
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.build import build_recognizers
from textsift.detection.recognizers.merge import resolve
from textsift.detection.recognizers.org_cues import SCORE, OrgCueRecognizer, organisation_names


def _orgs(text: str) -> list[str]:
    return [text[start:end] for start, end in organisation_names(text)]


def test_a_run_of_capitalised_words_with_a_head_noun_and_its_connectors_is_one_organisation() -> None:
    assert _orgs("She studied at Pennsylvania State University in 1990.") == ["Pennsylvania State University"]
    assert _orgs("A grant from the Eberly College of Science for Control of Disorders came.") == [
        "Eberly College of Science for Control of Disorders"]
    assert _orgs("the Newfoundland and Labrador Court of Appeal") == ["Labrador Court of Appeal"]
    assert _orgs("He joined Smith & Wesson Holdings and the Bank of England.") == [
        "Smith & Wesson Holdings", "Bank of England"]
    assert _orgs("The University of Arkansas and the Office of Science agreed.") == [
        "University of Arkansas", "Office of Science"]


def test_and_a_sentences_end_a_line_break_or_a_capitalised_stop_word_end_a_run() -> None:
    assert _orgs("Claudia Mo of the Civic Party and Wu Chi-wai of the Democratic Party spoke.") == [
        "Civic Party", "Democratic Party"]  # "and" joins two organisations: no connector
    assert _orgs("He left the Labour Party. The next day he spoke.") == ["Labour Party"]
    assert _orgs("Undergraduate Student Government The Pennsylvania State University") == [
        "Undergraduate Student Government", "Pennsylvania State University"]
    assert _orgs("Supreme Court\nJustice Holmes") == ["Supreme Court"]
    assert _orgs("When the Democratic Party won, Inc. was no word.") == ["Democratic Party"]


def test_a_role_before_of_is_left_out_and_a_lone_head_counts_only_after_the() -> None:
    assert _orgs("She is a Fellow of the Royal Society.") == ["Royal Society"]
    assert _orgs("Secretary of State of the Ministry of Defence and Minister for the Department of Health") == [
        "Ministry of Defence", "Department of Health"]
    assert _orgs("a Member of Congress, Terms of Service, Contempt of Court") == []  # a head alone after "of"
    assert _orgs("He wrote to the University twice.") == ["University"]
    assert _orgs("University is expensive. Court dates vary.") == []  # a sentence's first word, no name


def test_a_possessive_a_quote_a_title_or_a_sentences_dot_ends_the_name_and_stays_outside() -> None:
    assert _orgs("Harvard University's library and the Ministry of Defence’s plan") == [
        "Harvard University", "Ministry of Defence"]
    assert _orgs("He went to 'Harvard University' and 'Party of Five' aired.") == [
        "Harvard University", "Party of Five"]
    assert _orgs("Apple Inc. said so; Mt. Sinai Hospital did not.") == ["Apple Inc.", "Mt. Sinai Hospital"]
    assert _orgs("Harvard University President Larry Bacow and Bank of England Governor Mark Carney") == [
        "Harvard University", "Bank of England"]
    assert _orgs("Johns Hopkins Hospital Dr. Smith and Yale University Prof. Lee") == [
        "Johns Hopkins Hospital", "Yale University"]  # titles compared as titles.plain has them
    assert _orgs("the Office of Vice Presidency") == ["Office"]  # a title after "of": the name ends before it
    assert _orgs("He fought in World War I. University fees rose.") == []  # an initial's dot ends a sentence too


def test_buildings_streets_and_words_without_a_head_are_no_organisation() -> None:
    assert _orgs("We met in the Cannon Office Building on College Avenue.") == []
    assert _orgs("The Soviet Union fell. Barack Obama visited Paris.") == []
    assert _orgs("the university court ruled") == []  # lower case: no name
    assert _orgs("Fast Times at High School, then the Box Office; the New York Times agreed.") == ["New York Times"]


def test_the_recognizer_gives_org_detections_at_its_score_and_competes_in_resolve() -> None:
    text = "Harvard University hired her."
    (found,) = OrgCueRecognizer().analyze([text], 0.5)
    assert found == [Detection(0, 18, "ORG", SCORE, "org_cues")]
    assert OrgCueRecognizer().analyze([text], SCORE + 0.01) == [[]]
    assert [r.name for r in build_recognizers(DetectionParams(recognizers=["patterns", "org_cues"]), None)] == [
        "patterns", "org_cues"]
    model_place = Detection(0, 18, "LOC", SCORE - 0.2, "model")  # the model read the place in its name
    assert [(d.label, d.source) for d in resolve(text, [model_place, *found])] == [("ORG", "org_cues")]
