"""Nationality stand-ins: a demonym ("Bulgarian", "the Turks") is replaced by another nationality, never by a place.

A detector marks "Bulgarian" as a location or an organisation; a city or company drawn for it
("four North Robin nationals") no longer reads as a nationality. ``nationalities.txt`` (beside this module)
lists each nationality's adjective, one-person and people forms; a span whose whole text is one of them gets the
same form of another line.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

NATIONALITIES_RESOURCE = "nationalities.txt"
Forms = tuple[str, str, str]  # adjective, one person, people


@cache
def nationalities() -> tuple[Forms, ...]:
    """The shipped nationalities, one ``(adjective, person, people)`` per line of ``nationalities.txt``."""
    content = resources.files(__package__).joinpath(NATIONALITIES_RESOURCE).read_text(encoding="utf-8")
    rows: list[Forms] = []
    for line in content.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            adjective, person, people = (column.strip() for column in line.split("|"))
            rows.append((adjective, person, people))
    return tuple(rows)


@cache
def _index() -> dict[str, tuple[int, int]]:
    """Folded form -> (line, column); an adjective wins over a noun spelled the same (``American``)."""
    found: dict[str, tuple[int, int]] = {}
    for column in range(3):
        for line, forms in enumerate(nationalities()):
            found.setdefault(forms[column].casefold(), (line, column))
    return found


def nationality_form(text: str) -> tuple[int, int] | None:
    """Where ``text`` (any case, outer spaces ignored) is in the list: (line, column), or None for no nationality."""
    return _index().get(" ".join(text.split()).casefold())


def other_nationalities(line: int, column: int) -> list[str]:
    """The ``column`` form of every nationality but the one on ``line`` (the stand-ins a draw picks from)."""
    return [forms[column] for k, forms in enumerate(nationalities()) if k != line]
