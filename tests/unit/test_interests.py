"""IPI interest inference (METHODS.md §4.2): synthetic posts, ROUGE, the UniLM seq2seq mask, beam search."""

from __future__ import annotations

import pytest
import torch

from textsift.interests.rouge import corpus_rouge, lcs_length, rouge_scores
from textsift.interests.synthetic import NONE, filler_split, generate_post, generate_posts, load_lexicon
from textsift.interests.unilm import encode_pairs, seq2seq_mask


def test_posts_carry_exact_evidence_spans_and_the_target_names_the_interest() -> None:
    posts = generate_posts(400, "train", seed=3)
    lexicon = load_lexicon()
    assert len(lexicon.categories) == 12
    revealing = [p for p in posts if p.interest != NONE]
    assert 0.7 <= len(revealing) / len(posts) <= 0.9  # none_rate 0.2
    assert {p.interest for p in revealing} == set(lexicon.categories)
    for post in revealing:
        assert post.evidence and post.evidence.strip() == post.evidence
        assert post.target == f"{post.interest} : {post.evidence}"
        assert post.evidence.lower() not in {d.lower() for d in lexicon.distractors}
    assert all(p.target == NONE and p.start == p.end == 0 for p in posts if p.interest == NONE)


def test_a_post_depends_only_on_seed_split_and_index() -> None:
    assert generate_posts(50, "test", seed=9)[-1] == generate_post(49, "test", seed=9)
    assert generate_post(5, "test", seed=9) != generate_post(5, "train", seed=9)


def test_test_posts_hold_slot_values_no_training_post_contains() -> None:
    lexicon = load_lexicon()
    held_out = {value for category, slots in lexicon.slots.items() for slot, values in slots.items()
                for value in values if len({filler_split(category, slot, v, 3) for v in values}) == 2
                and filler_split(category, slot, value, 3) == "test"}
    assert len(held_out) >= 30
    train_text = " ".join(p.text.lower() for p in generate_posts(2000, "train", seed=3))
    seen = [value for value in held_out if f" {value} " in f" {train_text} "]
    assert len(seen) <= len(held_out) * 0.1  # only where a held-out value is also a word of another filler


def test_rouge_matches_hand_computed_values() -> None:
    assert lcs_length("a b c d".split(), "a c d e".split()) == 3
    scores = rouge_scores("food : made ramen at home", "food : made ramen from scratch")
    # words: [food, made, ramen, at, home] vs [food, made, ramen, from, scratch]
    assert scores["rouge_1"] == pytest.approx(3 / 5)
    assert scores["rouge_2"] == pytest.approx(2 / 4)
    assert scores["rouge_l"] == pytest.approx(3 / 5)
    assert scores["main"] == pytest.approx(0.2 * 0.6 + 0.4 * 0.5 + 0.4 * 0.6)
    assert rouge_scores("none", "none")["main"] == 1.0 and rouge_scores("", "food : x")["main"] == 0.0
    assert corpus_rouge(["a b", "c"], ["a b", "d"])["rouge_1"] == pytest.approx(0.5)


def test_seq2seq_mask_source_bidirectional_target_causal_padding_invisible() -> None:
    segments = torch.tensor([[0, 0, 0, 1, 1, 1, 0]])
    attention = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
    mask = seq2seq_mask(segments, attention)[0, 0]
    assert mask[:3, :3].all() and not mask[:3, 3:6].any()  # source sees source only
    assert mask[3:6, :3].all()  # target sees the whole source
    assert torch.equal(mask[3:6, 3:6], torch.ones(3, 3, dtype=torch.bool).tril())  # and earlier target
    assert not mask[:6, 6].any()  # nobody attends to padding


class _Tokenizer:
    """A tiny whitespace tokenizer with BERT's special ids, enough for encode_pairs."""

    cls_token_id, sep_token_id, pad_token_id = 1, 2, 0

    def __call__(self, texts: list[str], **_: object) -> dict:
        return {"input_ids": [[10 + len(w) for w in t.split()] for t in texts]}


