"""The detected spans of a setting's documents: read from the detect stage's file, detected anew only where a caller
can.

Every setting that protects detected spans (``mask_detected``, ``replace_detected``, ``redact``) reads the file
the detect stage wrote (:mod:`textsift.detection.spans_file`) instead of detecting again, and resolves the types it
protects (its ``labels``) among each span's candidates. The privatize stage only reads it (every corpus document is
there), so its code deps hold no recognizer; a caller that meets texts the file does not hold (``textsift
privatize`` on a new file, a probe of the service) passes ``detect``, the project's recognizer set's candidates.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from textsift.corpus import Span
from textsift.detection.recognizers.base import Detection
from textsift.detection.recognizers.merge import resolve
from textsift.detection.spans_file import Stored, stored_spans, text_digest

log = logging.getLogger("textsift")


def detected_spans(stored: Stored, doc_ids: Sequence[str], texts: Sequence[str], labels: Sequence[str] | None = None,
                   detect: Callable[[Sequence[str]], list[list[Detection]]] | None = None) -> list[list[Span]]:
    """The detected spans of each document (in order), of ``labels`` (every type when None), resolved among them from
    the candidates ``stored`` holds, and ``detect`` finds for the documents it does not hold with their text
    (:func:`~textsift.detection.recognizers.build.recognizer_candidates`).

    Raises:
        StageError: without ``detect``, a document ``stored`` does not hold with its text, naming ids, never text.
    """
    keys = [(d, text_digest(t)) for d, t in zip(doc_ids, texts, strict=True)]
    missing = [i for i, key in enumerate(keys) if key not in stored]
    if detect is None or not missing:
        return stored_spans(stored, doc_ids, texts, labels)
    log.info("detecting sensitive spans in %d documents the corpus-wide file does not hold", len(missing))
    fresh = dict(zip(missing, detect([texts[i] for i in missing]), strict=True))
    return [[d.span for d in resolve(text, fresh[i] if i in fresh else stored[key], labels)]
            for i, (text, key) in enumerate(zip(texts, keys, strict=True))]
