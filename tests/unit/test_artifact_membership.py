"""Membership in what is logged or registered (ARCHITECTURE.md, "What leaves the project is published").

An outsider holds every MLflow artifact but not the secret key. A tiny corpus carries planted personal data
(names, phone numbers, e-mails) in its gold spans, each in six training documents — often enough for any
frequency rule, so only treating spans as private keeps it out. The artifacts are built by the functions the
stages use (the fill-in tokenizer and model, the registered classifiers, an index's output word list) and
scanned for each planted value and for control values drawn alike but never in the corpus: a member must be
flagged no more often than a control.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from tokenizers import normalizers, pre_tokenizers

from textsift.embeddings.sources import corpus_words
from textsift.evaluation.params import TfidfLogregParams
from textsift.evaluation.publishing import register_classifiers
from textsift.evaluation.utility import as_frame, train_tfidf_logreg
from textsift.models.fill_in import build_model
from textsift.models.params import FillInParams
from textsift.stages.build_indexes import output_selection
from textsift.stages.train_fill_in import training_documents

SYLLABLES = ("zor", "vex", "quin", "bla", "dri", "mok", "tal", "fen", "gri", "sul", "wem", "yad", "kro", "pli",
             "nax", "ruv", "hib", "jov", "lux", "ost")
ASPECTS = ("battery", "screen", "delivery", "staff", "price", "room", "food", "design", "sound", "menu")
WORDING = {"pos": ("great", "lovely", "quick", "helpful"), "neg": ("awful", "slow", "broken", "rude")}
COPIES, TRAIN_DOCS = 6, 60
TINY = FillInParams(vocab_size=600, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, max_length=32)
_NORMALIZE = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
_PRE_TOKENIZE = pre_tokenizers.BertPreTokenizer()


def _planted(rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    """``n`` persons' (label, value): a name, a phone number and an e-mail each, made of rare syllables."""
    def word(k: int) -> str:
        return "".join(rng.choice(SYLLABLES, size=k))

    out = []
    for _ in range(n):
        first, last = word(2), word(3)
        out += [("PERSON", f"{first.title()} {last.title()}"),
                ("PHONE", f"+1 {rng.integers(200, 999)} {rng.integers(200, 999)} {rng.integers(1000, 9999)}"),
                ("EMAIL", f"{word(2)}.{word(2)}{rng.integers(10, 99)}@{word(2)}.org")]
    return out


def _corpus(members: list[tuple[str, str]]) -> pd.DataFrame:
    """Training documents with every member value in ``COPIES`` of them (gold spans), and test documents."""
    rows = []
    for i in range(TRAIN_DOCS + 10):
        label = ("pos", "neg")[i % 2]
        text = " ".join(f"The {ASPECTS[(i + k) % len(ASPECTS)]} was {WORDING[label][(i + 2 * k) % 4]}."
                        for k in range(3))
        spans = []
        if i < TRAIN_DOCS:
            for j, (kind, value) in enumerate(members):
                if (i - j) % 10 == 0 and 0 <= i - j < 10 * COPIES:
                    text += " Contact: "
                    spans.append({"start": len(text), "end": len(text) + len(value), "label": kind})
                    text += value + "."
        rows.append({"doc_id": f"d{i:03d}", "text": text, "label": label,
                     "split": "train" if i < TRAIN_DOCS else "test", "spans": spans, "interest": None})
    return pd.DataFrame(rows)


def _released(corpus: pd.DataFrame) -> pd.DataFrame:
    """A stand-in for a privatized release: every span replaced by its label."""
    def redact(text: str, spans: list[dict[str, Any]]) -> str:
        for s in sorted(spans, key=lambda s: -s["start"]):
            text = text[:s["start"]] + f"[{s['label']}]" + text[s["end"]:]
        return text

    return corpus.assign(text=[redact(t, s) for t, s in zip(corpus["text"], corpus["spans"], strict=True)])


def _words(value: str) -> list[str]:
    """The value's identifying words as a BERT-uncased vocabulary holds them (4 characters or more)."""
    return [w for w, _ in _PRE_TOKENIZE.pre_tokenize_str(_NORMALIZE.normalize_str(value)) if len(w) >= 4]


def _stands_alone(word: str, blob: bytes) -> bool:
    """``word`` in ``blob`` with no letter or digit either side (a token of a JSON or text file, a pickled str)."""
    return re.search(rb"(?<![a-z0-9])" + re.escape(word.encode()) + rb"(?![a-z0-9])", blob) is not None


def flag_rates(flagged: Callable[[str], bool], members: Iterable[tuple[str, str]],
               controls: Iterable[tuple[str, str]]) -> tuple[float, float]:
    """The share of member values and of control values that ``flagged`` flags."""
    return (float(np.mean([flagged(v) for _, v in members])), float(np.mean([flagged(v) for _, v in controls])))


