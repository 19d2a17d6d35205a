"""Which privacy setting to propose, by a rule a reader can check (METHODS.md §5).

A setting passes when every privacy criterion holds — each judged on its bootstrap upper bound (the worst
plausible value on this test split), or on its point value where there is no interval — and its classifier
beats the majority class. Among the settings that pass, the one with the highest utility lower bound is
proposed; when none passes, nothing is, and the verdicts say why. A criterion a run cannot measure (no gold
spans, no interest model, no outsider attack for the mechanism) is skipped for that setting, and said so.

``privacy_risk`` puts a setting's criteria on one 0-1 scale: the largest of their bounds (each is a share of
what an attacker recovers, or its gain over a no-information baseline), so the MLflow compare view can plot risk
against utility for every setting; the strongest attack decides. A privatized corpus is judged on ``CRITERIA``
(the span leak, the detector's recall, the interest leak, the outsider's gain, the cross-document name
disclosure: the share of published documents carrying another document's name part, and the re-identification
attacker's gain over chance: the share of published documents it links to their person beyond what a guess
does, :mod:`textsift.evaluation.reidentification`). A noisy-embedding setting
is judged on ``EMBEDDING_CRITERIA`` (:func:`judge_embeddings`): the keyword attacker's advantage (2 · balanced
accuracy − 1 of the stronger of the clean-trained and the noise-aware attacker) and the cross-release solver's
gain over what composing two releases allows (:mod:`textsift.evaluation.cross_release`).

What is promoted is what was judged: a served setting is also judged as it is served (``served_passes``): it
passes, and the leak of the service's answers (``served_leak``: a request carries no gold spans) is within the
leak ceiling. ``textsift promote`` refuses to ship a privatizer whose served form fails.

Pure: a frontier table in (:func:`textsift.evaluation.frontier.frontier_table`), verdicts out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from textsift.evaluation.frontier import REFERENCE, pareto_flags
from textsift.evaluation.params import RecommendParams


@dataclass(frozen=True)
class Criterion:
    """One privacy criterion: its params key (the ceiling), what it measures and the frontier columns it reads."""

    key: str
    label: str
    value: str
    upper: str | None


CRITERIA = (
    Criterion("leak_rate", "gold-span leak rate", "leak_rate", "leak_rate_ci_high"),
    Criterion("attacker_recall", "detector attacker's recall", "attacker_recall", "attacker_recall_ci_high"),
    Criterion("interest_leak", "interest attacker's leak rate", "interest_leak", "interest_leak_ci_high"),
    Criterion("outsider_gain", "outsider's gain over chance", "outsider_gain", None),
    Criterion("cross_document", "share of documents carrying another document's name part", "cross_document",
              "cross_document_ci_high"),
    Criterion("trir_gain", "re-identification attacker's gain over chance", "trir_gain", "trir_gain_ci_high"),
)
EMBEDDING_CRITERIA = (
    Criterion("keyword_gain", "keyword attacker's gain over chance (stronger of clean-trained and noise-aware)",
              "keyword_gain", None),
    Criterion("cross_release_gain", "cross-release solver's gain over composing two releases",
              "cross_release_gain", None),
)
EMBEDDING_REFERENCES = ("original", "filled")  # the unnoised embedding views: measured, never judged


@dataclass(frozen=True)
class Recommendation:
    """The proposed setting (None when no setting passes), the rule in words and one verdict per setting."""

    setting: str | None
    rule: str
    verdicts: pd.DataFrame  # setting, passes, served_passes, privacy_risk, utility_low, verdict
    epsilon: float = math.nan  # the proposed setting's median ε per document (NaN: not differentially private)
    served_setting: str | None = None  # the best passing setting that also ships as a served model

    def summary(self) -> str:
        """One line: what is proposed and why, with the ε its documents spend, or that nothing is; and, when the
        proposal does not ship as a served model, the best setting that does."""
        if self.setting is None:
            return "No setting passes every criterion: nothing is recommended."
        row = self.verdicts.set_index("setting").loc[self.setting]
        line = (f"Recommended setting: {self.setting} (utility lower bound {row['utility_low']:.3f}, "
                f"privacy risk {row['privacy_risk']:.3f}; {epsilon_text(self.epsilon)}).")
        if self.served_setting == self.setting:
            return line
        if self.served_setting is None:
            return line + " No setting that passes ships as a served model (the verdicts say why)."
        return line + f" It does not ship as a served model; the best setting that does: {self.served_setting}."


def epsilon_text(epsilon: float) -> str:
    """A setting's median ε per document in words (the ledger's), or that it is not differentially private."""
    return f"median epsilon per document {epsilon:,.4g}" if math.isfinite(epsilon) else "not differentially private"


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(float(value))


def bound(row: pd.Series, criterion: Criterion) -> float:
    """The criterion's upper bound for a setting (its point value without an interval); NaN when not measured."""
    if criterion.key == "leak_rate" and not str(row.get("leak_source", "")).startswith("gold spans"):
        return math.nan  # without gold spans the frontier's "leak" is the unchanged-token share, not a leak
    upper = row.get(criterion.upper) if criterion.upper else None
    value = upper if _finite(upper) else row.get(criterion.value)
    return float(value) if _finite(value) else math.nan


