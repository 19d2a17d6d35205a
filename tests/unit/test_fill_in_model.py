"""The fill-in masked LM (METHODS.md §1.1): tokenizer, MLM data, seeded and reproducible training."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from textsift.corpus import Span
from textsift.mechanisms.datasifter.fill import FillOptions, fill_documents
from textsift.models.fill_in import build_model, continue_from, load_fill_in
from textsift.models.loading import hf_folders as hf_dirs
from textsift.models.mlm import IGNORE, mask_for_mlm, pack_windows
from textsift.models.params import FillInParams
from textsift.models.training import train_mlm
from textsift.models.wordpiece import SPECIAL_TOKENS, learn_vocab, train_wordpiece
from textsift.tokenize import words

TEXTS = [
    f"Review {i}: the {a} was {b}, and I would {c} it to my friends in {d}."
    for i, (a, b, c, d) in enumerate(
        [("screen", "great", "recommend", "Paris"), ("battery", "awful", "not recommend", "Oslo"),
         ("delivery", "quick", "recommend", "Lima"), ("staff", "rude", "never recommend", "Rome")] * 10
    )
]
TINY = FillInParams(vocab_size=200, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                    max_length=32, epochs=1, batch_size=8)


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_vocab_learning_is_deterministic_and_merges_frequent_pairs() -> None:
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    vocab = learn_vocab(counts, 30)
    assert vocab == learn_vocab(dict(reversed(counts.items())), 30)
    assert vocab[: len(SPECIAL_TOKENS)] == list(SPECIAL_TOKENS) and len(set(vocab)) == len(vocab)
    assert "##es" in vocab and "low" in vocab  # the most frequent pairs merge first


def test_wordpiece_tokenizer_is_reproducible_and_bert_shaped() -> None:
    a, b = train_wordpiece(TEXTS, 200), train_wordpiece(TEXTS, 200)
    assert a.get_vocab() == b.get_vocab() and len(a) <= 200  # 109 are special tokens and the ASCII alphabet
    encoded = a("The screen was great")["input_ids"]
    assert encoded[0] == a.cls_token_id and encoded[-1] == a.sep_token_id
    assert a.convert_ids_to_tokens(a("recommend")["input_ids"])[1] == "recommend"


def test_the_vocabulary_learns_only_public_words_and_still_spells_the_rest() -> None:
    """Published with the model: nothing from inside a privacy span, no word of fewer than min_doc_freq
    documents (project issue #32); both are still tokenized, into characters, never [UNK]."""
    contact = "Call Zed Quill on 0712 4471 or at zed.q@fjord.io, thanks."
    texts = [*TEXTS, *[contact] * 6, "A xylophonic screen."]
    spans = [[]] * len(TEXTS) + [[Span(5, 14, "PERSON"), Span(18, 27, "PHONE"), Span(34, 48, "EMAIL")]] * 6 + [[]]
    tok = train_wordpiece(texts, 400, spans=spans, min_doc_freq=5)
    public = " ".join(TEXTS).lower() + " call on or at thanks"
    merged = [p.removeprefix("##") for p in tok.get_vocab() if p not in SPECIAL_TOKENS]
    assert all(p in public for p in merged if len(p) > 1)  # every merged piece is part of a public word
    assert train_wordpiece(texts, 400, min_doc_freq=5).get_vocab().keys() >= {"zed", "quill", "0712"}  # as before
    pieces = tok.convert_ids_to_tokens(tok("Quill xylophonic 0712", add_special_tokens=False)["input_ids"])
    assert "[UNK]" not in pieces and tok.decode(tok("Quill xylophonic")["input_ids"], skip_special_tokens=True) == (
        "quill xylophonic")
    with pytest.raises(ValueError, match="3 texts but 1 span"):
        train_wordpiece(texts[:3], 400, spans=[[]])


def test_pack_windows_and_mlm_masking() -> None:
    tok = train_wordpiece(TEXTS, 120)
    windows = pack_windows(TEXTS, tok, 16)
    assert windows.shape[1] == 16 and (windows[:, 0] == tok.cls_token_id).all()
    assert (windows == tok.sep_token_id).any(dim=1).all()
    inputs, labels = mask_for_mlm(windows, tok, 0.3, gen(1))
    chosen = labels != IGNORE
    assert 0.15 < chosen.float().mean() < 0.35
    assert not chosen[:, 0].any()  # [CLS] is never a target
    assert ((inputs == tok.mask_token_id) <= chosen).all()
    again = mask_for_mlm(windows, tok, 0.3, gen(1))
    assert torch.equal(again[0], inputs) and torch.equal(again[1], labels)


def test_build_model_is_seeded() -> None:
    a, b = build_model(TEXTS, TINY, gen(3)), build_model(TEXTS, TINY, gen(3))
    c = build_model(TEXTS, TINY, gen(4))
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    embeddings = "bert.embeddings.word_embeddings.weight"
    assert not torch.equal(sa[embeddings], c.model.state_dict()[embeddings])
    assert a.window == TINY.max_length


def test_training_is_bit_reproducible_on_cpu_and_reports_perplexity() -> None:
    runs = []
    for _ in range(2):
        fm = build_model(TEXTS, TINY, gen(5))
        steps: list[tuple[int, float]] = []
        metrics = train_mlm(fm, TEXTS, TINY, seed=11, device="cpu",
                            on_step=lambda s, loss, log=steps: log.append((s, loss)))
        runs.append((fm.model.state_dict(), metrics, steps))
    (a, ma, sa), (b, mb, sb) = runs
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert sa == sb and [s for s, _ in sa] == list(range(1, int(ma["train.steps"]) + 1))
    assert ma["validation.mlm_loss"] == mb["validation.mlm_loss"]
    assert math.isclose(ma["validation.perplexity"], math.exp(ma["validation.mlm_loss"]))
    assert ma["train.windows"] > ma["validation.windows"] >= 1


def test_save_load_and_continue_from_a_checkpoint(tmp_path: Path) -> None:
    fm = build_model(TEXTS, TINY, gen(6))
    fm.model.save_pretrained(tmp_path / "ckpt")
    fm.tokenizer.save_pretrained(tmp_path / "ckpt")
    loaded = load_fill_in(tmp_path / "ckpt", "cpu")
    assert not loaded.model.training and loaded.tokenizer.get_vocab() == fm.tokenizer.get_vocab()
    assert torch.equal(loaded.model.cls.predictions.decoder.weight, fm.model.cls.predictions.decoder.weight)
    resumed = continue_from(tmp_path / "ckpt", gen(7))
    assert torch.equal(resumed.model.bert.embeddings.word_embeddings.weight,
                       fm.model.bert.embeddings.word_embeddings.weight)
    train_mlm(resumed, TEXTS, TINY, seed=1, device="cpu")


def test_encoder_only_checkpoint_gets_a_seeded_head(tmp_path: Path) -> None:
    fm = build_model(TEXTS, TINY, gen(8))
    fm.model.bert.save_pretrained(tmp_path / "enc")  # a BertModel: no MLM head
    fm.tokenizer.save_pretrained(tmp_path / "enc")
    a, b = continue_from(tmp_path / "enc", gen(9)), continue_from(tmp_path / "enc", gen(9))
    weight = "cls.predictions.transform.dense.weight"
    assert torch.equal(a.model.state_dict()[weight], b.model.state_dict()[weight])


def test_hf_dirs_finds_mlflow_layout(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    (tmp_path / "model" / "model.safetensors").write_bytes(b"")
    (tmp_path / "components" / "tokenizer").mkdir(parents=True)
    (tmp_path / "components" / "tokenizer" / "tokenizer.json").write_text("{}")
    assert hf_dirs(tmp_path) == (tmp_path / "model", tmp_path / "components" / "tokenizer")
    with pytest.raises(Exception, match="no transformers model"):
        hf_dirs(tmp_path / "model")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_bf16_training_and_fill_in() -> None:
    fm = build_model(TEXTS, TINY, gen(10))
    metrics = train_mlm(fm, TEXTS, TINY, seed=2, device="cuda")
    assert fm.device == "cuda" and math.isfinite(metrics["validation.mlm_loss"])
    tokens = [words(t) for t in TEXTS]
    masks = [torch.arange(len(t)).numpy() % 2 == 0 for t in tokens]
    fills = [fill_documents(TEXTS, tokens, masks, fm, FillOptions(batch_size=b), list(range(len(TEXTS))))
             for b in (1, 64)]
    assert fills[0] == fills[1] and all(not w.startswith("##") for doc in fills[0] for w in doc)