def _assert_no_better(flagged: Callable[[str], bool], members: list[tuple[str, str]],
                      controls: list[tuple[str, str]], what: str) -> None:
    member_rate, control_rate = flag_rates(flagged, members, controls)
    assert member_rate <= control_rate, f"{what}: {member_rate:.0%} of members flagged, {control_rate:.0%} of controls"


@pytest.fixture(scope="module")
def planted() -> tuple[list[tuple[str, str]], list[tuple[str, str]], pd.DataFrame]:
    values = _planted(np.random.default_rng(7), 16)
    members, controls = values[:24], values[24:]
    return members, controls, _corpus(members)


def _train(corpus: pd.DataFrame) -> pd.DataFrame:
    return corpus[corpus["split"] == "train"]


def test_the_fill_in_tokenizer_and_model_files_reveal_no_member(planted: tuple, tmp_path: Path) -> None:
    """The tokenizer and model as ``train_fill_in`` builds them; DataSifterText draws its fills from this
    vocabulary."""
    members, controls, corpus = planted
    texts, spans = training_documents(corpus)
    fm = build_model(texts, TINY, torch.Generator().manual_seed(0), spans)
    fm.tokenizer.save_pretrained(tmp_path)
    fm.model.save_pretrained(tmp_path)
    blob = b"".join(p.read_bytes() for p in sorted(tmp_path.iterdir()))
    vocab = set(fm.tokenizer.get_vocab())

    def flagged(value: str) -> bool:  # a vocabulary entry, or the word standing alone anywhere in the files
        return any(w in vocab or f"##{w}" in vocab or _stands_alone(w, blob) for w in _words(value))

    _assert_no_better(flagged, members, controls, "fill-in model files")


def test_without_gold_spans_the_tokenizer_still_learns_no_member_phone_number_or_e_mail(planted: tuple) -> None:
    """A corpus may have no gold spans: the pattern recognizers' matches are kept out of the tokenizer too (a name,
    in six documents here, needs a span or a rarer occurrence)."""
    members, controls, corpus = planted
    texts, spans = training_documents(corpus.assign(spans=[[] for _ in range(len(corpus))]))
    vocab = set(build_model(texts, TINY, torch.Generator().manual_seed(0), spans).tokenizer.get_vocab())
    _assert_no_better(lambda v: any(w in vocab or f"##{w}" in vocab for w in _words(v)),
                      [(k, v) for k, v in members if k != "PERSON"], [(k, v) for k, v in controls if k != "PERSON"],
                      "tokenizer without gold spans")


def test_registered_classifiers_reveal_no_member(planted: tuple, tmp_path: Path) -> None:
    """What ``evaluate`` trains per corpus goes through ``register_classifiers``; the attacker reads every logged
    pipeline: a hashed n-gram with a document frequency (``idf_`` below the never-seen value) or a non-zero
    coefficient was in the training text."""
    members, controls, corpus = planted
    params = TfidfLogregParams()
    models = {key: train_tfidf_logreg(_train(c)["text"], _train(c)["label"], params, seed=1)
              for key, c in (("original", corpus), ("red", _released(corpus)))}
    logged: list[Any] = []
    tracker = SimpleNamespace(log_sklearn_model=lambda run_id, model, name, text_column=None: logged.append(model),
                              register_model=lambda name, run_id, path, tags: "1")
    released = tmp_path / "red.parquet"  # the corpus the classifier is registered with (its release digest)
    released.write_bytes(b"released corpus")
    ctx = SimpleNamespace(params=SimpleNamespace(tracking=SimpleNamespace(registered_model="clf")), run_id="run",
                          parent_run_id="parent", tracker=tracker, input=lambda name, key=None: released)
    register_classifiers(ctx, models, {"original": "r0", "red": "r1"}, proposed="red", privatizers={})
    assert logged, "nothing registered"

    def seen_by(model: Any, value: str) -> bool:
        features = model.named_steps["hash"].transform(as_frame([value])).indices
        idf, coef = model.named_steps["tfidf"].idf_, model.named_steps["logreg"].coef_
        in_idf = all(idf[f] < idf.max() for f in features)
        in_coef = all(np.any(coef[:, f] != 0) for f in features)
        in_bytes = any(_stands_alone(w, pickle.dumps(model)) for w in _words(value))
        return len(features) > 0 and (in_idf or in_coef or in_bytes)

    _assert_no_better(lambda v: any(seen_by(m, v) for m in logged), members, controls, "registered classifiers")


def test_an_index_output_word_list_reveals_no_member(planted: tuple) -> None:
    """The words metric-DP may write into every document (``build_indexes``' output selection); its input word
    list holds every corpus word but stays a local DVC output, never logged, registered or served."""
    members, controls, corpus = planted
    words = sorted(corpus_words(corpus["text"]))
    lowered = [w.lower() for w in words]
    selection = output_selection(corpus, lowered, lowercase=True, min_doc_freq=5)
    outputs = {w for w, keep in zip(lowered, selection.allowed, strict=True) if keep}
    assert outputs  # the rule keeps the public words
    _assert_no_better(lambda v: any(w in outputs for w in _words(v)), members, controls, "index output words")
