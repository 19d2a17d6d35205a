"""Typed schema of params.yaml — the one source of configuration.

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
from textsift.detection.params import DetectionParams, DetectorDataParams
from textsift.device import Precision
from textsift.errors import ConfigError
from textsift.interests.params import InterestParams
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.metric_dp.params import MetricDPSetting
from textsift.mechanisms.registry import Setting
from textsift.models.params import DetectorParams
from textsift.params_base import Frozen, Name

Probability = float  # documented alias; range is enforced with Field(ge=0, le=1)


class DemoCorpusParams(Frozen):
    """The seeded demo corpus with planted personal data (textsift.demo)."""

    n_docs: int = Field(2000, ge=10, description="documents to generate")
    pii_per_doc: float = Field(2.0, ge=0, description="mean planted personal-data spans per document")
    positive_rate: Probability = Field(0.5, ge=0, le=1, description="share of label 'pos'")
    label_noise: Probability = Field(
        0.05, ge=0, le=1, description="share of documents whose wording contradicts their label"
    )
    interest_rate: Probability = Field(
        0.3, ge=0, le=1, description="share of documents with a sentence giving away an interest (the interest "
        "attacker's ground truth; held-out values of the IPI lexicon)")


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
    interest_field: str | None = Field(
        None, description="column with each record's known interest category (or 'none'): the interest "
        "attacker's ground truth in evaluate; never published with a privatized corpus")
    columns: list[str] | None = Field(None, description="column names of a header-less csv/tsv file")

    @model_validator(mode="after")
    def _file_needs_path(self) -> SourceParams:
        if self.kind == "file" and not self.path:
            raise ValueError("source.kind 'file' needs source.path")
        return self


class NormalizeParams(Frozen):
    """The normalization models read text through (``textsift.normalize.model_view``: detection maps every span back
    to the text as given); stored and returned text stays as given unless ``output`` is true."""

    unicode_nfc: bool = Field(True, description="compose decomposed accents (Unicode NFC)")
    strip_html_breaks: bool = Field(True, description="turn <br /> tags into spaces")
    collapse_whitespace: bool = Field(True, description="turn each run of whitespace into one space")
    output: bool = Field(False, description="also normalize the text ingest, textsift privatize and textsift detect "
                                            "store and return (outer whitespace stripped, spans moved along); false "
                                            "keeps every input character outside replaced spans")


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

    Terms are hashed into 2**n_features_log2 buckets, so the fitted model stores no vocabulary; its
    IDF and coefficients still mark which hashed n-grams its training text held, so only the models of
    privatized corpora are logged to MLflow.
    """

    n_features_log2: int = Field(18, ge=10, le=24)
    ngram_max: int = Field(2, ge=1, le=3)
    C: float = Field(4.0, gt=0)
    max_iter: int = Field(1000, gt=0)


class TransformerClassifierParams(Frozen):
    """The transformer classifier (METHODS.md §5): a linear head on frozen sentence features, or the encoder
    fine-tuned with its head."""

    enabled: bool = True
    mode: Literal["features", "fine_tune"] = Field(
        "features", description="features: a logistic regression on the frozen encoder's mean-pooled features, each "
                                "distinct text encoded once | fine_tune: encoder + head trained per corpus")
    encoder: str = Field("minilm", description="minilm (packaged all-MiniLM-L6-v2) | fill_in (the corpus-trained "
                                               "masked LM) | a local BERT folder")
    head_c: float = Field(4.0, gt=0, description="features: the head's inverse L2 strength")
    head_max_iter: int = Field(2000, ge=1, description="features: the head's solver iterations")
    encoder_layers: int | None = Field(3, ge=1, description="fine_tune: keep the first k transformer layers "
                                                            "(null: all; features use every layer)")
    epochs: float = Field(2.0, gt=0)
    batch_size: int = Field(32, ge=1)
    learning_rate: float = Field(1e-4, gt=0, description="peak learning rate (after warm-up, then linear decay to 0)")
    warmup_fraction: float = Field(0.1, ge=0, lt=1, description="share of the steps spent warming the rate up from 0")
    max_grad_norm: float = Field(1.0, gt=0, description="gradients are clipped to this L2 norm")
    max_length: int = Field(128, ge=16, description="tokens per document (longer ones are truncated)")
    mixed_precision: bool = Field(True, description="bf16 autocast on CUDA")


