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
    gold = [spans_to_python(s) for s in corpus["spans"]]
    if setting.spans == "gold":
        spans = gold
    else:
        detected = detected_spans(ctx, corpus)
        spans = detected if setting.spans == "detected" else [g + d for g, d in zip(gold, detected, strict=True)]
    return redact(corpus["text"].tolist(), corpus["doc_id"].tolist(), spans, setting, seed)
