"""Great Expectations data-quality suites for stage outputs.

``suites.check_corpus`` validates the canonical corpus and ``suites.check_metrics`` a metrics dict
(``privatized.check_privatized`` a privatized corpus against its input, ``embeddings.check_embeddings`` an
embedding set); each returns a QualityReport (``runner``) that is safe to log (it never holds document text or
data values) and whose ``raise_if_failed`` stops a stage with a QualityError. Importing a suite does not import
Great Expectations; the first check does.
"""
