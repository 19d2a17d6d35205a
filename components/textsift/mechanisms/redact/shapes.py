"""Stand-ins that keep the original's shape: numbers and codes (``PHONE``, ``ID``), and letter case.

A phone number or a record number replaced by one of another format (``+44 20 7946 0958`` by
``(555) 123-4567x89``) breaks parsers and reads as a different kind of value. The stand-in keeps the
pattern of the original: every digit becomes a random digit, every letter a random letter of the same
case, and everything else (``+``, spaces, dashes, brackets, dots) stays where it was. The random source
is the caller's keyed, seeded generator, so the stand-in is a function of (key, owner, original).
"""

from __future__ import annotations

import string
from random import Random


def same_shape(random: Random, original: str) -> str:
    """``original`` with each digit and letter redrawn from ``random``, separators and other marks kept."""
    return "".join(_redrawn(random, c) for c in original)


def like_case(original: str, new: str) -> str:
    """``new`` in ``original``'s letter case (``SMITH`` -> ``JONES``, ``smith`` -> ``jones``, else as drawn)."""
    if original.isupper():
        return new.upper()
    return new.lower() if original.islower() else new


def _redrawn(random: Random, char: str) -> str:
    """A random character of ``char``'s kind: a digit for a digit, a letter of its case for a letter, else itself."""
    if char.isdigit():
        return random.choice(string.digits)
    if char.isupper():
        return random.choice(string.ascii_uppercase)
    if char.isalpha():  # lower case, or a letter without case: a lower-case Latin letter
        return random.choice(string.ascii_lowercase)
    return char
