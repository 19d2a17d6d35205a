"""The columns of the noisy-embedding table (``reports/evaluate/embedding_dp.csv``), by name: what
``evaluate_embeddings`` writes and ``evaluate`` reads back to log and report, without importing the evaluation itself.
"""

from __future__ import annotations

from textsift.evaluation.keyword_attack import GROUPS
from textsift.evaluation.utility import UTILITY_METRICS

REFERENCES = ("original", "filled")  # the unnoised rows: the original text's embeddings and step 1's alone
ATTACK_COLUMNS = tuple(f"attack_success{kind}_{group}" for kind in ("", "_clean", "_noise") for group in GROUPS)
CROSS_COLUMNS = ("single_cosine", "cross_release_cosine", "cross_release_solve_cosine",
                 "cross_release_average_cosine", "cross_release_baseline", "cross_release_gain",
                 "attack_success_solved")
METRIC_COLUMNS = (*UTILITY_METRICS, *ATTACK_COLUMNS, "keyword_gain", *CROSS_COLUMNS, "privacy_risk")
EMBEDDING_COLUMNS = ("epsilon_max", *METRIC_COLUMNS)
