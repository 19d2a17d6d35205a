"""Config of a ``kind: datasifter`` privacy setting (METHODS.md §1). Every constant is a param."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from textsift.detection.params import ProtectedLabels, protected_labels_field
from textsift.params_base import Frozen


class DataSifterSetting(Frozen):
    """One DataSifterText setting: masking probabilities, fill-in and obfuscation choices.

    Masking probability of a token (§1.2): ``1 - pw*coef`` if whitelisted, ``1 - pn*coef``
    otherwise, ``0`` if blacklisted; smaller pw/pn mask more.
    """

    kind: Literal["datasifter"]
    pw: float = Field(0.5, ge=0, le=1, description="whitelist keep-parameter (smaller masks more)")
    pn: float = Field(0.75, ge=0, le=1, description="normal-token keep-parameter")
    whitelist: list[str] = Field(default_factory=list, description="sensitive words, masked more often")
    whitelist_file: str | None = Field(None, description="file with one sensitive word per line")
    whitelist_spans: bool = Field(False, description="add the corpus's privacy spans' words to the whitelist")
    mask_detected: bool = Field(
        False, description="the detector's spans (train_detectors), at every occurrence in a document, are always "
                           "masked and join its whitelist")
    labels: ProtectedLabels = protected_labels_field()
    blacklist: list[str] | None = Field(None, description="protected words; null = shipped stop words + letters")
    blacklist_file: str | None = None
    case_sensitive: bool = False
    target_fraction: float = Field(0.5, gt=0, lt=1, description="mask until more than this share is masked")
    coef_start: float = Field(1.2, gt=0, description="coef after every mask (reset value)")
    coef_step: float = Field(0.05, gt=0, description="coef decrease after a kept token")
    coef_floor: float = Field(0.05, ge=0, description="coef decreases only while above this")
    max_sweeps: int = Field(1000, ge=1, description="masking passes per document at most (then: below target)")
    fill_strategy: Literal["sample", "top1"] = "sample"
    temperature: float = Field(1.0, gt=0)
    top_k: int | None = Field(None, ge=1)
    fill_order: Literal["sequential", "parallel"] = Field(
        "parallel", description="parallel: every mask filled from one pass over the masked text (one "
        "forward pass, not one per mask); sequential: left to right, each fill conditioning the next (METHODS.md "
        "§1.3 as written)")
    fill_batch_size: int = Field(64, ge=1, description="windows per forward pass (speed only, never the output)")
    window_overlap: int = Field(32, ge=0, description="tokens shared by consecutive windows (parallel fill)")
    replacement: Literal["none", "rake_keyphrase", "rake_index", "textrank"] = "none"
    q: int = Field(1, ge=1, description="keyphrases/sentences swapped per document")
    k_clusters: int = Field(8, ge=1)
    partner_pool_frac: float = Field(0.10, gt=0, le=1)
    max_candidates: int = Field(1000, ge=1)

    @model_validator(mode="after")
    def _rake_index_swaps_one(self) -> DataSifterSetting:
        if self.replacement == "rake_index" and self.q != 1:
            raise ValueError("replacement 'rake_index' swaps from the top keyphrase on: q must be 1")
        return self

    def needs(self) -> tuple[tuple[str, str | None], ...]:
        """The catalog artifacts (name, key) this setting needs to privatize text (textsift.catalog)."""
        needs = [("corpus", None), ("fill_in", None)]
        return (*needs, ("detector", None)) if self.mask_detected else tuple(needs)