def test_labels_sit_one_position_left_of_the_target_tokens_they_predict() -> None:
    batch = encode_pairs(_Tokenizer(), ["aa bbb", "c"], ["dd e", "ffff"], 8, 8)
    assert batch.input_ids[0].tolist() == [1, 12, 13, 2, 12, 11, 2]
    assert batch.segments[0].tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert batch.labels[0].tolist() == [-100, -100, -100, 12, 11, 2, -100]  # [SEP] predicts "dd", ...
    assert batch.attention[1].tolist() == [1, 1, 1, 1, 1, 0, 0]
    assert batch.labels[1].tolist() == [-100, -100, 14, 2, -100, -100, -100]


def test_a_trained_model_saves_loads_and_decodes_the_same_and_reproducibly(tmp_path, one_torch_thread: None) -> None:
    from textsift.interests.inference import generate, parse
    from textsift.interests.io import load_interest_model, save_interest_model
    from textsift.interests.params import InterestParams
    from textsift.interests.training import score, train_interest_model

    params = InterestParams(encoder_layers=1, epochs=1, batch_size=8, max_len=6, beam_size=2)
    posts = generate_posts(24, "train", seed=1)
    model = train_interest_model(posts, params, seed=1, device="cpu")
    again = train_interest_model(posts, params, seed=1, device="cpu")
    texts = [p.text for p in generate_posts(6, "test", seed=1)]
    generated = generate(model, texts)
    assert generated == generate(again, texts)  # seeded: batch order, head weights, dropout
    assert all(len(g.split()) <= params.max_len for g in generated)
    assert all(len(g.split()) <= 2 for g in generate(model, texts, max_len=2))
    save_interest_model(model, tmp_path / "m")
    loaded = load_interest_model(tmp_path / "m")
    assert generate(loaded, texts) == generated
    assert set(score(generated, generate_posts(6, "test", seed=1))) >= {"rouge_1", "main", "interest_accuracy"}
    assert parse("Food : made ramen") == ("food", "made ramen") and parse("none") == ("none", "")


def test_generated_evidence_is_located_in_the_text_whatever_its_case_and_spacing() -> None:
    from textsift.detect import evidence_offsets

    text = "Update: Made  Braised pork belly at home. Laundry day."
    start, end = evidence_offsets(text, "made braised pork belly")
    assert text[start:end] == "Made  Braised pork belly"
    assert evidence_offsets(text, "ramen") == (None, None) and evidence_offsets(text, "") == (None, None)


def test_interest_leak_counts_only_documents_that_revealed_an_interest() -> None:
    from textsift.interests.attack import interest_leak

    metrics = interest_leak(["food", "games", "none", "none"], ["food", "none", "travel", "none"])
    assert metrics == {"interest.revealing": 0.5, "interest.agreement": 0.5, "interest.leak_rate": 0.5}
    assert "interest.leak_rate" not in interest_leak(["none"], ["food"]) and interest_leak([], []) == {}


def test_interest_accuracy_scores_known_interests_and_false_alarms_separately() -> None:
    from textsift.interests.attack import interest_accuracy

    truth = ["food", "games", "games", "none", "none", "none", None]
    inferred = ["food", "games", "travel", "none", "food", "none", "food"]
    metrics = interest_accuracy(truth, inferred)
    assert metrics == pytest.approx({"interest.accuracy": 2 / 3, "interest.false_positive_rate": 1 / 3})
    assert interest_accuracy([None, None], ["food", "none"]) == {}  # nothing known, nothing scored
    assert set(interest_accuracy(["none"], ["food"])) == {"interest.false_positive_rate"}
    with pytest.raises(ValueError):
        interest_accuracy(["food"], ["food", "none"])


