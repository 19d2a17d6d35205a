"""Config of a ``kind: metric_dp`` privacy setting (METHODS.md §2)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from textsift.detection.params import ProtectedLabels, protected_labels_field
from textsift.params_base import EPSILON_MAX, EPSILON_MIN, Frozen


class MetricDPSetting(Frozen):
    """One metric-DP word-replacement setting.

    Each token occurrence is replaced independently with ε-metric-DP in the projected
    embedding space (ε per token; a document of n tokens composes to nε). β and the index
    come from ``indexes.sources[index]``.
    """

    kind: Literal["metric_dp"]
    index: str = Field(..., description="name of an entry of indexes.sources")
    epsilon: float = Field(..., ge=EPSILON_MIN, le=EPSILON_MAX,
                           description=f"privacy parameter per token occurrence, in [{EPSILON_MIN:g}, {EPSILON_MAX:g}]")
    replace_detected: bool = Field(
        False, description="words of the detector's spans (train_detectors), at every occurrence, are never emitted "
                           "unchanged: a noisy draw that lands on the word itself gives the OOV placeholder")
    labels: ProtectedLabels = protected_labels_field()
    stand_ins: ProtectedLabels = Field(
        None, description="a hybrid: the detector's spans of these types (e.g. [direct]) get redaction's coherent "
                          "stand-ins (one per person in all its forms, dates moved by one offset) and every other word "
                          "metric-DP noise; the stand-ins spend no epsilon (they carry nothing of the original)")
    oov_policy: Literal["keep", "mask", "drop"] = "mask"
    oov_placeholder: str = "[OOV]"
    search: Literal["auto", "annoy", "exact"] = Field(
        "auto", description="auto: exact on CUDA and for small indexes on CPU (items x dims <= 1e6), else Annoy"
    )
    search_k: int = Field(-1, description="Annoy search_k (-1: n_trees * k, Annoy's default)")
    batch_size: int = Field(4096, ge=1, description="token occurrences per noise/query batch")
    max_epsilon_per_document: float | None = Field(
        None, gt=0, description="the most a document may spend (its perturbed words x epsilon); a corpus with a "
                                "document over it is rejected, naming the documents, before any noise is drawn")

    def needs(self) -> tuple[tuple[str, str | None], ...]:
        """The catalog artifacts (name, key) this setting needs to privatize text (textsift.catalog)."""
        needs = [("corpus", None), ("index", self.index)]
        return (*needs, ("detector", None)) if self.replace_detected or self.stand_ins else tuple(needs)
