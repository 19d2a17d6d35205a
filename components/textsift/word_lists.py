"""The shipped English stop words and the word-list file format, shared by DataSifterText (its blacklist and RAKE's
phrase delimiters, METHODS.md §1.2 and §1.4), the protected-span rules and the attackers (a stop word is never a name
part). No nltk data is needed.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

STOPWORDS = Path(__file__).with_name("stopwords_en.txt")


def parse_word_list(content: str) -> list[str]:
    """Words of a list file: one per line; blank lines and ``#`` comment lines are skipped."""
    lines = (line.strip() for line in content.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The shipped English stop words (lower case)."""
    return frozenset(parse_word_list(STOPWORDS.read_text(encoding="utf-8")))
