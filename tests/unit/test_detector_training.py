"""Training, detecting, saving and loading tiny DPER detectors and the flat baseline (METHODS.md §4.1).

The task: two-word capitalised names after "Mr" in templated sentences, among capitalised
distractors (places, sentence starts). Names are made of random syllables from a seeded
generator, and the held-out sentences use names never seen in training.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
import torch

from textsift.corpus import Span
from textsift.detection.params import DetectionParams
from textsift.detection.recognizers.build import recognizer_set
from textsift.detection.recognizers.model import ModelRecognizer
from textsift.models.detector import detect, detect_scored, in_precision, logit, probability
from textsift.models.detector_eval import evaluate_detector
from textsift.models.detector_io import load_detector, save_detector
from textsift.models.detector_training import TrainedDetector, train_detector
from textsift.models.detector_windows import collate, make_windows
from textsift.models.int8_linear import Int8Linear
from textsift.models.params import DetectorParams

SYLLABLES = ["ka", "lo", "mi", "ren", "tor", "vin", "sa", "bel", "dru", "mont", "qui", "zel", "ash", "per", "gun"]
TEMPLATES = [
    "Yesterday Mr {name} visited {place} with two friends.",
    "We wrote to Mr {name} about the delay in {place}.",
    "The report by Mr {name} was late again.",
    "In {place} the staff said Mr {name} had left.",
    "Please ask Mr {name} to call the office.",
]
TINY = DetectorParams(encoder="roformer", encoder_layers=1, roformer_hidden=32, roformer_heads=2,
                      roformer_intermediate=64, shape_dim=8, lstm_hidden=32, head_size=16, max_length=48, stride=16,
                      epochs=12, batch_size=16, head_learning_rate=5e-3, inference_batch_size=8)


@dataclass(frozen=True)
class Example:
    text: str
    spans: tuple[Span, ...]


def _word(rng: np.random.Generator) -> str:
    return "".join(rng.choice(SYLLABLES, size=int(rng.integers(2, 4)))).capitalize()


def examples(n: int, seed: int) -> list[Example]:
    """Texts of one or two templated sentences, a PERSON span on each "Mr" name (not on "Mr")."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        text, spans = "", []
        for _ in range(int(rng.integers(1, 3))):
            name = f"{_word(rng)} {_word(rng)}"
            sentence = str(rng.choice(TEMPLATES)).format(name=name, place=_word(rng))
            start = len(text) + sentence.index(name)
            spans.append(Span(start, start + len(name), "PERSON"))
            text += sentence + " "
        out.append(Example(text.strip(), tuple(spans)))
    return out


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def trained(one_torch_thread: None) -> TrainedDetector:
    return train_detector(examples(160, seed=0), TINY, seed=11)


def test_a_tiny_detector_learns_names_after_mr(trained: TrainedDetector) -> None:
    detector, losses = trained
    assert len(losses) == TINY.epochs and losses[-1] < 0.5 * losses[0]
    held_out = examples(60, seed=99)
    metrics = evaluate_detector(detector, held_out)
    assert metrics["detector.PERSON.recall"] >= 0.9, metrics
    assert metrics["detector.precision"] >= 0.8, metrics
    assert {"detector.f1", "detector.accuracy", "detector.PERSON.f1"} <= set(metrics)


def test_long_texts_are_windowed_and_spans_come_back_once_with_exact_offsets(trained: TrainedDetector) -> None:
    detector = trained.detector
    held_out = examples(80, seed=5)
    text, gold, cursor = "", [], 0
    for ex in held_out:
        gold.extend(Span(s.start + cursor, s.end + cursor, s.label) for s in ex.spans)
        text += ex.text + "  \n"
        cursor = len(text)
    assert len(text) > 5000
    (found,) = detect(detector, [text])
    assert all(text[s.start:s.end] == text[s.start:s.end].strip() for s in found)
    hits = set(found) & set(gold)
    assert len(hits) >= 0.85 * len(gold) and len(hits) >= 0.8 * len(found)
    cut = [s for s in found for g in hits if s != g and g.start <= s.start < s.end <= g.end]
    assert cut == []  # a span found whole is not reported again, cut at a window border
    assert len(detector.tokenizer(text)["input_ids"]) > 5 * TINY.max_length  # many windows


