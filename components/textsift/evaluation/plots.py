"""Plots of the evaluation, returned as PNG bytes (no file I/O here)."""

from __future__ import annotations

import io

import pandas as pd

MECHANISM_COLOURS = {"none": "#444444", "datasifter": "#1f77b4", "metric_dp": "#d62728", "embedding_dp": "#2ca02c"}


def _png(fig) -> bytes:  # noqa: ANN001 - a matplotlib Figure
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    return buffer.getvalue()


def frontier_png(table: pd.DataFrame, utility_name: str) -> bytes:
    """Utility drop vs privacy risk, one labelled point per setting, mechanisms by colour.

    Pareto-optimal settings are joined by a line; the recommended setting is ringed. The x axis is the privacy
    risk (the worst criterion's upper bound, :mod:`textsift.evaluation.recommend`), not the span leak rate alone:
    every private setting leaks almost no span, and they were drawn on top of each other at x ~ 0.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for mechanism, group in table.groupby("mechanism", sort=True):
        ax.scatter(group["privacy_risk"], group["utility_drop"], s=50, label=mechanism,
                   color=MECHANISM_COLOURS.get(str(mechanism), "#9467bd"), edgecolor="black", linewidth=0.5)
    for _, row in table.iterrows():
        ax.annotate(str(row["setting"]), (row["privacy_risk"], row["utility_drop"]), textcoords="offset points",
                    xytext=(5, 4), fontsize=8)
    pareto = table[table["pareto"]].sort_values("privacy_risk")
    ax.plot(pareto["privacy_risk"], pareto["utility_drop"], color="grey", linewidth=1, zorder=0, label="Pareto front")
    chosen = table[table["recommended"]]
    ax.scatter(chosen["privacy_risk"], chosen["utility_drop"], s=220, facecolors="none", edgecolors="black",
               linewidth=1.5, label="recommended")
    ax.set_xlabel("privacy risk (worst attack criterion, upper bound)")
    ax.set_ylabel(f"utility drop ({utility_name}, vs original)")
    ax.set_title("Privacy-utility frontier (lower-left is better)")
    ax.set_xlim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    data = _png(fig)
    plt.close(fig)
    return data


def embedding_dp_png(table: pd.DataFrame, references: pd.DataFrame, utility_name: str) -> bytes:
    """Noisy embeddings vs ε_max: downstream utility (left) and keyword-attack success (right), per allocation.

    ``table`` has one row per setting (``allocation, epsilon_max, utility, attack_success``); ``references``
    one row per unnoised view (``setting, utility, attack_success``), drawn as horizontal lines.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, column, label in ((axes[0], "utility", utility_name), (axes[1], "attack_success",
                                                                     "keyword attack balanced accuracy")):
        points = table[table[column].notna() & (table["epsilon_max"] > 0)]
        for allocation, group in points.groupby("allocation", sort=True):
            group = group.sort_values("epsilon_max")
            ax.plot(group["epsilon_max"], group[column], marker="o", label=f"{allocation} allocation")
        for (_, ref), style in zip(references[references[column].notna()].iterrows(), (":", "--", "-."),
                                   strict=False):
            ax.axhline(ref[column], color="grey", linestyle=style, linewidth=1, label=f"{ref['setting']} (no noise)")
        if points.empty:  # e.g. no attack target had enough training documents: say so, draw no axis scale
            ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        else:
            ax.set_xscale("log")
        ax.set_xlabel("epsilon_max per document embedding")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].axhline(0.5, color="black", linewidth=0.5)
    axes[0].legend(fontsize=8, loc="best")
    axes[0].set_title("Utility (higher is better)")
    axes[1].set_title("Keyword inference (0.5 = chance)")
    data = _png(fig)
    plt.close(fig)
    return data
