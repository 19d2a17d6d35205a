"""Detection's entity types, their groups and other tools' names for them: what the detector, the recognizers,
the mechanisms and the attackers share, apart from the params schema (a schema module holds no logic a stage runs,
:mod:`textsift.code_deps`)."""

from __future__ import annotations

from typing import Any

ENTITY_TYPES = ("PERSON", "LOC", "ORG", "JOB", "EDU", "DATE", "EMAIL", "PHONE", "ID", "URL")  # what detection finds
# Direct identifiers point at one person on their own; quasi-identifiers (places, organisations, dates, jobs)
# identify only in combination and are often what a downstream task learns from. Detector-driven settings protect
# the direct ones unless told otherwise; what the quasi-identifiers still allow is measured by the re-identification
# and interest attackers, not by a span count.
DIRECT_IDENTIFIERS = ("PERSON", "EMAIL", "PHONE", "ID", "URL")
QUASI_IDENTIFIERS = ("LOC", "ORG", "JOB", "EDU", "DATE")
IDENTIFIER_GROUPS = {"direct": DIRECT_IDENTIFIERS, "quasi": QUASI_IDENTIFIERS, "all": ENTITY_TYPES}
# other tools' and corpora's names for detection's types (the demo corpus's gold labels among them)
LABEL_ALIASES = {"NAME": "PERSON", "CITY": "LOC", "GPE": "LOC", "LOCATION": "LOC", "COMPANY": "ORG", "SCHOOL": "EDU",
                 "CODE": "ID"}


def canonical_type(label: str) -> str:
    """Detection's name of a span label (``CITY`` -> ``LOC``; a detection type is its own)."""
    return LABEL_ALIASES.get(label, label)


def identifier_group(label: str) -> str | None:
    """``direct`` or ``quasi`` for a span label (aliases included), None for a type in neither group."""
    kind = canonical_type(label)
    return next((group for group in ("direct", "quasi") if kind in IDENTIFIER_GROUPS[group]), None)


def unknown_detected_types(labels: list[str] | None) -> list[str]:
    """The labels no recognizer ever emits (a typo protects nothing, silently): not in :data:`ENTITY_TYPES`."""
    return sorted(set(labels or ()) - set(ENTITY_TYPES))


def expand_label_groups(value: Any) -> Any:
    """A protected-types list with group names (``direct``, ``quasi``, ``all``) expanded, in order, once each."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for item in value:  # a non-string (a list, a mapping) is left for validation to reject, never hashed here
        for kind in IDENTIFIER_GROUPS.get(item, (item,)) if isinstance(item, str) else (item,):
            if not isinstance(kind, str) or kind not in out:
                out.append(kind)
    return out