def test_predictions_do_not_depend_on_batch_size_or_input_order(trained: TrainedDetector) -> None:
    detector = trained.detector
    texts = [ex.text for ex in examples(20, seed=3)] + ["", "   ", "Mr Zelka Permont" * 40]
    one = detect(detector, texts, batch_size=1)
    assert detect(detector, texts, batch_size=7) == one
    assert detect(detector, texts[::-1], batch_size=3) == one[::-1]
    assert one[-3] == [] and one[-2] == []


def test_same_seed_same_weights_and_predictions() -> None:
    params = TINY.model_copy(update={"epochs": 2})
    data = examples(32, seed=1)
    a, b = train_detector(data, params, seed=5), train_detector(data, params, seed=5)
    c = train_detector(data, params, seed=6)
    state_a, state_b = a.detector.net.state_dict(), b.detector.net.state_dict()
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)
    assert a.epoch_losses == b.epoch_losses
    assert not all(torch.equal(state_a[k], c.detector.net.state_dict()[k]) for k in state_a)
    texts = [ex.text for ex in examples(10, seed=2)]
    assert detect(a.detector, texts) == detect(b.detector, texts)


def test_save_and_load_round_trip(trained: TrainedDetector, tmp_path: Path) -> None:
    calibrated = replace(trained.detector, thresholds={"PERSON": 0.35, "LOC": 0.2})
    save_detector(calibrated, tmp_path / "detector")
    loaded = load_detector(tmp_path / "detector", "cpu")
    assert loaded.labels == trained.detector.labels and loaded.params == trained.detector.params
    assert loaded.thresholds == {"PERSON": 0.35, "LOC": 0.2}  # the calibrated thresholds travel with the model
    texts = [ex.text for ex in examples(15, seed=4)]
    assert detect(loaded, texts) == detect(trained.detector, texts)
    with pytest.raises(Exception, match="not a saved detector"):
        load_detector(tmp_path, "cpu")


def test_a_detector_run_in_bfloat16_keeps_its_bilstm_in_float32_and_finds_what_float32_finds(
        trained: TrainedDetector, tmp_path: Path) -> None:
    save_detector(trained.detector, tmp_path / "detector")
    recognizers = recognizer_set(DetectionParams(recognizers=["model"], inference_precision="bfloat16"),
                                 tmp_path / "detector", "cpu")
    half = next(r.detector for r in recognizers if isinstance(r, ModelRecognizer))
    assert {p.dtype for p in half.net.encoder.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in half.net.lstm.parameters()} | {p.dtype for p in half.net.head.parameters()} == {
        torch.float32}
    texts = [ex.text for ex in examples(40, seed=4)]
    full, low = ([dict(doc) for doc in detect_scored(d, texts, min_confidence=0.05)] for d in (trained.detector, half))
    confident = [{span for span, p in doc.items() if p > 0.6} for doc in full]  # far from the 0.5 decision point
    assert sum(map(len, confident)) >= 40  # a name in every text, at least
    assert all(span in found and found[span] > 0.5 for doc, found in zip(confident, low, strict=True) for span in doc)
    moved = [abs(found[span] - doc[span])
             for doc, found in zip(full, low, strict=True) for span in doc if span in found]
    assert 0 < max(moved) < 0.05  # computed in bf16 (its scores move), a little