class FrontierParams(Frozen):
    """How the frontier ranks settings (METHODS.md §5)."""

    utility: str = Field(
        "tfidf_logreg.original.accuracy",
        pattern=r"^[a-z_]+\.(original|privatized)\.(accuracy|macro_f1|roc_auc)$",
        description="<classifier>.<test_on>.<metric> used as the frontier's utility",
    )


class RecommendParams(Frozen):
    """The rule that proposes the setting to ship (METHODS.md §5; :mod:`textsift.evaluation.recommend`).

    Every privacy criterion must hold, each judged on its bootstrap upper bound (a point value where there is no
    interval) against its ceiling; a criterion a run cannot measure (no gold spans, no interest model) is
    skipped and said so. Among the settings that pass, the highest utility lower bound wins; none passes -> no
    recommendation."""

    leak_rate: Probability = Field(0.05, description="ceiling on the share of gold privacy spans left verbatim")
    leak_of: Literal["direct", "all"] = Field(
        "direct", description="which gold spans the leak-rate and attacker-recall ceilings count: the direct "
        "identifiers (names, contact details, ID numbers: detection.params.DIRECT_IDENTIFIERS) or every type. What "
        "quasi-identifiers (places, organisations, dates, jobs) still allow is judged by the re-identification and "
        "interest attackers; their leak is reported beside it")
    attacker_recall: Probability = Field(0.05, description="ceiling on the share of original spans the trained "
                                                           "detector finds again in the output")
    interest_leak: Probability = Field(0.2, description="ceiling on the share of revealed interests the IPI "
                                                        "attacker still infers the same")
    outsider_gain: Probability = Field(0.05, description="ceiling on what an outsider gains over chance by "
                                                         "replaying the draws or confirming guessed names")
    cross_document: Probability = Field(0.05, description="ceiling on the share of published documents that carry "
                                                          "a name part of another document of the corpus")
    trir_gain: Probability = Field(
        0.1, description="ceiling on the re-identification attacker's gain over chance: (share of published test "
        "documents it links to their person - chance) / (1 - chance), the attacker knowing the train split's "
        "persons from their documents; 0.1 is of the order of the 0.09 re-identification probability EMA (policy "
        "0070) and Health Canada accept for publicly released clinical reports")
    keyword_gain: Probability = Field(0.1, description="noisy embeddings: ceiling on the keyword attacker's gain over "
                                                       "chance, 2 x balanced accuracy - 1 of the stronger of the "
                                                       "clean-trained and the noise-aware attacker")
    cross_release_gain: Probability = Field(
        0.05, description="noisy embeddings: ceiling on the share of the distance to the clean embeddings that two "
        "published sets close beyond what composition allows (the inverse-variance average: on their draws and in "
        "expectation under independent noise)")
    beats_majority: bool = Field(True, description="the setting's classifier must beat the majority class "
                                                   "(utility lower bound above it)")


class BootstrapParams(Frozen):
    """Percentile-bootstrap intervals on utility and leak rates (test documents resampled)."""

    samples: int = Field(1000, ge=100, description="resamples per interval")
    level: float = Field(0.95, gt=0, lt=1, description="coverage of each interval")


class InterestAttackParams(Frozen):
    """How evaluate's IPI attacker decides (METHODS.md §4.2 as an attribute-inference attack; see interests.attack)."""

    min_evidence_overlap: Probability = Field(
        0.5, ge=0, le=1, description="share of the generated evidence's words the text must contain for the "
        "attacker to count the interest; 0 trusts the interest alone (decodes 2 tokens: 3.4x faster on demo documents)")


class EvaluateParams(Frozen):
    interest_attack: InterestAttackParams = InterestAttackParams()
    inference_precision: Precision = Field(
        "auto", description="what the frozen measuring models (the transformer head's sentence features, the "
        "interest attacker's decoding) compute in; auto: bfloat16 on CUDA and on CPUs with native bf16 "
        "(AVX512-BF16, AMX), else float32. What is released is never computed in it")
    tfidf_logreg: TfidfLogregParams = TfidfLogregParams()
    transformer: TransformerClassifierParams = TransformerClassifierParams()
    frontier: FrontierParams = FrontierParams()
    recommend: RecommendParams = RecommendParams()
    bootstrap: BootstrapParams = BootstrapParams()


