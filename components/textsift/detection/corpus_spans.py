"""The recognizers' spans over the corpus: made by the detect stage, read back by privatize.

Every setting that protects detected spans (``mask_detected``, ``replace_detected``, ``redact``) reads the file
the detect stage wrote (:mod:`textsift.detection.spans_file`) instead of detecting again, and keeps the types it
protects (its ``labels``). Documents the file does not hold with the same text (a file privatized ad hoc with
``textsift privatize``) are detected on the spot with the project's recognizer set.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import pandas as pd

from textsift.corpus import Span
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.build import recognizer_set, run_recognizers
from textsift.detection.spans_file import Stored, read_detected, text_digest
from textsift.device import resolve_device
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")


def detect_corpus(ctx: StageContext, texts: Sequence[str]) -> list[list[Detection]]:
    """The project's recognizer set (params ``detection``) over ``texts`` (offsets into them; models read their
    views, params ``ingest.normalize``)."""
    detection = ctx.params.detection
    folder = ctx.model("detector") if "model" in detection.recognizers else None
    return run_recognizers(recognizer_set(detection, folder, resolve_device(ctx.params.device)), texts, detection,
                           view=ctx.params.ingest.normalize)


def detected_spans(ctx: StageContext, corpus: pd.DataFrame, labels: Sequence[str] | None = None,
                   stored: Stored | None = None,
                   detect: Callable[[Sequence[str]], list[list[Detection]]] | None = None) -> list[list[Span]]:
    """The detected spans of each document of ``corpus`` (row order), of ``labels`` only when given.

    ``stored`` (the file :func:`read_detected` read) and ``detect`` (the recognizer set) let a caller that asks
    many times load each once (:class:`textsift.privatization.resources.StageResources`)."""
    if stored is None:
        path = ctx.input("detected")
        stored = read_detected(path) if path.exists() else {}
    keys = [(d, text_digest(t)) for d, t in zip(corpus["doc_id"], corpus["text"], strict=True)]
    missing = [i for i, key in enumerate(keys) if key not in stored]
    found: dict[int, list[Detection]] = {}
    if missing:
        log.info("detecting sensitive spans in %d documents the corpus-wide file does not hold", len(missing))
        texts = corpus["text"].tolist()
        found = dict(zip(missing, (detect or (lambda t: detect_corpus(ctx, t)))([texts[i] for i in missing]),
                         strict=True))
    keep = set(labels) if labels is not None else None
    return [[d.span for d in (found[i] if i in found else stored[key]) if keep is None or d.label in keep]
            for i, key in enumerate(keys)]
