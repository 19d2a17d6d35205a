"""evaluate_embeddings: utility and attacks of every published set of noisy sentence embeddings (METHODS.md §3).

Per ``embedding_dp`` setting and for the two unnoised references, the step-3 classifier's utility, the keyword
attackers and the cross-release solver (:mod:`~textsift.evaluation.embedding_sets`), judged by the embedding
criteria of ``evaluate.recommend``; one ``frontier@<setting>`` MLflow run per setting. Its own stage: the text
settings' classifiers and attacks do not re-run when only an embedding setting changes.

Outputs ``metrics/evaluate_embeddings.json`` and ``reports/evaluate/embedding_dp.{csv,png}``.
"""

from __future__ import annotations

from textsift.evaluation.embedding_sets import evaluate_embeddings, log_embedding_runs, set_metrics
from textsift.stage_context import StageContext


def run(ctx: StageContext) -> None:
    """Evaluate every noisy-embedding set; write its table, plot and metrics; log its MLflow runs."""
    table, flat = evaluate_embeddings(ctx)
    ctx.log_metrics(flat)
    ctx.save("evaluate_embeddings_metrics", set_metrics(table))
    log_embedding_runs(ctx, table)
