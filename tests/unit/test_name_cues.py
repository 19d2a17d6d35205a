"""Names their context gives away: after an honorific, citation authors, IPA transcriptions (METHODS.md §4.1)."""

from __future__ import annotations

from textsift.detection.params import DetectionParams
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.build import build_recognizers
from textsift.detection.recognizers.merge import resolve
from textsift.detection.recognizers.name_cues import NameCueRecognizer, find_name_cues


def _names(text: str) -> list[str]:
    return [text[d.start:d.end] for d in find_name_cues(text)]


def test_the_name_after_an_honorific_without_titles_dots_or_possessives() -> None:
    assert _names("Dr. Means, It has come to our attention") == ["Means"]  # a word, yet a name here
    assert _names("Mrs J. Smith's car and Mr. O'Brien-Lee.") == ["J. Smith", "O'Brien-Lee"]
    assert _names("Mr. Justice Holmes agreed.") == ["Holmes"]  # the title stays outside, as GUM's rule has it
    assert _names("Mrs. B paid, Mlle. du Motel said.") == ["B", "du Motel"]
    assert _names("Thank you, Mr. President. Dr. and Ms. are titles; mr. smith is lower case.") == []
    assert _names("Thank you, Mr. Chair. Thank you. D. F. Costello, Prof. A historian") == []
    assert _names("Mr. Holland's Opus; Dr. Fauci Warns Of New Variant; Mr. J.R.R. Tolkien wrote.") == [
        "Holland", "Fauci", "J.R.R. Tolkien"]  # a possessive and a headline end the name; initials run together


def test_each_author_of_a_citation_is_its_own_name() -> None:
    text = "between 7,000 (Bassène, 2007) and 11,200 speakers (Lewis, Simons & Fennig 2013, p. 4)."
    assert _names(text) == ["Bassène", "Lewis", "Simons", "Fennig"]
    assert _names("as shown (e.g. Smith et al., 2007; van Dijk 2010a, b) and by Jones et al. (2009).") == [
        "Smith", "van Dijk", "Jones"]
    assert _names("(Liang Li, 2007) (Smith, Jones, and Brown 2007: 12)") == ["Liang Li", "Smith", "Jones", "Brown"]


def test_a_parenthetical_that_is_no_author_list_names_no_one() -> None:
    assert _names("(WHO, 2019) (Table 2, 2007) (Spring 2007) (in 2007) (see above, 2007) Titanic (1997)") == []
    assert _names("(Since 2007) (Dec 2007) (Christmas 2007) (Companies Act 2006) (Smith's 2007)") == []


def test_an_ipa_transcription_is_a_name_and_slashes_or_brackets_alone_are_not() -> None:
    text = "Antonín Dvořák (/ d(ə)ˈvɔːrʒɑːk, -ʒæk /; Czech: [ˈantoɲiːn ˈdvor̝aːk]) wrote [sic] and/or sang."
    assert _names(text) == ["d(ə)ˈvɔːrʒɑːk, -ʒæk", "ˈantoɲiːn ˈdvor̝aːk"]
    assert _names("next Pronunciation enPR: nĕ kst, IPA (key): / nɛkst / Audio (US)") == []  # a dictionary's word


def test_offsets_index_the_text_and_every_span_is_a_scored_person() -> None:
    text = "Intro.\n\nDr. Means (Bassène, 2007)"
    found = find_name_cues(text)
    assert [(d.label, d.source, d.score) for d in found] == [("PERSON", "name_cues", 0.8),
                                                             ("PERSON", "name_cues", 0.7)]
    assert [text[d.start:d.end] for d in found] == ["Means", "Bassène"]
    assert NameCueRecognizer().analyze([text], min_score=0.75) == [found[:1]]


def test_the_recognizer_set_runs_it_and_a_names_only_setting_protects_a_cued_name_the_model_typed_a_place() -> None:
    assert [r.name for r in build_recognizers(DetectionParams(recognizers=["patterns", "name_cues"]), None)] == [
        "patterns", "name_cues"]
    text = "(Bassène, 2007)"
    model_place = Detection(1, 8, "LOC", 0.9, "model")
    found = [model_place, *find_name_cues(text)]
    assert [(d.label, d.source) for d in resolve(text, found, ["PERSON"])] == [("PERSON", "name_cues")]
    assert [d.label for d in resolve(text, found)] == ["LOC"]  # every type: the likelier type wins, as before
