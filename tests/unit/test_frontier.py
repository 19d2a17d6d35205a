"""Frontier: Pareto flags and the ranking at a leak ceiling, on hand-made tables."""

from __future__ import annotations

import pandas as pd

from textsift.evaluation.frontier import frontier_table, pareto_flags, recommend


def test_pareto_flags_on_a_hand_made_table() -> None:
    # (drop, leak): b dominates c; d ties a on drop but leaks less; e equals b exactly.
    drop = [0.00, 0.05, 0.06, 0.00, 0.05, 0.30]
    leak = [1.00, 0.20, 0.25, 0.90, 0.20, 0.00]
    assert pareto_flags(drop, leak) == [False, True, False, True, True, True]


def test_table_ranks_by_utility_within_the_ceiling() -> None:
    rows = pd.DataFrame({
        "setting": ["original", "mdp_eps5", "mdp_eps50", "ds_default"],
        "mechanism": ["none", "metric_dp", "metric_dp", "datasifter"],
        "utility": [0.90, 0.60, 0.85, 0.80],
        "leak_rate": [1.00, 0.05, 0.60, 0.10],
    })
    table = frontier_table(rows, leak_ceiling=0.2)
    assert list(table["setting"]) == ["ds_default", "mdp_eps5", "mdp_eps50", "original"]
    assert table.set_index("setting").loc["ds_default", "utility_drop"] == 0.90 - 0.80
    assert recommend(table) == "ds_default"
    assert set(table[table["pareto"]]["setting"]) == {"original", "mdp_eps5", "mdp_eps50", "ds_default"}
    assert recommend(frontier_table(rows, leak_ceiling=0.01)) is None
