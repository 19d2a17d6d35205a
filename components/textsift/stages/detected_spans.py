"""The detector's spans over the corpus, written once by train_detectors, read by privatize.

Every setting that protects detected spans (``mask_detected``, ``replace_detected``,
``redact``) reads the same file instead of running the detector again. Each row holds a
document id, a digest of its text and its spans (character offsets, no text); it stays a local
DVC output. Documents the file does not hold with the same text (a file privatized ad hoc with
``textsift privatize``) are detected on the spot with the project's detector.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from textsift.artifacts import detector_folder
from textsift.corpus import SPAN_TYPE, Span, spans_to_python, write_table
from textsift.device import resolve_device
from textsift.models.detector import detect
from textsift.models.detector_io import load_detector
from textsift.stages import StageContext

log = logging.getLogger("textsift")
DETECTED = "data/detected/spans.parquet"
SCHEMA = pa.schema([("doc_id", pa.string()), ("text_digest", pa.string()), ("spans", pa.list_(SPAN_TYPE))])


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def write_detected(path: Path, doc_ids: Sequence[str], texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> None:
    rows = {"doc_id": list(doc_ids), "text_digest": [_digest(t) for t in texts],
            "spans": [[{"start": s.start, "end": s.end, "label": s.label} for s in doc] for doc in spans]}
    write_table(pa.Table.from_pydict(rows, schema=SCHEMA), path)


def detected_spans(ctx: StageContext, corpus: pd.DataFrame) -> list[list[Span]]:
    """The detector's spans of each document of ``corpus`` (row order), from the file or detected now."""
    path = ctx.path(DETECTED)
    stored: dict[tuple[str, str], list[Span]] = {}
    if path.exists():
        table = pq.read_table(path, schema=SCHEMA).to_pydict()
        stored = {(d, h): spans_to_python(s)
                  for d, h, s in zip(table["doc_id"], table["text_digest"], table["spans"], strict=True)}
    keys = [(d, _digest(t)) for d, t in zip(corpus["doc_id"], corpus["text"], strict=True)]
    missing = [i for i, key in enumerate(keys) if key not in stored]
    found: dict[int, list[Span]] = {}
    if missing:
        log.info("detecting sensitive spans in %d documents the corpus-wide file does not hold", len(missing))
        detector = load_detector(detector_folder(ctx.root, ctx.tracker), resolve_device(ctx.params.device))
        texts = corpus["text"].tolist()
        found = dict(zip(missing, detect(detector, [texts[i] for i in missing]), strict=True))
    return [found[i] if i in found else stored[key] for i, key in enumerate(keys)]
