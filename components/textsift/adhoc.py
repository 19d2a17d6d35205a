"""Ad-hoc use on any file: ``textsift privatize`` and ``textsift evaluate``.

``privatize_file`` applies one named setting of a params file to a CSV/TSV/JSONL/Parquet file,
reusing the fill-in model and indexes of the project's last pipeline run and training what is
missing (through the same stages the pipeline runs, with the same params file). It keeps the
promises ingest keeps: every rejected record goes, with its id, reason, line and original bytes,
to ``<output>.rejects.parquet`` (ingest's rejects schema), and more than
``ingest.max_reject_fraction`` rejected fails the run. Input without labels
(``label_field`` None) is allowed: its records get the label ``textsift.validation.NO_LABEL``
("") — one class for the stratified split — and the output has no label column. ``evaluate_files`` scores a
privatized file against its original with the pipeline's utility and leak metrics.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pandas as pd

from textsift import secret_key
from textsift.chunked import (
    CHUNK_DOCS,
    ChunkWriter,
    Progress,
    chunks,
    clear_stale,
    combine_metrics,
    output_file,
    plan,
)
from textsift.config import Params, load_params
from textsift.corpus import Rejects, spans_to_python, split_rows, write_table
from textsift.corpus_building import build_corpus, ingest_metrics
from textsift.errors import ConfigError, InputError
from textsift.evaluation.privacy import leak_rates, token_change_fraction
from textsift.evaluation.utility import score, train_tfidf_logreg
from textsift.ingest_params import SourceParams
from textsift.mechanisms.registry import mechanism
from textsift.prerequisites import ensure
from textsift.privatization.corpus import privatize_corpus
from textsift.privatization.resources import StageResources
from textsift.readers import read_records
from textsift.registry import PRIVATIZE_FILE, StageInstance
from textsift.releases import release_key
from textsift.stage_context import StageContext
from textsift.tracking import Tracker
from textsift.validation import check_reject_fraction, check_usable, validate_records

log = logging.getLogger("textsift")
OUTPUT_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet"}
SUPPORTED_OUTPUTS = ".csv, .tsv, .jsonl, .parquet (.csv.gz, .tsv.gz, .jsonl.gz compressed)"


def output_format(path: Path) -> tuple[str, bool]:
    """(format, gzipped) named by the output's suffix; InputError naming the supported ones."""
    suffixes = [s.lower() for s in path.suffixes]
    gzipped = bool(suffixes) and suffixes[-1] == ".gz"
    if gzipped:
        suffixes.pop()
    fmt = OUTPUT_FORMATS.get(suffixes[-1] if suffixes else "")
    if fmt is None or (gzipped and fmt == "parquet"):
        raise InputError(f"{path.name}: cannot write a file with suffix {''.join(path.suffixes)!r}; "
                         f"the output suffix must be one of {SUPPORTED_OUTPUTS}")
    return fmt, gzipped


def rejects_path(output: Path) -> Path:
    """Where the rejects of an ad-hoc run go: ``<output>.rejects.parquet``, beside the output."""
    return output.with_name(f"{output.name}.rejects.parquet")


def write_rejects(rejects: Rejects, target: Path, started: float) -> None:
    """Write the rejects file, once the temporaries a stopped run before ``started`` left of it are gone."""
    clear_stale(target, started)
    write_table(rejects.to_table(), target)


def check_output(output: Path, input_path: Path) -> tuple[str, bool]:
    """Fail before any work when the output cannot be written: bad suffix, the input itself,
    or a parent folder that cannot be created or written to; else its (format, gzipped)."""
    named = output_format(output)
    if output.resolve() == input_path.resolve():
        raise InputError(f"{output}: the output would overwrite the input; choose another --output")
    if output.is_dir():
        raise InputError(f"{output} is a folder; --output must name a file")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create the output folder {output.parent} ({err.strerror})") from None
    if not os.access(output.parent, os.W_OK):
        raise InputError(f"the output folder {output.parent} is not writable")
    return named


