"""Running a recognizer set and merging what it finds (METHODS.md §4.1).

Each detection needs a confidence (:class:`Thresholds`: params ``detection.thresholds`` per type, for any
recognizer; else the trained detector's calibrated threshold of its type, for the model's own detections; else
``detection.threshold``). Spans equal in ``(start, end, label)`` found by several recognizers become one,
with the highest confidence and every finder in ``source``: a text's candidates (:func:`candidates`, what the detect
stage stores). Then one type per span among the types asked for (:func:`resolve`; all of them unless a caller names
some): of spans of different types over the same characters only the most confident stays, and so does only the most
confident of spans of different types that cross (overlap, neither inside the other); ties go to the type listed
first in :data:`~textsift.detection.types.ENTITY_TYPES` (PERSON, LOC, ORG, JOB, EDU, DATE, EMAIL, PHONE, ID,
URL; other types after them, alphabetically). Nested spans are all kept, whatever their types (the
detector is nested: the ORG "Regional Court of Plovdiv" holds the LOC "Plovdiv"), and so are
overlapping spans of one type: redaction and masking protect the union of their characters.

Types are resolved among the asked types, not before: a setting that protects names protects every span that
passed the person threshold, also where the model found a place or an organisation more likely ("Bassène, 2007"
read as LOC, "Sapir's (1971)" as ORG). The person threshold is chosen for recall (a missed name is a leak), and a
names-only setting that dropped the spans another type had won left half again as many of GUM's person mentions whole.
Asking for every type gives one type per span; asking for some gives those types' spans of that answer and the ones
another type had won.

A person span that is a list of shorter person spans joined by separators ("Julie Rosenthal, Mike Eizenga",
"Kirk M. Bart and Celeste Pollock": the trained detector decodes every span above its low person threshold) is
dropped (:func:`without_name_lists`): the names inside it stay, each replaced by its own stand-in (one stand-in
stood for two people), and the separators were never a name.

Recognizers read each text's model view (:func:`textsift.normalize.model_view`: NFC, ``<br />`` as a space,
whitespace collapsed) and every span they find is mapped back before merging, so offsets always index the
caller's text, whatever its line breaks, tabs, markup or decomposed accents. A span the view let run across a
line break or a ``<br />`` of the caller's text is cut there (:func:`textsift.normalize.cut_at_breaks`): its
pieces keep its type, so protection covers the same words, and the line structure survives every replacement
("Emperor Norton" over a heading's line break onto the next sentence's "Joshua Norton" was one span, and one
stand-in for two lines).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

import numpy as np

from textsift.detection.recognizers.base import Detection, Recognizer
from textsift.detection.types import ENTITY_TYPES
from textsift.ingest_params import NormalizeParams
from textsift.normalize import TextView, cut_at_breaks, model_view, to_original

SMALL_GROUP = 32  # above this many spans, a run's types are resolved with arrays (the pairwise loop is quadratic)
LISTED_TYPES = frozenset({"PERSON"})  # a list of places ("Portland, Oregon") is often one place: left whole
# what joins the names of a list: commas, semicolons, "&", "and" (", and" too); never bare whitespace, which also
# joins the parts of one name ("Joshua Abraham" + "Norton")
# ("or" is no separator: it is a given name too, "Dana, Or Cohen")
LIST_SEPARATOR = re.compile(r"\s*(?:[,;&]|\band\b)(?:\s*(?:[,;&]|\band\b))*\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Thresholds:
    """The confidence a detection needs: its type's in ``by_type`` (params ``detection.thresholds``: any recognizer),
    else, for the trained model's own detections, its type's in ``model`` (the detector's calibrated thresholds:
    chosen on its scores, they say nothing of a pattern's or spaCy's), else ``default``."""

    default: float
    by_type: Mapping[str, float] = field(default_factory=dict)
    model: Mapping[str, float] = field(default_factory=dict)

    def of(self, detection: Detection) -> float:
        """The confidence ``detection`` needs (its finder is a single recognizer: merging comes after)."""
        if detection.label in self.by_type:
            return self.by_type[detection.label]
        if detection.source == "model" and detection.label in self.model:
            return self.model[detection.label]
        return self.default

    def floor(self) -> float:
        """The lowest confidence any detection may need: what recognizers decode at."""
        return min([self.default, *self.by_type.values(), *self.model.values()])

    def at_most(self, ceiling: float) -> Thresholds:
        """Every threshold capped at ``ceiling`` (a request that asks to find more, never less)."""
        return Thresholds(min(self.default, ceiling), {k: min(v, ceiling) for k, v in self.by_type.items()},
                          {k: min(v, ceiling) for k, v in self.model.items()})


def merge_detections(found: Sequence[Sequence[Detection]], thresholds: Thresholds | float,
                     labels: Sequence[str] | None = None) -> list[Detection]:
    """One text's detections from several recognizers: thresholded, merged, restricted to ``labels``, one type per
    span among them (a span of an asked type stays where an unasked type was more confident).

    Args:
        found: per recognizer, its detections in the text.
        thresholds: what each detection needs (a number: one threshold for all).
        labels: types to keep (None: all).

    Returns:
        Detections sorted by ``(start, end, label)``; a span found by several recognizers appears
        once, ``score`` the highest, ``source`` the sorted ``+``-joined finders; spans of different types
        never share their extent nor cross (:func:`one_type_per_span`).
    """
    needs = thresholds if isinstance(thresholds, Thresholds) else Thresholds(thresholds)
    passed = [d for detections in found for d in detections if d.score >= needs.of(d)]
    return one_type_per_span(_asked(_same_spans_merged(passed), labels))


def _asked(detections: Sequence[Detection], labels: Sequence[str] | None) -> list[Detection]:
    """``detections`` of ``labels`` (every one when None)."""
    keep = None if labels is None else set(labels)
    return [d for d in detections if keep is None or d.label in keep]


def _same_spans_merged(detections: Sequence[Detection]) -> list[Detection]:
    """Detections equal in ``(start, end, label)`` as one: the highest score, every finder in ``source``."""
    merged: dict[tuple[int, int, str], tuple[float, set[str]]] = {}
    for d in detections:
        key = (d.start, d.end, d.label)
        score, sources = merged.get(key, (0.0, set()))
        merged[key] = (max(score, d.score), sources | set(d.source.split("+")))
    return [Detection(s, e, label, score, "+".join(sorted(sources)))
            for (s, e, label), (score, sources) in sorted(merged.items())]


def _rank(d: Detection) -> tuple[float, int, str, int, int]:
    """Sort key, strongest claim first: the higher score, then the type earlier in ``ENTITY_TYPES``."""
    order = ENTITY_TYPES.index(d.label) if d.label in ENTITY_TYPES else len(ENTITY_TYPES)
    return -d.score, order, d.label, d.start, d.end


def _conflict(a: Detection, b: Detection) -> bool:
    """Whether ``a`` and ``b`` are of different types over the same characters, or of different types and cross."""
    if a.label == b.label:
        return False
    same = (a.start, a.end) == (b.start, b.end)
    return same or a.start < b.start < a.end < b.end or b.start < a.start < b.end < a.end


def _overlapping_groups(detections: Sequence[Detection]) -> list[list[Detection]]:
    """``detections`` (sorted by start) cut into runs whose spans chain by overlap; no span of a run overlaps
    another run's, so types are resolved within each run apart from the rest of the text."""
    groups: list[list[Detection]] = []
    reach = -1
    for d in detections:
        if d.start >= reach:
            groups.append([])
        groups[-1].append(d)
        reach = max(reach, d.end)
    return groups


