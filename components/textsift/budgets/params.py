"""Params of noisy sentence embeddings with per-dimension LRP budgets (METHODS.md §3): ``embedding_dp``.

The fit (encoder, step-1 replacement, step-2 sensitivity, step-3 relevance) is shared by every setting
and runs once (stage ``lrp_budgets``); each entry of ``settings`` is one published embedding set
(stage ``embedding_dp@<name>``: allocation, noise, manifest).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from textsift.detection.params import EntityType
from textsift.detection.types import ENTITY_TYPES, unknown_detected_types
from textsift.params_base import EPSILON_MAX, EPSILON_MIN, Frozen, Name


class EmbeddingDPSetting(Frozen):
    """One published set of noisy sentence embeddings (METHODS.md §3 steps 4-6).

    ``allocation: lrp`` spreads ``epsilon_max`` over the dimensions by relevance (w_c,d = Δf_d (a / r̂_d^γ + b));
    ``uniform`` gives every dimension ε_max / dim, the baseline at the same total budget. a, b and γ left
    null are chosen by validation AUC over ``embedding_dp.grid``.
    """

    allocation: Literal["lrp", "uniform"] = "lrp"
    epsilon_max: float = Field(..., ge=EPSILON_MIN, le=EPSILON_MAX,
                               description="total budget of one document embedding (sum over dimensions), in "
                                           f"[{EPSILON_MIN:g}, {EPSILON_MAX:g}]")
    p: float = Field(0.5, gt=0, lt=1, description="probability that the noise stays within ±w_c,d (before rescaling)")
    a: float | None = Field(None, ge=0, description="weight of the relevance term of w_c,d; null: grid search")
    b: float | None = Field(None, ge=0, description="relevance-independent term of w_c,d; null: grid search")
    gamma: float | None = Field(None, ge=0, description="exponent of normalized relevance; null: grid search")

    @model_validator(mode="after")
    def _shape_all_or_none(self) -> EmbeddingDPSetting:
        given = [v is not None for v in (self.a, self.b, self.gamma)]
        if any(given) and not all(given):
            raise ValueError("give all of a, b, gamma (fixed allocation) or none of them (grid search)")
        if self.allocation == "uniform" and any(given):
            raise ValueError("allocation 'uniform' takes no a, b, gamma")
        if all(given) and (self.a or 0) + (self.b or 0) <= 0:
            raise ValueError("a + b must be > 0: the noise half-width would be 0")
        return self


class SensitivityParams(Frozen):
    """Step 2: masked-LM candidates of sensitive words, k-medoids, per-dimension spread Δf_d."""

    top_k: int = Field(8, ge=2, description="fill-in candidates per sensitive word (the set S_p)")
    n_clusters: int = Field(2, ge=1, description="k-medoids clusters per word's candidates")
    agg: Literal["max", "mean", "p95"] = Field("max", description="sensitivity_agg over words (max: conservative)")
    max_words: int = Field(300, ge=1, description="sensitive words sampled from the training split (seeded)")
    min_words: int = Field(20, ge=1, description="fewer task-relevant sensitive words: random training words top up")
    min_sensitivity: float = Field(1e-6, gt=0, description="floor of Δf_d")


class RelevanceParams(Frozen):
    """Step 3: the MLP on clean embeddings, LRP-ε relevance and the relevance regressor."""

    hidden: list[int] = Field([128], description="hidden layer widths of the MLP")
    epochs: int = Field(100, ge=1)
    learning_rate: float = Field(0.001, gt=0)
    batch_size: int | None = Field(None, ge=1, description="null: full batch")
    lrp_epsilon: float = Field(1e-6, gt=0, description="stabilizer of the LRP ε-rule")
    regressor_alpha: float = Field(1.0, ge=0, description="Ridge penalty of the relevance regressor")


class GridParams(Frozen):
    """Candidate a, b, γ of w_c,d; the pair with the best validation AUC wins (logged to MLflow)."""

    a: list[float] = Field([0.5, 1.0, 2.0], min_length=1)
    b: list[float] = Field([0.0, 0.5], min_length=1)
    gamma: list[float] = Field([0.5, 1.0, 2.0], min_length=1)

    @model_validator(mode="after")
    def _non_negative(self) -> GridParams:
        for name in ("a", "b", "gamma"):
            if any(v < 0 for v in getattr(self, name)):
                raise ValueError(f"grid.{name} values must be >= 0")
        if max(self.a) + max(self.b) <= 0:
            raise ValueError("the grid needs some a + b > 0")
        return self


class AttackerParams(Frozen):
    """The keyword-inference attacker: classifiers on clean embeddings, tested on published ones."""

    min_positives: int = Field(20, ge=2, description="training documents a target (label or word) needs")
    max_words: int = Field(10, ge=0, description="most frequent sensitive words attacked one by one")


class EmbeddingDPParams(Frozen):
    """Noisy sentence embeddings with per-dimension LRP budgets (stages lrp_budgets, embedding_dp@<name>)."""

    encoder: str = Field("minilm", description="minilm (packaged all-MiniLM-L6-v2) | fill_in | a local model folder")
    max_length: int = Field(128, ge=2, description="tokens per document embedding")
    batch_size: int = Field(64, ge=1)
    spans: Literal["detected", "gold", "both"] = Field("detected", description="where sensitive words come from")
    replace_labels: list[EntityType] = Field(
        ["PERSON", "EMAIL", "PHONE"],
        description="step 1: labels that do not matter for the task, replaced by the filler before embedding")
    filler: str = Field("something", min_length=1, description="the neutral filler of step 1")
    sensitivity: SensitivityParams = SensitivityParams()
    relevance: RelevanceParams = RelevanceParams()
    grid: GridParams = GridParams()
    attacker: AttackerParams = AttackerParams()
    settings: dict[Name, EmbeddingDPSetting] = Field(
        default_factory=dict, description="name -> setting; one DVC stage instance, Prefect task and MLflow run each")

    @model_validator(mode="after")
    def _replace_labels_are_detected_types(self) -> EmbeddingDPParams:
        unknown = unknown_detected_types(self.replace_labels) if self.spans == "detected" else []
        if unknown:  # gold spans may carry a corpus's own labels; detected ones are only these
            raise ValueError(f"replace_labels: {', '.join(unknown)} is never detected "
                             f"(known: {', '.join(ENTITY_TYPES)})")
        return self
