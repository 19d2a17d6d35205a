"""The recommendation rule: every criterion on its upper bound, then the best utility lower bound."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from textsift.evaluation.frontier import frontier_table
from textsift.evaluation.params import RecommendParams
from textsift.evaluation.recommend import embedding_rule_text, judge_embeddings, privacy_risk, ranked, recommend

NAN = math.nan


def _rows(**changes: dict) -> pd.DataFrame:
    """original, a redaction that leaves interests, two metric-DP settings and a DataSifter one."""
    rows = {
        "original": dict(utility=0.80, utility_ci_low=0.76, leak_rate=1.0, leak_rate_ci_high=1.0,
                         attacker_recall=0.99, interest_leak=1.0, outsider_gain=NAN),
        "redact": dict(utility=0.81, utility_ci_low=0.77, leak_rate=0.001, leak_rate_ci_high=0.004,
                       attacker_recall=0.0, attacker_recall_ci_high=0.0, interest_leak=0.98,
                       interest_leak_ci_high=0.99, outsider_gain=0.011),
        "mdp_eps50": dict(epsilon_p50=1250.0, utility=0.74, utility_ci_low=0.70, leak_rate=0.0, leak_rate_ci_high=0.0,
                          attacker_recall=0.0, attacker_recall_ci_high=0.0, interest_leak=0.11,
                          interest_leak_ci_high=0.17, outsider_gain=0.003),
        # a higher point utility than mdp_eps50, a lower lower bound: the rule ranks by the lower bound
        "mdp_wide": dict(utility=0.75, utility_ci_low=0.66, leak_rate=0.0, leak_rate_ci_high=0.0,
                         attacker_recall=0.0, attacker_recall_ci_high=0.0, interest_leak=0.05,
                         interest_leak_ci_high=0.09, outsider_gain=0.0),
        # its point interest leak passes, its upper bound does not
        "ds": dict(utility=0.78, utility_ci_low=0.74, leak_rate=0.007, leak_rate_ci_high=0.014,
                   attacker_recall=0.005, attacker_recall_ci_high=0.01, interest_leak=0.15,
                   interest_leak_ci_high=0.24, outsider_gain=-0.006),
    }
    frame = pd.DataFrame([{"setting": k, "mechanism": "x", "leak_source": "gold spans", "accuracy_ci_low": NAN,
                           "majority_accuracy": 0.5, "cross_document": NAN if k == "original" else 0.01,
                           "cross_document_ci_high": NAN if k == "original" else 0.02,
                           "trir_gain": 1.0 if k == "original" else 0.0,
                           "trir_gain_ci_high": NAN if k == "original" else 0.04, **v, **changes.get(k, {})}
                          for k, v in rows.items()])
    return frontier_table(frame)


def test_the_best_lower_bound_among_settings_passing_every_criterion_is_proposed() -> None:
    proposal = recommend(_rows(), RecommendParams(), "tfidf_logreg.original.accuracy", 0.95)
    assert proposal.setting == "mdp_eps50"
    verdicts = proposal.verdicts.set_index("setting")["verdict"]
    assert verdicts["redact"].startswith("fails: interest_leak 0.990 > 0.2")
    assert verdicts["ds"] == "fails: interest_leak 0.240 > 0.2"  # its point value (0.15) would have passed
    assert "below 0.700 (mdp_eps50)" in verdicts["mdp_wide"]
    assert "original" not in set(proposal.verdicts["setting"])
    assert proposal.summary().startswith("Recommended setting: mdp_eps50 (utility lower bound 0.700")
    assert proposal.summary().endswith("; median epsilon per document 1,250).")  # its ledger, beside the proposal
    assert "interest attacker's leak rate <= 0.2" in proposal.rule and "95% bootstrap upper bound" in proposal.rule


def test_when_no_setting_passes_nothing_is_proposed_and_it_says_so() -> None:
    proposal = recommend(_rows(), RecommendParams(interest_leak=0.05), "u", 0.95)
    assert proposal.setting is None and not proposal.verdicts["passes"].any()
    assert proposal.summary() == "No setting passes every criterion: nothing is recommended."


def test_a_classifier_below_the_majority_class_fails() -> None:
    table = _rows(mdp_eps50={"accuracy_ci_low": 0.49, "majority_accuracy": 0.52})
    proposal = recommend(table, RecommendParams(), "u", 0.95)
    assert proposal.setting == "mdp_wide"
    assert "accuracy lower bound 0.490 not above the majority class 0.520" in (
        proposal.verdicts.set_index("setting").loc["mdp_eps50", "verdict"])
    assert recommend(table, RecommendParams(beats_majority=False), "u", 0.95).setting == "mdp_eps50"


def test_unmeasured_criteria_are_skipped_and_named() -> None:
    unmeasured = {"interest_leak": NAN, "interest_leak_ci_high": NAN, "leak_source": "unchanged-token share"}
    table = _rows(mdp_eps50=unmeasured)
    verdict = recommend(table, RecommendParams(), "u", 0.95).verdicts.set_index("setting").loc["mdp_eps50", "verdict"]
    assert verdict.endswith("(not measured: leak_rate, interest_leak)")


def test_privacy_risk_is_the_worst_bound_and_ranking_puts_passing_settings_first() -> None:
    table = _rows()
    assert privacy_risk(table.set_index("setting").loc["ds"]) == pytest.approx(0.24)
    out = ranked(table, recommend(table, RecommendParams(), "u", 0.95))
    assert list(out["setting"]) == ["mdp_eps50", "mdp_wide", "ds", "redact", "original"]
    assert out.set_index("setting").loc["original", "privacy_risk"] == 1.0
    assert out["recommended"].sum() == 1 and bool(out.set_index("setting").loc["mdp_eps50", "recommended"])


def test_unmeasured_utility_or_privacy_never_passes_and_row_order_does_not_matter() -> None:
    no_utility = {"utility": NAN, "utility_ci_low": NAN}
    nothing_measured = {"leak_source": "unchanged-token share", "attacker_recall": NAN, "attacker_recall_ci_high": NAN,
                        "interest_leak": NAN, "interest_leak_ci_high": NAN, "outsider_gain": NAN,
                        "cross_document": NAN, "cross_document_ci_high": NAN, "trir_gain": NAN,
                        "trir_gain_ci_high": NAN}
    table = _rows(mdp_eps50=no_utility, mdp_wide=nothing_measured)
    proposal = recommend(table, RecommendParams(), "u", 0.95)
    verdicts = proposal.verdicts.set_index("setting")["verdict"]
    assert proposal.setting is None
    assert "utility not measured" in verdicts["mdp_eps50"]
    assert "no privacy criterion could be measured" in verdicts["mdp_wide"]
    reversed_rows = frontier_table(table.iloc[::-1].drop(columns="utility_drop"))
    assert recommend(reversed_rows, RecommendParams(), "u", 0.95).setting is None
    unscored = _rows(ds=no_utility)  # ds risks more than mdp_eps50 and has no utility: dominated, not Pareto
    out = ranked(unscored, recommend(unscored, RecommendParams(), "u", 0.95)).set_index("setting")
    assert not out.loc["ds", "pareto"] and out.loc["mdp_wide", "pareto"]


def test_another_documents_name_in_the_output_fails_a_setting_and_sets_its_risk() -> None:
    """DataSifterText that leaks no span of its own but puts other people's surnames into 43% of documents: the
    span leak rate calls it safe, the cross-document criterion does not, and its privacy risk is that share."""
    table = _rows(mdp_eps50={"cross_document": 0.43, "cross_document_ci_high": 0.47})
    proposal = recommend(table, RecommendParams(), "u", 0.95)
    assert proposal.setting == "mdp_wide"
    assert proposal.verdicts.set_index("setting").loc["mdp_eps50", "verdict"] == "fails: cross_document 0.470 > 0.05"
    assert privacy_risk(table.set_index("setting").loc["mdp_eps50"]) == pytest.approx(0.47)  # its upper bound
    assert "another document's name part <= 0.05" in proposal.rule


def test_noisy_embeddings_are_judged_on_the_strongest_attack() -> None:
    """The clean-trained keyword attacker at chance is not the risk: the noise-aware one (gain 0.396) and two sets
    that solve for the clean embeddings (gain 1.0) are."""
    table = pd.DataFrame([
        {"setting": "original", "keyword_gain": 0.75, "cross_release_gain": NAN},
        {"setting": "filled", "keyword_gain": 0.63, "cross_release_gain": NAN},
        {"setting": "lrp_eps300", "keyword_gain": 0.396, "cross_release_gain": 1.0},
        {"setting": "lrp_eps100", "keyword_gain": 0.02, "cross_release_gain": 0.01},
        {"setting": "alone", "keyword_gain": 0.05, "cross_release_gain": NAN},  # a single set: no pair
    ])
    judged = judge_embeddings(table, RecommendParams()).set_index("setting")
    assert judged.loc["lrp_eps300", "privacy_risk"] == 1.0
    assert judged.loc["lrp_eps300", "verdict"] == "fails: keyword_gain 0.396 > 0.1; cross_release_gain 1.000 > 0.05"
    assert bool(judged.loc["lrp_eps100", "passes"]) and judged.loc["lrp_eps100", "privacy_risk"] == 0.02
    assert judged.loc["alone", "verdict"] == "passes every criterion (not measured: cross_release_gain)"
    assert not judged.loc[["original", "filled"], "passes"].any()
    assert judged.loc["filled", "privacy_risk"] == 0.63
    assert "keyword attacker's gain over chance" in embedding_rule_text(RecommendParams())


def test_documents_linked_to_their_person_fail_a_setting_on_the_upper_bound_of_the_gain() -> None:
    """A setting whose re-identification attacker names the person of 8% of its documents beyond chance: the point
    value is under the 0.1 ceiling, the upper bound (0.19: a few dozen documents) is not, and it is the risk."""
    table = _rows(mdp_eps50={"trir_gain": 0.08, "trir_gain_ci_high": 0.19})
    proposal = recommend(table, RecommendParams(), "u", 0.95)
    assert proposal.setting == "mdp_wide"
    assert proposal.verdicts.set_index("setting").loc["mdp_eps50", "verdict"] == "fails: trir_gain 0.190 > 0.1"
    assert privacy_risk(table.set_index("setting").loc["mdp_eps50"]) == pytest.approx(0.19)
    assert "re-identification attacker's gain over chance <= 0.1" in proposal.rule
    assert recommend(table, RecommendParams(trir_gain=0.2), "u", 0.95).setting == "mdp_eps50"


def test_a_setting_is_judged_as_served_too_and_its_served_form_fails_above_the_leak_ceiling() -> None:
    """A passing setting whose service leaks more (detected spans only: a request has no gold spans) still passes
    as a corpus release, but not as served; one without a served form (NaN) keeps its verdict."""
    ceiling = RecommendParams().leak_rate
    table = _rows(mdp_eps50={"served_leak": ceiling + 0.1}, mdp_wide={"served_leak": ceiling / 2})
    verdicts = recommend(table, RecommendParams(), "u", 0.95).verdicts.set_index("setting")
    assert verdicts.loc["mdp_eps50", "passes"] and not verdicts.loc["mdp_eps50", "served_passes"]
    assert "not shippable as served" in verdicts.loc["mdp_eps50", "verdict"]
    assert verdicts.loc["mdp_wide", "served_passes"] and "not shippable" not in verdicts.loc["mdp_wide", "verdict"]
    assert not verdicts.loc["ds", "served_passes"]  # fails the rule: served or not
    out = ranked(table, recommend(table, RecommendParams(), "u", 0.95)).set_index("setting")
    assert not out.loc["original", "served_passes"] and out["served_passes"].dtype == bool


def test_a_proposal_without_a_served_form_names_why_and_the_best_setting_that_ships() -> None:
    """Metric-DP passes but has no served form (its index is learnt from the corpus): the verdict says so, and the
    proposal names the best passing setting that does ship, or that none does."""
    reason = "its index (w2v) holds words and vectors learnt from the corpus: a served model would publish them"
    proposal = recommend(_rows(mdp_eps50={"not_served": reason}), RecommendParams(), "u", 0.95)
    verdicts = proposal.verdicts.set_index("setting")
    assert proposal.setting == "mdp_eps50" and proposal.served_setting == "mdp_wide"
    assert not verdicts.loc["mdp_eps50", "served_passes"] and f"not served: {reason}" in verdicts.loc[
        "mdp_eps50", "verdict"]
    assert proposal.summary().endswith("It does not ship as a served model; the best setting that does: mdp_wide.")
    nothing = recommend(_rows(mdp_eps50={"not_served": reason}, mdp_wide={"not_served": reason}), RecommendParams(),
                        "u", 0.95)
    assert nothing.setting == "mdp_eps50" and nothing.served_setting is None
    assert nothing.summary().endswith("No setting that passes ships as a served model (the verdicts say why).")
    served = recommend(_rows(), RecommendParams(), "u", 0.95)
    assert served.served_setting == served.setting and "served model" not in served.summary()


def test_the_decision_is_a_small_dvc_metric_with_the_proposal_and_each_verdict() -> None:
    from textsift.evaluation.publishing import frontier_metrics

    table = _rows()
    proposal = recommend(table, RecommendParams(), "u", 0.95)
    decided = frontier_metrics(ranked(table, proposal), proposal)
    assert decided["proposed"] == "mdp_eps50" == decided["served"]
    assert set(decided["settings"]) == set(table["setting"]) - {"original"}
    assert decided["settings"]["mdp_eps50"] == {"utility_low": 0.7, "privacy_risk": pytest.approx(
        proposal.verdicts.set_index("setting").loc["mdp_eps50", "privacy_risk"]), "passes": True, "served_passes": True}
    assert decided["settings"]["ds"]["passes"] is False
    json.dumps(decided, allow_nan=False)  # plain JSON: no NaN
