"""What redaction writes in place of each replaced string, per entity type (Presidio's operators).

``pseudonym`` writes a keyed stand-in that fits (the setting's default ``style``, :mod:`.redactor`),
``placeholder`` the setting's tag (``[PERSON]``), ``hash`` a keyed digest (equal strings of one owner, a document or a
served record, get one digest; nothing else links them), ``mask`` a ``*`` for every character but whitespace.

They reveal more or less of what they replace (:data:`DISCLOSURE`): a placeholder only the type; a digest which of
the replaced strings are equal; a pseudonym also what it keeps of its original (a person's word count and gender, the
intervals between dates, a code's shape); a mask each word's length. The setting was judged with its own operators,
so a served request may pick, per type, one that reveals no more than the setting's (:func:`requested`): an answer may
protect more than what was judged, never less.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import get_args

from textsift import rng
from textsift.detection.types import ENTITY_TYPES, canonical_type
from textsift.errors import InputError
from textsift.mechanisms.redact.params import Operator, RedactSetting

DISCLOSURE: dict[str, int] = {"placeholder": 0, "hash": 1, "pseudonym": 2, "mask": 3}  # what each gives away, ranked
HASH_DIGITS = 12  # hex digits of a digest: 48 bits, no collision among a document's strings in practice
_NOT_SPACE = re.compile(r"\S")
assert set(DISCLOSURE) == set(get_args(Operator))


def operator_of(setting: RedactSetting, label: str) -> str:
    """The operator ``setting`` applies to spans of type ``label`` (aliases read as their type): its ``operators``
    entry, else its ``style``."""
    return setting.operators.get(canonical_type(label), setting.style)


def digest(key: rng.Key, owner: str | None, original: str) -> str:
    """``original``'s keyed digest (case folded), within ``owner`` (None: the corpus): without the key nobody can
    compute it for a guessed name."""
    name = f"{owner}\x1f{original.casefold()}" if owner is not None else f"\x1e{original.casefold()}"
    return format(rng.stable_key(key, "redact.hash", name), "016x")[:HASH_DIGITS]


def mask(original: str) -> str:
    """``original`` with every character but whitespace a ``*``."""
    return _NOT_SPACE.sub("*", original)


def requested(setting: RedactSetting, asked: Mapping[str, str]) -> RedactSetting:
    """``setting`` with a request's operators: per type it protects, one that reveals no more than its own.

    Raises:
        InputError: a key that is no entity type or that the request does not protect, an unknown operator, or
            one that reveals more than the setting's for that type (named by type and operator, never by value).
    """
    for label, operator in asked.items():
        if label not in ENTITY_TYPES:
            raise InputError(f"an \"operators\" key is not an entity type: the types are {', '.join(ENTITY_TYPES)}")
        if operator not in DISCLOSURE:
            raise InputError(f"\"operators\".{label} is not an operator: the operators are {', '.join(DISCLOSURE)}")
        if label not in (setting.labels or ()):
            raise InputError(f"\"operators\" names {label}, which the request does not protect (add it to "
                             "\"entities\")")
        own = operator_of(setting, label)
        if DISCLOSURE[operator] > DISCLOSURE[own]:
            allowed = [name for name, rank in DISCLOSURE.items() if rank <= DISCLOSURE[own]]
            raise InputError(f"\"operators\".{label}: {operator} reveals more than the served setting's {own} "
                             f"(for {label} a request may ask for {', '.join(allowed)})")
    return setting.model_copy(update={"operators": {**setting.operators, **asked}})
