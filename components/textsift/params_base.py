"""The base of every params model (kept apart so mechanism configs can import it freely)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable, and unknown keys are rejected (a typo is an error, never a silent default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
