"""Frontier: Pareto flags and the utility drop, on hand-made tables."""

from __future__ import annotations

import pandas as pd

from textsift.evaluation.frontier import frontier_rows, frontier_table, pareto_flags


def test_pareto_flags_on_a_hand_made_table() -> None:
    # (drop, leak): b dominates c; d ties a on drop but leaks less; e equals b exactly.
    drop = [0.00, 0.05, 0.06, 0.00, 0.05, 0.30]
    leak = [1.00, 0.20, 0.25, 0.90, 0.20, 0.00]
    assert pareto_flags(drop, leak) == [False, True, False, True, True, True]


def test_utility_drop_is_measured_from_the_original() -> None:
    rows = pd.DataFrame({"setting": ["original", "ds"], "mechanism": ["none", "datasifter"],
                         "utility": [0.90, 0.80], "leak_rate": [1.0, 0.1]})
    table = frontier_table(rows)
    assert table.set_index("setting")["utility_drop"].round(6).to_dict() == {"original": 0.0, "ds": 0.1}


def test_the_re_identification_attack_is_a_frontier_column_with_its_interval() -> None:
    utility = pd.DataFrame({"setting": ["original", "redact"], "classifier": ["c", "c"],
                            "test_on": ["original", "original"], "accuracy": [0.9, 0.8]})
    privacy = {"original": {"privacy.trir.rate": 1.0, "privacy.trir.gain": 1.0},
               "redact": {"privacy.leak.rate": 0.0, "privacy.trir.rate": 0.05, "privacy.trir.gain": 0.02,
                          "privacy.trir.gain_ci_high": 0.09}}
    rows = frontier_rows(utility, privacy, {"redact": "redact"}, "c.original.accuracy").set_index("setting")
    assert rows.loc["original", ["trir_rate", "trir_gain"]].tolist() == [1.0, 1.0]  # the ceiling
    assert rows.loc["redact", ["trir_rate", "trir_gain", "trir_gain_ci_high"]].tolist() == [0.05, 0.02, 0.09]
    assert pd.isna(rows.loc["redact", "trir_rate_ci_high"])
