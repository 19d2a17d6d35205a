"""DataSifterText fill-in (METHODS.md §1.3): readable whole words, batch-size independence, windows."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from textsift.mechanisms.datasifter.fill import FillOptions, encode, fill_documents, window_starts
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.datasifter.sampling import Candidates, choose
from textsift.mechanisms.datasifter.sifter import sift
from textsift.mechanisms.datasifter.wordlists import default_blacklist
from textsift.models.fill_in import FillInModel, build_model
from textsift.models.params import FillInParams
from textsift.rng import generator
from textsift.tokenize import words

TEXTS = [
    "Alice Smith loved the screen, but the battery of her phone died in Paris after two days.",
    "Bob's delivery was quick; the driver called him at 555-0101 and left it with the neighbour.",
    "Short one.",
    "Carol visited Rome with her sister and both hated the hotel room, the food and the noisy street " * 4,
    "The staff at the shop in Oslo were rude to Dave, who wanted a refund for the broken headphones.",
] * 2


@pytest.fixture(scope="module")
def fm() -> FillInModel:
    """An untrained tiny model (fill-in mechanics do not need a good one); window of 24 tokens."""
    params = FillInParams(vocab_size=300, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                          max_length=24)
    model = build_model(TEXTS, params, torch.Generator().manual_seed(0))
    model.model.eval()
    return model


def masks_for(texts: list[str], share: float = 0.6) -> list[np.ndarray]:
    return [generator(1, "test", str(i)).random(len(words(t))) < share for i, t in enumerate(texts)]


def run(fm: FillInModel, **options: object) -> list[list[str]]:
    tokens = [words(t) for t in TEXTS]
    return fill_documents(TEXTS, tokens, masks_for(TEXTS), fm, FillOptions(**options),
                          seeds=list(range(100, 100 + len(TEXTS))))


@pytest.mark.parametrize("order", ["sequential", "parallel"])
@pytest.mark.parametrize("strategy", ["sample", "top1"])
def test_fills_are_whole_words_and_independent_of_batch_size(fm: FillInModel, order: str, strategy: str) -> None:
    base = run(fm, order=order, strategy=strategy, batch_size=64, overlap=4)
    for batch_size in (1, 3):
        assert run(fm, order=order, strategy=strategy, batch_size=batch_size, overlap=4) == base
    flat = [w for doc in base for w in doc]
    assert [len(doc) for doc in base] == [int(m.sum()) for m in masks_for(TEXTS)]
    specials = set(fm.tokenizer.all_special_tokens)
    assert flat and not any(w.startswith("##") or w in specials or not w for w in flat)
    if strategy == "top1":
        assert all(any(c.isalnum() for c in w) for w in flat)


def test_sampling_depends_on_the_document_seed(fm: FillInModel) -> None:
    tokens = [words(t) for t in TEXTS]
    masks = masks_for(TEXTS)
    a = fill_documents(TEXTS, tokens, masks, fm, FillOptions(), seeds=[1] * len(TEXTS))
    b = fill_documents(TEXTS, tokens, masks, fm, FillOptions(), seeds=[2] * len(TEXTS))
    assert a != b


def test_encode_gives_one_mask_per_masked_word(fm: FillInModel) -> None:
    text = "Don't [MASK] me, Zyxwvut!"
    tokens = words(text)
    masked = np.array([True, False, False, True])
    (ids, positions), = encode([text], [tokens], [masked], fm)
    assert len(positions) == 2 and [ids[p] for p in positions] == [fm.tokenizer.mask_token_id] * 2
    assert ids.count(fm.tokenizer.mask_token_id) == 2  # the literal "[MASK]" in the text is not a mask


def test_window_starts_cover_long_documents() -> None:
    assert window_starts(10, 22, 4) == [0]
    starts = window_starts(100, 22, 4)
    assert starts[0] == 0 and starts[-1] == 78 and all(b - a <= 18 for a, b in zip(starts, starts[1:], strict=False))


def test_choose_respects_candidates_temperature_and_top_k() -> None:
    vocab = ["[PAD]", "the", "##s", ",", "cat", "dog"]
    cands = Candidates.from_vocab(vocab, [0], "cpu")
    logits = torch.tensor([[9.0, 1.0, 8.0, 7.0, 2.0, 0.0]] * 4)
    u = torch.tensor([0.0, 0.5, 0.99, 0.3], dtype=torch.float64)
    assert choose(logits, u, cands, "top1").tolist() == [4] * 4  # not [PAD], not ##s, not ","
    picked = choose(logits, u, cands, "sample")
    assert set(picked.tolist()) <= {1, 3, 4, 5}
    assert choose(logits, u, cands, "sample", top_k=1).tolist() == [3] * 4
    assert choose(logits, u, cands, "sample", temperature=1e-3).tolist() == [3] * 4


def test_sift_keeps_order_and_leaves_no_mask(fm: FillInModel) -> None:
    ids = [f"d{i}" for i in range(len(TEXTS))]
    setting = DataSifterSetting(kind="datasifter", fill_batch_size=4, window_overlap=4)
    result = sift(TEXTS, ids, setting, fm, ["alice"], default_blacklist(), key=3)
    assert len(result.texts) == len(TEXTS) and result.metrics["masked_fraction_mean"] > 0.3
    assert not any("[MASK]" in t or "##" in t or "[UNK]" in t for t in result.texts)
    again = sift(TEXTS, ids, setting.model_copy(update={"fill_batch_size": 1}), fm, ["alice"], default_blacklist(), 3)
    assert again.texts == result.texts


def test_blacklisted_words_never_change(fm: FillInModel) -> None:
    ids = [f"d{i}" for i in range(len(TEXTS))]
    setting = DataSifterSetting(kind="datasifter", fill_strategy="top1", window_overlap=4)
    result = sift(TEXTS, ids, setting, fm, [], default_blacklist(), key=4)
    checked = 0
    for before, after in zip(TEXTS, result.texts, strict=True):
        old, new = [t.text for t in words(before)], [t.text for t in words(after)]
        assert len(old) == len(new)  # top1 fills one word per masked word
        protected = [i for i, w in enumerate(old) if w.casefold() in default_blacklist()]
        assert all(new[i] == old[i] for i in protected)
        checked += len(protected)
    assert checked > 50


@pytest.mark.parametrize("replacement", ["none", "rake_keyphrase"])
def test_without_keyphrase_swaps_a_document_is_privatized_the_same_alone(fm: FillInModel, replacement: str) -> None:
    from textsift.mechanisms.datasifter.mechanism import DataSifter

    ids = [f"d{i}" for i in range(len(TEXTS))]
    setting = DataSifterSetting(kind="datasifter", replacement=replacement, k_clusters=2, window_overlap=4)
    whole = sift(TEXTS, ids, setting, fm, ["alice"], default_blacklist(), key=5).texts
    rows = [1, 4, 8]
    alone = sift([TEXTS[i] for i in rows], [ids[i] for i in rows], setting, fm, ["alice"], default_blacklist(), 5).texts
    assert DataSifter().document_wise(setting) == (replacement == "none")
    if DataSifter().document_wise(setting):  # the outsider replay then runs on the test documents alone
        assert alone == [whole[i] for i in rows]
    else:  # keyphrases come from other documents of the corpus
        assert alone != [whole[i] for i in rows]
