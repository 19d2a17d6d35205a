"""The transformer classifier's cheap mode: a head on frozen MiniLM features, each distinct text encoded once."""

from __future__ import annotations

import numpy as np

from tests.unit.test_transformer_classifier import _corpus
from textsift.budgets.sentence_encoder import encode, load_sentence_encoder
from textsift.evaluation.feature_classifier import FeatureCache, train_head
from textsift.evaluation.utility import score_probabilities
from textsift.models.detector_encoders import minilm_folder


def test_a_head_on_frozen_features_learns_what_the_majority_class_cannot(one_torch_thread: None) -> None:
    texts, labels = _corpus()
    cache = FeatureCache(load_sentence_encoder(minilm_folder(), "cpu"), max_length=32, batch_size=8)
    head = train_head(cache.features(texts[:36]), labels[:36], c=4.0, max_iter=500)
    scores = score_probabilities(list(head.classes_), head.predict_proba(cache.features(texts[36:])), labels[36:])
    assert scores["accuracy"] >= 0.9  # held-out things; the majority class gets 0.5


def test_each_distinct_text_is_encoded_once_and_rows_keep_their_order(one_torch_thread: None) -> None:
    texts, _ = _corpus()
    encoder = load_sentence_encoder(minilm_folder(), "cpu")
    cache = FeatureCache(encoder, max_length=32, batch_size=8)
    first = cache.features(texts[:10])
    assert cache.encoded == 10
    again = cache.features([texts[3], texts[12], texts[0], texts[12]])  # 3 and 0 seen, 12 new (twice)
    assert cache.encoded == 11
    np.testing.assert_array_equal(again[[0, 2]], first[[3, 0]])
    np.testing.assert_array_equal(again[1], again[3])
    np.testing.assert_allclose(again[1], encode(encoder, [texts[12]], 8, 32)[0], atol=1e-5)
    assert cache.features([]).shape == (0, encoder.dim)


def test_bfloat16_features_stay_close_to_float32_and_are_computed_in_bfloat16(one_torch_thread: None) -> None:
    texts, _ = _corpus()
    encoder = load_sentence_encoder(minilm_folder(), "cpu")
    full = FeatureCache(encoder, max_length=32, batch_size=8).features(texts[:12])
    half = FeatureCache(encoder, max_length=32, batch_size=8, precision="bfloat16").features(texts[:12])
    assert half.dtype == np.float32  # pooled in float32 whatever the encoder computed in
    cosine = (full * half).sum(axis=1)
    assert cosine.min() > 0.999
    assert np.abs(full - half).max() > 1e-6  # bf16 products really ran: float32 alone agrees to ~1e-7
