"""Which modules load each resource a privacy setting may need (its ``needs()``): imported by name by
:class:`textsift.privatization.resources.StageResources`, and named in the setting's instance's code deps by
:mod:`textsift.registry`, so each instance hashes the loaders of what it needs and no other."""

from __future__ import annotations

from collections.abc import Iterable

# a setting's need (an artifact name of its needs()) -> the modules that load it
LOADERS: dict[str, tuple[str, ...]] = {
    "detector": ("textsift.detection.spans_file", "textsift.detection.corpus_spans",
                 "textsift.detection.recognizers.build"),
    "fill_in": ("textsift.models.fill_in", "textsift.embeddings.locate"),
    "index": ("textsift.indexes.store", "textsift.embeddings.locate"),
}


def loader_modules(needs: Iterable[tuple[str, str | None]]) -> tuple[str, ...]:
    """The modules that load what ``needs`` (a setting's ``needs()``) names: part of its instance's code."""
    return tuple(dict.fromkeys(module for name, _ in needs for module in LOADERS.get(name, ())))
