"""DataSifterText masking (METHODS.md §1.2): hand-computed sweeps, termination, properties."""

from __future__ import annotations

import numpy as np
import pytest

from textsift.mechanisms.datasifter.masking import BLACK, NORMAL, WHITE, MaskingRule, mask_document
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.datasifter.sifter import mask_corpus, mask_metrics
from textsift.mechanisms.datasifter.wordlists import default_blacklist
from textsift.rng import generator
from textsift.tokenize import words
from textsift.word_lists import parse_word_list, stop_words


class Scripted:
    """A uniform source that returns prescribed sweeps and records how many draws each asked for."""

    def __init__(self, *sweeps: list[float]) -> None:
        self.sweeps = list(sweeps)
        self.sizes: list[int] = []

    def random(self, size: int) -> np.ndarray:
        self.sizes.append(size)
        draws = self.sweeps.pop(0)
        assert len(draws) == size
        return np.array(draws)


def rule(**overrides: object) -> MaskingRule:
    setting = DataSifterSetting(kind="datasifter", **overrides)
    return MaskingRule.from_setting(setting, whitelist=["alice"], blacklist=["the"])


def test_hand_computed_sweeps_whitelist_blacklist_reset_and_decay() -> None:
    # words: alice (white), the (black), cat (normal); pw=0.5, pn=0.75, coef 1.2, step 0.05, target 0.5
    classes = rule().classes(["Alice", "the", "cat"])
    assert classes.tolist() == [WHITE, BLACK, NORMAL]
    rng = Scripted(
        # sweep 1: alice p=1-0.5*1.2=0.4 (0.5 keeps, coef 1.15); the p=0 (coef 1.10); cat p=1-0.75*1.1=0.175 (keeps)
        [0.5, 0.0, 0.2],
        # sweep 2 (coef 1.05): alice p=0.475 (0.3 masks, coef=1.2); the (coef 1.15); cat p=0.1375 (0.14 keeps)
        [0.3, 0.0, 0.14],
        # sweep 3 (coef 1.10), alice is not re-drawn: the (coef 1.05); cat p=1-0.75*1.05=0.2125 (0.21 masks)
        [0.0, 0.21],
    )
    result = mask_document(classes, rule(), rng)
    assert result.masked.tolist() == [True, False, True]
    assert result.reached_target  # 2 > 0.5 * 3
    assert rng.sizes == [3, 3, 2]


def test_coef_floor_stops_the_decay() -> None:
    # pn=1: p = 1 - coef. Six kept tokens take coef from 1.2 to the floor 0.9, where it stays:
    # token 9 has p = 0.1 (without the floor coef would be 0.75 and p = 0.25), token 10 too.
    setting = DataSifterSetting(kind="datasifter", pn=1.0, coef_floor=0.9, target_fraction=0.05)
    r = MaskingRule.from_setting(setting, [], [])
    rng = Scripted([0.99] * 8 + [0.15, 0.0999])
    assert mask_document(r.classes(["w"] * 10), r, rng).masked.tolist() == [False] * 9 + [True]


def test_all_blacklisted_document_ends_at_once_and_is_reported() -> None:
    rng = Scripted()
    result = mask_document(rule().classes(["the", "THE", "the"]), rule(), rng)
    assert not result.masked.any() and not result.reached_target and rng.sizes == []


def test_loop_ends_when_only_blacklisted_tokens_are_left() -> None:
    rng = Scripted([0.0, 0.0])  # cat masked in sweep 1; then only "the" is open: the loop must end
    result = mask_document(rule().classes(["the", "cat"]), rule(), rng)
    assert result.masked.tolist() == [False, True] and not result.reached_target


def test_zero_probabilities_end_the_loop() -> None:
    # pn = 1 and a floor above coef_start: coef stays 1.2, p = 0 for every token, forever
    r = MaskingRule.from_setting(DataSifterSetting(kind="datasifter", pn=1.0, coef_floor=1.5), [], [])
    rng = Scripted([0.0, 0.0])
    result = mask_document(r.classes(["a1", "b1"]), r, rng)
    assert not result.masked.any() and not result.reached_target and rng.sizes == [2]


