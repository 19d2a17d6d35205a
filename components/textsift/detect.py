"""Detection for users: the library ``detect(texts)`` and ``textsift detect --input F --output G``.

Both run the project's recognizer set (params ``detection``, METHODS.md §4.1): its trained
privacy-entity detector (the ``train_detectors`` stage; its pointer ``models/detector.json`` names
the model in MLflow, fetched once into the model cache), the pattern recognizers and optionally
spaCy, each type at its confidence threshold (``threshold`` overrides them all for one call:
no retraining). A project without a detector trains it first (``ingest`` then
``train_detectors``, with the given params file), as ``textsift privatize`` does for its models.
Spans are character offsets into each text as given (models read a normalized view of it, and
every span is mapped back: ``text[start:end]`` is the entity, whatever the text's line breaks,
tabs, ``<br />`` markup or decomposed accents; the file's records are read as they are, not
normalized) with their type, confidence and the recognizers that found them; the span strings
are written only when asked for (``with_text``), so the default output of a detection run holds
no document text at all.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from textsift.adhoc import check_output, load_file, rejects_path
from textsift.artifacts import DETECTOR_POINTER, INTERESTS_POINTER, detector_folder, interests_folder, read_pointer
from textsift.chunked import Progress
from textsift.config import load_params
from textsift.corpus import Span, atomic_path, write_table
from textsift.detection.params import DetectionParams
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.build import build_recognizers, recognizer_candidates, run_recognizers, spans_of
from textsift.device import DetectorResolved, resolve_detector_precision, resolve_device
from textsift.errors import InputError
from textsift.ingest_params import NormalizeParams, SourceParams
from textsift.interests.inference import InterestModel, infer
from textsift.interests.io import load_interest_model
from textsift.models.detector import Detector
from textsift.models.detector_io import load_detector
from textsift.prerequisites import ensure
from textsift.tracking import Tracker

log = logging.getLogger("textsift")
DETECT_OUTPUTS = ".jsonl, .jsonl.gz or .parquet"
BATCH_CHARS = 200_000  # characters detected between two progress lines (a few seconds on 2 CPU cores)
LONG_RECORD_CHARS = 100_000


@lru_cache(maxsize=4)
def _loaded(root: Path, params_path: Path, sha256: str, device: str, precision: DetectorResolved) -> Detector:
    """The detector of digest ``sha256`` loaded once per process (a retrained one has a new digest) with its encoder
    in ``precision``."""
    params = load_params(params_path)
    return load_detector(detector_folder(root, Tracker(params.tracking, root)), device, precision)


def _project_detector(root: Path, params_path: Path, device: str | None) -> Detector:
    params = load_params(params_path)
    ensure(root, params, params_path, [("detector", None)])
    sha256 = read_pointer(root / DETECTOR_POINTER)["sha256"]
    resolved = resolve_device(device or params.device)
    return _loaded(root, params_path, sha256, resolved,
                   resolve_detector_precision(params.detection.inference_precision, resolved))


def detection_params(params: DetectionParams, threshold: float | None = None,
                     batch_size: int | None = None) -> DetectionParams:
    """``params`` with one ``threshold`` for every type (when given) and a batch size (when given)."""
    update: dict = {}
    if threshold is not None:
        if not 0 < threshold <= 1:
            raise InputError(f"threshold must be in (0, 1], got {threshold}")
        update.update(threshold=float(threshold), thresholds={}, calibrated=False)
    if batch_size is not None:
        update["batch_size"] = batch_size
    return params.model_copy(update=update) if update else params


def detect_detailed(
    texts: Sequence[str], root: str | Path = ".", params_path: str | Path | None = None, device: str | None = None,
    batch_size: int | None = None, threshold: float | None = None, labels: Sequence[str] | None = None,
) -> list[list[Detection]]:
    """Privacy entities of each text with the project's recognizer set, with confidences and provenance.

    Args:
        texts: any lengths (long texts run in sliding windows); an empty text gives no spans.
        root: the textsift project whose detector is used (trained first when it has none).
        params_path: its params file (default ``<root>/params.yaml``).
        device: ``cpu``/``cuda``/``auto`` (default the params' ``device``).
        batch_size: model windows per forward pass (default the params' or the detector's).
        threshold: one confidence threshold in (0, 1] for every type (default: params ``detection``).
        labels: the types to return (default: all).

    Returns:
        Per text, detections sorted by ``(start, end, label)`` (:class:`Detection`: offsets, type,
        confidence, recognizers).
    """
    if isinstance(texts, str):
        raise TypeError("detect() takes a sequence of texts, not one string: detect([text])")
    recognizers, settings, view = _recognizers(root, params_path, device, batch_size, threshold)
    return run_recognizers(recognizers, list(texts), settings, labels, view=view)


def detect_candidates(texts: Sequence[str], root: str | Path = ".", params_path: str | Path | None = None,
                      device: str | None = None) -> list[list[Detection]]:
    """Every span each text passed a threshold for, with every type it passed for: ``resolve(text, found, labels)``
    (:func:`textsift.detection.recognizers.merge.resolve`) is what :func:`detect_detailed` gives for ``labels``, so
    one detection serves several type sets."""
    recognizers, settings, view = _recognizers(root, params_path, device, None, None)
    return recognizer_candidates(recognizers, list(texts), settings, view=view)


def _recognizers(root: str | Path, params_path: str | Path | None, device: str | None, batch_size: int | None,
                 threshold: float | None) -> tuple[list[Any], DetectionParams, NormalizeParams]:
    """The project's recognizer set (its detector trained first when missing), the detection params it runs at and
    the model view its recognizers read (params ``ingest.normalize``)."""
    root = Path(root).resolve()
    params_file = Path(params_path).resolve() if params_path else root / "params.yaml"
    params = load_params(params_file)
    settings = detection_params(params.detection, threshold, batch_size)
    detector = _project_detector(root, params_file, device) if "model" in settings.recognizers else None
    return build_recognizers(settings, detector), settings, params.ingest.normalize


def detect(
    texts: Sequence[str], root: str | Path = ".", params_path: str | Path | None = None, device: str | None = None,
    batch_size: int | None = None, threshold: float | None = None, labels: Sequence[str] | None = None,
) -> list[list[Span]]:
    """Privacy entities of each text: per text, sorted character spans (:func:`detect_detailed` without
    confidences and provenance)."""
    return spans_of(detect_detailed(texts, root, params_path, device, batch_size, threshold, labels))


@lru_cache(maxsize=2)
def _loaded_interests(root: Path, params_path: Path, sha256: str, device: str) -> InterestModel:
    params = load_params(params_path)
    folder = interests_folder(root, Tracker(params.tracking, root))
    if folder is None:
        raise InputError("this project trained no interest model (detectors.interests.enabled is false)")
    return load_interest_model(folder, device)


def infer_interests(
    texts: Sequence[str], root: str | Path = ".", params_path: str | Path | None = None, device: str | None = None,
) -> list[tuple[str, str]]:
    """(interest, evidence) per text with the project's IPI model (METHODS.md §4.2); ``("none", "")`` when a
    text reveals no interest, or when too few of the evidence's words are in the text (the attacker's rule,
    ``evaluate.interest_attack.min_evidence_overlap``). The evidence is generated (lower-cased words of the text)."""
    root = Path(root).resolve()
    params_file = Path(params_path).resolve() if params_path else root / "params.yaml"
    params = load_params(params_file)
    ensure(root, params, params_file, [("interests", None)])
    sha256 = str(read_pointer(root / INTERESTS_POINTER).get("sha256"))
    model = _loaded_interests(root, params_file, sha256, resolve_device(device or params.device))
    return infer(model, list(texts), params.evaluate.interest_attack.min_evidence_overlap)


def evidence_offsets(text: str, evidence: str) -> tuple[int | None, int | None]:
    """Where the generated evidence occurs in the text (case- and spacing-insensitive), or (None, None)."""
    words = evidence.split()
    if not words:
        return None, None
    match = re.search(r"\s*".join(re.escape(w) for w in words), text, flags=re.IGNORECASE)
    return (match.start(), match.end()) if match else (None, None)


def detect_output_format(path: Path) -> tuple[str, bool]:
    """(format, gzipped) of a detection output: JSON lines (optionally gzipped) or Parquet."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-2:] == [".jsonl", ".gz"]:
        return "jsonl", True
    if suffixes[-1:] == [".jsonl"]:
        return "jsonl", False
    if suffixes[-1:] == [".parquet"]:
        return "parquet", False
    raise InputError(f"{path.name}: detection output must end in {DETECT_OUTPUTS}")


