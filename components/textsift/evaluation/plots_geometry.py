"""Plots of the geometry and plausible-deniability experiments (METHODS.md §2), as PNG bytes.

No file I/O here: the build_indexes stage writes the bytes into the index folder and logs
them to MLflow. Every plot shows aggregates over the sampled items only (no words).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from textsift.evaluation.geometry import GeometryReport


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(plt: Any, fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def distance_vs_epsilon(report: GeometryReport, source: str) -> bytes:
    """Mean noise distance per ε (log-log), with the k-NN distances as horizontal references."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    eps = [d.epsilon for d in report.deniability]
    ax.plot(eps, [d.noise_distance for d in report.deniability], marker="o", label="mean ||μ − (μ+N)||")
    colours = plt.cm.viridis(np.linspace(0, 0.9, max(1, len(report.knn))))
    for colour, (k, dist) in zip(colours, report.knn.items(), strict=False):
        ax.axhline(dist, color=colour, linestyle=":", linewidth=1, label=f"mean distance to {k}-NN")
    ax.set(xscale="log", yscale="log", xlabel="ε (per token occurrence)",
           ylabel="Euclidean distance (projected space)", title=f"{source}: noise distance vs ε")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return _png(plt, fig)


def knn_vs_k(report: GeometryReport, source: str) -> bytes:
    """Mean distance from a word to its k nearest neighbours, per k."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ks = list(report.knn)
    ax.plot(ks, [report.knn[k] for k in ks], marker="o", label=f"{report.sample_size} sampled words")
    ax.set(xscale="log", xlabel="k (nearest neighbours)", ylabel="mean Euclidean distance (projected space)",
           title=f"{source}: distance to the k nearest neighbours")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return _png(plt, fig)


def deniability_plot(report: GeometryReport, source: str, statistic: str) -> bytes:
    """Histogram (left) and empirical CDF (right) of N_w or S_w over the sampled words, one line per ε."""
    plt = _pyplot()
    fig, (hist, cdf) = plt.subplots(1, 2, figsize=(11, 4.5))
    colours = plt.cm.plasma(np.linspace(0, 0.9, max(1, len(report.deniability))))
    label = "N_w (share of draws returning w)" if statistic == "N_w" else "S_w (distinct outputs in M draws)"
    series = [np.sort(d.n_w if statistic == "N_w" else d.s_w) for d in report.deniability]
    bins = np.histogram_bin_edges(np.concatenate(series), bins=20, range=(0, 1) if statistic == "N_w" else None)
    for colour, d, values in zip(colours, report.deniability, series, strict=True):
        hist.hist(values, bins=bins, histtype="step", color=colour, label=f"ε = {d.epsilon:g}")
        cdf.step(values, np.arange(1, len(values) + 1) / len(values), where="post", color=colour,
                 label=f"ε = {d.epsilon:g}")
    hist.set(xlabel=label, ylabel="words (count)", title=f"{source}: {statistic} histogram, M = {report.draws}")
    cdf.set(xlabel=label, ylabel="share of words ≤ x", title=f"{source}: {statistic} CDF")
    for ax in (hist, cdf):
        ax.grid(alpha=0.3)
    cdf.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return _png(plt, fig)


def geometry_plots(report: GeometryReport, source: str) -> dict[str, bytes]:
    """File name -> PNG bytes of every geometry plot of one index."""
    return {
        "distance_vs_epsilon.png": distance_vs_epsilon(report, source),
        "knn_distance_vs_k.png": knn_vs_k(report, source),
        "deniability_N_w.png": deniability_plot(report, source, "N_w"),
        "deniability_S_w.png": deniability_plot(report, source, "S_w"),
    }
