"""Config of a ``kind: redact`` privacy setting: de-identification of sensitive spans."""

from __future__ import annotations

from string import Formatter
from typing import Literal

from pydantic import Field, field_validator, model_validator

from textsift.detection.params import EntityType, ProtectedLabels, protected_labels_field
from textsift.detection.types import unknown_detected_types
from textsift.params_base import Frozen

Operator = Literal["pseudonym", "placeholder", "hash", "mask"]  # what replaces a string (redact/operators.py)


class RedactSetting(Frozen):
    """Replace every sensitive span (and every repeat of it in the document) by a stand-in.

    ``placeholder`` writes ``[PERSON]``-style tags; ``pseudonym`` writes a fake value of the same
    type (Faker, seeded by a keyed PRF of (secret key, document id, original string)), the same one
    for every occurrence of a string in a document — or, with ``scope: corpus``, in the whole corpus —
    so a text keeps who-did-what without whom: one stand-in per person in all its forms, agreeing with
    its honorifics, dates moved by one offset per document (``dates``), numbers and codes in their shape.
    ``operators`` replaces some types otherwise (a placeholder, a keyed digest, a mask: ``redact/operators.py``).
    """

    kind: Literal["redact"]
    style: Literal["placeholder", "pseudonym"] = "pseudonym"
    spans: Literal["detected", "gold", "both"] = Field(
        "detected", description="what is sensitive: the detector's spans (train_detectors), gold spans, or both")
    labels: ProtectedLabels = protected_labels_field()
    placeholder: str = Field("[{label}]", description="placeholder format; {label} = type, the only field allowed")
    operators: dict[EntityType, Operator] = Field(
        default_factory=dict, description="type -> what replaces its spans instead of style: pseudonym, placeholder, "
                                          "hash (a keyed digest, one per string of a document), mask (* for each "
                                          "character but spaces), e.g. {DATE: placeholder}")
    vault: bool = Field(
        False, description="keep which original each pseudonym replaced, sealed with the secret key "
                           "(data/vault/<setting>.bin, never published) for `textsift reveal`")
    scope: Literal["document", "corpus"] = Field(
        "document", description="where a string keeps one pseudonym: within its document, or across the corpus "
                                "(the same person is the same stand-in everywhere, except in a document naming someone "
                                "whose name that stand-in holds: drawn again there; links documents about them)")
    dates: Literal["shift", "month", "year", "fake"] = Field(
        "shift", description="date pseudonyms: every date of a document moved by the document's one keyed offset, "
                             "in its own format, so order and intervals stay (shift); the same at month or year "
                             "precision at most (month, year); or a fake date per date (fake: loses the timeline). "
                             "A date not read as one gets a fake date")
    date_shift_days: int = Field(
        365, ge=1, le=3650, description="largest date offset in days: a document's dates move by a keyed whole number "
                                        "of days in [-n, n] other than 0 (dates without a day by as many whole "
                                        "months, a year alone by whole years, at least one; scope: corpus: one offset "
                                        "for the corpus)")
    day_first: bool = Field(
        False, description="read a numeric date such as 03/04/1994 as day/month/year (UK, EU) instead of "
                           "month/day/year (US); one valid only in the other order is read in that order")

    def needs(self) -> tuple[tuple[str, str | None], ...]:
        """The catalog artifacts (name, key) this setting needs to privatize text (textsift.catalog)."""
        return (("corpus", None),) if self.spans == "gold" else (("corpus", None), ("detector", None))

    @model_validator(mode="after")
    def _vault_needs_pseudonyms(self) -> RedactSetting:
        if self.vault and self.style != "pseudonym":
            raise ValueError("vault: true needs style: pseudonym (a placeholder stands for no one in particular)")
        return self

    @field_validator("operators")
    @classmethod
    def _known_types(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = unknown_detected_types(list(value))
        if unknown:
            raise ValueError(f"operators name types no recognizer emits: {', '.join(unknown)}")
        return value

    @field_validator("placeholder")
    @classmethod
    def _only_the_label_field(cls, value: str) -> str:
        """``{label}`` and literal text only: another field, an attribute or a format spec would crash or write
        Python internals (``{label.__class__.__mro__}``)."""
        try:
            fields = [(name, spec, conversion) for _, name, spec, conversion in Formatter().parse(value)
                      if name is not None]
        except ValueError as err:
            raise ValueError(f"placeholder is not a valid format ({err})") from None
        if not fields or any(f != ("label", "", None) for f in fields):
            raise ValueError("placeholder may hold only {label} (at least once) and literal text")
        return value
