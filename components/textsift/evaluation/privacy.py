"""Privacy metrics computed the same way for every mechanism (METHODS.md §5).

- token change fraction: share of the original's word tokens that are not kept in place;
- leak rate: share of privacy spans whose surface text survives anywhere in the output
  (case-insensitive, whole words, whitespace-normalized: a moved or re-cased name leaks);
- token leak rate: share of the spans' word tokens that survive as words of the output
  (counts partial survival, e.g. a kept surname);
- attacker recall: share of the original's sensitive spans that a detector run on the output
  still finds (a detected span with the same words, case-insensitive): what an adversary with
  textsift's own detector recovers, the same metric for every mechanism.
- cross-document name disclosure: share of published documents that carry a name part of ANOTHER document
  of the corpus, one the original document itself does not contain. The leak rate counts only a document's
  own spans; a fill-in model trained on the corpus (DataSifterText) or a pseudonym list can put a real
  person's surname into somebody else's document, which discloses that person as surely as a kept name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from difflib import SequenceMatcher

from textsift.corpus import Span
from textsift.detection.types import identifier_group
from textsift.tokenize import normal_form, words


def token_change_fraction(original: str, privatized: str) -> float:
    """1 - (longest in-order matching words / original words), on case-folded words."""
    before = [normal_form(t.text) for t in words(original)]
    if not before:
        return 0.0
    after = [normal_form(t.text) for t in words(privatized)]
    kept = sum(block.size for block in SequenceMatcher(None, before, after, autojunk=False).get_matching_blocks())
    return 1.0 - kept / len(before)


def _pattern(surface: str) -> re.Pattern[str] | None:
    parts = [re.escape(normal_form(t.text)) for t in words(surface)]
    if not parts:
        return None
    return re.compile(r"(?<!\w)" + r"\W+".join(parts) + r"(?!\w)")


def span_leaks(original: str, spans: Iterable[Span], privatized: str) -> list[tuple[str, bool, float]]:
    """For each span: (label, surface survives whole, share of its words that survive)."""
    folded = normal_form(privatized)
    out_words = {normal_form(t.text) for t in words(privatized)}
    results = []
    for span in spans:
        surface = original[span.start:span.end]
        pattern = _pattern(surface)
        if pattern is None:
            continue
        span_words = [normal_form(t.text) for t in words(surface)]
        kept = sum(w in out_words for w in span_words) / len(span_words)
        results.append((span.label, bool(pattern.search(folded)), kept))
    return results


def leak_rates(
    originals: Sequence[str], spans: Sequence[Sequence[Span]], privatized: Sequence[str]
) -> dict[str, float]:
    """``leak.rate``, ``leak.token_rate``, ``leak.spans``, ``leak.rate.<LABEL>`` and, where the corpus has such
    spans, ``leak.rate.direct`` and ``leak.rate.quasi`` (direct and quasi-identifiers:
    :data:`textsift.detection.types.IDENTIFIER_GROUPS`) over a corpus."""
    whole: dict[str, list[bool]] = defaultdict(list)
    token_shares: list[float] = []
    for text, doc_spans, out in zip(originals, spans, privatized, strict=True):
        for label, leaked, share in span_leaks(text, doc_spans, out):
            whole[label].append(leaked)
            token_shares.append(share)
    flags = [flag for values in whole.values() for flag in values]
    if not flags:
        return {"leak.spans": 0.0}
    metrics = {
        "leak.spans": float(len(flags)),
        "leak.rate": sum(flags) / len(flags),
        "leak.token_rate": sum(token_shares) / len(token_shares),
    }
    metrics.update({f"leak.rate.{label}": sum(v) / len(v) for label, v in sorted(whole.items())})
    for group in ("direct", "quasi"):
        flags = [flag for label, values in whole.items() if identifier_group(label) == group for flag in values]
        if flags:
            metrics[f"leak.rate.{group}"] = sum(flags) / len(flags)
    return metrics


def leak_counts(
    originals: Sequence[str], spans: Sequence[Sequence[Span]], privatized: Sequence[str]
) -> list[dict[str, dict[str, int]]]:
    """Per document: ``{label: {"spans": n, "leaked": k}}``, the raw counts behind ``leak_rates``.

    The unit of the leak breakdown by type and of its bootstrap intervals (documents are resampled,
    not spans: the spans of one document are not independent).
    """
    out = []
    for text, doc_spans, after in zip(originals, spans, privatized, strict=True):
        counts: dict[str, dict[str, int]] = {}
        for label, leaked, _ in span_leaks(text, doc_spans, after):
            entry = counts.setdefault(label, {"spans": 0, "leaked": 0})
            entry["spans"] += 1
            entry["leaked"] += int(leaked)
        out.append(counts)
    return out


def _key(surface: str) -> tuple[str, ...]:
    return tuple(normal_form(t.text) for t in words(surface))


def attacker_recall(
    originals: Sequence[str], spans: Sequence[Sequence[Span]], privatized: Sequence[str],
    detected: Sequence[Sequence[Span]],
) -> dict[str, float]:
    """``attacker.recall`` (and ``.<LABEL>``): original spans the detector finds again in the output.

    Args:
        originals, spans: the original test documents and their sensitive spans (gold or detected).
        privatized: the privatized documents, same order.
        detected: the detector's spans on each privatized document.
    """
    found: dict[str, list[bool]] = defaultdict(list)
    for doc in attacker_flags(originals, spans, privatized, detected):
        for label, flag in doc:
            found[label].append(flag)
    flags = [flag for values in found.values() for flag in values]
    if not flags:
        return {}
    metrics = {"attacker.recall": sum(flags) / len(flags)}
    metrics.update({f"attacker.recall.{label}": sum(v) / len(v) for label, v in sorted(found.items())})
    for group in ("direct", "quasi"):
        chosen = [flag for label, values in found.items() if identifier_group(label) == group for flag in values]
        if chosen:
            metrics[f"attacker.recall.{group}"] = sum(chosen) / len(chosen)
    return metrics


def attacker_flags(
    originals: Sequence[str], spans: Sequence[Sequence[Span]], privatized: Sequence[str],
    detected: Sequence[Sequence[Span]],
) -> list[list[tuple[str, bool]]]:
    """Per document, ``(label, found again)`` for each of its spans with words: the attacker's recall per
    document (the bootstrap resamples documents, :func:`textsift.evaluation.bootstrap.ratio_interval`)."""
    out = []
    for text, doc_spans, after, out_spans in zip(originals, spans, privatized, detected, strict=True):
        recovered = {_key(after[s.start:s.end]) for s in out_spans}
        keys = [(span.label, _key(text[span.start:span.end])) for span in doc_spans]
        out.append([(label, key in recovered) for label, key in keys if key])
    return out


NAME_LABELS = ("PERSON", "NAME")
MIN_NAME_PART = 3  # shorter words ("al", "jo", initials) are name parts of too many things to mean a person


def name_parts(text: str, spans: Iterable[Span], stop_words: Collection[str], min_length: int = MIN_NAME_PART,
               labels: Collection[str] = NAME_LABELS) -> set[str]:
    """The case-folded words of a document's person-name spans, without stop words and words shorter than
    ``min_length`` characters: what identifies the person ("Maria", "Okafor"), not "de" or "van"."""
    out: set[str] = set()
    for span in spans:
        if span.label not in labels:
            continue
        for token in words(text[span.start:span.end]):
            form = normal_form(token.text)
            if len(form) >= min_length and form not in stop_words:
                out.add(form)
    return out


def cross_document_flags(
    originals: Sequence[str], spans: Sequence[Sequence[Span]], privatized: Sequence[str],
    stop_words: Collection[str], min_length: int = MIN_NAME_PART, labels: Collection[str] = NAME_LABELS,
) -> list[bool]:
    """Per published document: does it contain (as a whole word, case-insensitive) a name part of another
    document of the corpus that is not a word of its own original? A document that keeps its own name is
    not counted here (the leak rate counts it), nor one whose original already had the word. Empty when the
    corpus has no name part at all (nothing to measure, not a rate of 0).

    Args:
        originals, spans: every original document of the published corpus and its gold spans.
        privatized: the published documents, same order (one per original).
        stop_words: case-folded words never counted as name parts.
        min_length: shortest name part counted, in characters.
        labels: the span labels that are person names.
    """
    owners: dict[str, set[int]] = defaultdict(set)
    for i, (text, doc_spans) in enumerate(zip(originals, spans, strict=True)):
        for part in name_parts(text, doc_spans, stop_words, min_length, labels):
            owners[part].add(i)
    if not owners:
        return []
    flags = []
    for i, (text, out) in enumerate(zip(originals, privatized, strict=True)):
        own = {normal_form(t.text) for t in words(text)}
        received = {normal_form(t.text) for t in words(out)} - own
        flags.append(any(owners.get(w, set()) - {i} for w in received))
    return flags


def cross_document_rate(flags: Sequence[bool]) -> dict[str, float]:
    """``cross_document.rate`` (share of flagged documents) and ``cross_document.documents`` (how many were
    checked); empty when there is no document."""
    if not flags:
        return {}
    return {"cross_document.rate": sum(flags) / len(flags), "cross_document.documents": float(len(flags))}
