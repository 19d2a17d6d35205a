"""The recognizers' spans over the corpus, written once by the detect stage, read by privatize.

Every setting that protects detected spans (``mask_detected``, ``replace_detected``,
``redact``) and the LRP budgets read the same file instead of detecting again. Each row holds a
document id, a digest of its text and its spans (character offsets, type, confidence and the
recognizers that found it; no text); it stays a local DVC output. A setting keeps the types it
protects (its ``labels``). Documents the file does not hold with the same text (a file privatized
ad hoc with ``textsift privatize``) are detected on the spot with the project's recognizer set.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from textsift.corpus import Span, write_table
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.build import recognizer_set, run_recognizers
from textsift.device import resolve_device
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")
DETECTION_TYPE = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("label", pa.string()),
                            ("score", pa.float32()), ("source", pa.string())])
SCHEMA = pa.schema([("doc_id", pa.string()), ("text_digest", pa.string()), ("spans", pa.list_(DETECTION_TYPE))])


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def write_detected(path: Path, doc_ids: Sequence[str], texts: Sequence[str],
                   detections: Sequence[Sequence[Detection]]) -> None:
    """The detections of each document, atomically (no text: offsets, types, scores, sources)."""
    rows = {"doc_id": list(doc_ids), "text_digest": [_digest(t) for t in texts],
            "spans": [[{"start": d.start, "end": d.end, "label": d.label, "score": d.score, "source": d.source}
                       for d in doc] for doc in detections]}
    write_table(pa.Table.from_pydict(rows, schema=SCHEMA), path)


def read_detected(path: Path) -> dict[tuple[str, str], list[Detection]]:
    """(doc id, text digest) -> detections, as :func:`write_detected` wrote them."""
    table = pq.read_table(path, schema=SCHEMA).to_pydict()
    return {(d, h): [Detection(c["start"], c["end"], c["label"], float(c["score"]), c["source"]) for c in cells]
            for d, h, cells in zip(table["doc_id"], table["text_digest"], table["spans"], strict=True)}


def detect_corpus(ctx: StageContext, texts: Sequence[str]) -> list[list[Detection]]:
    """The project's recognizer set (params ``detection``) over ``texts`` (offsets into them; models read their
    views, params ``ingest.normalize``)."""
    detection = ctx.params.detection
    folder = ctx.model("detector") if "model" in detection.recognizers else None
    return run_recognizers(recognizer_set(detection, folder, resolve_device(ctx.params.device)), texts, detection,
                           view=ctx.params.ingest.normalize)


def detected_spans(ctx: StageContext, corpus: pd.DataFrame, labels: Sequence[str] | None = None,
                   stored: dict[tuple[str, str], list[Detection]] | None = None,
                   detect: Callable[[Sequence[str]], list[list[Detection]]] | None = None) -> list[list[Span]]:
    """The detected spans of each document of ``corpus`` (row order), of ``labels`` only when given.

    ``stored`` (the file :func:`read_detected` read) and ``detect`` (the recognizer set) let a caller that asks
    many times load each once (:class:`textsift.privatization.resources.StageResources`)."""
    if stored is None:
        path = ctx.input("detected")
        stored = read_detected(path) if path.exists() else {}
    keys = [(d, _digest(t)) for d, t in zip(corpus["doc_id"], corpus["text"], strict=True)]
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