def load_file(
    path: Path, source: SourceParams, params: Params, rejects: Path | None = None,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Read and validate a file like ingest does: the corpus frame and ingest's count metrics.

    With ``rejects`` the rejected records are written there and ``ingest.max_reject_fraction``
    is enforced (after writing, so a failing run shows what was wrong); without it they are
    only counted and logged. Seeded splits keep a given split column.
    """
    labelled, started = source.label_field is not None, time.time()
    clean, rejected, total = validate_records(read_records(path, source), params.ingest, require_label=labelled)
    if rejects is not None:
        write_rejects(rejected, rejects, started)
    check_usable(path.name, rejected, total, len(clean), rejects)
    if rejects is not None:
        check_reject_fraction(rejected, total, params.ingest.max_reject_fraction, str(rejects))
    frame = build_corpus(clean, params.ingest.model_copy(update={"source": source}), params.seed)
    return frame, ingest_metrics(frame, total, rejected.counts())


def read_file_corpus(path: Path, source: SourceParams, params: Params) -> pd.DataFrame:
    """The corpus frame of a file read and validated like ingest does (rejects only logged)."""
    return load_file(path, source, params)[0]


def output_columns(frame: pd.DataFrame, source: SourceParams) -> pd.DataFrame:
    """id, text, label and split under the input's field names: what ``textsift privatize`` writes.

    The id column is ``source.id_field`` or ``id`` (row ids ``row-N`` when the input had none),
    so ``textsift evaluate`` can pair every privatized record with its original. Without a
    label field there is no label column.
    """
    names = {"doc_id": source.id_field or "id", "text": source.text_field}
    keep = ["doc_id", "text", "split"]
    if source.label_field is not None:
        names["label"] = source.label_field
        keep.insert(2, "label")
    return frame[keep].rename(columns=names)


def privatize_file(
    input_path: Path, output_path: Path, setting_name: str, params_path: Path, root: Path, source: SourceParams,
    chunk_docs: int = CHUNK_DOCS,
) -> dict[str, float]:
    """Privatize ``input_path`` with the named setting; return the mechanism's and ingest's count metrics.

    Checked before any work: the params file, the setting, and that the output can be written.
    Rejected records go to ``rejects_path(output_path)`` and the reject fraction is enforced before anything
    is privatized. The file is streamed in chunks of ``chunk_docs`` records (:mod:`textsift.chunked`): memory
    does not grow with the file, and the output appears (atomically) only when complete.
    """
    started = time.perf_counter()
    params = load_params(params_path)
    if setting_name not in params.privatize.settings:
        known = ", ".join(params.privatize.settings) or "none"
        raise ConfigError(f"no setting {setting_name!r} in privatize.settings of {params_path} ({known})")
    setting = params.privatize.settings[setting_name]
    fmt, gzipped = check_output(output_path, input_path)
    labelled, ingest = source.label_field is not None, params.ingest.model_copy(update={"source": source})
    log.info("reading %s", input_path.name)
    planned = plan(input_path, source, ingest, params.seed, labelled)
    write_rejects(planned.rejects, rejects_path(output_path), planned.started)
    check_usable(input_path.name, planned.rejects, planned.total, planned.accepted, rejects_path(output_path))
    check_reject_fraction(planned.rejects, planned.total, params.ingest.max_reject_fraction,
                          str(rejects_path(output_path)))
    ensure(root, params, params_path, setting.needs())
    implementation = mechanism(setting.kind)
    if not implementation.document_wise(setting):
        log.info("%s swaps between documents of the corpus (METHODS.md): the file is privatized in one piece",
                 setting.kind)
        chunk_docs = max(planned.accepted, 1)
    tracker = Tracker(params.tracking, root)
    run_id = tracker.start_run(f"privatize-file@{setting_name}", tags={"textsift.stage": "privatize_file"})
    ctx = StageContext(root, params, StageInstance(PRIVATIZE_FILE, setting_name), tracker, run_id)
    # loaded once for every chunk: models, indexes, the detected-spans file
    # the setting's release key, as the pipeline's: each document draws by its id and text (textsift.releases), so
    # only the exact published (id, text) gives the published output, and another file's row-1 draws afresh
    resources = StageResources(ctx)
    key = release_key(secret_key.ensure(root), setting.kind, setting_name, setting,
                      context=mechanism(setting.kind).release_context(setting, resources))
    ok, parts = False, []
    progress = Progress(planned.accepted, f"privatize@{setting_name}")
    try:
        with output_file(output_path, planned.started) as tmp, ChunkWriter(tmp, fmt, gzipped) as writer:
            for chunk in chunks(input_path, source, ingest, labelled, planned, chunk_docs):
                texts, chunk_metrics = privatize_corpus(chunk, setting, resources, key)
                writer.append(output_columns(chunk.assign(text=texts), source))
                parts.append((len(chunk), chunk_metrics))
                progress.advance(len(chunk))
        metrics = {**combine_metrics(parts, implementation.additive_metrics, implementation.metric_weight),
                   **planned.metrics(), "privatize.chunks": float(len(parts))}
        tracker.log_metrics(run_id, metrics)
        ok = True
    finally:
        progress.close()
        tracker.end_run(run_id, ok)
    log.info("privatized %d records in %.1fs", planned.accepted, time.perf_counter() - started)
    return metrics


def evaluate_files(
    original: pd.DataFrame, privatized: pd.DataFrame, params: Params, labelled: bool = True,
) -> dict[str, float]:
    """Utility (train on privatized train; test on privatized and original test) and leak metrics.

    Unlabelled files (``labelled`` False) get the privacy metrics only: there is nothing to classify.
    """
    merged = original.merge(privatized[["doc_id", "text"]], on="doc_id", suffixes=("", "_private"), how="inner")
    if len(merged) < len(original):
        raise InputError(f"{len(original) - len(merged)} original ids have no privatized record")
    metrics: dict[str, float] = {}
    if labelled:
        train, test = split_rows(merged, "train"), split_rows(merged, "test")
        model = train_tfidf_logreg(train["text_private"], train["label"], params.evaluate.tfidf_logreg, params.seed)
        metrics.update({f"tfidf_logreg.privatized.{k}": v
                        for k, v in score(model, test["text_private"], test["label"]).items()})
        metrics.update({f"tfidf_logreg.original.{k}": v for k, v in score(model, test["text"], test["label"]).items()})
    changed = [token_change_fraction(a, b) for a, b in zip(merged["text"], merged["text_private"], strict=True)]
    metrics["privacy.token_change_fraction"] = sum(changed) / len(changed)
    leaks = leak_rates(list(merged["text"]), [spans_to_python(s) for s in merged["spans"]],
                       list(merged["text_private"]))
    metrics.update({f"privacy.{k}": v for k, v in leaks.items()})
    return metrics