def one_type_per_span(detections: Sequence[Detection]) -> list[Detection]:
    """``detections`` (one per ``(start, end, label)``) with at most one type per extent and no crossing types.

    Greedy, strongest claim first (:func:`_rank`): a span is kept unless a kept span has another type and
    the same extent or crosses it. Nested spans and overlapping spans of one type are all kept. Sorted by
    ``(start, end, label)``.
    """
    kept: list[Detection] = []
    for group in _overlapping_groups(sorted(detections)):
        kept += _greedy(group) if len(group) <= SMALL_GROUP else _greedy_vectorized(group)
    return sorted(kept)


def _greedy(group: Sequence[Detection]) -> list[Detection]:
    """One run's spans that :func:`one_type_per_span` keeps, each compared with every span kept before it."""
    chosen: list[Detection] = []
    for d in sorted(group, key=_rank):
        if not any(_conflict(d, c) for c in chosen):
            chosen.append(d)
    return chosen


def _greedy_vectorized(group: Sequence[Detection]) -> list[Detection]:
    """What :func:`_greedy` keeps, for long runs: each kept span blocks, in one array operation, every span of the run
    that conflicts with it (:func:`_conflict`), so a span is kept when no stronger kept span blocked it.

    A low threshold lets a nested decoder's candidates chain into one run per text (thousands of spans: the
    pairwise loop took 46 s over four sentences at threshold 0.01). Only spans that overlap the kept one can
    conflict with it: with the run sorted by start, they lie between the first that may still reach it (it starts
    at most the run's longest span before it) and the last that starts before its end.
    """
    starts = np.array([d.start for d in group])  # ascending: the run comes sorted
    ends = np.array([d.end for d in group])
    longest = int((ends - starts).max())
    label_ids = {label: k for k, label in enumerate(sorted({d.label for d in group}))}
    labels = np.array([label_ids[d.label] for d in group])
    blocked = np.zeros(len(group), dtype=bool)
    chosen: list[Detection] = []
    for i in sorted(range(len(group)), key=lambda k: _rank(group[k])):
        if blocked[i]:
            continue
        chosen.append(group[i])
        s, e = starts[i], ends[i]
        lo, hi = np.searchsorted(starts, s - longest), np.searchsorted(starts, e)
        at, to, of = starts[lo:hi], ends[lo:hi], labels[lo:hi]
        same = (at == s) & (to == e)
        crossing = ((at < s) & (s < to) & (to < e)) | ((s < at) & (at < e) & (e < to))
        blocked[lo:hi] |= (of != labels[i]) & (same | crossing)
    return chosen


