"""The privacy-utility frontier (METHODS.md §5): what each setting costs and what it still leaks.

Pure functions over one row per setting: a utility value (higher is better), its drop from
the reference row, leak rates and attack results (lower is better). A setting is Pareto-optimal
when no other setting risks no more AND loses no more utility, with one of the two strictly better
(:func:`pareto_flags`, on the privacy risk of :mod:`textsift.evaluation.recommend`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

REFERENCE = "original"
LEAK_KEY = "privacy.leak.rate"
SERVED_LEAK_KEY = "served.leak.rate"  # the service's answers on the test documents (outsider stage)
EPSILON_KEY = "ledger.epsilon_p50"  # the median ε per document of the setting's ledger (privatize)
CHANGE_KEY = "privacy.token_change_fraction"
INTEREST_KEY = "privacy.interest.leak_rate"  # the IPI attacker's attribute leak (same name for every mechanism)
INTEREST_ACCURACY_KEY = "privacy.interest.accuracy"  # ... and its accuracy against the corpus's known interests
INTERVAL_COLUMNS = ("utility_ci_low", "utility_ci_high", "leak_rate_ci_low", "leak_rate_ci_high")
CROSS_DOCUMENT_KEY = "privacy.cross_document.rate"  # the attack stage's cross-document disclosure
TRIR_RATE_KEY = "privacy.trir.rate"  # the re-identification attacker: the share of documents it links ...
TRIR_GAIN_KEY = "privacy.trir.gain"  # ... and that share's gain over chance, the recommendation's criterion
ATTACK_INTERVALS = {"attacker_recall": "privacy.attacker.recall", "interest_leak": "privacy.interest.leak_rate",
                    "cross_document": CROSS_DOCUMENT_KEY, "trir_rate": TRIR_RATE_KEY, "trir_gain": TRIR_GAIN_KEY}
OUTSIDER_GAINS = ("attack.replay.gain", "attack.dictionary.gain")  # the outsider stage's attacks
NAN_PAIR = (float("nan"), float("nan"))


def frontier_rows(
    utility: pd.DataFrame, privacy: Mapping[str, Mapping[str, float]], mechanisms: Mapping[str, str],
    utility_key: str, leak_intervals: Mapping[str, tuple[float, float]] | None = None, leak_of: str = "all",
) -> pd.DataFrame:
    """One row per setting: ``setting, mechanism, utility, leak_rate, leak_source, quasi_leak`` (the gold
    quasi-identifiers' leak rate, reported beside the rule's leak rate; NaN without such spans), ``token_change,
    attacker_recall,
    interest_leak`` (the interest attacker's attribute leak; 1 for the reference, NaN without an interest model),
    ``interest_accuracy`` (its accuracy on the documents whose true interest the corpus knows, the reference
    row's on the original text; NaN without known interests), ``outsider_gain`` (the largest gain of an outsider's
    attack over its baseline; NaN when the mechanism has none), ``cross_document`` (the share of published
    documents carrying another document's name part; NaN without gold person names and for the reference),
    ``trir_rate`` and ``trir_gain`` (the re-identification attacker's share of test documents linked to their
    person and its gain over chance; the reference row's on the original text, the ceiling; NaN when no test
    document is about a person of the train split), the bootstrap intervals ``utility_ci_low/high`` (from the
    utility table's ``<metric>_ci_*`` columns), ``leak_rate_ci_low/high`` (from ``leak_intervals``, gold-span leak
    rates only), ``attacker_recall_ci_*``, ``interest_leak_ci_*``, ``cross_document_ci_*``, ``trir_rate_ci_*`` and
    ``trir_gain_ci_*`` (from the attack stage), ``served_leak`` (the leak rate of what the service answers
    for the test documents, ``served.leak.rate``: NaN for a setting that is not served), ``epsilon_p50`` (the
    median ε a document spent, from the setting's ledger: NaN when it is not differentially private), and the
    classifier's
    ``accuracy_ci_low`` and ``majority_accuracy`` (the recommendation's majority check); NaN where absent.

    Args:
        utility: rows ``setting, classifier, test_on, <metric>...`` (the evaluate table).
        privacy: per privatized setting, its privatize metrics (``privacy.*`` keys).
        mechanisms: setting -> mechanism kind.
        utility_key: ``<classifier>.<test_on>.<metric>``; the reference row is always scored on
            the original test split.

    The leak rate and the attacker's recall count the spans of ``leak_of`` (``all``, or the ``direct``
    identifiers: ``privacy.leak.rate.direct``, ``privacy.attacker.recall.direct``; NaN when the corpus has none of
    them). The leak rate is the gold-span leak rate when the corpus has spans; otherwise the
    share of unchanged tokens stands in for it (``leak_source`` says which). ``leak_intervals`` must be over the
    same spans. The reference row leaks everything it has (rate 1) and changes nothing.
    """
    leak_key = LEAK_KEY if leak_of == "all" else f"{LEAK_KEY}.{leak_of}"
    served_key = SERVED_LEAK_KEY if leak_of == "all" else f"{SERVED_LEAK_KEY}.{leak_of}"
    recall_key = ATTACK_INTERVALS["attacker_recall"] + ("" if leak_of == "all" else f".{leak_of}")
    intervals = {**ATTACK_INTERVALS, "attacker_recall": recall_key}
    classifier, test_on, metric = utility_key.split(".")
    out = []
    for setting in utility["setting"].drop_duplicates():
        wanted = "original" if setting == REFERENCE else test_on
        match = utility[(utility["setting"] == setting) & (utility["classifier"] == classifier)
                        & (utility["test_on"] == wanted)]
        metrics = privacy.get(setting, {})
        change = 0.0 if setting == REFERENCE else float(metrics.get(CHANGE_KEY, float("nan")))
        has_spans = setting == REFERENCE or LEAK_KEY in metrics
        leak = ((1.0 if setting == REFERENCE else float(metrics.get(leak_key, float("nan")))) if has_spans
                else 1.0 - change)
        utility_ci = tuple(float(match[f"{metric}_ci_{side}"].iloc[0])
                           if len(match) and f"{metric}_ci_{side}" in match else float("nan")
                           for side in ("low", "high"))
        leak_ci = (leak_intervals or {}).get(setting, NAN_PAIR) if has_spans else NAN_PAIR
        gains = [float(metrics[k]) for k in OUTSIDER_GAINS if k in metrics]
        attack_ci = {f"{column}_ci_{side}": float(metrics.get(f"{key}_ci_{side}", float("nan")))
                     for column, key in intervals.items() for side in ("low", "high")}
        out.append({
            "setting": setting, "mechanism": mechanisms.get(setting, "none"),
            "utility": float(match[metric].iloc[0]) if len(match) else float("nan"),
            "leak_rate": leak,
            "leak_source": (f"gold spans ({leak_of})" if leak_of != "all" else "gold spans") if has_spans
            else "unchanged-token share",
            "quasi_leak": 1.0 if setting == REFERENCE else float(metrics.get(f"{LEAK_KEY}.quasi", float("nan"))),
            "served_leak": float(metrics.get(served_key, float("nan"))),
            "epsilon_p50": float(metrics.get(EPSILON_KEY, float("nan"))),
            "token_change": change, "attacker_recall": float(metrics.get(recall_key, float("nan"))),
            "interest_leak": 1.0 if setting == REFERENCE else float(metrics.get(INTEREST_KEY, float("nan"))),
            "interest_accuracy": float(metrics.get(INTEREST_ACCURACY_KEY, float("nan"))),
            "outsider_gain": max(gains) if gains else float("nan"),
            "cross_document": float(metrics.get(CROSS_DOCUMENT_KEY, float("nan"))),
            "trir_rate": float(metrics.get(TRIR_RATE_KEY, float("nan"))),
            "trir_gain": float(metrics.get(TRIR_GAIN_KEY, float("nan"))),
            **dict(zip(INTERVAL_COLUMNS, (*utility_ci, *leak_ci), strict=True)), **attack_ci,
            **{column: float(match[column].iloc[0]) if len(match) and column in match else float("nan")
               for column in ("accuracy_ci_low", "majority_accuracy")},
        })
    return pd.DataFrame(out)


def pareto_flags(drop: list[float], leak: list[float]) -> list[bool]:
    """True for rows no other row dominates (lower-or-equal on both, strictly lower on one)."""
    flags = []
    for i, (d_i, l_i) in enumerate(zip(drop, leak, strict=True)):
        dominated = any(
            d_j <= d_i and l_j <= l_i and (d_j < d_i or l_j < l_i)
            for j, (d_j, l_j) in enumerate(zip(drop, leak, strict=True)) if j != i
        )
        flags.append(not dominated)
    return flags


def frontier_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Add ``utility_drop``: the loss of utility from the reference row (``setting == "original"``).

    Which settings pass the privacy criteria, their privacy risk, the Pareto flags and the reading order come
    from the recommendation (:func:`textsift.evaluation.recommend.ranked`).
    """
    reference = rows.loc[rows["setting"] == REFERENCE, "utility"]
    ref_value = float(reference.iloc[0]) if len(reference) else float("nan")
    return rows.assign(utility_drop=ref_value - rows["utility"])
