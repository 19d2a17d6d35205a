"""The sentence encoder of the LRP budgets: packaged MiniLM, mean pooling, L2 (METHODS.md §3 step 1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from textsift.budgets.sentence_encoder import SentenceEncoder, encode, load_sentence_encoder
from textsift.errors import ConfigError
from textsift.models.detector_encoders import minilm_folder
from textsift.models.fill_in import build_model
from textsift.models.params import FillInParams

TEXTS = [
    "The hotel room was clean and the staff were friendly.",
    "The staff were friendly and the hotel room was clean.",
    "Quarterly interest rates rose sharply at the central bank.",
]


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    return load_sentence_encoder(minilm_folder(), "cpu")


def test_rows_have_unit_norm_and_a_paraphrase_is_closer(encoder: SentenceEncoder) -> None:
    vectors = encode(encoder, TEXTS)
    assert vectors.shape == (3, encoder.dim) == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.9 and similarity[0, 1] > similarity[0, 2] + 0.5


def test_batch_size_and_order_do_not_change_a_row(encoder: SentenceEncoder) -> None:
    texts = [*TEXTS, "", "Short.", TEXTS[2] + " " + TEXTS[0]]
    base = encode(encoder, texts, batch_size=64)
    for batch_size in (1, 4):
        np.testing.assert_allclose(encode(encoder, texts, batch_size=batch_size), base, atol=1e-5)
    order = [5, 3, 0, 4, 2, 1]
    np.testing.assert_allclose(encode(encoder, [texts[i] for i in order], batch_size=2), base[order], atol=1e-5)


def test_empty_text_and_empty_input(encoder: SentenceEncoder) -> None:
    empty = encode(encoder, ["", ""])
    assert np.isfinite(empty).all() and np.allclose(np.linalg.norm(empty, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(empty[0], empty[1])
    assert encode(encoder, []).shape == (0, encoder.dim)


def test_truncation_and_argument_checks(encoder: SentenceEncoder) -> None:
    long_text = " ".join([TEXTS[0]] * 40)
    short, clipped = encode(encoder, [TEXTS[0] + " " + TEXTS[2], long_text], max_length=8)
    assert np.isfinite(clipped).all()
    head = encode(encoder, [TEXTS[0]], max_length=8)[0]
    np.testing.assert_allclose(short, head, atol=1e-5)  # only the first 8 tokens count
    for kwargs in ({"batch_size": 0}, {"max_length": 1}):
        with pytest.raises(ConfigError):
            encode(encoder, TEXTS, **kwargs)


def test_the_fill_in_encoder_can_stand_in(tmp_path: Path) -> None:
    """A saved fill-in folder (BertForMaskedLM, no pooler) loads without touching torch's global RNG."""
    params = FillInParams(vocab_size=120, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                          max_length=16)
    fm = build_model(TEXTS * 4, params, torch.Generator().manual_seed(0))
    fm.model.save_pretrained(tmp_path)
    fm.tokenizer.save_pretrained(tmp_path)
    state = torch.random.get_rng_state()
    encoder = load_sentence_encoder(tmp_path, "cpu")
    assert torch.equal(torch.random.get_rng_state(), state)
    vectors = encode(encoder, [*TEXTS, " ".join(TEXTS)])  # max_length 128 is clipped to the 16 positions
    assert vectors.shape == (4, 32)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
