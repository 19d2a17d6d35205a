"""Figures of the DPER detector (METHODS.md §4.1): detection speed per encoder, optionally quality.

Speed: characters per second of :func:`textsift.models.detector.detect` on short sentences
(demo documents cut into pieces of about 100 characters) and on long documents (demo documents
joined to 5,000+ characters, so windows and their overlaps are exercised), for MiniLM cut to
1, 2, 3 and 6 layers and a small from-config RoFormer. Speed does not depend on training, so the
detectors are untrained (8 entity types, as in the demo corpus) and decode with a threshold no
untrained score reaches (a trained detector decodes a handful of spans per text); each figure is the best of
``--detector-repeats`` timed runs after one warm-up. The threads are torch's default
(``torch.set_num_threads`` is the caller's). The goal is 40,000 chars/s on 2 CPU cores
(spaCy's small pipeline inside Presidio does about 21,000).

Quality (``--detector-quality-docs N``, off by default: minutes per configuration on a CPU):
each configuration is trained on the first N sentences of WNUT-17 (``../shared/data/wnut17``;
demo documents when it is absent) and scored on its annotated test set (exact span F1), so
speed and quality can be traded off side by side.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from bench.harness import Figure, cpu_device
from textsift.config import DemoCorpusParams, SourceParams
from textsift.demo import generate_demo
from textsift.device import resolve_device
from textsift.models.detector import build_detector, detect
from textsift.models.detector_eval import evaluate_detector
from textsift.models.detector_params import DetectorParams
from textsift.models.detector_training import train_detector
from textsift.readers import read_conll
from textsift.rng import torch_seed

SEED = 1234
WNUT = Path(__file__).resolve().parents[2] / "shared" / "data" / "wnut17"
GOAL = 40_000  # chars/s on 2 CPU cores
SENTENCE_CHARS, LONG_CHARS = 100, 5_000
UNTRAINED_THRESHOLD = 100.0  # an untrained head scores half the cells > 0; a trained one decodes a few spans
CONFIGS: dict[str, dict] = {
    "minilm_l1": {"encoder": "minilm", "encoder_layers": 1},
    "minilm_l2": {"encoder": "minilm", "encoder_layers": 2},
    "minilm_l3": {"encoder": "minilm", "encoder_layers": 3},
    "minilm_l6": {"encoder": "minilm", "encoder_layers": None},
    "roformer_l2_h256": {"encoder": "roformer", "encoder_layers": 2, "roformer_hidden": 256, "roformer_heads": 4,
                         "roformer_intermediate": 1024},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--detector-sentences", type=int, default=200, help="~100-char sentences timed")
    parser.add_argument("--detector-long-docs", type=int, default=10, help="5,000+-char documents timed")
    parser.add_argument("--detector-repeats", type=int, default=3, help="timed runs per figure (best kept)")
    parser.add_argument("--detector-configs", nargs="*", default=list(CONFIGS), help=f"of {', '.join(CONFIGS)}")
    parser.add_argument("--detector-quality-docs", type=int, default=0, help="train on this many WNUT-17 (or demo) "
                        "texts and report test F1 per configuration (0: speed only)")


def demo_texts(n_sentences: int, n_long: int) -> tuple[list[str], list[str]]:
    """Sentences of about 100 characters and documents of 5,000+ characters, cut from demo documents."""
    docs = [r.text for r in generate_demo(DemoCorpusParams(n_docs=max(10, n_sentences + 30 * n_long)), SEED)]
    sentences, current = [], ""
    for piece in (s.strip().rstrip(".") + "." for d in docs for s in d.split(". ") if s.strip()):
        current = f"{current} {piece}".strip()
        if len(current) >= SENTENCE_CHARS * 0.9:
            sentences.append(current)
            current = ""
    long_docs, current = [], ""
    for d in reversed(docs):
        current = f"{current} {d}".strip()
        if len(current) >= LONG_CHARS:
            long_docs.append(current)
            current = ""
    return sentences[:n_sentences], long_docs[:n_long]


def chars_per_second(detector, texts: list[str], repeats: int) -> float:
    """Best-of-``repeats`` characters per second of :func:`detect` after one warm-up run."""
    detect(detector, texts[: max(1, len(texts) // 10)])
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        detect(detector, texts)
        best = min(best, time.perf_counter() - started)
    return sum(map(len, texts)) / best


def quality_data(n_train: int) -> tuple[list, list, str]:
    """``(train, test, source)``: WNUT-17 (train file, annotated test) when ``../shared/data`` has it, else demo."""
    if WNUT.exists():
        src = SourceParams(kind="file", path=str(WNUT), format="conll")
        train = [r for r in read_conll(WNUT / "wnut17train.conll", src) if r.text][:n_train]
        return train, [r for r in read_conll(WNUT / "emerging.test.annotated", src) if r.text], "wnut17"
    records = list(generate_demo(DemoCorpusParams(n_docs=max(10, int(n_train / 0.8))), SEED))
    return records[:n_train], records[n_train:], "demo"


def _quality(params: DetectorParams, n_train: int, device: str) -> dict:
    train, test, source = quality_data(n_train)
    started = time.perf_counter()
    detector, losses = train_detector(train, params, SEED, device)
    seconds = time.perf_counter() - started
    metrics = evaluate_detector(detector, test)
    return {"f1": metrics["detector.f1"], "precision": metrics["detector.precision"],
            "recall": metrics["detector.recall"], "train_seconds": seconds, "final_loss": losses[-1],
            "epochs": params.epochs, "train_texts": len(train), "test_texts": len(test), "source": source}


def figures(args: argparse.Namespace) -> list[Figure]:
    device = resolve_device("auto")
    where = cpu_device() if device == "cpu" else f"cuda: {torch.cuda.get_device_name()}"
    sentences, long_docs = demo_texts(args.detector_sentences, args.detector_long_docs)
    labels = ["CITY", "COMPANY", "DATE", "EMAIL", "JOB", "PERSON", "PHONE", "SCHOOL"]
    out = []
    for name in args.detector_configs:
        params = DetectorParams(**CONFIGS[name])
        untrained = params.model_copy(update={"threshold": UNTRAINED_THRESHOLD})
        init = torch.Generator().manual_seed(torch_seed(SEED, "bench.detector"))
        detector = build_detector(untrained, labels, init, device=device)
        info = {**CONFIGS[name], "threads": torch.get_num_threads(), "batch_size": params.inference_batch_size,
                "max_length": params.max_length, "goal_chars_per_s": GOAL}
        for kind, texts in (("sentences", sentences), ("long_docs", long_docs)):
            if not texts:
                continue
            rate = chars_per_second(detector, texts, args.detector_repeats)
            out.append(Figure(f"detector.{kind}_chars_per_s.{name}", rate, "chars/s", where,
                              {**info, "texts": len(texts), "mean_chars": sum(map(len, texts)) / len(texts)}))
        if args.detector_quality_docs:
            quality = _quality(params, args.detector_quality_docs, device)
            out.append(Figure(f"detector.{quality['source']}_f1.{name}", quality["f1"], "f1", where,
                              {**info, **quality}))
    return out
