"""Config of a ``kind: redact`` privacy setting: de-identification of sensitive spans."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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
    placeholder: str = Field("[{label}]", pattern=r"\{label\}", description="placeholder format; {label} = type")

    def needs(self) -> tuple[tuple[str, str | None], ...]:
        """The catalog artifacts (name, key) this setting needs to privatize text (textsift.catalog)."""
        return (("corpus", None),) if self.spans == "gold" else (("corpus", None), ("detector", None))