def test_the_attacker_keeps_an_interest_only_when_its_evidence_is_in_the_text() -> None:
    from textsift.interests.attack import evidence_overlap, grounded

    text = "Update: Made braised pork belly at home. The parcel can't come sooner."
    assert evidence_overlap(text, "made braised pork belly at home") == 1.0
    assert evidence_overlap(text, "can ' t stop baking") == pytest.approx(2 / 4)  # word pieces: can, t
    assert evidence_overlap(text, "") == 0.0 and evidence_overlap(text, "Ramen!") == 0.0
    assert grounded(text, "food", "made braised pork belly", 0.5) == "food"
    assert grounded(text, "food", "tried a new georgian recipe tonight", 0.5) == NONE  # invented evidence
    assert grounded(text, "food", "tried a new georgian recipe tonight", 0.0) == "food"  # 0: interest alone
    assert grounded(text, NONE, "", 0.5) == NONE


def test_cached_source_decoding_gives_the_states_of_the_full_forward_pass(one_torch_thread: None) -> None:
    from textsift.interests.params import InterestParams
    from textsift.interests.source_cache import encode_sources, supports_source_cache, target_states
    from textsift.interests.training import build_model
    from textsift.interests.unilm import _last_states

    im = build_model(InterestParams(encoder_layers=2), seed=5)
    im.model.eval()
    tok = im.tokenizer
    posts = ["Short one.", "A much longer post about the parcel that came late, and ramen at home.", "Mid length post."]
    prefixes = [[tok.cls_token_id, *tok(p, add_special_tokens=False)["input_ids"], tok.sep_token_id] for p in posts]
    assert supports_source_cache(im.model.encoder)
    with torch.no_grad():
        cache = encode_sources(im.model.encoder, prefixes, tok.pad_token_id, "cpu")
        full = _last_states(im.model, prefixes, [len(p) for p in prefixes], tok.pad_token_id, "cpu")
        torch.testing.assert_close(cache.last_state, full, atol=1e-4, rtol=1e-4)  # step 0: the final [SEP]
        rows = [2, 0, 1, 0]  # beams of the same post share its cache
        targets = torch.tensor([[2054, 1024, 3], [1045, 2293, 4], [7, 8, 9], [2054, 2054, 2054]])
        cached = target_states(im.model.encoder, cache, torch.tensor(rows), targets)
        full = _last_states(im.model, [prefixes[i] + t for i, t in zip(rows, targets.tolist(), strict=True)],
                            [len(prefixes[i]) for i in rows], tok.pad_token_id, "cpu")
    torch.testing.assert_close(cached, full, atol=1e-4, rtol=1e-4)


def test_the_pruned_beam_search_gives_the_plain_answer_in_fewer_steps(one_torch_thread: None) -> None:
    from textsift.interests.params import InterestParams
    from textsift.interests.training import build_model
    from textsift.interests.unilm import beam_search

    im = build_model(InterestParams(encoder_layers=1), seed=3)
    im.model.eval()
    tok = im.tokenizer
    posts = [f"Post {i}: the parcel came late and I cooked ramen at home with {i} friends." for i in range(12)]
    head = im.model.head
    answers: dict[bool, list[str]] = {}
    scored_rows = {True: 0, False: 0}
    for end_logit in (0.0, 10.0, 14.0):  # how sure the model is that the answer ends after its first word
        for prune in (True, False):
            steps = [0]

            def confident(states: torch.Tensor, prune: bool = prune, end_logit: float = end_logit,
                          steps: list[int] = steps) -> torch.Tensor:
                """The model's logits, scaled down, plus a first word it is sure of ("none") and an end it may be."""
                logits = head(states) * 0.3
                logits[:, tok.convert_tokens_to_ids("none") if steps[0] == 0 else tok.sep_token_id] += (
                    15.0 if steps[0] == 0 else end_logit)
                steps[0] += 1
                scored_rows[prune] += len(states)
                return logits

            im.model.head = confident
            answers[prune] = beam_search(im.model, tok, posts, 96, 3, 1, 12, prune=prune)
        assert answers[True] == answers[False], end_logit  # exact: the same answer for every post
    assert scored_rows[True] < scored_rows[False]
