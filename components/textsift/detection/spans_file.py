"""The corpus-wide detections file the detect stage writes (``data/detected/spans.parquet``): its schema, writer
and reader, apart from the recognizers that make it.

Each row holds a document id, a digest of its text and its candidate spans (character offsets, type, confidence and
the recognizers that found it; no text): every type each span passed its threshold for
(:func:`~textsift.detection.recognizers.merge.candidates`), so a reader resolves the types it protects as the
recognizer set would for it (:func:`stored_spans`). It stays a local DVC output. A reader of the file alone (the LRP
budgets) runs no recognizer, so its code deps hold no detector; privatize, which also detects texts the file does not
hold, adds that in :mod:`textsift.detection.corpus_spans`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from textsift.corpus import Span, write_table
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.merge import resolve
from textsift.errors import StageError

DETECTION_TYPE = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("label", pa.string()),
                            ("score", pa.float64()), ("source", pa.string())])  # as ranked: types resolve alike
SCHEMA = pa.schema([("doc_id", pa.string()), ("text_digest", pa.string()), ("spans", pa.list_(DETECTION_TYPE))])
Stored = dict[tuple[str, str], list[Detection]]  # (doc id, text digest) -> detections


def text_digest(text: str) -> str:
    """The digest a row holds of its document's text: the file's spans are that text's, not an edited one's."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def write_detected(path: Path, doc_ids: Sequence[str], texts: Sequence[str],
                   detections: Sequence[Sequence[Detection]]) -> None:
    """The candidate detections of each document, atomically (no text: offsets, types, scores, sources)."""
    rows = {"doc_id": list(doc_ids), "text_digest": [text_digest(t) for t in texts],
            "spans": [[{"start": d.start, "end": d.end, "label": d.label, "score": d.score, "source": d.source}
                       for d in doc] for doc in detections]}
    write_table(pa.Table.from_pydict(rows, schema=SCHEMA), path)


def read_detected(path: Path) -> Stored:
    """(doc id, text digest) -> detections, as :func:`write_detected` wrote them.

    Raises:
        StageError: there is no such file (the detect stage has not run).
    """
    if not path.exists():
        raise StageError(f"no detected spans at {path.name} ({path.parent}): run the detect stage first")
    table = pq.read_table(path, schema=SCHEMA).to_pydict()
    return {(d, h): [Detection(c["start"], c["end"], c["label"], float(c["score"]), c["source"]) for c in cells]
            for d, h, cells in zip(table["doc_id"], table["text_digest"], table["spans"], strict=True)}


def stored_spans(stored: Stored, doc_ids: Sequence[str], texts: Sequence[str],
                 labels: Sequence[str] | None = None) -> list[list[Span]]:
    """The spans of ``labels`` (every type when None) of each document, in order: its stored candidates resolved
    (:func:`~textsift.detection.recognizers.merge.resolve`).

    Raises:
        StageError: a document the file does not hold with this text (the detections are another corpus's), naming
            up to five ids and never the text.
    """
    keys = [(d, text_digest(t)) for d, t in zip(doc_ids, texts, strict=True)]
    missing = [doc for doc, key in zip(doc_ids, keys, strict=True) if key not in stored]
    if missing:
        raise StageError(f"{len(missing)} documents are not in the detected spans with their text (e.g. "
                         f"{', '.join(map(str, missing[:5]))}): the detect stage ran on another corpus; run it again")
    return [[d.span for d in resolve(text, stored[key], labels)] for text, key in zip(texts, keys, strict=True)]
