"""Great Expectations data-quality suites for stage outputs.

``check_corpus`` validates the canonical corpus and ``check_metrics`` a metrics dict; both
return a QualityReport that is safe to log (it never holds document text or data values)
and whose ``raise_if_failed`` stops a stage with a QualityError. Importing this package
does not import Great Expectations; the first check does.
"""

from textsift.quality.embeddings import check_embeddings
from textsift.quality.privatized import check_privatized
from textsift.quality.runner import QualityReport
from textsift.quality.suites import UNIT_INTERVAL_SUFFIXES, check_corpus, check_metrics

__all__ = ["UNIT_INTERVAL_SUFFIXES", "QualityReport", "check_corpus", "check_embeddings", "check_metrics",
           "check_privatized"]
