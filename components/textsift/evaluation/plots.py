"""Plots of the evaluation, returned as PNG bytes (no file I/O here)."""

from __future__ import annotations

import io

import pandas as pd

MECHANISM_COLOURS = {"none": "#444444", "datasifter": "#1f77b4", "metric_dp": "#d62728", "embedding_dp": "#2ca02c"}


def _png(fig) -> bytes:  # noqa: ANN001 - a matplotlib Figure
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    return buffer.getvalue()


def frontier_png(table: pd.DataFrame, utility_name: str, leak_ceiling: float) -> bytes:
    """Utility drop vs leak rate, one labelled point per setting, mechanisms by colour.

    Pareto-optimal settings are joined by a line; the leak ceiling is a dashed vertical line.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for mechanism, group in table.groupby("mechanism", sort=True):
        ax.scatter(group["leak_rate"], group["utility_drop"], s=50, label=mechanism,
                   color=MECHANISM_COLOURS.get(str(mechanism), "#9467bd"), edgecolor="black", linewidth=0.5)
    for _, row in table.iterrows():
        ax.annotate(str(row["setting"]), (row["leak_rate"], row["utility_drop"]), textcoords="offset points",
                    xytext=(5, 4), fontsize=8)
    pareto = table[table["pareto"]].sort_values("leak_rate")
    ax.plot(pareto["leak_rate"], pareto["utility_drop"], color="grey", linewidth=1, zorder=0, label="Pareto front")
    ax.axvline(leak_ceiling, color="grey", linestyle="--", linewidth=1, label=f"leak ceiling {leak_ceiling:g}")
    ax.set_xlabel("leak rate (share of test-split privacy spans surviving)")
    ax.set_ylabel(f"utility drop ({utility_name}, vs original)")
    ax.set_title("Privacy-utility frontier (lower-left is better)")
    ax.set_xlim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    data = _png(fig)
    plt.close(fig)
    return data
