"""Ad-hoc use on any file: ``textsift privatize`` and ``textsift evaluate``.

``privatize_file`` applies one named setting of params.yaml to a CSV/JSONL/Parquet file,
reusing the fill-in model and indexes of the project's last pipeline run and training what is
missing (through the same stages the pipeline runs). ``evaluate_files`` scores a privatized
file against its original with the pipeline's utility and leak metrics.
"""

from __future__ import annotations

import importlib
import logging
import secrets
from pathlib import Path

import pandas as pd

from textsift.artifacts import FILL_IN_POINTER
from textsift.config import Params, SourceParams, load_params
from textsift.corpus import atomic_path, spans_to_python
from textsift.errors import ConfigError, InputError
from textsift.evaluation.privacy import leak_rates, token_change_fraction
from textsift.evaluation.utility import score, train_tfidf_logreg
from textsift.readers import detect_format, read_records
from textsift.registry import StageInstance, get_stage
from textsift.stages import StageContext, run_stage
from textsift.stages.ingest import build_corpus
from textsift.tracking import Tracker
from textsift.validation import validate_records

log = logging.getLogger("textsift")


def read_file_corpus(path: Path, source: SourceParams, params: Params) -> pd.DataFrame:
    """Read and validate a file like ingest does; seeded splits keep a given split column."""
    clean, rejects, total = validate_records(read_records(path, source), params.ingest)
    counts = rejects.counts()
    if total == 0 or not clean:
        raise InputError(f"{path.name}: no usable records ({total} read; rejected by reason: {counts})")
    if counts:
        log.warning("%s: %d of %d records rejected %s; first ids: %s", path.name, sum(counts.values()), total,
                    counts, ", ".join(r["doc_id"] for r in rejects.rows[:10]))
    return build_corpus(clean, params.ingest.model_copy(update={"source": source}), params.seed)


def ensure_resources(root: Path, params: Params, setting_name: str) -> None:
    """Run the stages whose outputs the setting needs and that are missing."""
    setting = params.privatize.settings[setting_name]
    needed: list[tuple[str, str | None, Path]] = [("ingest", None, root / "data/ingest/corpus.parquet")]
    if setting.kind == "datasifter":
        needed.append(("train_fill_in", None, root / FILL_IN_POINTER))
    else:
        source = params.indexes.sources[setting.index]
        if source.model_path == "fill_in":
            needed.append(("train_fill_in", None, root / FILL_IN_POINTER))
        needed.append(("build_indexes", setting.index, root / f"data/indexes/{setting.index}"))
    for stage, key, output in needed:
        if not output.exists():
            log.info("%s is missing: running stage %s%s", output.relative_to(root), stage, f"@{key}" if key else "")
            run_stage(stage, root=root, key=key)


def write_output(frame: pd.DataFrame, path: Path, source: SourceParams) -> None:
    """Write id, text, label and split under the input's field names, format from the suffix, atomically.

    The id column is ``source.id_field`` or ``id`` (row ids ``row-N`` when the input had none),
    so ``textsift evaluate`` can pair every privatized record with its original.
    """
    fmt = detect_format(path)
    names = {"doc_id": source.id_field or "id", "text": source.text_field, "label": source.label_field or "label"}
    columns = frame[["doc_id", "text", "label", "split"]].rename(columns=names)
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            columns.to_parquet(tmp, index=False)
        elif fmt == "jsonl":
            columns.to_json(tmp, orient="records", lines=True, force_ascii=False)
        else:
            columns.to_csv(tmp, index=False, sep="," if fmt == "csv" else "\t")


def privatize_file(
    input_path: Path, output_path: Path, setting_name: str, params_path: Path, root: Path, source: SourceParams,
) -> dict[str, float]:
    """Privatize ``input_path`` with the named setting; return the mechanism's metrics."""
    params = load_params(params_path)
    if setting_name not in params.privatize.settings:
        known = ", ".join(params.privatize.settings) or "none"
        raise ConfigError(f"no setting {setting_name!r} in privatize.settings of {params_path} ({known})")
    setting = params.privatize.settings[setting_name]
    corpus = read_file_corpus(input_path, source, params)
    ensure_resources(root, params, setting_name)
    tracker = Tracker(params.tracking, root)
    run_id = tracker.start_run(f"privatize-file@{setting_name}", tags={"textsift.stage": "privatize_file"})
    ctx = StageContext(root, params, StageInstance(get_stage("privatize"), setting_name), tracker, run_id)
    seed = secrets.randbits(63) if params.privatize.production else params.seed
    ok = False
    try:
        adapter = importlib.import_module(f"textsift.stages.privatize_{setting.kind}")
        texts, metrics = adapter.privatize_texts(corpus, setting, ctx, seed)
        write_output(corpus.assign(text=texts), output_path, source)
        tracker.log_metrics(run_id, metrics)
        ok = True
    finally:
        tracker.end_run(run_id, ok)
    return metrics


def evaluate_files(original: pd.DataFrame, privatized: pd.DataFrame, params: Params) -> dict[str, float]:
    """Utility (train on privatized train; test on privatized and original test) and leak metrics."""
    merged = original.merge(privatized[["doc_id", "text"]], on="doc_id", suffixes=("", "_private"), how="inner")
    if len(merged) < len(original):
        raise InputError(f"{len(original) - len(merged)} original ids have no privatized record")
    train, test = merged[merged["split"] == "train"], merged[merged["split"] == "test"]
    model = train_tfidf_logreg(train["text_private"], train["label"], params.evaluate.tfidf_logreg, params.seed)
    metrics = {f"tfidf_logreg.privatized.{k}": v for k, v in score(model, test["text_private"], test["label"]).items()}
    metrics.update({f"tfidf_logreg.original.{k}": v for k, v in score(model, test["text"], test["label"]).items()})
    changed = [token_change_fraction(a, b) for a, b in zip(merged["text"], merged["text_private"], strict=True)]
    metrics["privacy.token_change_fraction"] = sum(changed) / len(changed)
    leaks = leak_rates(list(merged["text"]), [spans_to_python(s) for s in merged["spans"]],
                       list(merged["text_private"]))
    metrics.update({f"privacy.{k}": v for k, v in leaks.items()})
    return metrics