def in_original(view: TextView, detections: Sequence[Detection]) -> list[Detection]:
    """Detections found in ``view`` moved onto the original text's characters (:func:`textsift.normalize.to_original`);
    one that covers only whitespace of the view is dropped."""
    out = []
    for d in detections:
        span = to_original(view, d.start, d.end)
        if span is not None:
            out.append(replace(d, start=span[0], end=span[1]))
    return out


def candidates(recognizers: Sequence[Recognizer], texts: Sequence[str], thresholds: Thresholds, *,
               view: NormalizeParams) -> list[list[Detection]]:
    """Every recognizer over the model views of ``texts``, mapped back to ``texts``, each detection at its threshold,
    equal spans merged: per text, every type each span passed for (:func:`resolve` picks among them).

    Each recognizer decodes at the lowest threshold anything uses, so the thresholds apply after it, in one place.
    ``view``: how the views normalize (params ``ingest.normalize``).
    """
    views = [model_view(text, view) for text in texts]
    per_recognizer = [r.analyze([v.text for v in views], thresholds.floor()) for r in recognizers]
    return [_same_spans_merged([d for found in per_recognizer for d in in_original(v, found[k])
                                if d.score >= thresholds.of(d)])
            for k, v in enumerate(views)]


def resolve(text: str, found: Sequence[Detection], labels: Sequence[str] | None = None) -> list[Detection]:
    """The spans of ``labels`` (every type when None) among one text's :func:`candidates`: one type per span among
    them (:func:`one_type_per_span`), cut at the text's line breaks (:func:`textsift.normalize.cut_at_breaks`),
    without the person spans that are lists of names (:func:`without_name_lists`).

    Cutting comes after the types are resolved: a piece of an organisation cut at a line break ("Joshua Norton" of
    "the Joshua Norton\nFoundation") may share its extent with the person found inside it, and both stay, so a
    setting protecting either type protects what it did before the cut.
    """
    resolved = one_type_per_span(_asked(found, labels))
    return without_name_lists(text, _same_spans_merged(cut_at_breaks(text, resolved)))


def analyze(recognizers: Sequence[Recognizer], texts: Sequence[str], thresholds: Thresholds,
            labels: Sequence[str] | None = None, *, view: NormalizeParams) -> list[list[Detection]]:
    """Every recognizer over ``texts``: their :func:`candidates`, each text's resolved to ``labels``."""
    return [resolve(text, found, labels)
            for text, found in zip(texts, candidates(recognizers, texts, thresholds, view=view), strict=True)]


def without_name_lists(text: str, detections: Sequence[Detection]) -> list[Detection]:
    """``detections`` of ``text`` without the spans of a :data:`LISTED_TYPES` type that are lists: from its start to
    its end, two or more shorter spans of its type, each next one after a :data:`LIST_SEPARATOR` alone. A span with
    no such parts inside it stays (the names are then protected as one)."""
    extents = {label: sorted({(d.start, d.end) for d in detections if d.label == label}) for label in LISTED_TYPES}
    return [d for d in detections if d.label not in LISTED_TYPES or not _is_list(text, d, extents[d.label])]


def _is_list(text: str, outer: Detection, extents: Sequence[tuple[int, int]]) -> bool:
    """Whether ``outer`` is a list of the spans of its type, ``extents`` (sorted): only those that start inside it
    are looked at (a bisection), so a text's many nested candidates cost what each span holds, not the text's all."""
    first, last = bisect_left(extents, (outer.start, -1)), bisect_left(extents, (outer.end, -1))
    ends_from: dict[int, list[int]] = {}
    for s, e in extents[first:last]:
        if e <= outer.end and (s, e) != (outer.start, outer.end):
            ends_from.setdefault(s, []).append(e)

    @cache
    def chain(start: int) -> int:
        """The most parts that cover ``text[start:outer.end]``, joined by separators (0: none do)."""
        best = 0
        for end in ends_from.get(start, ()):
            if end == outer.end:
                best = max(best, 1)
            for following in (s for s in ends_from if s > end and LIST_SEPARATOR.fullmatch(text, end, s)):
                if rest := chain(following):
                    best = max(best, 1 + rest)
        return best

    return chain(outer.start) >= 2
