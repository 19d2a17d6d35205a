"""The modules a metric-DP setting imports by name, where it runs them (``MetricDP.modules``).

A BERT index's encoder (transformers and torch: seconds of every other setting's start) and redaction's stand-ins for
a hybrid's detected spans. Named here, apart from the mechanism, so the mechanism table lists them without importing
the mechanism, and the two names are written once.
"""

CONTEXTUAL_ENCODER = "textsift.embeddings.bert"
STAND_INS = "textsift.mechanisms.redact.redactor"
