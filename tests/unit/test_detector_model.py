"""DPER building blocks (METHODS.md §4.1): RoPE, GlobalPointer masking, eq. (9), decoding, windows, metrics."""

from __future__ import annotations

import math

import pytest
import torch
from pydantic import ValidationError

from textsift.corpus import Span
from textsift.models.detector import reverse_padded
from textsift.models.detector_encoders import SHAPES, char_shape, minilm_folder
from textsift.models.detector_eval import span_metrics
from textsift.models.detector_windows import (
    collate,
    make_windows,
    text_token_spans,
    tokenize,
    window_spans,
    window_targets,
)
from textsift.models.flat_tagging import spans_to_tags, tag_names, tags_to_spans
from textsift.models.global_pointer import MASKED, GlobalPointer, apply_rope, decode_spans, global_pointer_loss
from textsift.models.params import DetectorParams


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_folder()))


def test_rope_scores_depend_only_on_the_relative_position() -> None:
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
    length = 12
    rq = apply_rope(q.expand(1, length, 1, 8))[0, :, 0]
    rk = apply_rope(k.expand(1, length, 1, 8))[0, :, 0]
    scores = rq @ rk.T
    for offset in range(-length + 1, length):
        diagonal = torch.diagonal(scores, offset)
        assert torch.allclose(diagonal, diagonal[0].expand_as(diagonal), atol=1e-5)
    assert not torch.allclose(torch.diagonal(scores, 0)[0], torch.diagonal(scores, 3)[0])  # it does see distance
    assert torch.allclose(rq.norm(dim=-1), q.norm().expand(length), atol=1e-5)  # a rotation keeps the norm


def test_global_pointer_scores_are_relative_for_identical_inputs() -> None:
    torch.manual_seed(0)
    head = GlobalPointer(6, num_types=2, head_size=8)
    hidden = torch.randn(6).expand(1, 10, 6)
    scores = head(hidden, torch.ones(1, 10, dtype=torch.bool))
    for c in range(2):
        for offset in range(10):
            diagonal = torch.diagonal(scores[0, c], offset)
            assert torch.allclose(diagonal, diagonal[0].expand_as(diagonal), atol=1e-5)


def test_lower_triangle_and_padding_are_masked_and_never_decoded() -> None:
    torch.manual_seed(1)
    head = GlobalPointer(5, num_types=3, head_size=4)
    mask = torch.tensor([[0, 1, 1, 1, 1, 0, 0], [0, 1, 1, 0, 0, 0, 0]], dtype=torch.bool)  # [CLS] body [SEP] pad
    scores = head(torch.randn(2, 7, 5), mask)
    for b in range(2):
        for i in range(7):
            for j in range(7):
                valid = i <= j and bool(mask[b, i]) and bool(mask[b, j])
                assert (scores[b, :, i, j] == MASKED).all() != valid
    for b, spans in enumerate(decode_spans(scores, threshold=-50.0)):  # everything that may be a span is
        assert {(i, j) for _, i, j in spans} == {(i, j) for i in range(7) for j in range(i, 7)
                                                   if mask[b, i] and mask[b, j]}


def _naive_eq9(scores: torch.Tensor, targets: torch.Tensor) -> float:
    total = 0.0
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s, y = scores[b, c].flatten().double().tolist(), targets[b, c].flatten().tolist()
            pos = sum(math.exp(-v) for v, t in zip(s, y, strict=True) if t)
            neg = sum(math.exp(v) for v, t in zip(s, y, strict=True) if not t)
            total += math.log(1 + pos) + math.log(1 + neg)
    return total / (scores.shape[0] * scores.shape[1])


def test_loss_is_eq_9() -> None:
    g = torch.Generator().manual_seed(2)
    scores = torch.randn(2, 3, 5, 5, generator=g) * 3
    scores = scores.masked_fill(torch.ones(5, 5, dtype=torch.bool).tril(-1), MASKED)
    targets = torch.zeros_like(scores)
    targets[0, 0, 1, 3] = targets[0, 2, 0, 0] = targets[1, 1, 2, 4] = targets[1, 1, 2, 2] = 1
    assert global_pointer_loss(scores, targets).item() == pytest.approx(_naive_eq9(scores, targets), rel=1e-5)