def test_a_detector_run_in_int8_finds_what_float32_finds_and_scores_a_text_as_if_it_were_alone(
        trained: TrainedDetector, tmp_path: Path) -> None:
    """int8 is the default CPU precision: its encoder's linear layers are int8 products, the BiLSTM and head float32,
    and a text's confidences are the same (to float32's own wobble) whichever texts share its batch."""
    save_detector(trained.detector, tmp_path / "detector")
    recognizers = recognizer_set(DetectionParams(recognizers=["model"], inference_precision="int8"),
                                 tmp_path / "detector", "cpu")
    quantized = next(r.detector for r in recognizers if isinstance(r, ModelRecognizer))
    assert any(isinstance(m, Int8Linear) for m in quantized.net.encoder.modules())
    assert not any(isinstance(m, torch.nn.Linear) for m in quantized.net.encoder.modules())
    assert {p.dtype for p in quantized.net.lstm.parameters()} | {p.dtype for p in quantized.net.head.parameters()} == {
        torch.float32}
    assert not any(isinstance(m, Int8Linear) for m in trained.detector.net.modules())  # a copy was quantized
    texts = [ex.text for ex in examples(40, seed=4)]
    full, low = ([dict(doc) for doc in detect_scored(d, texts, min_confidence=0.05)] for d in (trained.detector,
                                                                                                quantized))
    confident = [{span for span, p in doc.items() if p > 0.6} for doc in full]
    assert sum(map(len, confident)) >= 40
    assert all(span in found and found[span] > 0.5 for doc, found in zip(confident, low, strict=True) for span in doc)
    moved = [abs(found[span] - doc[span])
             for doc, found in zip(full, low, strict=True) for span in doc if span in found]
    assert 0 < max(moved) < 0.05  # rounded to int8, a little
    alone = [dict(detect_scored(quantized, [text], min_confidence=0.05)[0]) for text in texts[:6]]
    assert [set(doc) for doc in alone] == [set(doc) for doc in low[:6]]
    assert max(abs(doc[span] - low[k][span]) for k, doc in enumerate(alone) for span in doc) < 1e-5


def test_flat_baseline_trains_and_detects_in_float32_and_int8() -> None:
    """The flat tagger is compared with the nested detector in the precision detection runs in (int8 on CPUs)."""
    params = TINY.model_copy(update={"model": "flat"})
    flat, losses = train_detector(examples(160, seed=0), params, seed=11)
    held_out = examples(40, seed=99)
    metrics = evaluate_detector(flat, held_out, prefix="flat")
    assert losses[-1] < losses[0]
    assert metrics["flat.PERSON.recall"] >= 0.8, metrics
    quantized = in_precision(flat, "int8")
    assert any(isinstance(m, Int8Linear) for m in quantized.net.encoder.modules())
    assert evaluate_detector(quantized, held_out, prefix="flat")["flat.PERSON.recall"] >= 0.8


def test_minilm_cut_to_one_layer_trains_saves_and_loads(tmp_path: Path) -> None:
    params = DetectorParams(encoder_layers=1, shape_dim=8, lstm_hidden=16, head_size=8, max_length=32, stride=4,
                            epochs=1, batch_size=8)
    detector, losses = train_detector(examples(16, seed=0), params, seed=3)
    assert len(detector.net.encoder.encoder.layer) == 1 and np.isfinite(losses).all()
    save_detector(detector, tmp_path / "m")
    loaded = load_detector(tmp_path / "m")
    assert len(loaded.net.encoder.encoder.layer) == 1
    windows = make_windows(detector.tokenizer, ["Mr Kelvin Marlow wrote from Oslo."], 32, 4)
    with torch.inference_mode():
        out = [d.net(**collate(windows, "cpu", d.tokenizer.pad_token_id)) for d in (loaded, detector)]
    assert torch.equal(*out)


def test_a_name_after_token_5000_is_found_as_in_a_short_text(trained: TrainedDetector) -> None:
    detector = trained.detector
    sentence = "We wrote to Mr Zelmont Kavin about the delay in Perdru."
    name = Span(sentence.index("Zelmont"), sentence.index("Zelmont") + len("Zelmont Kavin"), "PERSON")
    filler = "The staff said the report was late again. " * 700
    assert len(detector.tokenizer(filler)["input_ids"]) > 5000
    long_text = filler + sentence + " " + filler  # no truncation: the name sits far past any window
    shifted = Span(name.start + len(filler), name.end + len(filler), "PERSON")
    (short,), (long,) = detect(detector, [sentence]), detect(detector, [long_text])
    assert name in short
    assert shifted in long
    assert [s for s in long if s.label == "PERSON"] == [shifted]  # the filler holds no name


