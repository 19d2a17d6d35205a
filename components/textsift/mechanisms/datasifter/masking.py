"""DataSifterText masking, Algorithm 1 lines 3-23 (METHODS.md §1.2).

Per document, sweeps over the unmasked tokens mask each with probability ``1 - pw*coef``
(whitelisted), ``0`` (blacklisted, protected) or ``1 - pn*coef`` (other words); a mask resets
``coef`` to ``coef_start``, a kept token lowers it by ``coef_step`` while it is above
``coef_floor``. Sweeps repeat while at most ``target_fraction`` of the tokens are masked.
Choices of §1.2: a masked token is not re-drawn (it uses no draw and does not move ``coef``);
when no unmasked, non-blacklisted token is left, when none can ever be masked any more (every
probability is 0 and ``coef`` cannot fall), or after ``max_sweeps`` passes (probabilities so
small that the loop would practically never end), the loop ends and the document is reported
as below target. Matching is on normal forms (case-folded
unless ``case_sensitive``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.tokenize import normal_form

NORMAL, WHITE, BLACK = 0, 1, 2  # token classes


class UniformSource(Protocol):
    """What masking draws from: ``numpy.random.Generator.random`` (uniforms in [0, 1))."""

    def random(self, size: int) -> np.ndarray:
        """``size`` independent uniforms in [0, 1): one per unmasked token of a sweep."""
        ...


@dataclass(frozen=True)
class MaskingRule:
    """The probabilities and word lists of one DataSifterText setting (normal forms)."""

    pw: float
    pn: float
    target_fraction: float
    coef_start: float
    coef_step: float
    coef_floor: float
    max_sweeps: int
    whitelist: frozenset[str]
    blacklist: frozenset[str]
    case_sensitive: bool = False

    @classmethod
    def from_setting(
        cls, setting: DataSifterSetting, whitelist: Iterable[str], blacklist: Iterable[str]
    ) -> MaskingRule:
        """The rule of ``setting`` with its resolved word lists (files already read)."""
        cs = setting.case_sensitive
        return cls(
            setting.pw, setting.pn, setting.target_fraction, setting.coef_start, setting.coef_step,
            setting.coef_floor, setting.max_sweeps, frozenset(normal_form(w, cs) for w in whitelist),
            frozenset(normal_form(w, cs) for w in blacklist), cs,
        )

    def classes(self, words: Sequence[str], extra_whitelist: Iterable[str] = ()) -> np.ndarray:
        """``WHITE``/``BLACK``/``NORMAL`` per word; the whitelist wins, as in Algorithm 1."""
        white = self.whitelist | {normal_form(w, self.case_sensitive) for w in extra_whitelist}
        forms = [normal_form(w, self.case_sensitive) for w in words]
        return np.array([WHITE if f in white else BLACK if f in self.blacklist else NORMAL for f in forms],
                        dtype=np.int8)


@dataclass(frozen=True)
class MaskResult:
    """Which tokens are masked, and whether more than ``target_fraction`` of them are."""

    masked: np.ndarray
    reached_target: bool

    @property
    def fraction(self) -> float:
        """The share of the document's tokens that are masked (0 for a document without tokens)."""
        return float(self.masked.mean()) if len(self.masked) else 0.0


def _sweep(open_idx: np.ndarray, keep: np.ndarray, black: np.ndarray, draws: np.ndarray,
           masked: np.ndarray, coef: float, rule: MaskingRule) -> tuple[int, float]:
    """One pass of Algorithm 1's inner loop over the unmasked tokens; returns (new masks, coef)."""
    added = 0
    for t, u in zip(open_idx.tolist(), draws.tolist(), strict=True):
        p = 0.0 if black[t] else min(max(1.0 - keep[t] * coef, 0.0), 1.0)
        if u < p:
            masked[t] = True
            added += 1
            coef = rule.coef_start
        elif coef > rule.coef_floor:
            coef -= rule.coef_step
    return added, coef


def mask_document(classes: np.ndarray, rule: MaskingRule, rng: UniformSource,
                  forced: np.ndarray | None = None) -> MaskResult:
    """Algorithm 1's masking loop for one document.

    Args:
        classes: ``WHITE``/``BLACK``/``NORMAL`` per word token (``MaskingRule.classes``).
        rule: probabilities, schedule of ``coef`` and target.
        rng: the document's own generator; one uniform per unmasked token and sweep.
        forced: tokens masked before the loop starts, whatever their class (detected sensitive
            spans, ``mask_detected``); they count toward the target.

    Returns:
        The mask; ``reached_target`` is False when the loop ended by the termination rule.
    """
    n = len(classes)
    masked = np.zeros(n, dtype=bool) if forced is None else forced.astype(bool).copy()
    black = classes == BLACK
    keep = np.where(classes == WHITE, rule.pw, rule.pn)
    nmask, coef = int(masked.sum()), rule.coef_start
    for _ in range(rule.max_sweeps):
        if nmask > rule.target_fraction * n:
            return MaskResult(masked, True)
        open_idx = np.flatnonzero(~masked)
        maskable = ~black[open_idx]
        if not maskable.any():
            return MaskResult(masked, False)
        added, coef = _sweep(open_idx, keep, black, rng.random(len(open_idx)), masked, coef, rule)
        nmask += added
        stuck = coef <= rule.coef_floor and float(np.max(1.0 - keep[open_idx[maskable]] * coef)) <= 0.0
        if added == 0 and stuck:  # coef can no longer fall and no token has a chance: it would loop forever
            return MaskResult(masked, False)
    return MaskResult(masked, nmask > rule.target_fraction * n)
