"""The base of every params model (kept apart so mechanism configs can import it freely)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

# A setting or source name: it becomes a DVC stage key, an MLflow run name and a file name.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]


# The range in which an epsilon is a privacy parameter: below it the noise overflows to infinity (1e-320 turned
# every word into one output word), above it the noise vanishes (1e308 is no privacy at all).
EPSILON_MIN, EPSILON_MAX = 1e-3, 1e5


class Frozen(BaseModel):
    """Immutable and strict: unknown keys, coerced types and non-finite numbers are errors.

    A typo is never a silent default; ``epsilon: "7"`` or ``epsilon: true`` is not a number and
    ``epsilon: .inf`` (no privacy at all) is not a privacy parameter. YAML integers are still
    accepted where a float is expected.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)

Probability = float  # documented alias; range is enforced with Field(ge=0, le=1)
