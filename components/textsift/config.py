"""Typed schema of params.yaml — the one source of configuration.

``load_params`` is called once, at the edge (CLI, flow, stage entry); everything below it
receives frozen models. Unknown keys are errors (``extra="forbid"``) and every error names
the dotted key that is wrong, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from textsift.errors import ConfigError

Probability = float  # documented alias; range is enforced with Field(ge=0, le=1)


class Frozen(BaseModel):
    """Base of every params model: immutable, and unknown keys are rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class DemoCorpusParams(Frozen):
    """The seeded demo corpus with planted personal data (textsift.demo)."""

    n_docs: int = Field(2000, ge=10, description="documents to generate")
    pii_per_doc: float = Field(2.0, ge=0, description="mean planted personal-data spans per document")
    positive_rate: Probability = Field(0.5, ge=0, le=1, description="share of label 'pos'")
    label_noise: Probability = Field(
        0.05, ge=0, le=1, description="share of documents whose wording contradicts their label"
    )


class SourceParams(Frozen):
    """Where ingest reads the corpus from; ``kind: demo`` generates it instead."""

    kind: Literal["demo", "file"] = "demo"
    path: str | None = Field(None, description="input file (csv, tsv, jsonl, parquet, conll; .gz allowed)")
    format: Literal["auto", "csv", "tsv", "jsonl", "parquet", "conll"] = "auto"
    text_field: str = "text"
    label_field: str | None = "label"
    id_field: str | None = Field(None, description="column with record ids; row numbers when absent")
    spans_field: str | None = Field(None, description="column with [{start, end, label}] privacy spans")
    split_field: str | None = Field(None, description="column with a given train/test split to respect")
    columns: list[str] | None = Field(None, description="column names of a header-less csv/tsv file")

    @model_validator(mode="after")
    def _file_needs_path(self) -> SourceParams:
        if self.kind == "file" and not self.path:
            raise ValueError("source.kind 'file' needs source.path")
        return self


class NormalizeParams(Frozen):
    unicode_nfc: bool = True
    strip_html_breaks: bool = Field(True, description="turn <br /> tags into spaces")
    collapse_whitespace: bool = True


class SplitParams(Frozen):
    """Seeded, stratified split fractions; train is the rest."""

    validation: float = Field(0.1, ge=0, lt=1)
    test: float = Field(0.2, gt=0, lt=1)

    @model_validator(mode="after")
    def _leaves_train(self) -> SplitParams:
        if self.validation + self.test >= 1:
            raise ValueError("split.validation + split.test must be < 1 (train gets the rest)")
        return self


class IngestParams(Frozen):
    source: SourceParams = SourceParams()
    demo: DemoCorpusParams = DemoCorpusParams()
    normalize: NormalizeParams = NormalizeParams()
    dedupe: bool = Field(True, description="reject records whose normalized text repeats an earlier one")
    max_chars: int = Field(20000, gt=0, description="records longer than this are rejected")
    max_reject_fraction: Probability = Field(0.05, ge=0, le=1)
    split: SplitParams = SplitParams()


class TfidfLogregParams(Frozen):
    """TF-IDF + logistic regression, the baseline classifier of METHODS.md section 5.

    Terms are hashed into 2**n_features_log2 buckets, so the fitted model (logged to MLflow)
    stores no vocabulary of the corpus it was trained on.
    """

    n_features_log2: int = Field(18, ge=10, le=24)
    ngram_max: int = Field(2, ge=1, le=3)
    C: float = Field(4.0, gt=0)
    max_iter: int = Field(1000, gt=0)


class EvaluateParams(Frozen):
    tfidf_logreg: TfidfLogregParams = TfidfLogregParams()


class QualityParams(Frozen):
    """Tolerances of the Great Expectations suites."""

    split_tolerance: float = Field(0.05, ge=0, le=1, description="allowed deviation of split fractions")


class TrackingParams(Frozen):
    uri: str | None = Field(None, description="MLflow tracking URI; default sqlite:///<project>/mlruns.db")
    experiment: str = "textsift"
    log_models: bool = True


class Params(Frozen):
    """Root of params.yaml."""

    seed: int = Field(1234, ge=0, description="root seed; every generator derives from it")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    tracking: TrackingParams = TrackingParams()
    ingest: IngestParams = IngestParams()
    evaluate: EvaluateParams = EvaluateParams()
    quality: QualityParams = QualityParams()


def _format_validation_error(err: ValidationError, origin: str) -> str:
    lines = [f"{origin}: invalid configuration"]
    for item in err.errors():
        key = ".".join(str(part) for part in item["loc"]) or "<root>"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key (check its spelling and nesting)"
        lines.append(f"  {key}: {message}")
    return "\n".join(lines)


def parse_params(raw: dict[str, Any] | None, origin: str = "params.yaml") -> Params:
    """Validate a mapping (as read from YAML) into ``Params``; raise ConfigError naming bad keys."""
    try:
        return Params.model_validate(raw or {})
    except ValidationError as err:
        raise ConfigError(_format_validation_error(err, origin)) from None


def load_params(path: str | Path = "params.yaml") -> Params:
    """Read and validate params.yaml; a missing file gives the embedded defaults."""
    path = Path(path)
    if not path.exists():
        return Params()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err.__class__.__name__})") from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return parse_params(raw, origin=str(path))


def flatten(params: BaseModel | dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys -> scalar values, the same keys as params.yaml (for MLflow params)."""
    data = params.model_dump(mode="json") if isinstance(params, BaseModel) else params
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, prefix=f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def select(params: Params, dotted: str) -> Any:
    """The value under a dotted key, e.g. ``select(p, "ingest.split")``."""
    node: Any = params
    for part in dotted.split("."):
        node = node[part] if isinstance(node, dict) else getattr(node, part)
    return node
