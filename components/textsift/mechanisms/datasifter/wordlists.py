"""Word lists of DataSifterText (METHODS.md §1.2): the shipped stop words and list parsing.

The default blacklist (never masked) is the shipped English stop-word list plus the single
letters, as in the reference code; the same stop words delimit RAKE's phrases (§1.4). No nltk
data is needed.
"""

from __future__ import annotations

import string
from functools import lru_cache
from importlib import resources

STOPWORDS_RESOURCE = "stopwords_en.txt"


def parse_word_list(content: str) -> list[str]:
    """Words of a list file: one per line; blank lines and ``#`` comment lines are skipped."""
    lines = (line.strip() for line in content.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The shipped English stop words (lower case)."""
    content = resources.files(__package__).joinpath(STOPWORDS_RESOURCE).read_text(encoding="utf-8")
    return frozenset(parse_word_list(content))


def default_blacklist() -> frozenset[str]:
    """Stop words plus the single letters a-z: the words DataSifterText never masks by default."""
    return stop_words() | frozenset(string.ascii_lowercase)