def test_max_sweeps_bounds_vanishing_probabilities() -> None:
    # floor 1.0: coef stops at 1 - 2e-16, so p ~ 2e-16: only the sweep bound ends the loop
    setting = DataSifterSetting(kind="datasifter", pn=1.0, coef_floor=1.0, max_sweeps=50)
    r = MaskingRule.from_setting(setting, [], [])
    result = mask_document(r.classes(["a1", "b1"]), r, generator(1, "t"))
    assert not result.masked.any() and not result.reached_target


def test_case_sensitive_matching() -> None:
    r = MaskingRule.from_setting(DataSifterSetting(kind="datasifter", case_sensitive=True), ["Alice"], ["the"])
    assert r.classes(["Alice", "alice", "The", "the"]).tolist() == [WHITE, NORMAL, NORMAL, BLACK]


@pytest.mark.parametrize("seed", range(20))
def test_masked_fraction_exceeds_target_and_blacklist_is_never_masked(seed: int) -> None:
    text = "The quick brown fox jumps over the lazy dog and Alice sees it from a hill near the river bank"
    r = MaskingRule.from_setting(DataSifterSetting(kind="datasifter"), ["alice"], default_blacklist())
    tokens = [t.text for t in words(text)]
    classes = r.classes(tokens)
    result = mask_document(classes, r, generator(seed, "datasifter.mask", "d1"))
    assert result.reached_target and result.fraction > 0.5
    assert not result.masked[classes == BLACK].any()


def test_every_whitelisted_token_is_masked_at_least_once_over_seeds() -> None:
    text = "Alice met Bob in Paris and the two of them went to see Carol at the museum with Dave"
    sensitive = ["alice", "bob", "paris", "carol", "dave"]
    r = MaskingRule.from_setting(DataSifterSetting(kind="datasifter"), sensitive, default_blacklist())
    tokens = [t.text for t in words(text)]
    white = r.classes(tokens) == WHITE
    ever = np.zeros(len(tokens), dtype=bool)
    for seed in range(30):
        ever |= mask_document(r.classes(tokens), r, generator(seed, "datasifter.mask", "d")).masked
    assert white.sum() == 5 and ever[white].all()


def test_span_words_extend_one_documents_whitelist_and_stats() -> None:
    r = MaskingRule.from_setting(DataSifterSetting(kind="datasifter"), [], default_blacklist())
    tokens = [words("the Zed went to the shop"), words("the the the")]
    masks = mask_corpus(tokens, ["a", "b"], r, key=3, sensitive_words=[["Zed"], []])
    assert r.classes(["Zed"], ["zed"]).tolist() == [WHITE]
    metrics = mask_metrics(masks)
    assert metrics["docs_below_target"] >= 1  # "the the the" cannot be masked at all
    assert metrics["tokens_total"] == 9 and metrics["masked_fraction_p10"] <= metrics["masked_fraction_p90"]


def test_word_lists() -> None:
    assert parse_word_list("# comment\n alice \n\nbob\n") == ["alice", "bob"]
    assert {"the", "and", "don't"} <= stop_words() and len(stop_words()) == 179
    assert {"x", "b"} <= default_blacklist()


def test_forced_tokens_are_masked_even_blacklisted_and_count_toward_the_target() -> None:
    from textsift.mechanisms.datasifter.masking import BLACK, NORMAL, MaskingRule, mask_document

    rule = MaskingRule(pw=1.0, pn=1.0, target_fraction=0.5, coef_start=1.0, coef_step=0.0, coef_floor=0.0,
                       max_sweeps=5, whitelist=frozenset(), blacklist=frozenset())  # pn = 1: nothing masks by chance
    classes = np.array([BLACK, NORMAL, NORMAL, NORMAL], dtype=np.int8)
    forced = np.array([True, False, True, False])
    result = mask_document(classes, rule, np.random.default_rng(0), forced)
    assert result.masked.tolist() == [True, False, True, False] and not result.reached_target
    assert not mask_document(classes, rule, np.random.default_rng(0)).masked.any()


def test_sift_masks_every_occurrence_of_a_protected_span(tmp_path) -> None:
    from textsift.corpus import Span
    from textsift.mechanisms.datasifter.sifter import covered_tokens
    from textsift.mechanisms.protected_spans import consistent_spans
    from textsift.tokenize import words

    text = "Ann Lee called. Lee said hi to lee."
    regions = consistent_spans(text, [Span(0, 7, "PERSON")])
    assert covered_tokens(words(text), regions).tolist() == [True, True, False, True, False, False, False, True]
