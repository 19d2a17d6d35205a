"""detect: the recognizer set over the corpus, and its figures on real annotated text (METHODS.md §4.1).

Runs params ``detection`` (the trained model, the pattern recognizers, optionally spaCy) over
every corpus document, each type at its own confidence threshold, and writes the merged candidates
with their provenance (``data/detected/spans.parquet``: every type each span passed for) for privatize, which
resolves the types each setting protects, and the LRP budgets, which read every type.
Thresholds and recognizers are inference choices: changing them re-runs this stage and its
readers, never training. Figures: spans per type and per recognizer, characters per second,
the corpus's own test split scored against its gold spans (``corpus.test.*``, when it has them),
and, on the held-out test split of each configured real corpus (BTC, WNUT-17: text the
detector never trained on), per-type precision/recall/F1 exact and by overlap and character
precision/recall (``real.<corpus>.*``, :mod:`textsift.detection.scoring`). No text is logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import pandas as pd

from textsift.corpus import Span, spans_to_python
from textsift.detection.real_corpora import real_test_sets
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.build import recognizer_candidates, recognizer_set
from textsift.detection.recognizers.merge import resolve
from textsift.detection.scoring import detection_scores
from textsift.detection.spans_file import write_detected
from textsift.device import resolve_device
from textsift.quality.suites import check_corpus
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")


def detect_corpus(ctx: StageContext, texts: Sequence[str]) -> list[list[Detection]]:
    """The project's recognizer set (params ``detection``) over ``texts``: each text's candidates, every type each
    span passed for (offsets into them; models read their views, params ``ingest.normalize``)."""
    detection = ctx.params.detection
    folder = ctx.model("detector") if "model" in detection.recognizers else None
    return recognizer_candidates(recognizer_set(detection, folder, resolve_device(ctx.params.device)), texts,
                                 detection, view=ctx.params.ingest.normalize)


def resolved(texts: Sequence[str], found: Sequence[Sequence[Detection]]) -> list[list[Detection]]:
    """Each text's candidates as spans of every type, one type per span (what the figures score)."""
    return [resolve(text, doc) for text, doc in zip(texts, found, strict=True)]


def span_counts(detections: Sequence[Sequence[Detection]]) -> dict[str, float]:
    """``spans``, ``spans.<TYPE>`` and ``spans.by.<recognizer>`` (a span found by several counts for each)."""
    out: dict[str, float] = {"spans": float(sum(map(len, detections)))}
    for doc in detections:
        for d in doc:
            out[f"spans.{d.label}"] = out.get(f"spans.{d.label}", 0.0) + 1.0
            for source in d.source.split("+"):
                out[f"spans.by.{source}"] = out.get(f"spans.by.{source}", 0.0) + 1.0
    return out


def real_text_figures(ctx: StageContext) -> dict[str, float]:
    """The recognizer set on each configured real corpus's test split: ``real.<corpus>.*``."""
    out: dict[str, float] = {}
    for name, examples in real_test_sets(ctx.params.detectors.data, ctx.root).items():
        texts = [ex.text for ex in examples]
        started = time.perf_counter()
        found = resolved(texts, detect_corpus(ctx, texts))
        seconds = time.perf_counter() - started
        scores = detection_scores([list(ex.spans) for ex in examples], [[d.span for d in doc] for doc in found])
        out.update({f"real.{name}.{key}": value for key, value in scores.items()})
        out[f"real.{name}.chars_per_s"] = sum(map(len, texts)) / max(seconds, 1e-9)
        log.info("detect: %s test (real text, never trained on): PERSON recall %.3f, character precision %.3f",
                 name, scores.get("PERSON.overlap.recall", 0.0), scores["char.precision"])
    return out


def corpus_figures(ctx: StageContext, corpus: pd.DataFrame, detections: Sequence[Sequence[Detection]]
                   ) -> dict[str, float]:
    """The recognizer set on the corpus's own test split, scored like real text (``corpus.test.*``), when the
    corpus has gold spans (labels renamed by ``detectors.data.corpus_labels``). On the demo corpus this
    flatters: its personal data comes from the generators the detector trained on."""
    mapping = ctx.params.detectors.data.corpus_labels
    gold = [[Span(s.start, s.end, mapping.get(s.label, s.label)) for s in spans_to_python(cell)]
            for cell in corpus["spans"]]
    test = [k for k, split in enumerate(corpus["split"]) if split == "test"]
    if not any(gold[k] for k in test):
        return {}
    scores = detection_scores([gold[k] for k in test], [[d.span for d in detections[k]] for k in test])
    return {f"corpus.test.{key}": value for key, value in scores.items()}


def run(ctx: StageContext) -> None:
    """Detect over the corpus, write the spans, score the recognizer set on real text."""
    corpus = ctx.load("corpus")
    check_corpus(corpus, name="detect_input").raise_if_failed()
    texts = corpus["text"].tolist()
    started = time.perf_counter()
    found = detect_corpus(ctx, texts)
    detections = resolved(texts, found)
    seconds = time.perf_counter() - started
    write_detected(ctx.output("detected"), corpus["doc_id"].tolist(), texts, found)
    metrics = {**span_counts(detections), "chars_per_s": sum(map(len, texts)) / max(seconds, 1e-9),
               **corpus_figures(ctx, corpus, detections), **real_text_figures(ctx)}
    ctx.save("detect_metrics", metrics)
    ctx.log_metrics(metrics)
    log.info("detect: %d spans in %d documents (%s)", metrics["spans"], len(texts),
             ", ".join(ctx.params.detection.recognizers))
