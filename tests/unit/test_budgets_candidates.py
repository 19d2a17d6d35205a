"""Step 1's neutral fill and step 2's masked-LM candidate sentences (METHODS.md §3)."""

from __future__ import annotations

import pytest
import torch

from textsift.budgets.candidates import _filler_ids, _windows, candidate_sentences, candidate_sets, neutral_fill
from textsift.models.fill_in import FillInModel, build_model
from textsift.models.params import FillInParams

TEXTS = [
    "Alice Smith loved the screen, but the battery of her phone died in Paris after two days.",
    "Bob said the delivery was quick and the driver left it with the neighbour in Oslo.",
    "The staff at the shop in Rome were rude to Dave, who wanted a refund for the broken headphones.",
] * 3
WINDOW = 16


@pytest.fixture(scope="module")
def fm() -> FillInModel:
    """An untrained tiny masked LM (ranking mechanics do not need a good one); window of 16 tokens."""
    params = FillInParams(vocab_size=300, min_doc_freq=1, hidden_size=32, num_layers=1, num_heads=2,
                          intermediate_size=64, max_length=WINDOW)  # 3 documents a word: whole words need 1
    model = build_model(TEXTS, params, torch.Generator().manual_seed(0))
    model.model.eval()
    return model


def span_of(text: str, word: str, occurrence: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(word, start + 1)
    return start, start + len(word)


def filler(text: str, span: tuple[int, int], candidate: str) -> str:
    """The part of ``candidate`` that replaced ``text[span]``, after checking the rest is unchanged."""
    start, end = span
    assert candidate.startswith(text[:start]) and candidate.endswith(text[end:])
    return candidate[start:len(candidate) - (len(text) - end)]


@pytest.mark.parametrize(("spans", "expected"), [
    ([], "Alice met Bob in Paris."),
    ([(0, 5)], "something met Bob in Paris."),
    ([(17, 22), (0, 5), (10, 13)], "something met something in something."),
    ([(0, 9), (6, 9)], "something Bob in Paris."),  # nested: the outer span wins
    ([(0, 7), (6, 13)], "something in Paris."),  # overlapping: merged
    ([(0, 5), (5, 9)], "somethingsomething Bob in Paris."),  # adjacent: one filler each
])
def test_neutral_fill_cases(spans: list[tuple[int, int]], expected: str) -> None:
    text = "Alice met Bob in Paris."
    assert neutral_fill(text, spans) == expected


def test_neutral_fill_custom_filler_and_bad_spans() -> None:
    assert neutral_fill("Call Bob now", [(5, 8)], filler="[PERSON]") == "Call [PERSON] now"
    for bad in [(3, 3), (-1, 2), (5, 99)]:
        with pytest.raises(ValueError):
            neutral_fill("Call Bob now", [bad])


def test_candidates_are_top_k_whole_words_never_the_original(fm: FillInModel) -> None:
    text = TEXTS[0]
    for word in ("Paris", "battery", "Alice Smith"):
        span = span_of(text, word)
        out = candidate_sentences(text, span, fm, top_k=5)
        assert len(out) == 5 and len(set(out)) == 5
        fills = [filler(text, span, c) for c in out]
        forms = {word.casefold(), *(w.casefold() for w in word.split())}
        assert not any(f.casefold() in forms for f in fills)
        assert all(f and not f.startswith("##") and any(ch.isalnum() for ch in f) for f in fills)
        assert not set(fills) & set(fm.tokenizer.all_special_tokens)


def test_top_k_beyond_the_vocabulary_returns_every_allowed_word_but_the_original(fm: FillInModel) -> None:
    text = TEXTS[1]
    span = span_of(text, "delivery")
    out = candidate_sentences(text, span, fm, top_k=10_000)
    allowed = int(_filler_ids(fm).sum())
    assert "delivery" in fm.tokenizer.get_vocab()  # so exactly one allowed word is left out
    assert len(out) == allowed - 1
    assert "delivery" not in {filler(text, span, c) for c in out}


def test_candidates_follow_the_models_ranking(fm: FillInModel) -> None:
    text = TEXTS[2]
    span = span_of(text, "rude")
    (window, col), = _windows(fm, [text], [span])
    ids = torch.tensor([[fm.tokenizer.cls_token_id, *window, fm.tokenizer.sep_token_id]])
    with torch.inference_mode():
        logits = fm.model(input_ids=ids).logits[0, col + 1].float()
    allowed = _filler_ids(fm)
    allowed[fm.tokenizer.convert_tokens_to_ids("rude")] = False
    ranked = [i for i in torch.argsort(logits, descending=True, stable=True).tolist() if allowed[i]][:4]
    expected = fm.tokenizer.convert_ids_to_tokens(ranked)
    assert [filler(text, span, c) for c in candidate_sentences(text, span, fm, top_k=4)] == expected


def test_windows_hold_one_mask_and_are_centred_on_it_in_long_texts(fm: FillInModel) -> None:
    text = "Do not read [MASK] here. " + " ".join(TEXTS)
    spans = [span_of(text, "Paris", 2), span_of(text, "Do"), span_of(text, "headphones", 2)]
    for window, col in _windows(fm, [text] * 3, spans):
        assert len(window) <= WINDOW - 2 and window.count(fm.tokenizer.mask_token_id) == 1
        assert window[col] == fm.tokenizer.mask_token_id
    out = candidate_sentences(text, spans[0], fm, top_k=3)
    assert len(out) == 3 and all(c.startswith("Do not read [MASK] here.") for c in out)


def test_batched_sets_equal_the_single_version(fm: FillInModel) -> None:
    texts = TEXTS[:3] + ["Short Oslo.", "No sensitive words here."]
    spans = [[span_of(texts[0], "Paris"), span_of(texts[0], "Alice Smith"), span_of(texts[0], "phone")],
             [span_of(texts[1], "Bob"), span_of(texts[1], "Oslo")],
             [span_of(texts[2], "Dave")],
             [span_of(texts[3], "Oslo")],
             []]
    single = [[candidate_sentences(t, s, fm, top_k=4) for s in ss] for t, ss in zip(texts, spans, strict=True)]
    for batch_size in (1, 2, 64):
        assert candidate_sets(texts, spans, fm, top_k=4, batch_size=batch_size) == single
    assert [len(x) for x in single] == [3, 2, 1, 1, 0]
    assert candidate_sets([], [], fm, top_k=4) == []


def test_candidate_sets_reject_bad_arguments(fm: FillInModel) -> None:
    with pytest.raises(ValueError):
        candidate_sets(["abc"], [[(0, 1)]], fm, top_k=0)
    with pytest.raises(ValueError):
        candidate_sets(["abc"], [], fm, top_k=2)
    with pytest.raises(ValueError):
        candidate_sets(["abc"], [[(2, 9)]], fm, top_k=2)