class ReportParams(Frozen):
    """The HTML report of a run: tables and plots; privatized examples only when asked."""

    show_examples: bool = False
    examples_per_setting: int = Field(3, ge=0, le=50)


class FillInParams(Frozen):
    """The corpus-trained masked LM of DataSifterText (METHODS.md §1.1), stage train_fill_in."""

    init_from: str | None = Field(None, description="local checkpoint folder to continue MLM training from")
    vocab_size: int = Field(8000, ge=100, description="WordPiece vocabulary trained on the training split")
    min_doc_freq: int = Field(
        5, ge=1,
        description="the WordPiece vocabulary (published with the model) is learned only from words used outside "
                    "privacy spans by at least this many distinct training documents; other words only give "
                    "their characters, span text nothing")
    hidden_size: int = Field(256, ge=16)
    num_layers: int = Field(4, ge=1)
    num_heads: int = Field(4, ge=1)
    intermediate_size: int = Field(1024, ge=16)
    max_length: int = Field(128, ge=16, description="tokens per window")
    epochs: float = Field(3.0, gt=0)
    batch_size: int = Field(32, ge=1)
    learning_rate: float = Field(5e-4, gt=0)
    warmup_fraction: float = Field(0.06, ge=0, lt=1)
    mask_probability: float = Field(0.15, gt=0, lt=1)
    mixed_precision: bool = Field(True, description="bf16 autocast on CUDA")
    validation_fraction: float = Field(0.1, gt=0, lt=1, description="held-out windows for MLM loss")

    @model_validator(mode="after")
    def _heads_divide_hidden(self) -> FillInParams:
        if self.hidden_size % self.num_heads:
            raise ValueError("fill_in.hidden_size must be a multiple of fill_in.num_heads")
        return self


class EmbeddingSourceParams(Frozen):
    """One embedding source of METHODS.md §2 and the projected Annoy index built over it."""

    kind: Literal["word2vec", "fasttext", "bert_static", "bert_contextual", "glove"]
    vectors_path: str | None = Field(None, description="word2vec text/binary vectors file instead of training")
    model_path: str | None = Field(
        None, description="BERT folder: a local path, 'fill_in' (the corpus-trained model) or 'minilm' (packaged)"
    )
    dim: int = Field(300, ge=2, description="vector size when trained with gensim")
    epochs: int = Field(5, ge=1)
    window: int = Field(5, ge=1)
    min_count: int = Field(2, ge=1)
    min_doc_freq: int = Field(
        5, ge=1,
        description="an index may OUTPUT only words used outside privacy spans in at least this many distinct "
                    "training documents (names never qualify); rarer words are still perturbed as inputs",
    )
    contextual_sample_frac: float = Field(0.05, gt=0, le=1)
    beta: float = Field(0.7, gt=0, lt=1, description="projection distortion; noise sensitivity is 1 + beta")
    delta: float = Field(1e-6, gt=0, lt=1)
    omega: Literal["log", "sqrt_log"] = Field("log", description="log: the notebook's m; sqrt_log: the paper's")
    n_trees: int = Field(50, ge=1)


class GeometryParams(Frozen):
    """The notebook's experiments per embedding source (METHODS.md §2), run by build_indexes."""

    epsilons: list[float] = Field([5, 10, 15, 25, 50, 75, 100, 125, 150, 200, 300, 500], min_length=1)
    k_list: list[int] = Field([1, 2, 3, 4, 5, 10, 20, 50, 200, 500, 1000], min_length=1)
    draws: int = Field(1000, ge=1, description="M, noisy draws per word for N_w and S_w")
    vocab_sample: int = Field(200, ge=1, description="words sampled for the experiments")

    @model_validator(mode="after")
    def _positive(self) -> GeometryParams:
        if any(e <= 0 for e in self.epsilons) or any(k < 1 for k in self.k_list):
            raise ValueError("geometry.epsilons must be > 0 and geometry.k_list >= 1")
        return self


class IndexesParams(Frozen):
    sources: dict[Name, EmbeddingSourceParams] = Field(default_factory=dict)
    geometry: GeometryParams = GeometryParams()


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