def test_loss_is_stable_for_large_scores() -> None:
    scores = torch.tensor([[[[200.0, -300.0], [MASKED, 150.0]]]], requires_grad=True)
    targets = torch.tensor([[[[1.0, 0.0], [0.0, 0.0]]]])
    loss = global_pointer_loss(scores, targets)
    assert loss.item() == pytest.approx(150.0, rel=1e-6)  # log(1 + e^-200) + log(1 + e^-300 + e^150)
    loss.backward()
    assert torch.isfinite(scores.grad).all()


def test_decoding_keeps_nested_and_overlapping_spans() -> None:
    scores = torch.full((1, 2, 8, 8), MASKED)
    scores[0, 0, 1, 5] = 3.0  # COM "Hainan Qianfan Culture Media Co."
    scores[0, 1, 1, 1] = 2.0  # LOC "Hainan" nested inside it
    scores[0, 0, 4, 6] = 0.5  # an overlapping COM
    scores[0, 0, 2, 3] = -1.0  # below the threshold
    assert decode_spans(scores) == [[(0, 1, 5), (0, 4, 6), (1, 1, 1)]]
    assert decode_spans(scores, threshold=1.0) == [[(0, 1, 5), (1, 1, 1)]]


def test_flat_tags_round_trip_and_drop_nested_spans() -> None:
    assert tag_names(["LOC", "COM"]) == ["O", "B-LOC", "I-LOC", "B-COM", "I-COM"]
    tags = spans_to_tags([(1, 1, 5), (0, 1, 1), (0, 7, 8)], 10)  # LOC nested in COM: the longer wins
    assert tags == [0, 3, 4, 4, 4, 4, 0, 1, 2, 0]
    assert tags_to_spans(tags) == [(1, 1, 5), (0, 7, 8)]
    assert tags_to_spans([2, 2, 0, 1, 4, 3]) == [(0, 0, 1), (0, 3, 3), (1, 4, 4), (1, 5, 5)]


def test_character_shapes() -> None:
    cases = {"Hainan": "capitalised", "I": "capitalised", "NASA": "all_caps", "media": "lower", "2023": "digits",
             "b2b": "digits", ".": "punctuation", "@": "punctuation", "iPhone": "other", "": "none"}
    assert {w: SHAPES[char_shape(w)] for w in cases} == cases


def _long_text() -> tuple[str, list[Span]]:
    parts, spans, cursor = [], [], 0
    for n in range(120):
        name = f"Kelvin Marlow{n}"
        sentence = f"On day {n} we wrote to Mr {name} in Oslo about the order.   "
        start = cursor + sentence.index(name)
        spans.append(Span(start, start + len(name), "PERSON"))
        spans.append(Span(cursor + sentence.index("Oslo"), cursor + sentence.index("Oslo") + 4, "CITY"))
        parts.append(sentence)
        cursor += len(sentence)
    return "".join(parts), spans


def test_windows_cover_a_long_text_and_map_spans_back_exactly_once(tokenizer) -> None:
    text, gold = _long_text()
    assert len(text) > 5000
    windows = make_windows(tokenizer, ["", text], max_length=24, stride=8)
    assert {w.text_index for w in windows} == {1}  # an empty text has no window
    (encoded,) = tokenize(tokenizer, [text])
    owned = [w.first + p - 1 for w in windows for p in range(*w.own)]
    assert owned == list(range(len(encoded.ids)))  # every token is owned by exactly one window
    assert all(len(w.input_ids) <= 24 and w.input_ids[0] == tokenizer.cls_token_id for w in windows)
    types = {"CITY": 0, "PERSON": 1}
    token_spans = text_token_spans(encoded, gold, types)
    crossing = [s for s in token_spans if any(w.first <= s[1] < w.first + len(w.offsets) <= s[2] for w in windows)]
    assert crossing, "the text must hold spans that cross a window border"
    found: list[Span] = []
    for w in windows:  # a perfect model: each window detects the gold spans it sees whole
        found.extend(window_spans(w, window_targets(w, token_spans), ["CITY", "PERSON"], text))
    assert sorted(found, key=lambda s: (s.start, s.end)) == sorted(gold, key=lambda s: (s.start, s.end))