def span_rows(doc_ids: Sequence[str], texts: Sequence[str], spans: Sequence[Sequence[Detection]],
              with_text: bool, interests: Sequence[tuple[str, str]] | None = None) -> pa.Table:
    """One row per document: its id and spans ``{start, end, label, score, source[, text]}``; with
    ``interests``, also the inferred ``interest`` and the evidence's ``evidence_start``/``evidence_end``
    (and ``evidence`` text only ``with_text``)."""
    fields = [("start", pa.int32()), ("end", pa.int32()), ("label", pa.string()), ("score", pa.float32()),
              ("source", pa.string())]
    if with_text:
        fields.append(("text", pa.string()))
    rows = []
    for text, doc in zip(texts, spans, strict=True):
        cells = []
        for s in doc:
            cell = {"start": s.start, "end": s.end, "label": s.label, "score": s.score, "source": s.source}
            if with_text:
                cell["text"] = text[s.start:s.end]
            cells.append(cell)
        rows.append(cells)
    schema = pa.schema([("id", pa.string()), ("spans", pa.list_(pa.struct(fields)))])
    table = pa.Table.from_pydict({"id": list(doc_ids), "spans": rows}, schema=schema)
    if interests is None:
        return table
    offsets = [evidence_offsets(text, evidence) for text, (_, evidence) in zip(texts, interests, strict=True)]
    table = table.append_column("interest", pa.array([interest for interest, _ in interests], pa.string()))
    table = table.append_column("evidence_start", pa.array([a for a, _ in offsets], pa.int32()))
    table = table.append_column("evidence_end", pa.array([b for _, b in offsets], pa.int32()))
    if with_text:
        table = table.append_column("evidence", pa.array([e for _, e in interests], pa.string()))
    return table


