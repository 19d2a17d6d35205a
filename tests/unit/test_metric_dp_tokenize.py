"""Metric-DP word splitting, the notebook's rules (METHODS.md §2)."""

from __future__ import annotations

from textsift.tokenize import is_metric_dp_word, metric_dp_phrases, metric_dp_words, replace_tokens

TEXT = 'Hello, my name is "Ann-Marie" O\'Neil; call 001-680/455.\nBye (really)!'


def test_words_split_on_punctuation_spaces_slashes_and_quotes() -> None:
    assert [t.text for t in metric_dp_words(TEXT)] == [
        "Hello", "my", "name", "is", "Ann", "Marie", "O", "Neil", "call", "001", "680", "455", "Bye", "really"]
    assert all(TEXT[t.start:t.end] == t.text for t in metric_dp_words(TEXT))


def test_phrases_break_at_the_notebooks_punctuation_and_line_breaks() -> None:
    assert metric_dp_phrases(TEXT) == [["Hello"], ["my", "name", "is", "Ann"], ["Marie", "O", "Neil"], ["call", "001"],
                                       ["680", "455"], ["Bye"], ["really"]]
    assert metric_dp_phrases("") == []


def test_quotes_and_punctuation_are_never_words() -> None:
    assert not any(is_metric_dp_word(w) for w in ['"', "'", ",", "“", "a b", "", "x-y"])
    assert all(is_metric_dp_word(w) for w in ["paris", "Parijs", "42", "[OOV]", "café"])


def test_in_place_replacement_keeps_punctuation() -> None:
    tokens = metric_dp_words(TEXT)
    out = replace_tokens(TEXT, tokens, {0: "Hi", 4: "X", 5: "Y"})
    assert out.startswith('Hi, my name is "X-Y" O\'Neil;')


def test_br_markup_is_never_a_word_and_ends_a_phrase() -> None:
    text = "one two<br />three<BR/>four <br>five x<y"
    assert [t.text for t in metric_dp_words(text)] == ["one", "two", "three", "four", "five", "x<y"]
    assert metric_dp_phrases(text) == [["one", "two"], ["three"], ["four"], ["five", "x<y"]]
    assert not any(is_metric_dp_word(w) for w in ["<br />", "<BR>", "a<br/>b"])
