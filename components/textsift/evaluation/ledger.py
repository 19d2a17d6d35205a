"""The privacy ledger: what each released document spent, and the distribution a report shows.

Metric-DP spends ε per perturbed word, so a document of n perturbed words spends n·ε (sequential
composition, METHODS.md §2); noisy embeddings spend ε_max per row (§3). DataSifterText and redaction
give no differential-privacy guarantee: their documents are in the ledger as "not DP", never as 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

NOT_DP = "not differentially private"
SCHEMA = pa.schema([("doc_id", pa.string()), ("epsilon", pa.float64()), ("guarantee", pa.string())])


def ledger_table(doc_ids: Sequence[str], epsilon: Sequence[float] | None, guarantee: str) -> pa.Table:
    """One row per document: its id, the ε it spent (null when the mechanism is not DP) and the guarantee."""
    values = [None] * len(doc_ids) if epsilon is None else [float(e) for e in epsilon]
    return pa.Table.from_pydict({"doc_id": list(doc_ids), "epsilon": values,
                                 "guarantee": [guarantee if epsilon is not None else NOT_DP] * len(doc_ids)},
                                schema=SCHEMA)


def ledger_metrics(epsilon: Sequence[float] | None) -> dict[str, float]:
    """``ledger.dp`` (1 when every document has a DP guarantee) and the ε distribution over documents."""
    if epsilon is None:
        return {"ledger.dp": 0.0}
    values = np.asarray(epsilon, dtype=np.float64) if len(epsilon) else np.zeros(1)
    p50, p90 = np.percentile(values, [50, 90])
    return {"ledger.dp": 1.0, "ledger.epsilon_mean": float(values.mean()), "ledger.epsilon_p50": float(p50),
            "ledger.epsilon_p90": float(p90), "ledger.epsilon_max": float(values.max())}


def composed_epsilon(per_setting: Sequence[Sequence[float | None]], per_row: Sequence[float]) -> np.ndarray:
    """Per document, the ε of every differentially private release of it from one corpus, added up (sequential
    composition: each release draws its own noise, :mod:`textsift.releases`, so the releases compose).

    Args:
        per_setting: Each text setting's ledger column in document order (None entries: not DP, adds nothing).
        per_row: Each noisy-embedding setting's ε_max (every row of that set spends it).
    """
    lengths = {len(column) for column in per_setting}
    if len(lengths) > 1:
        raise ValueError(f"ledgers of different lengths: {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    total = np.full(n, float(sum(per_row)), dtype=np.float64)
    for column in per_setting:
        total += np.array([0.0 if e is None or np.isnan(e) else float(e) for e in column], dtype=np.float64)
    return total
