"""Config of a ``kind: redact`` privacy setting: de-identification of sensitive spans."""

from __future__ import annotations

from string import Formatter
from typing import Literal

from pydantic import Field, field_validator

from textsift.detection.params import EntityType, protected_labels_field
from textsift.params_base import Frozen


class RedactSetting(Frozen):
    """Replace every sensitive span (and every repeat of it in the document) by a stand-in.

    ``placeholder`` writes ``[PERSON]``-style tags; ``pseudonym`` writes a fake value of the same
    type (Faker, seeded by (seed, document id, original string)), the same one for every
    occurrence of a string in a document, so a text keeps who-did-what without whom.
    """

    kind: Literal["redact"]
    style: Literal["placeholder", "pseudonym"] = "pseudonym"
    spans: Literal["detected", "gold", "both"] = Field(
        "detected", description="what is sensitive: the detector's spans (train_detectors), gold spans, or both")
    labels: list[EntityType] | None = protected_labels_field()
    placeholder: str = Field("[{label}]", description="placeholder format; {label} = type, the only field allowed")

    def needs(self) -> tuple[tuple[str, str | None], ...]:
        """The catalog artifacts (name, key) this setting needs to privatize text (textsift.catalog)."""
        return (("corpus", None),) if self.spans == "gold" else (("corpus", None), ("detector", None))

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
