"""The transformer classifier of the evaluation (METHODS.md §5): it must learn, and say when it does not."""

from __future__ import annotations

import pandas as pd
import pytest

from textsift.evaluation.params import TransformerClassifierParams
from textsift.evaluation.setting_utility import with_majority
from textsift.evaluation.transformer_classifier import fine_tune, predict_proba
from textsift.evaluation.utility import score_probabilities
from textsift.models.detector_encoders import minilm_folder
from textsift.models.schedule import warmup_then_decay

POSITIVE = ["great {} and a lovely team", "the {} was wonderful, thank you", "really happy with the {}"]
NEGATIVE = ["awful {} and a rude team", "the {} was terrible, never again", "really angry about the {}"]
THINGS = ["app", "delivery", "food", "room", "support", "update", "checkout", "order"]


def _corpus() -> tuple[list[str], list[str]]:
    texts, labels = [], []
    for thing in THINGS:
        for pos, neg in zip(POSITIVE, NEGATIVE, strict=True):
            texts += [pos.format(thing), neg.format(thing)]
            labels += ["pos", "neg"]
    return texts, labels


def test_minilm_cut_to_two_layers_learns_a_task_that_the_majority_class_cannot(one_torch_thread: None) -> None:
    texts, labels = _corpus()
    params = TransformerClassifierParams(encoder="minilm", encoder_layers=2, epochs=6, batch_size=8,
                                         learning_rate=2e-4, max_length=32)
    clf = fine_tune(minilm_folder(), texts[:36], labels[:36], params, seed=5, key="t", device="cpu")
    assert clf.model.encoder.config.num_hidden_layers == 2
    scores = score_probabilities(clf.classes, predict_proba(clf, texts[36:]), labels[36:])
    assert scores["accuracy"] >= 0.9  # held-out things; the majority class gets 0.5


def test_rows_at_or_below_the_majority_class_are_flagged() -> None:
    utility = pd.DataFrame({"setting": ["original", "x"], "classifier": ["transformer"] * 2, "accuracy": [0.8, 0.6]})
    flagged = with_majority(utility, pd.Series(["a", "a", "a", "b", "b"]))
    assert flagged["majority_accuracy"].tolist() == pytest.approx([0.6, 0.6])
    assert flagged["beats_majority"].tolist() == [True, False]


def test_the_rate_warms_up_linearly_then_decays_to_zero() -> None:
    factor = warmup_then_decay(100, 0.1)
    assert factor(0) == pytest.approx(1 / 11) and factor(9) == pytest.approx(10 / 11)
    assert factor(10) == 1.0 and factor(55) == pytest.approx(0.5) and factor(99) == pytest.approx(1 / 90)
    assert [round(factor(s), 6) for s in range(10)] == sorted(round(factor(s), 6) for s in range(10))
    assert warmup_then_decay(5, 0.0)(0) == 1.0


def test_the_report_shows_no_examples_of_a_setting_that_leaks_above_the_ceiling() -> None:
    from textsift.stages.evaluate import safe_examples

    examples = {"leaky": ["Maria Lopez lives at 12 Elm St"], "safe": ["Someone lives somewhere"]}
    privacy = {"leaky": {"privacy.leak.rate": 1.0}, "safe": {"privacy.leak.rate": 0.05}}
    assert safe_examples(examples, privacy, 0.2) == {"safe": ["Someone lives somewhere"]}
