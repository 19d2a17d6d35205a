"""evaluate_embeddings: utility and attacks of every published set of noisy sentence embeddings (METHODS.md §3).

Per ``embedding_dp`` setting and for the two unnoised references, the step-3 classifier's utility, the keyword
attackers and the cross-release solver (:mod:`~textsift.evaluation.embedding_sets`), judged by the embedding
criteria of ``evaluate.recommend``. Its own stage: the text settings' classifiers and attacks do not re-run when only
an embedding setting changes (evaluate, which reads its table, logs one ``frontier@<setting>`` MLflow run per set).

Outputs ``metrics/evaluate_embeddings.json`` and ``reports/evaluate/embedding_dp.{csv,png}``.
"""

from __future__ import annotations

from textsift.evaluation.embedding_sets import evaluate_embeddings, set_metrics
from textsift.stage_context import StageContext


def run(ctx: StageContext) -> None:
    """Evaluate every noisy-embedding set; write its table, plot and metrics."""
    table, flat, png = evaluate_embeddings(ctx)
    ctx.log_metrics(flat)
    ctx.save("embedding_table", table)
    ctx.save("embedding_plot", png)
    ctx.save("evaluate_embeddings_metrics", set_metrics(table))
