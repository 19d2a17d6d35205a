"""DataSifterText's default blacklist (METHODS.md §1.2): the words it never masks.

As in the reference code, the shipped English stop words (:mod:`textsift.word_lists`) plus the single letters.
"""

from __future__ import annotations

import string

from textsift.word_lists import stop_words


def default_blacklist() -> frozenset[str]:
    """Stop words plus the single letters a-z: the words DataSifterText never masks by default."""
    return stop_words() | frozenset(string.ascii_lowercase)
