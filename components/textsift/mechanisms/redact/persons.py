"""Person stand-ins that read as one person: the gender an honorific states, and every form of a name kept.

A stand-in drawn per string breaks two things a reader relies on. An honorific before a name states a
gender ("Mr Sarah Molina" contradicts it), so a name after Mr, Mrs, Ms, Miss, Sir, Lady, Mister or Madam
gets a first name of that gender (Faker en_US's first names of one gender only: "Jordan" or "Taylor" would
agree with neither). And a document names one person in several forms ("Mr John Smith", "Mr Smith",
"J. Smith", "John"): each form maps to the matching form of one stand-in (full name to full name, surname to
surname, first name to first name, an initial to the stand-in's initial), written in place of the
original's words so its punctuation and spacing stay.

A word alone after an honorific is a surname ("Mr Smith", "Dr Lee"), after Sir or Lady a first name
("Sir John"); a lone word with neither, unknown as a part of a fuller name, gets a whole stand-in name,
as before. The gender of a name without an honorific of its own comes from the honorifics the document
puts before its first name, else before its surname (unless its first name is one of the other gender's),
else from its first name (:func:`name_gender`).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from faker import Faker
from faker.providers.person.en_US import Provider as EnglishNames

from textsift.corpus import Span
from textsift.mechanisms.redact.shapes import like_case
from textsift.tokenize import Token, words

Gender = Literal["male", "female"]
Role = Literal["first", "surname"]
HONORIFICS: dict[str, tuple[Gender | None, Role]] = {
    "mr": ("male", "surname"), "mister": ("male", "surname"), "sir": ("male", "first"),
    "mrs": ("female", "surname"), "ms": ("female", "surname"), "miss": ("female", "surname"),
    "madam": ("female", "surname"), "lady": ("female", "first"),
    "dr": (None, "surname"), "doctor": (None, "surname"), "prof": (None, "surname"), "professor": (None, "surname"),
}
# a capitalised word (so "I miss John" states nothing), an optional period, then only spaces up to the name
_BEFORE = re.compile(r"(?<!\w)([A-Z][A-Za-z]*)\.?\s+\Z")
_LOOK_BACK = 24  # characters before a name searched for its honorific


@dataclass(frozen=True)
class Mention:
    """A PERSON region: its text, its words (offsets in ``text``), and what an honorific before it says."""

    text: str
    words: tuple[Token, ...]
    gender: Gender | None
    role: Role | None

    @property
    def folded(self) -> tuple[str, ...]:
        """Its words case-folded: the key one form of a name is known by."""
        return tuple(w.text.casefold() for w in self.words)

    @property
    def names(self) -> tuple[str, ...]:
        """Its folded words that are not initials."""
        return tuple(w for w in self.folded if not _initial(w))


def mention(text: str, region: Span) -> Mention:
    """The mention of the PERSON ``region`` of ``text``, with the gender and role of an honorific before it."""
    before = _BEFORE.search(text[max(region.start - _LOOK_BACK, 0):region.start])
    gender, role = HONORIFICS.get(before.group(1).casefold(), (None, None)) if before else (None, None)
    original = text[region.start:region.end]
    return Mention(original, tuple(words(original)), gender, role)


def person_name(fake: Faker, words_wanted: int, gender: Gender | None) -> str:
    """A fake name of ``max(words_wanted, 2)`` words: first name(s) of ``gender`` (either without one), a surname.

    As many words as the original, so "Mary Ann Smith" has a stand-in word for each of its words."""
    firsts = [_first_name(fake, gender) for _ in range(max(words_wanted, 2) - 1)]
    return " ".join([*firsts, fake.last_name()])


def _first_name(fake: Faker, gender: Gender | None) -> str:
    """One first name from the seeded ``fake``: of ``gender`` only, or any (Faker's weights) without one."""
    return fake.first_name() if gender is None else fake.random_element(_first_names(gender))


@cache
def _first_names(gender: Gender) -> OrderedDict[str, float]:
    """Faker en_US's first names of ``gender`` (with their weights) that are not names of the other gender too."""
    mine, other = ((EnglishNames.first_names_male, EnglishNames.first_names_female) if gender == "male"
                   else (EnglishNames.first_names_female, EnglishNames.first_names_male))
    return OrderedDict((name, weight) for name, weight in mine.items() if name not in other)


@cache
def _folded_first_names(gender: Gender) -> frozenset[str]:
    """:func:`_first_names` case-folded, for looking an original name up."""
    return frozenset(name.casefold() for name in _first_names(gender))


@cache
def _any_first_names() -> frozenset[str]:
    """Every first name of Faker's en_US lists, case-folded, of either gender or both."""
    return frozenset(name.casefold() for name in (*EnglishNames.first_names_male, *EnglishNames.first_names_female))


def name_gender(name: str) -> Gender | None:
    """The gender of ``name``'s first name: its first word before the surname that is a first name in Faker's en_US
    lists, if that is a name of one gender only, else None. Words that are no first name are passed over, so a word
    a mention holds before the name keeps none of its gender ("Scientologist Tom Cruise", "Emperor Joshua Norton":
    GUM's person spans hold such words, and the stand-ins once got a random gender). The price: a given name
    Faker's lists lack before a middle name of the other gender reads as that gender ("Rainer Maria Rilke": female,
    where it was a random one before). A stand-in of the same gender
    keeps the text's pronouns right and one person one stand-in whether or not a document gives an honorific
    (``scope: corpus``). It tells what the pronouns already do."""
    found = [w.text.casefold() for w in words(name)]
    for word in found[:-1] or found:
        if word in _any_first_names():
            return next((g for g in ("male", "female") if word in _folded_first_names(g)), None)
    return None


def _initial(word: str) -> bool:
    """Whether a word is an initial (one letter: "J" of "J. Smith")."""
    return len(word) == 1 and word.isalpha()


def _only(genders: set[Gender]) -> Gender | None:
    """The one gender honorifics agree on; None for none, or for both (Mr and Mrs Smith)."""
    return next(iter(genders)) if len(genders) == 1 else None


class People:
    """One document's persons: each mention's stand-in, the matching form of one drawn stand-in name.

    ``draw(original, gender)`` is the keyed stand-in name of a string (``pseudonym_of``); names with the most
    name words are drawn first, so "Smith" and "J." find the full name they belong to, and a word after an
    honorific before the same word alone, so "Smith" is the surname "Mr Smith" says it is.
    """

    def __init__(self, draw: Callable[[str, Gender | None], str], mentions: Sequence[Mention]) -> None:
        self.draw = draw
        self.parts: dict[str, str] = {}  # a folded name word -> its stand-in word
        self.full: list[tuple[tuple[str, ...], list[str]]] = []  # each name of 2+ words and its stand-in words
        self.forms: dict[tuple[str, ...], list[str]] = {}  # a mention's folded words -> its stand-in words
        self.genders: dict[str, set[Gender]] = {}  # a folded name word -> the genders honorifics give it
        for m in mentions:
            if m.gender is not None:
                for word in m.names:
                    self.genders.setdefault(word, set()).add(m.gender)
        for m in sorted(mentions, key=lambda m: (-len(m.names), -len(m.words), m.role is None, m.folded)):
            self._stand_in_words(m)

    def stand_in(self, m: Mention) -> str:
        """``m``'s text with each word replaced by its stand-in word, in the original word's letter case."""
        if not m.words:
            return self.draw(m.text, m.gender)
        new = self._stand_in_words(m)
        if len(new) != len(m.words):  # a failed draw's placeholder stands for every word
            first, last = m.words[0], m.words[-1]
            return m.text[:first.start] + new[0] + m.text[last.end:]
        pieces, cursor = [], 0
        for word, stand_in in zip(m.words, new, strict=True):
            pieces += [m.text[cursor:word.start], like_case(word.text, stand_in)]
            cursor = word.end
        pieces.append(m.text[cursor:])
        return "".join(pieces)

    def _stand_in_words(self, m: Mention) -> list[str]:
        """One stand-in word per word of ``m`` (a lone word of no known role: the whole stand-in name)."""
        if m.folded in self.forms:
            return self.forms[m.folded]
        known = [self._known(m, word) for word in m.folded]
        if any(k is None for k in known):
            drawn = self.draw(m.text, self._gender(m)).split()
            lone = len(m.words) == 1 and m.role is None and not _initial(m.folded[0])
            if lone or len(drawn) != max(len(m.words), 2):  # no role to pick a word by, or no name drawn
                self.forms[m.folded] = [" ".join(drawn)]
                return self.forms[m.folded]
            fresh = _aligned(m, drawn)
            known = [k if k is not None else f for k, f in zip(known, fresh, strict=True)]
        new = [k for k in known if k is not None]
        for word, stand_in in zip(m.folded, new, strict=True):
            if not _initial(word):
                self.parts.setdefault(word, stand_in)
        if len(m.words) > 1:
            self.full.append((m.folded, new))
        self.forms[m.folded] = new
        return new

    def _known(self, m: Mention, word: str) -> str | None:
        """The stand-in word of ``word`` from names drawn before: its part, or for an initial the initial of the
        stand-in of a word it abbreviates in a drawn name holding all of ``m``'s other name words."""
        if not _initial(word):
            return self.parts.get(word)
        for name, stand_in in self.full:
            if set(m.names) <= set(name):
                for part, new in zip(name, stand_in, strict=True):
                    if part not in m.names and part[0] == word:
                        return new[0]
        return None

    def _gender(self, m: Mention) -> Gender | None:
        """The gender the document's honorifics give ``m``: its own, else its first name's, else its surname's (None:
        none, and ``pseudonym_of`` goes by the first name itself)."""
        if m.gender is not None or not m.names:
            return m.gender
        first = _only(self.genders.get(m.names[0], set()))
        if first is not None or len(m.names) == 1:
            return first
        surname = _only(self.genders.get(m.names[-1], set()))
        return surname if name_gender(m.text) in (None, surname) else None  # "Ann Lee" and "Mr Lee": two people


def _aligned(m: Mention, drawn: list[str]) -> list[str]:
    """The drawn name's word for each word of ``m``: position by position, a lone word by its role (a surname after
    Mr, a first name after Sir or as an initial), an initial by its stand-in word's initial."""
    if len(m.words) == 1:
        picked = [drawn[-1] if m.role == "surname" else drawn[0]]
    else:
        picked = drawn
    return [new[0] if _initial(word) else new for word, new in zip(m.folded, picked, strict=True)]
