"""What redaction writes in place of each replaced string, per entity type (Presidio's operators).

``pseudonym`` writes a keyed stand-in that fits (the setting's default ``style``, :mod:`.redactor`),
``placeholder`` the setting's tag (``[PERSON]``), ``hash`` a keyed digest (equal strings of one owner, a document or a
served record, get one digest; nothing else links them), ``mask`` a ``*`` for every character but whitespace.

They reveal different things of what they replace: a placeholder only the type; a digest which of the replaced
strings are equal; a pseudonym that too, and what it keeps of its original (a person's word count and gender, the
intervals between dates, a code's shape); a mask each word's length, and nothing of equality beyond it. So they are
ordered only in part (:data:`NO_MORE_THAN`): a placeholder reveals no more than any, a digest no more than a
pseudonym, and a mask and a pseudonym or a digest each reveal something the other does not. The setting was judged
with its own operators, so a served request may pick, per type, one that reveals no more than the setting's
(:func:`requested`): an answer may protect more than what was judged, never less.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import get_args

from textsift import rng
from textsift.detection.types import ENTITY_TYPES, canonical_type
from textsift.errors import InputError
from textsift.mechanisms.redact.params import Operator, RedactSetting

# operator -> the operators that reveal no more than it (a partial order: a mask hides equality, a pseudonym length)
NO_MORE_THAN: dict[str, tuple[str, ...]] = {"placeholder": ("placeholder",), "hash": ("placeholder", "hash"),
                                            "pseudonym": ("placeholder", "hash", "pseudonym"),
                                            "mask": ("placeholder", "mask")}
HASH_DIGITS = 12  # hex digits of a digest: 48 bits, no collision among a document's strings in practice
_NOT_SPACE = re.compile(r"\S")
assert set(NO_MORE_THAN) == set(get_args(Operator))


def operator_of(setting: RedactSetting, label: str) -> str:
    """The operator ``setting`` applies to spans of type ``label`` (aliases read as their type): its ``operators``
    entry, else its ``style``."""
    return setting.operators.get(canonical_type(label), setting.style)


def draw_of(owner: str | None, original: str) -> str:
    """The name a stand-in of ``original`` (case folded) is drawn under: within ``owner`` (a document's draw name, or
    None: the corpus). A pseudonym and a digest of one string in one document share it (under their own stage)."""
    return f"{owner}\x1f{original.casefold()}" if owner is not None else f"\x1e{original.casefold()}"


def digest(key: rng.Key, owner: str | None, original: str) -> str:
    """``original``'s keyed digest (case folded), within ``owner`` (None: the corpus): without the key nobody can
    compute it for a guessed name."""
    return format(rng.stable_key(key, "redact.hash", draw_of(owner, original)), "016x")[:HASH_DIGITS]


def mask(original: str) -> str:
    """``original`` with every character but whitespace a ``*``."""
    return _NOT_SPACE.sub("*", original)


def requested(setting: RedactSetting, asked: Mapping[str, str]) -> RedactSetting:
    """``setting`` with a request's operators: per type it protects, one that reveals no more than its own.

    Raises:
        InputError: a key that is no entity type or that the request does not protect, an unknown operator, or
            one that reveals what the setting's for that type does not (named by type and operator, never by value).
    """
    for label, operator in asked.items():
        if label not in ENTITY_TYPES:
            raise InputError(f"an \"operators\" key is not an entity type: the types are {', '.join(ENTITY_TYPES)}")
        if operator not in NO_MORE_THAN:
            raise InputError(f"\"operators\".{label} is not an operator: the operators are "
                             f"{', '.join(NO_MORE_THAN)}")
        if label not in (setting.labels or ()):
            raise InputError(f"\"operators\" names {label}, which the request does not protect (add it to "
                             "\"entities\")")
        own = operator_of(setting, label)
        if operator not in NO_MORE_THAN[own]:
            raise InputError(f"\"operators\".{label}: {operator} reveals what the served setting's {own} does not "
                             f"(for {label} a request may ask for {', '.join(NO_MORE_THAN[own])})")
    return setting.model_copy(update={"operators": {**setting.operators, **asked}})