def write_spans(table: pa.Table, path: Path) -> None:
    """Write detected spans atomically, format from the suffix."""
    fmt, gzipped = detect_output_format(path)
    if fmt == "parquet":
        write_table(table, path)
        return
    with atomic_path(path) as tmp:
        table.to_pandas().to_json(tmp, orient="records", lines=True, force_ascii=False,
                                  compression="gzip" if gzipped else None)


def _batches(texts: list[str], max_chars: int) -> Iterator[list[str]]:
    """Consecutive runs of texts of at most ``max_chars`` characters together (a longer text alone)."""
    batch: list[str] = []
    size = 0
    for text in texts:
        if batch and size + len(text) > max_chars:
            yield batch
            batch, size = [], 0
        batch.append(text)
        size += len(text)
    if batch:
        yield batch


def detect_file(
    input_path: Path, output_path: Path, source: SourceParams, params_path: Path, root: Path,
    with_text: bool = False, device: str | None = None, interests: bool = False, threshold: float | None = None,
    labels: Sequence[str] | None = None,
) -> dict[str, float]:
    """Detect privacy entities in every valid record of a file; write one row of spans per record.

    Records are read and validated like ingest does (rejects to ``<output>.rejects.parquet``,
    ``ingest.max_reject_fraction`` enforced); the output keeps the input's ids (``row-N`` when it
    has none). ``threshold`` (one confidence for every type) and ``labels`` (types kept) apply to
    this call only. Returns counts: documents, spans, spans per type, characters per second.
    """
    detect_output_format(output_path)
    check_output(output_path, input_path)
    params = load_params(params_path)
    corpus, _ = load_file(input_path, source, params, rejects=rejects_path(output_path))
    texts = corpus["text"].tolist()
    started = time.perf_counter()
    longest = max(map(len, texts))
    if longest > LONG_RECORD_CHARS:
        log.info("the longest record has %d characters: detection reads it in overlapping windows, one batch alone",
                 longest)
    recognizers, settings, view = _recognizers(root, params_path, device, None, threshold)  # once, not per batch
    progress, spans = Progress(sum(map(len, texts)), "detect", unit="characters"), []
    try:
        for batch in _batches(texts, BATCH_CHARS):
            spans += run_recognizers(recognizers, batch, settings, labels, view=view)
            progress.advance(sum(map(len, batch)))
    finally:
        progress.close()
    seconds = time.perf_counter() - started
    inferred = infer_interests(texts, root, params_path, device) if interests else None
    write_spans(span_rows(corpus["doc_id"].tolist(), texts, spans, with_text, inferred), output_path)
    metrics: dict[str, float] = {"docs": float(len(texts)), "spans": float(sum(len(s) for s in spans)),
                                 "chars_per_s": sum(map(len, texts)) / max(seconds, 1e-9)}
    for doc in spans:
        for s in doc:
            metrics[f"spans.{s.label}"] = metrics.get(f"spans.{s.label}", 0.0) + 1.0
    for interest, _ in inferred or ():
        metrics[f"interests.{interest}"] = metrics.get(f"interests.{interest}", 0.0) + 1.0
    log.info("detected %d spans in %d records (%.0f chars/s)", metrics["spans"], len(texts), metrics["chars_per_s"])
    return metrics
