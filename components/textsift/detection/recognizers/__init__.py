"""Detection as a set of recognizers, like Presidio's registry, the trained model one of them (METHODS.md §4.1).

Each recognizer (:class:`base.Recognizer`) finds spans with a confidence in [0, 1] and says who
found them: ``model`` (the trained DPER detector), ``patterns`` (checksummed and structured
personal data: e-mail, phone, URL, IBAN, card numbers, dates, ID-like codes), ``name_cues`` (person
names their context gives away: after an honorific, citation authors, IPA transcriptions), ``org_cues``
(organisations their head noun gives away: "... University", "Court of Appeal") and, optionally,
``spacy`` (spaCy's English NER). :func:`merge.merge_detections` keeps the spans each type's
threshold admits and merges what several recognizers found, with their provenance. Thresholds
and the recognizer set are inference-time choices (params ``detection``): changing them re-runs
detection, never training.
"""
