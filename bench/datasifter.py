"""Figures of DataSifterText (METHODS.md §1): fill-in training, masking, fill-in and obfuscation speed.

Documents of IMDB length: the first reviews of ``../shared/data/imdb/train.jsonl.gz`` when it is
there, else demo documents joined to the same length (so the benchmark runs in a fresh clone).
The fill-in model has the make-run size (``FillInParams`` defaults: 4 layers, hidden 256) and is
trained for a few steps only: speed does not depend on how well it is trained. Fill-in is timed
on subsets (sequential order costs one forward pass per mask) and every figure says its size;
``imdb25k_hours`` extrapolates the whole privatization of 25,000 reviews from the measured rates.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import torch

from bench.harness import Figure, cpu_device, timed
from textsift.demo import generate_demo
from textsift.device import resolve_device
from textsift.ingest_params import DemoCorpusParams
from textsift.mechanisms.datasifter.fill import FillOptions, fill_documents
from textsift.mechanisms.datasifter.masking import MaskingRule
from textsift.mechanisms.datasifter.obfuscation import obfuscate
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.datasifter.sifter import mask_corpus
from textsift.mechanisms.datasifter.wordlists import default_blacklist
from textsift.models.fill_in import build_model
from textsift.models.mlm import pack_windows
from textsift.models.params import FillInParams
from textsift.models.training import train_mlm
from textsift.rng import torch_seed
from textsift.tokenize import words
from textsift.word_lists import stop_words

IMDB = Path(__file__).resolve().parents[2] / "shared" / "data" / "imdb" / "train.jsonl.gz"
IMDB_WORDS = 230  # mean words of an IMDB review, the length generated documents are joined to
SEED = 1234


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ds-docs", type=int, default=10_000, help="documents for masking and obfuscation")
    parser.add_argument("--ds-parallel-docs", type=int, default=1_000, help="documents for parallel fill-in")
    parser.add_argument("--ds-sequential-docs", type=int, default=50, help="documents for sequential fill-in")
    parser.add_argument("--ds-train-steps", type=int, default=30, help="optimizer steps timed for training")


def load_texts(n: int) -> tuple[list[str], str]:
    """``n`` IMDB reviews (``<br />`` as spaces), or demo documents joined to IMDB length."""
    if IMDB.exists():
        with gzip.open(IMDB, "rt", encoding="utf-8") as lines:
            texts = [json.loads(line)["text"].replace("<br />", " ") for _, line in zip(range(n), lines, strict=False)]
        return texts, "imdb"
    texts, current = [], []
    for record in generate_demo(DemoCorpusParams(n_docs=n * 6), SEED):
        current.append(record.text)
        if sum(len(t.split()) for t in current) >= IMDB_WORDS:
            texts.append(" ".join(current))
            current = []
        if len(texts) == n:
            break
    return texts, "generated"


def _train(texts: list[str], steps: int, device: str, where: str) -> tuple[object, Figure]:
    params = FillInParams()
    fm = build_model(texts, params, torch.Generator().manual_seed(torch_seed(SEED, "bench.init")))
    n_windows = len(pack_windows(texts, fm.tokenizer, params.max_length)) * (1 - params.validation_fraction)
    epochs = min(params.epochs, steps * params.batch_size / n_windows)
    metrics = train_mlm(fm, texts, params.model_copy(update={"epochs": epochs}), SEED, device)
    figure = Figure(
        "datasifter.fill_in_train_tokens_per_s", metrics["train.tokens_per_s"], "tokens/s", where,
        {"layers": params.num_layers, "hidden": params.hidden_size, "window": params.max_length,
         "batch": params.batch_size, "steps": metrics["train.steps"], "seconds": metrics["train.seconds"],
         "windows_per_s": metrics["train.steps"] * params.batch_size / metrics["train.seconds"]},
    )
    return fm, figure


def figures(args: argparse.Namespace) -> list[Figure]:
    device = resolve_device("auto")
    where = cpu_device() if device == "cpu" else f"cuda: {torch.cuda.get_device_name()}"
    texts, source = load_texts(args.ds_docs)
    ids = [f"d{i}" for i in range(len(texts))]
    size = {"n_docs": len(texts), "source": source, "words_per_doc": sum(len(words(t)) for t in texts) / len(texts)}
    fm, train_figure = _train(texts, args.ds_train_steps, device, where)
    fm.model.eval()
    setting = DataSifterSetting(kind="datasifter", replacement="rake_keyphrase")
    rule = MaskingRule.from_setting(setting, [], default_blacklist())
    tokens = [words(t) for t in texts]
    mask_s, masks = timed(lambda: mask_corpus(tokens, ids, rule, SEED))
    out = [train_figure, Figure("datasifter.mask_docs_per_s", len(texts) / mask_s, "docs/s", where, size)]
    rates = {}
    for order, n in (("parallel", args.ds_parallel_docs), ("sequential", args.ds_sequential_docs)):
        n = min(n, len(texts))
        options = FillOptions(order=order, batch_size=setting.fill_batch_size, overlap=setting.window_overlap)
        seeds = [torch_seed(SEED, "datasifter.fill", d) for d in ids[:n]]
        started = time.perf_counter()
        fill_documents(texts[:n], tokens[:n], [m.masked for m in masks[:n]], fm, options, seeds)
        rates[order] = n / (time.perf_counter() - started)
        out.append(Figure(f"datasifter.fill_{order}_docs_per_s", rates[order], "docs/s", where,
                          {**size, "n_docs": n, "strategy": setting.fill_strategy, "window": fm.window}))
    for method in ("rake_keyphrase", "textrank"):
        seconds, _ = timed(lambda m=method: obfuscate(texts, ids, m, 1, setting.k_clusters, setting.max_candidates,
                                                      setting.partner_pool_frac, SEED, stop_words()))
        rates[method] = len(texts) / seconds
        out.append(Figure(f"datasifter.obfuscate_{method}_docs_per_s", rates[method], "docs/s", where, size))
    for order in ("parallel", "sequential"):
        hours = 25_000 * (1 / (len(texts) / mask_s) + 1 / rates[order] + 1 / rates["rake_keyphrase"]) / 3600
        out.append(Figure(f"datasifter.imdb25k_hours_{order}", hours, "h", where,
                          {"extrapolated_from": "the rates above", "includes": "mask+fill+rake_keyphrase swap",
                           "excludes": "fill-in training, model loading, I/O"}))
    return out
