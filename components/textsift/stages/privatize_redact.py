"""privatize@<setting> for ``kind: redact``: the spans to replace, then ``mechanisms.redact``.

``spans: detected`` reads the detector's spans over the corpus (train_detectors), ``gold`` the
corpus's own privacy spans, ``both`` their union. The common privatize stage adds leak metrics
and the quality checks.
"""

from __future__ import annotations

import pandas as pd

from textsift.corpus import spans_to_python
from textsift.mechanisms.redact.config import RedactSetting
from textsift.mechanisms.redact.redactor import redact
from textsift.stages import StageContext
from textsift.stages.detected_spans import detected_spans


def privatize_texts(
    corpus: pd.DataFrame, setting: RedactSetting, ctx: StageContext, seed: int
) -> tuple[list[str], dict[str, float]]:
    """Redacted texts in row order and the mechanism's counts."""
    keep = set(setting.labels) if setting.labels is not None else None
    gold = [[s for s in spans_to_python(cell) if keep is None or s.label in keep] for cell in corpus["spans"]]
    if setting.spans == "gold":
        spans = gold
    else:
        detected = detected_spans(ctx, corpus, setting.labels)
        spans = detected if setting.spans == "detected" else [g + d for g, d in zip(gold, detected, strict=True)]
    return redact(corpus["text"].tolist(), corpus["doc_id"].tolist(), spans, setting, seed)