def privacy_risk(row: pd.Series) -> float:
    """The largest bound of a setting over every criterion it has (text and embedding ones: a row holds only
    its own kind's columns), 0-1; NaN when no criterion was measured."""
    bounds = [b for b in (bound(row, c) for c in (*CRITERIA, *EMBEDDING_CRITERIA)) if math.isfinite(b)]
    return max(bounds) if bounds else math.nan


def utility_low(row: pd.Series) -> float:
    """The setting's utility lower bound (its point value without an interval; NaN when neither was measured)."""
    low, point = row.get("utility_ci_low"), row.get("utility")
    return float(low) if _finite(low) else float(point) if _finite(point) else math.nan


def _label(criterion: Criterion, params: RecommendParams) -> str:
    """The criterion in words; the leak rate says which identifiers it counts."""
    if criterion.key == "leak_rate" and params.leak_of != "all":
        return f"{criterion.label} of {params.leak_of} identifiers"
    return criterion.label


def rule_text(params: RecommendParams, utility_name: str, level: float) -> str:
    """The rule in one sentence, with its ceilings (the report, the MLflow parent run's description)."""
    ceilings = ", ".join(f"{_label(c, params)} <= {getattr(params, c.key):g}" for c in CRITERIA)
    majority = " and the classifier beats the majority class (accuracy lower bound above it)" if (
        params.beats_majority) else ""
    return (f"A setting passes when every privacy criterion holds on its {level:.0%} bootstrap upper bound "
            f"(a point value where there is no interval): {ceilings}{majority}. Among those that pass, the highest "
            f"lower bound of {utility_name} wins; when none passes, nothing is recommended.")


def _criteria_failures(row: pd.Series, params: RecommendParams, criteria: tuple[Criterion, ...]
                       ) -> tuple[list[str], list[str]]:
    failed, skipped = [], []
    for criterion in criteria:
        value, ceiling = bound(row, criterion), getattr(params, criterion.key)
        if not math.isfinite(value):
            skipped.append(criterion.key)
        elif value > ceiling:
            failed.append(f"{criterion.key} {value:.3f} > {ceiling:g}")
    if len(skipped) == len(criteria):
        failed.append("no privacy criterion could be measured")
    return failed, skipped


def _failures(row: pd.Series, params: RecommendParams) -> tuple[list[str], list[str]]:
    failed, skipped = _criteria_failures(row, params, CRITERIA)
    if not math.isfinite(utility_low(row)):
        failed.append("utility not measured")
    if params.beats_majority:
        low, majority = row.get("accuracy_ci_low"), row.get("majority_accuracy")
        if _finite(low) and _finite(majority) and float(low) <= float(majority):
            failed.append(f"accuracy lower bound {float(low):.3f} not above the majority class {float(majority):.3f}")
    return failed, skipped


def served_failure(row: pd.Series, params: RecommendParams) -> str | None:
    """Why a setting cannot ship as it was judged: it has no served form (``not_served``, the mechanism's reason), or
    its served form fails the rule it passes on its released corpus (its answers leak more than the ceiling: a
    request carries no gold spans); None when it ships."""
    reason = row.get("not_served")
    if isinstance(reason, str) and reason:
        return f"not served: {reason}"
    leak = row.get("served_leak")
    if _finite(leak) and float(leak) > params.leak_rate:
        return (f"served (a request carries no gold spans), its {_label(CRITERIA[0], params)} is {float(leak):.3f} "
                f"> {params.leak_rate:g}")
    return None


