"""train_detectors: the DPER nested privacy-entity detector (METHODS.md §4.1), trained offline.

Training data (``detectors.data``, ``textsift.detection.training_data``): seeded synthetic PII
sentences, the corpus's gold spans (its own splits: the corpus test split never trains) or, for
a corpus without them, silver labels on its training split from offline teachers (spaCy NER and
the pattern recognizers, ``detectors.data.silver``; their agreement is logged), and real
annotated text, WNUT-17 and Broad Twitter Corpus tweets and GUM + GENTLE documents of 23 genres (their
test files never train: they are the real-text figures ``detector.real.<corpus>.*``). Trains the GlobalPointer
detector (``detectors.model``) on all of them at once or, with ``detectors.pretrain``, in two steps: on the
corpus-independent sources — synthetic, WNUT-17, BTC, GUM — once per user (:mod:`textsift.user_cache`), then on the
corpus's own examples with some of those replayed, so a new project pays only for its corpus (at some quality:
see :class:`textsift.config.PretrainParams`); and, with ``detectors.compare_flat``, the flat BIO
tagger on the same encoder and data (the paper's nested vs flat comparison); scores both on the held-out
splits per source and per type. The detector goes to MLflow (artifact ``detector``); the DVC
output is the pointer ``models/detector.json`` (its sha256, the run's tag), as for the fill-in
model; the ``detect`` stage runs it, with the other recognizers, over the corpus. The training
data holds corpus text, so only counts, scores and the model are logged. On the generated demo corpus
(nobody's data) the trained detector is kept in the per-user cache, so a fresh clone on the same machine
reuses it; a detector trained on a corpus read from a file stays in the project.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from textsift import user_cache
from textsift.artifacts import SHA_TAG, write_pointer
from textsift.config import select
from textsift.corpus import Span
from textsift.detection.calibration import GRID, calibrate, targets
from textsift.detection.gum import GUM_TYPES
from textsift.detection.labelled import LabelledText
from textsift.detection.params import CalibrationParams
from textsift.detection.recognizers.base import Detection, Recognizer
from textsift.detection.recognizers.merge import Thresholds, merge_detections
from textsift.detection.recognizers.model import ModelRecognizer
from textsift.detection.recognizers.patterns import PatternRecognizer
from textsift.detection.recognizers.spacy_ner import PACKAGES as SPACY_PACKAGES
from textsift.detection.recognizers.spacy_ner import SpacyRecognizer
from textsift.detection.scoring import detection_scores
from textsift.detection.training_data import DetectorData, load_detector_data, real_corpus_paths, silver_applies
from textsift.detection.types import ENTITY_TYPES
from textsift.device import resolve_detector_precision, resolve_device
from textsift.models.detector import Detector, in_precision, probability
from textsift.models.detector_eval import span_metrics
from textsift.models.detector_io import load_detector, save_detector
from textsift.models.detector_training import TrainedDetector, continue_training, train_detector
from textsift.quality.suites import check_corpus
from textsift.rng import generator
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")
REAL_SOURCES = {"btc": ("PERSON", "LOC", "ORG"), "wnut17": ("PERSON", "LOC", "ORG"), "gum": GUM_TYPES}  # types marked
ARTIFACT = "detector"
PRETRAINED = "detector-pretrained"
CORPUS_SOURCES = ("corpus",)  # the sources that change with the corpus (gold or silver labels on its text)


HELD_OUT = ("test", "validation")


def held_out(detector: Detector, data: DetectorData) -> dict[str, list[list[Detection]]]:
    """The model's detections on each held-out split, each example run once for calibration and every score (a split
    was run two or three times): real corpora's examples down to the lowest threshold calibration tries, the others
    (synthetic, the corpus's) at the trained one, where an untrained model decodes far fewer spans."""
    trained = probability(detector.params.threshold)
    floor = min(min(GRID), trained)
    out: dict[str, list[list[Detection]]] = {}
    for split in HELD_OUT:
        examples = getattr(data, split)
        sources = data.sources.get(split, ("",) * len(examples))
        found: list[list[Detection]] = [[] for _ in examples]
        for real in (True, False):
            rows = [k for k, source in enumerate(sources) if (source in REAL_SOURCES) == real]
            for k, doc in zip(rows, _found(detector, [examples[k] for k in rows], floor if real else trained),
                              strict=True):
                found[k] = doc
        out[split] = found
    return out


def _by_source(data: DetectorData, split: str, found: Sequence[list[Detection]]
               ) -> dict[str, tuple[list[LabelledText], list[list[Detection]]]]:
    groups: dict[str, tuple[list[LabelledText], list[list[Detection]]]] = {}
    for example, source, doc in zip(getattr(data, split), data.sources[split], found, strict=True):
        examples, docs = groups.setdefault(source, ([], []))
        examples.append(example)
        docs.append(doc)
    return groups


def _at_trained(detector: Detector, found: Sequence[list[Detection]]) -> list[list[Span]]:
    """What the model keeps at its trained threshold, as it runs (``models.detector.detect``, then titles off a
    person's span: :class:`ModelRecognizer`), read off detections decoded at or below it: a span scores above the
    threshold in some window exactly when its best confidence does. The flat tagger's spans are all kept."""
    if detector.params.model != "global_pointer":
        return [[d.span for d in doc] for doc in found]
    cut = probability(detector.params.threshold)
    return [[d.span for d in doc if d.score > cut] for doc in found]


def _span_scores(detector: Detector, examples: Sequence[LabelledText], found: Sequence[list[Detection]],
                 prefix: str) -> dict[str, float]:
    return span_metrics([ex.text for ex in examples], [list(ex.spans) for ex in examples],
                        _at_trained(detector, found), detector.labels, prefix)


def scores(detector: Detector, data: DetectorData, prefix: str, found: dict[str, list[list[Detection]]]
           ) -> dict[str, float]:
    """Held-out scores from the model's detections ``found`` (:func:`held_out`): ``<prefix>.test.*`` over every test
    example and per source, and validation; on real corpora's test splits also ``<prefix>.real.<source>.*`` (overlap
    and character figures, :mod:`textsift.detection.scoring`), the model alone at its calibrated thresholds (other
    types at its trained one)."""
    metrics = _span_scores(detector, data.test, found["test"], f"{prefix}.test")
    if data.validation:
        metrics.update(_span_scores(detector, data.validation, found["validation"], f"{prefix}.validation"))
    for source, (examples, docs) in sorted(_by_source(data, "test", found["test"]).items()):
        metrics.update(_span_scores(detector, examples, docs, f"{prefix}.test.{source}"))
        if source in REAL_SOURCES:
            needs = Thresholds(probability(detector.params.threshold), model=detector.thresholds)
            kept = [[d.span for d in merge_detections([doc], needs)] for doc in docs]
            real = detection_scores([list(ex.spans) for ex in examples], kept, REAL_SOURCES[source])
            metrics.update({f"{prefix}.real.{source}.{key}": value for key, value in real.items()})
    return metrics


def _found(detector: Detector, examples: Sequence[LabelledText], floor: float) -> list[list[Detection]]:
    """The model's detections in ``examples`` with a confidence of at least ``floor``."""
    return ModelRecognizer(detector).analyze([ex.text for ex in examples], floor) if examples else []


def calibrated_thresholds(detector: Detector, data: DetectorData, params: CalibrationParams,
                          validation: Sequence[list[Detection]]) -> tuple[dict[str, float], dict[str, float]]:
    """Per type with a target, the threshold chosen on the validation examples of the real corpora that mark it
    (:func:`textsift.detection.calibration.calibrate`: a recall target on each of them, a precision target on them
    pooled), from the model's detections there (``validation``, :func:`held_out`), and the metrics
    ``calibration.<TYPE>.*`` it gave there, pooled.

    Only real annotated text calibrates: synthetic and corpus examples are the detector's own distribution, where
    any threshold looks precise."""
    by_source = {source: group for source, group in _by_source(data, "validation", validation).items()
                 if source in REAL_SOURCES}
    thresholds: dict[str, float] = {}
    metrics: dict[str, float] = {}
    for label, (measure, target) in targets(params).items():
        corpora = [([list(ex.spans) for ex in examples], found) for source, (examples, found) in
                   sorted(by_source.items()) if label in REAL_SOURCES[source]]
        if not any(s.label == label for gold, _ in corpora for doc in gold for s in doc):
            continue
        chosen = calibrate(corpora, label, target, measure)
        thresholds[label] = chosen.threshold
        metrics.update({f"calibration.{label}.threshold": chosen.threshold,
                        f"calibration.{label}.char_precision": chosen.char_precision,
                        f"calibration.{label}.char_recall": chosen.char_recall,
                        f"calibration.{label}.reached": float(chosen.reached)})
    return thresholds, metrics


def _counts(data: DetectorData) -> dict[str, float]:
    metrics: dict[str, float] = {"data.labels": float(len(data.label_set)),
                                 "data.dropped_duplicates": float(data.dropped_duplicates)}
    for split in ("train", "validation", "test"):
        examples: Sequence[LabelledText] = getattr(data, split)
        metrics[f"data.{split}.examples"] = float(len(examples))
        metrics[f"data.{split}.spans"] = float(sum(len(e.spans) for e in examples))
    return metrics


DETECTOR_CODE = ("textsift.detection.training_data", "textsift.models.detector_training", "textsift.models.detector_io")


def _pretrained(ctx: StageContext, device: str, labels: tuple[str, ...], scratch: Path) -> user_cache.Entry:
    """The detector trained on the corpus-independent sources only (synthetic, WNUT-17, BTC, GUM), from the user cache
    or trained into it: keyed by those sources' params and files, the model params, seed, code and device."""
    params, settings = ctx.params, ctx.params.detectors
    data_params = settings.data.model_copy(update={"corpus_spans": False})
    files = real_corpus_paths(data_params, ctx.root)
    recipe = {"data": data_params.model_dump(mode="json", exclude={"corpus_spans", "silver", "corpus_labels"}),
              "model": settings.model.model_dump(mode="json"), "labels": list(labels), "seed": params.seed,
              "device": device}
    digest = user_cache.recipe_digest(PRETRAINED, recipe, DETECTOR_CODE, files)

    def build(folder: Path) -> dict[str, float]:
        independent = load_detector_data(data_params, params.seed, None, ctx.root)
        log.info("train_detectors: pretraining on %d corpus-independent examples (kept in the user cache)",
                 len(independent.train))
        started = time.perf_counter()
        trained = train_detector(independent.train, settings.model, params.seed, device, labels=labels)
        save_detector(trained.detector, folder)
        return {"pretrain.train_seconds": time.perf_counter() - started,
                "pretrain.examples": float(len(independent.train)),
                **{f"pretrain.epoch_loss.{i}": loss for i, loss in enumerate(trained.epoch_losses, start=1)}}

    entry = user_cache.cached_model(PRETRAINED, digest, build, scratch)
    if not entry.trained:
        log.info("train_detectors: pretrained detector %s from the user cache", digest[:12])
    return entry


def _fine_tune_examples(data: DetectorData, replay: float, seed: int) -> tuple[list[LabelledText], list[LabelledText]]:
    """The corpus's training examples, and ``replay`` corpus-independent ones per corpus example (a seeded draw)."""
    own = [ex for ex, source in zip(data.train, data.sources["train"], strict=True) if source in CORPUS_SOURCES]
    others = [ex for ex, source in zip(data.train, data.sources["train"], strict=True) if source not in CORPUS_SOURCES]
    count = min(len(others), round(replay * len(own)))
    picked = generator(seed, "detector.replay").choice(len(others), size=count, replace=False) if count else []
    return own, [others[i] for i in sorted(picked)]


def _train(ctx: StageContext, data: DetectorData, device: str, encoder: Path | None,
           ) -> tuple[TrainedDetector, dict[str, float]]:
    """The detector: pretrained on the corpus-independent sources (user cache) then trained on the corpus's
    examples with a replayed share of the rest (``detectors.pretrain``), or trained on everything at once when
    pretraining is off, the encoder is the corpus's fill-in model, or the corpus brings a type of its own."""
    settings, seed = ctx.params.detectors, ctx.params.seed
    independent_labels = tuple(t for t in data.label_set if t in ENTITY_TYPES)
    if not settings.pretrain.enabled or encoder is not None or independent_labels != data.label_set:
        if settings.pretrain.enabled:
            log.info("train_detectors: one training on every source (%s)", "the encoder is the corpus's fill-in model"
                     if encoder is not None else "the corpus has types the other sources lack")
        return train_detector(data.train, settings.model, seed, device, labels=data.label_set,
                              encoder_folder=encoder), {}
    with tempfile.TemporaryDirectory(prefix="textsift-pretrained-") as tmp:
        entry = _pretrained(ctx, device, data.label_set, Path(tmp))
        detector = load_detector(entry.folder, device)
    own, replayed = _fine_tune_examples(data, settings.pretrain.replay, seed)
    if not own:
        log.info("train_detectors: the corpus brings no training example: the pretrained detector as it is")
        return TrainedDetector(detector, []), entry.metrics
    log.info("train_detectors: training on %d corpus examples and %d replayed ones, %d epochs", len(own),
             len(replayed), settings.pretrain.fine_tune_epochs)
    ctx.tracker.set_tags(ctx.run_id, {"textsift.detector.pretrained_cached": str(not entry.trained).lower()})
    return continue_training(detector, own + replayed, settings.pretrain.fine_tune_epochs, seed,
                             settings.pretrain.rate_scale), entry.metrics


EPOCH_LOSS = "train.epoch_loss."  # the cached metrics carry the epoch losses, logged as MLflow steps


def _detector_digest(ctx: StageContext, device: str, encoder: Path | None, silver: bool) -> str:
    """The detector's recipe digest: the ``detectors.*`` params the registry declares for train_detectors, seed,
    device, the stage's code, the corpus, the real-text files and the fill-in encoder when it is one (and spaCy's
    version when it teaches silver labels). The registry's list is the one list: a detector param added there is in
    the digest, and ``detectors.interests`` (another stage's) never is."""
    files = [ctx.input("corpus"), *real_corpus_paths(ctx.params.detectors.data, ctx.root)]
    own = {key.removeprefix("detectors."): _as_json(select(ctx.params, key))
           for key in ctx.instance.stage.params if key.startswith("detectors.")}
    recipe = {"detectors": own, "seed": ctx.params.seed, "device": device, "precision": _precision(ctx, device),
              "teachers": _teacher_versions() if silver else None}
    return user_cache.recipe_digest(ARTIFACT, recipe, (__name__,), [*files, *([encoder] if encoder else [])])


def _precision(ctx: StageContext, device: str) -> str:
    """What the detection stages run the detector's encoder in (``detection.inference_precision`` on ``device``): its
    held-out scores and calibrated thresholds are read in it."""
    return resolve_detector_precision(ctx.params.detection.inference_precision, device)


def _as_json(value: Any) -> Any:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def _teacher_versions() -> dict[str, str | None]:
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for package in ("spacy", *SPACY_PACKAGES):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _trained_detector(ctx: StageContext, corpus: pd.DataFrame, device: str, encoder: Path | None,
                      teachers: Any, folder: Path) -> dict[str, float]:
    """Train the detector (and the flat tagger to compare) on the training data, save it to ``folder``; the data
    counts, held-out scores and epoch losses."""
    params, settings = ctx.params, ctx.params.detectors
    data = load_detector_data(settings.data, params.seed, corpus if settings.data.corpus_spans else None, ctx.root,
                              teachers)
    log.info("train_detectors: %d training examples, %d types, encoder %s, device %s", len(data.train),
             len(data.label_set), settings.model.encoder, device)
    trained, pretrain_metrics = _train(ctx, data, device, encoder)
    precision = _precision(ctx, device)
    found = held_out(in_precision(trained.detector, precision), data)  # scored and calibrated as it runs
    trained.detector.thresholds, calibration = calibrated_thresholds(trained.detector, data, settings.calibration,
                                                                     found["validation"])
    log.info("train_detectors: calibrated thresholds %s", trained.detector.thresholds)
    metrics = {**_counts(data), **data.metrics, **pretrain_metrics, **calibration,
               **scores(trained.detector, data, "detector", found),
               **{f"{EPOCH_LOSS}{i}": loss for i, loss in enumerate(trained.epoch_losses, start=1)}}
    if settings.compare_flat:
        flat = train_detector(data.train, settings.model.model_copy(update={"model": "flat"}), params.seed, device,
                              labels=data.label_set, encoder_folder=encoder)
        metrics.update(scores(flat.detector, data, "flat", held_out(in_precision(flat.detector, precision), data)))
    save_detector(trained.detector, folder)
    return metrics


def _teachers(names: Sequence[str]) -> list[Recognizer]:
    """The silver labels' teachers (``detectors.data.silver.teachers``), built here rather than by the recognizer set's
    builder, so that adding a recognizer to detection changes no code training imports: it re-runs ``detect``, never
    ``train_detectors``."""
    return [PatternRecognizer() if name == "patterns" else SpacyRecognizer() for name in names]


def run(ctx: StageContext) -> None:
    """Train the DPER detector (METHODS.md §4.1) and the flat tagger to compare (the IPI interest model is
    ``train_interests``).

    Reads ``corpus`` (and ``fill_in`` when it is the encoder); writes the pointer ``detector`` and
    ``train_detectors_metrics``; logs the epoch losses, the metrics and the model to MLflow (the run tagged with its
    sha256) and lines with the training data and the test F1. On the demo corpus the detector comes from the per-user
    cache when this recipe was trained before (``StageContext.corpus_is_demo``; tag ``textsift.detector.cached``).
    """
    settings = ctx.params.detectors
    corpus = ctx.load("corpus")
    check_corpus(corpus, name="train_detectors_input").raise_if_failed()
    silver = silver_applies(settings.data, corpus)
    teachers = _teachers(settings.data.silver.teachers) if silver else None  # spaCy is loaded only when it teaches
    device = resolve_device(ctx.params.device)
    encoder = ctx.model("fill_in") if settings.model.encoder == "fill_in" else None
    digest = _detector_digest(ctx, device, encoder, silver)
    with tempfile.TemporaryDirectory(prefix="textsift-detector-") as tmp:
        entry = user_cache.cached_model(
            ARTIFACT, digest, lambda folder: _trained_detector(ctx, corpus, device, encoder, teachers, folder),
            Path(tmp), share=ctx.corpus_is_demo)
        if not entry.trained:
            log.info("train_detectors: detector %s from the user cache (the demo corpus)", digest[:12])
        ctx.tracker.log_dir(ctx.run_id, entry.folder, ARTIFACT)
        pointer = write_pointer(ctx.output("detector"), ARTIFACT, ARTIFACT, entry.folder)
    ctx.tracker.set_tags(ctx.run_id, {SHA_TAG: pointer["sha256"], "textsift.detector.cached":
                                      str(not entry.trained).lower()})
    losses = sorted((int(k[len(EPOCH_LOSS):]), v) for k, v in entry.metrics.items() if k.startswith(EPOCH_LOSS))
    ctx.tracker.log_metric_steps(ctx.run_id, "train.epoch_loss", losses)
    metrics = {k: v for k, v in entry.metrics.items() if not k.startswith(EPOCH_LOSS)}
    ctx.save("train_detectors_metrics", metrics)
    ctx.log_metrics(metrics)
    log.info("train_detectors: test F1 %.3f (flat %s), PERSON recall %s", metrics.get("detector.test.f1", 0.0),
             f"{metrics['flat.test.f1']:.3f}" if "flat.test.f1" in metrics else "not trained",
             f"{metrics['detector.test.PERSON.recall']:.3f}" if "detector.test.PERSON.recall" in metrics else "n/a")
