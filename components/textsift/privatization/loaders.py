"""Which modules load each resource a privacy setting may need (its ``needs()``): imported by name by
:class:`textsift.privatization.resources.StageResources`, and named in the setting's instance's code deps by
:mod:`textsift.registry`, so each instance hashes the loaders of what it needs and no other."""

from __future__ import annotations

from collections.abc import Iterable

# a setting's need (an artifact name of its needs()) -> the modules that load it
LOADERS: dict[str, tuple[str, ...]] = {
    "detector": ("textsift.detection.spans_file", "textsift.detection.corpus_spans"),
    "fill_in": ("textsift.models.fill_in", "textsift.embeddings.locate"),
    "index": ("textsift.indexes.store", "textsift.embeddings.locate"),
}
# what detects texts the detect stage's file does not hold (a new file, a probe of the service): the recognizer set
RECOGNIZERS = ("textsift.detection.recognizers.build",)


def loader_modules(needs: Iterable[tuple[str, str | None]], detects_unseen: bool = True) -> tuple[str, ...]:
    """The modules that load what ``needs`` (a setting's ``needs()``) names, with the recognizer set when it needs the
    detector and ``detects_unseen`` texts: part of its instance's code."""
    names = [name for name, _ in needs]
    recognizers = RECOGNIZERS if detects_unseen and "detector" in names else ()
    return tuple(dict.fromkeys((*(module for name in names for module in LOADERS.get(name, ())), *recognizers)))