def test_collate_masks_special_padding_and_inner_word_tokens(tokenizer) -> None:
    texts = ["Mr Kasator Ashdrudru came.", "Hi."]
    windows = make_windows(tokenizer, texts, max_length=16, stride=4)
    batch = collate(windows, "cpu", tokenizer.pad_token_id)
    lengths = [len(w.input_ids) for w in windows]
    assert batch["attention_mask"].sum(dim=1).tolist() == lengths
    assert batch["body_mask"].sum(dim=1).tolist() == [n - 2 for n in lengths]
    assert not (batch["body_mask"][:, 0] | batch["start_mask"][:, 0] | batch["end_mask"][:, 0]).any()
    pieces = tokenizer.convert_ids_to_tokens(windows[0].input_ids)
    assert pieces[2:5] == ["ka", "##sat", "##or"]
    assert batch["start_mask"][0, 1:8].tolist() == [True, True, False, False, True, False, False]
    assert batch["end_mask"][0, 1:8].tolist() == [True, False, False, True, False, False, False]
    assert [SHAPES[k] for k in windows[0].shapes[2:5]] == ["capitalised"] * 3  # the word's shape, not "sat"'s
    start = texts[0].index("sator")
    (encoded,) = tokenize(tokenizer, texts[:1])
    assert text_token_spans(encoded, [Span(start, start + 5, "PERSON")], {"PERSON": 0}) == [(0, 1, 3)]  # whole word


def test_inner_word_cells_are_never_decoded(tokenizer) -> None:
    torch.manual_seed(3)
    windows = make_windows(tokenizer, ["Mr Kasator Ashdrudru came.", "Hi."], max_length=16, stride=4)
    batch = collate(windows, "cpu", tokenizer.pad_token_id)
    scores = GlobalPointer(4, 2, 4)(torch.randn(2, batch["input_ids"].shape[1], 4), batch["start_mask"],
                                    batch["end_mask"])
    for b, spans in enumerate(decode_spans(scores, threshold=-50.0)):
        assert spans and all(batch["start_mask"][b, i] and batch["end_mask"][b, j] and i <= j for _, i, j in spans)


def test_span_metrics_use_exact_matches_and_token_accuracy() -> None:
    texts = ["Mr Kelvin Marlow lives in Oslo", "Nobody here"]
    gold = [[Span(3, 16, "PERSON"), Span(26, 30, "CITY")], []]
    predicted = [[Span(3, 9, "PERSON"), Span(26, 30, "CITY")], [Span(0, 6, "PERSON")]]
    m = span_metrics(texts, gold, predicted, labels=["PERSON", "CITY", "JOB"])
    assert m["detector.precision"] == pytest.approx(1 / 3)
    assert m["detector.recall"] == pytest.approx(1 / 2)
    assert m["detector.f1"] == pytest.approx(0.4)
    assert m["detector.CITY.f1"] == 1.0 and m["detector.PERSON.recall"] == 0.0
    assert m["detector.JOB.f1"] == 0.0 and m["detector.JOB.accuracy"] == 1.0
    # word tokens: Mr Kelvin Marlow lives in Oslo | Nobody here; wrong: Marlow (gold PERSON, none), Nobody
    assert m["detector.accuracy"] == pytest.approx(6 / 8)
    assert m["detector.PERSON.accuracy"] == pytest.approx(6 / 8)
    assert all(isinstance(v, float) for v in m.values())


def test_params_are_strict_and_checked() -> None:
    params = DetectorParams()
    with pytest.raises(ValidationError):
        DetectorParams(head_size=3)
    with pytest.raises(ValidationError):
        DetectorParams(stride=100, max_length=128)
    with pytest.raises(ValidationError):
        DetectorParams(lstm_size=3)
    with pytest.raises(ValidationError):
        DetectorParams(model="crf")
    with pytest.raises(ValidationError):
        params.epochs = 2  # frozen


def test_backward_lstm_over_padded_rows_matches_each_row_alone() -> None:
    x = torch.arange(10.0).reshape(2, 5, 1)
    lengths = torch.tensor([3, 5])
    assert reverse_padded(x, lengths)[:, :, 0].tolist() == [[2, 1, 0, 3, 4], [9, 8, 7, 6, 5]]
    assert torch.equal(reverse_padded(reverse_padded(x, lengths), lengths), x)
    torch.manual_seed(4)
    lstm = torch.nn.LSTM(3, 4, batch_first=True)
    batch = torch.randn(2, 6, 3)
    lengths = torch.tensor([2, 6])
    batch[0, 2:] = 99.0  # padding must not leak into the real steps
    together = reverse_padded(lstm(reverse_padded(batch, lengths))[0], lengths)
    alone = lstm(batch[:1, :2].flip(1))[0].flip(1)
    assert torch.allclose(together[0, :2], alone[0], atol=1e-6)
