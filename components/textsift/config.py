"""Typed schema of params.yaml — the one source of configuration, composed here from the params of each package
(``ingest_params``, ``evaluation/params``, ``indexes/params``, ``models/params``, ``detection/params``, ...).

``load_params`` is called once, at the edge (CLI, flow, stage entry); everything below it
receives frozen models. Unknown keys are errors (``extra="forbid"``) and every error names
the dotted key that is wrong, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from textsift.budgets.params import EmbeddingDPParams
from textsift.catalog import stage_names
from textsift.detection.params import CalibrationParams, DetectionParams, DetectorDataParams
from textsift.errors import ConfigError
from textsift.evaluation.params import EvaluateParams, ReportParams
from textsift.indexes.params import IndexesParams
from textsift.ingest_params import IngestParams
from textsift.interests.params import InterestParams
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.metric_dp.params import MetricDPSetting
from textsift.mechanisms.registry import Setting
from textsift.models.params import DetectorParams, FillInParams
from textsift.params_base import Frozen, Name


class PrivatizeParams(Frozen):
    """Named privacy settings: one DVC stage instance, Prefect task and MLflow run each."""

    settings: dict[Name, Setting] = Field(
        default_factory=lambda: {"ds_default": DataSifterSetting(kind="datasifter")}, min_length=1,
        description="at least one setting: a pipeline that privatizes nothing is a configuration error",
    )


class PretrainParams(Frozen):
    """Train the detector in two steps: the corpus-independent sources (synthetic, WNUT-17, BTC) once per user
    (:mod:`textsift.user_cache`), then the corpus's own examples with a replayed share of those.

    Off by default: on the demo the second step either forgets real text or learns less of the corpus than one
    training on everything (BTC PERSON recall 0.740 and demo F1 0.956 at the defaults below, against 0.755 and
    0.992), for a new project's detector trained on a quarter of the windows (~2 min on 2 CPU cores before the word
    embeddings were frozen: about as long as one frozen-embedding training on everything now)."""

    enabled: bool = Field(False, description="true: pretrain once per user, then train on the corpus; false: one "
                                             "training on every source (every project pays it all)")
    fine_tune_epochs: int = Field(1, ge=1, description="epochs over the corpus examples and the replayed ones")
    replay: float = Field(3.0, ge=0, description="corpus-independent examples replayed per corpus example "
                                                 "(what keeps the real-text skills while the corpus is learnt)")
    rate_scale: float = Field(0.1, gt=0, le=1, description="the second step's learning rates, as a share of "
                                                           "detectors.model's")


class DetectorsParams(Frozen):
    """The DPER privacy-entity detector of stage train_detectors (METHODS.md §4.1): data and model."""

    data: DetectorDataParams = DetectorDataParams()
    model: DetectorParams = DetectorParams()
    compare_flat: bool = Field(
        True, description="also train the flat BIO tagger on the same encoder and data (the paper's nested vs flat)")
    pretrain: PretrainParams = PretrainParams()
    calibration: CalibrationParams = CalibrationParams()
    interests: InterestParams = InterestParams()


class QualityParams(Frozen):
    """Tolerances of the Great Expectations suites."""

    split_tolerance: float = Field(0.05, ge=0, le=1, description="allowed deviation of split fractions")


class TrackingParams(Frozen):
    uri: str | None = Field(None, description="MLflow tracking URI; default sqlite:///<project>/mlruns.db")
    experiment: str = "textsift"
    log_models: bool = True
    registered_model: str = Field(
        "textsift-classifier", min_length=1,
        description="model-registry name of the baseline classifier: one version per setting per run, "
                    "alias 'recommended' on the promoted setting's (textsift promote)")
    registered_privatizer: str = Field(
        "textsift-privatizer", min_length=1,
        description="model-registry name of the privatizer (an MLflow pyfunc model per served setting: texts in, "
                    "privatized texts out); promote moves its 'recommended' alias with the classifier's")


class OrchestrationParams(Frozen):
    """How the Prefect flow runs stage instances (``dvc repro`` ignores it)."""

    stage_timeout_s: float = Field(
        21600, gt=0, description="wall-clock limit of one stage instance in the flow (6 h); past it the stage "
                                 "fails, is not retried, and leaves no half-written output")
    stage_timeouts: dict[str, float] = Field(
        default_factory=dict, description="per-stage limits in seconds, by stage name, e.g. {evaluate: 7200}")

    @field_validator("stage_timeouts")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [name for name, seconds in value.items() if not seconds > 0]
        if bad:
            raise ValueError(f"stage_timeouts must be positive seconds: {', '.join(sorted(bad))}")
        return value


class Params(Frozen):
    """Root of params.yaml."""

    seed: int = Field(1234, ge=0, description="public seed of what is not secret (splits, model initialisation, "
                                              "bootstrap, the demo corpus); released draws use the secret key")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    tracking: TrackingParams = TrackingParams()
    ingest: IngestParams = IngestParams()
    fill_in: FillInParams = FillInParams()
    detectors: DetectorsParams = DetectorsParams()
    detection: DetectionParams = DetectionParams()
    indexes: IndexesParams = IndexesParams()
    privatize: PrivatizeParams = PrivatizeParams()
    embedding_dp: EmbeddingDPParams = EmbeddingDPParams()
    evaluate: EvaluateParams = EvaluateParams()
    report: ReportParams = ReportParams()
    quality: QualityParams = QualityParams()
    orchestration: OrchestrationParams = OrchestrationParams()

    @model_validator(mode="after")
    def _timeouts_name_known_stages(self) -> Params:
        stages = stage_names()  # the catalog's producers: the registry itself reads params
        unknown = sorted(set(self.orchestration.stage_timeouts) - set(stages))
        if unknown:
            raise ValueError(f"orchestration.stage_timeouts: unknown stages {', '.join(unknown)} "
                             f"(known: {', '.join(stages)})")
        return self

    @model_validator(mode="after")
    def _settings_name_known_indexes(self) -> Params:
        for name, setting in self.privatize.settings.items():
            if isinstance(setting, MetricDPSetting) and setting.index not in self.indexes.sources:
                known = ", ".join(self.indexes.sources) or "none"
                raise ValueError(
                    f"privatize.settings.{name}.index: {setting.index!r} is not in indexes.sources ({known})"
                )
        return self


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


SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: 150 -> 15 ms a load of params.yaml


def load_params(path: str | Path = "params.yaml") -> Params:
    """Read and validate params.yaml. A missing file is an error, never silent defaults."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such params file (run from the project root or pass --params)")
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)  # noqa: S506 - a safe loader
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text (byte {err.start})") from None
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
