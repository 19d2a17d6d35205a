"""The privacy-utility frontier (METHODS.md §5): which setting to ship, and what it costs.

Pure functions over one row per setting: a utility value (higher is better), its drop from
the reference row, and a leak rate (lower is better). A setting is Pareto-optimal when no
other setting leaks no more AND loses no more utility, with one of the two strictly better.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

REFERENCE = "original"
LEAK_KEY = "privacy.leak.rate"
CHANGE_KEY = "privacy.token_change_fraction"
INTEREST_KEY = "privacy.interest.leak_rate"  # the IPI attacker's attribute leak (same name for every mechanism)
INTEREST_ACCURACY_KEY = "privacy.interest.accuracy"  # ... and its accuracy against the corpus's known interests
INTERVAL_COLUMNS = ("utility_ci_low", "utility_ci_high", "leak_rate_ci_low", "leak_rate_ci_high")
NAN_PAIR = (float("nan"), float("nan"))


def frontier_rows(
    utility: pd.DataFrame, privacy: Mapping[str, Mapping[str, float]], mechanisms: Mapping[str, str],
    utility_key: str, leak_intervals: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """One row per setting: ``setting, mechanism, utility, leak_rate, leak_source, token_change, attacker_recall,
    interest_leak`` (the interest attacker's attribute leak; 1 for the reference, NaN without an interest model),
    ``interest_accuracy`` (its accuracy on the documents whose true interest the corpus knows, the reference
    row's on the original text; NaN without known interests) and the bootstrap intervals ``utility_ci_low/high``
    (from the utility table's ``<metric>_ci_*`` columns) and ``leak_rate_ci_low/high`` (from
    ``leak_intervals``, gold-span leak rates only); NaN where absent.

    Args:
        utility: rows ``setting, classifier, test_on, <metric>...`` (the evaluate table).
        privacy: per privatized setting, its privatize metrics (``privacy.*`` keys).
        mechanisms: setting -> mechanism kind.
        utility_key: ``<classifier>.<test_on>.<metric>``; the reference row is always scored on
            the original test split.

    The leak rate is the gold-span leak rate when the corpus has spans; otherwise the share of
    unchanged tokens stands in for it (``leak_source`` says which). The reference row leaks
    everything it has (rate 1) and changes nothing.
    """
    classifier, test_on, metric = utility_key.split(".")
    out = []
    for setting in utility["setting"].drop_duplicates():
        wanted = "original" if setting == REFERENCE else test_on
        match = utility[(utility["setting"] == setting) & (utility["classifier"] == classifier)
                        & (utility["test_on"] == wanted)]
        metrics = privacy.get(setting, {})
        change = 0.0 if setting == REFERENCE else float(metrics.get(CHANGE_KEY, float("nan")))
        has_spans = setting == REFERENCE or LEAK_KEY in metrics
        leak = (1.0 if setting == REFERENCE else float(metrics[LEAK_KEY])) if has_spans else 1.0 - change
        utility_ci = tuple(float(match[f"{metric}_ci_{side}"].iloc[0])
                           if len(match) and f"{metric}_ci_{side}" in match else float("nan")
                           for side in ("low", "high"))
        leak_ci = (leak_intervals or {}).get(setting, NAN_PAIR) if has_spans else NAN_PAIR
        out.append({
            "setting": setting, "mechanism": mechanisms.get(setting, "none"),
            "utility": float(match[metric].iloc[0]) if len(match) else float("nan"),
            "leak_rate": leak, "leak_source": "gold spans" if has_spans else "unchanged-token share",
            "token_change": change, "attacker_recall": float(metrics.get("privacy.attacker.recall", float("nan"))),
            "interest_leak": 1.0 if setting == REFERENCE else float(metrics.get(INTEREST_KEY, float("nan"))),
            "interest_accuracy": float(metrics.get(INTEREST_ACCURACY_KEY, float("nan"))),
            **dict(zip(INTERVAL_COLUMNS, (*utility_ci, *leak_ci), strict=True)),
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


def frontier_table(rows: pd.DataFrame, leak_ceiling: float) -> pd.DataFrame:
    """Add ``utility_drop``, ``pareto`` and ``within_ceiling``; sort for a reader.

    Args:
        rows: columns ``setting, mechanism, utility, leak_rate`` (+ any others, kept); the
            reference row has ``setting == "original"``.
        leak_ceiling: the highest acceptable leak rate.

    Returns:
        Settings within the ceiling first, by utility (best first); then the rest by leak.
    """
    reference = rows.loc[rows["setting"] == REFERENCE, "utility"]
    ref_value = float(reference.iloc[0]) if len(reference) else float("nan")
    table = rows.copy()
    table["utility_drop"] = ref_value - table["utility"]
    table["pareto"] = pareto_flags(table["utility_drop"].tolist(), table["leak_rate"].tolist())
    table["within_ceiling"] = table["leak_rate"] <= leak_ceiling
    within = table[table["within_ceiling"]].sort_values(["utility", "leak_rate"], ascending=[False, True],
                                                        kind="stable")
    rest = table[~table["within_ceiling"]].sort_values(["leak_rate", "utility"], ascending=[True, False],
                                                       kind="stable")
    return pd.concat([within, rest]).reset_index(drop=True)


def recommend(table: pd.DataFrame) -> str | None:
    """The privatized setting with the best utility among those within the leak ceiling."""
    candidates = table[table["within_ceiling"] & (table["setting"] != REFERENCE)]
    return None if candidates.empty else str(candidates.iloc[0]["setting"])