def recommend(table: pd.DataFrame, params: RecommendParams, utility_name: str, level: float) -> Recommendation:
    """Judge every privatized setting of the frontier table; propose the best that passes (or none)."""
    rows = []
    for _, row in table[table["setting"] != REFERENCE].iterrows():
        failed, skipped = _failures(row, params)
        rows.append({"setting": str(row["setting"]), "passes": not failed, "privacy_risk": privacy_risk(row),
                     "utility_low": utility_low(row), "failed": failed, "skipped": skipped,
                     "served_failure": served_failure(row, params)})
    passing = sorted((r for r in rows if r["passes"]), key=lambda r: (-r["utility_low"], r["privacy_risk"],
                                                                       r["setting"]))
    chosen = passing[0] if passing else None
    for r in rows:
        note = f" (not measured: {', '.join(r['skipped'])})" if r["skipped"] else ""
        if r is chosen:
            r["verdict"] = f"recommended: passes every criterion, highest utility lower bound{note}"
        elif r["passes"]:
            assert chosen is not None
            lower = "is below" if r["utility_low"] < chosen["utility_low"] else "ties (lower privacy risk wins)"
            r["verdict"] = (f"passes, but its utility lower bound {r['utility_low']:.3f} {lower} "
                            f"{chosen['utility_low']:.3f} ({chosen['setting']}){note}")
        else:
            r["verdict"] = "fails: " + "; ".join(r["failed"]) + note
        r["served_passes"] = r["passes"] and r["served_failure"] is None
        if r["passes"] and r["served_failure"]:
            r["verdict"] += f"; not shippable as served: {r['served_failure']}"
    verdicts = pd.DataFrame(rows, columns=["setting", "passes", "served_passes", "privacy_risk", "utility_low",
                                           "verdict"])
    epsilon = math.nan
    if chosen is not None and "epsilon_p50" in table:
        epsilon = float(table.loc[table["setting"] == chosen["setting"], "epsilon_p50"].iloc[0])
    served = next((r["setting"] for r in passing if r["served_failure"] is None), None)
    return Recommendation(chosen["setting"] if chosen else None, rule_text(params, utility_name, level), verdicts,
                          epsilon, served)


def ranked(table: pd.DataFrame, recommendation: Recommendation) -> pd.DataFrame:
    """The frontier table with each setting's ``passes``, ``recommended``, ``privacy_risk``, ``pareto`` (on utility
    drop and privacy risk) and ``verdict``, in reading order: the settings that pass by utility lower bound (the
    recommended first), then the rest by privacy risk."""
    merged = table.merge(recommendation.verdicts, on="setting", how="left")
    reference = merged["setting"] == REFERENCE
    merged.loc[reference, "privacy_risk"] = 1.0  # the original text: everything an attacker wants
    merged.loc[reference, ["passes", "served_passes"]] = False
    merged.loc[reference, "verdict"] = "the original text (reference)"
    merged[["passes", "served_passes"]] = merged[["passes", "served_passes"]].astype(bool)
    merged["recommended"] = merged["setting"] == recommendation.setting
    # an unmeasured value is the worst, never a Pareto advantage (NaN compares False with everything)
    merged["pareto"] = pareto_flags(merged["utility_drop"].fillna(math.inf).tolist(),
                                    merged["privacy_risk"].fillna(1.0).tolist())
    good = merged[merged["passes"]].sort_values(["utility_low", "privacy_risk", "setting"],
                                                ascending=[False, True, True], kind="stable")  # recommend()'s order
    rest = merged[~merged["passes"]].sort_values(["privacy_risk", "utility"], ascending=[True, False], kind="stable")
    return pd.concat([good, rest]).reset_index(drop=True)


def embedding_rule_text(params: RecommendParams) -> str:
    """The ceilings a noisy-embedding setting is judged on, in one sentence (the report)."""
    ceilings = ", ".join(f"{c.label} <= {getattr(params, c.key):g}" for c in EMBEDDING_CRITERIA)
    return (f"A noisy-embedding setting passes when {ceilings}; its privacy risk is the largest of the two (the "
            "keyword attacker's gain is 2 x balanced accuracy - 1).")


def judge_embeddings(table: pd.DataFrame, params: RecommendParams) -> pd.DataFrame:
    """Per row of the embedding table (``setting`` and the ``EMBEDDING_CRITERIA`` columns): ``privacy_risk``,
    ``passes`` and ``verdict``. The unnoised references get their risk measured but never pass. Nothing is
    proposed among embedding settings: a data team picks one by its ε_max and these verdicts."""
    rows = []
    for _, row in table.iterrows():
        setting = str(row["setting"])
        failed, skipped = _criteria_failures(row, params, EMBEDDING_CRITERIA)
        note = f" (not measured: {', '.join(skipped)})" if skipped and len(skipped) < len(EMBEDDING_CRITERIA) else ""
        if setting in EMBEDDING_REFERENCES:
            passes, verdict = False, "unnoised embeddings (reference)"
        else:
            passes = not failed
            verdict = ("passes every criterion" if passes else "fails: " + "; ".join(failed)) + note
        rows.append({"setting": setting, "privacy_risk": privacy_risk(row), "passes": passes, "verdict": verdict})
    return pd.DataFrame(rows, columns=["setting", "privacy_risk", "passes", "verdict"])