def test_scored_detection_at_the_trained_threshold_is_detect_and_lower_confidence_finds_more(
        trained: TrainedDetector) -> None:
    detector = trained.detector
    texts = [ex.text for ex in examples(30, seed=8)]
    scored = detect_scored(detector, texts)
    assert [[s for s, _ in doc] for doc in scored] == detect(detector, texts)
    assert all(0.5 < c <= 1.0 for doc in scored for _, c in doc)  # score 0 is confidence 0.5
    loose = detect_scored(detector, texts, min_confidence=0.01)
    for strict_doc, loose_doc in zip(scored, loose, strict=True):
        assert dict(strict_doc).items() <= dict(loose_doc).items()
    assert sum(map(len, loose)) > sum(map(len, scored))
    assert probability(logit(0.2)) == pytest.approx(0.2)


def test_a_batchs_span_confidences_are_each_decoded_cells_logistic(trained: TrainedDetector) -> None:
    from textsift.models.detector import decode, forward_windows, span_confidences

    detector = trained.detector
    windows = make_windows(detector.tokenizer, [ex.text for ex in examples(12, seed=9)], detector.params.max_length,
                           detector.params.stride)
    with torch.inference_mode():
        output, body = forward_windows(detector, windows)
    decoded = decode(detector, output, body, logit(0.05))
    confidences = span_confidences(detector, output, decoded)
    assert sum(map(len, confidences)) > len(windows)
    assert confidences == [[probability(float(output[row, c, i, j])) for c, i, j in spans]
                           for row, spans in enumerate(decoded)]


def test_thresholds_are_calibrated_on_real_validation_text_only(trained: TrainedDetector) -> None:
    from textsift.detection.calibration import type_curve
    from textsift.detection.labelled import LabelledText
    from textsift.detection.params import CalibrationParams
    from textsift.detection.recognizers.model import ModelRecognizer
    from textsift.detection.training_data import DetectorData
    from textsift.stages.train_detectors import calibrated_thresholds, held_out

    real = [LabelledText(ex.text, ex.spans) for ex in examples(30, seed=7)]
    wrong = [LabelledText(ex.text, ()) for ex in examples(30, seed=8)]  # gold that would make any name imprecise
    data = DetectorData((), (*real, *wrong), (), sources={"validation": ("gum",) * 30 + ("synthetic",) * 30},
                        label_set=("PERSON",))
    targets = CalibrationParams(recall={}, precision={"PERSON": 0.9, "DATE": 0.9})
    thresholds, metrics = calibrated_thresholds(trained.detector, data, targets,
                                                held_out(trained.detector, data)["validation"])
    assert set(thresholds) == {"PERSON"}  # no DATE in the gold: nothing to choose it on
    found = ModelRecognizer(trained.detector).analyze([ex.text for ex in real], 0.01)
    curve = {t: (p, r) for t, p, r in type_curve([list(ex.spans) for ex in real], found, "PERSON")}
    assert metrics["calibration.PERSON.char_precision"] == curve[thresholds["PERSON"]][0] >= 0.9
    lower = [t for t in curve if t < thresholds["PERSON"]]
    assert all(curve[t][0] < 0.9 for t in lower)  # the lowest threshold reaching the target


def test_scores_from_one_pass_of_the_model_equal_detecting_at_the_trained_threshold(trained: TrainedDetector) -> None:
    """train_detectors runs the model once per held-out split and reads every score off those detections: on spans
    without titles (the recognizer takes a person's title off), the figures are those of detecting each set anew at
    the trained threshold."""
    from textsift.detection.labelled import LabelledText
    from textsift.detection.training_data import DetectorData
    from textsift.stages.train_detectors import held_out, scores

    test = tuple(LabelledText(ex.text, ex.spans) for ex in examples(40, seed=11))
    data = DetectorData((), (), test, sources={"test": ("synthetic",) * 40}, label_set=("PERSON",))
    read_off = scores(trained.detector, data, "detector", held_out(trained.detector, data))
    anew = evaluate_detector(trained.detector, test, prefix="detector.test")
    assert anew and all(read_off[key] == value for key, value in anew.items())
    assert anew["detector.test.f1"] > 0  # something was found to agree on
    per_source = evaluate_detector(trained.detector, test, prefix="detector.test.synthetic")
    assert all(read_off[key] == value for key, value in per_source.items())
