"""Person names their context gives away, whatever their form (METHODS.md §4.1).

The trained detector reads a name from its form and its neighbours, so it misses names that are also words ("Dr.
Means"), rare foreign surnames ("(Bassène, 2007)") and names not spelt in letters of a name at all. Three contexts
make a person's name certain, the oldest rules of de-identification (clinical note scrubbers, citation parsers):

    ==============  =====  ======================================================================================
    kind            score  what
    ==============  =====  ======================================================================================
    honorific       0.8    the capitalised words after Mr, Mrs, Ms, Mx, Dr, Prof, Messrs, Mme, Mlle (a dot or
                           not): "Dr. Means", "Mrs J. Smith" -> "J. Smith"; titles after the honorific stay
                           outside ("Mr. Justice Holmes" -> "Holmes"), a title alone names no one ("Mr.
                           President"); a particle may start it ("Mlle. du Motel"), a single letter may be
                           it ("Mrs. B"; not "A" or "I"), initials run together ("J.R.R. Tolkien"); a word
                           with a dot that is no initial ends it ("Mr. Chair. Thank you"), so does a
                           possessive, which stays outside ("Mr. Holland's Opus" -> "Holland"), and a
                           capitalised function word marks a title-cased headline, whose name is its first
                           word ("Dr. Fauci Warns Of New Variant" -> "Fauci")
    citation        0.7    each author of a parenthetical citation, one span per surname: "(Bassène, 2007)",
                           "(Lewis, Simons, & Fennig 2013: 4)", "(e.g. Smith et al., 2007; van Dijk 2010a, b)",
                           and of a narrative one with "et al.": "Smith et al. (2007)". An author is one or two
                           capitalised words with a lower-case letter (no acronym: "(WHO, 2019)" is an
                           organisation), no possessive, not a month, weekday, season, holiday, a document's
                           part or a word that dates ("(Table 2, 2007)", "(Spring 2007)", "(Since 2007)")
    pronunciation   0.6    an IPA transcription between slashes or brackets ("[ˈantoɲiːn ˈdvor̝aːk]", "/
                           d(ə)ˈvɔːrʒɑːk /") inside the parenthetical after a capitalised word, a name's
                           opening ("Antonín Dvořák (/.../; Czech: [...]; 8 September 1841 - ...)"): it spells
                           the name for anyone who reads IPA. It must hold a stress or length mark or an IPA
                           letter (U+0250-U+02AF), so "[sic]" and "and/or" are none, and a dictionary's "IPA
                           (key): /nɛkst/" follows no name; typed PERSON, as a biography's opening gives it,
                           also where it spells a place (a names-only setting then replaces a little more)
    ==============  =====  ======================================================================================

The scores rank these spans against the model's spans of other types over the same characters
(:func:`~textsift.detection.recognizers.merge.resolve`). The time grows linearly with the text: the one expression that
backtracks (:data:`CITED`) reads a single parenthetical of at most 400 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from textsift.detection.recognizers.base import Detection
from textsift.detection.titles import plain, title_length

HONORIFIC = re.compile(r"(?<![\w.])(?:Mr|Mrs|Ms|Mx|Dr|Prof|Messrs|Mme|Mlle)\.?[ \t]+(?=[^\W\d_])")
# a name word: capitalised letters, maybe joined by an apostrophe or hyphen ("O'Brien", "Smith-Jones"), or an initial
NAME_WORD = re.compile(r"(?:[^\W\d_]\.){2,}|[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*\.?")
INITIALS = re.compile(r"(?:[^\W\d_]\.)+")  # "J.", "J.R.R.": a dot that ends no sentence
POSSESSIVE = ("'s", "’s")
# capitalised words no name holds: after an honorific they mark a title-cased headline or title ("Dr. Fauci Warns Of
# New Variant"), whose name is its first word
TITLE_CASE_WORDS = frozenset("of the to in on at for and or with from by as is are was says said vs".split())
MAX_NAME_WORDS = 4
SURNAME_PARTICLES = frozenset("van von de da di du del der den le la ter ten".split())
NOT_AUTHORS = frozenset(
    "january february march april may june july august september october november december spring summer "
    "autumn fall winter table figure fig chapter section vol volume no page pp appendix part see cf eg ie "
    "also and et al jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday christmas easter since born died released remastered updated revised edition act".split())
PARENTHETICAL = re.compile(r"\(([^()\n]{1,400})\)")
YEAR = r"(?:1[5-9]|20)\d\d[a-z]?|n\.\s?d\."
CITED = re.compile(rf"(?P<authors>.+?),?\s+(?:{YEAR})(?:\s*,\s*[a-z](?!\w))*(?:\s*[:,]\s*(?:pp?\.\s*)?\d[\d\s,–-]*)?")
# a bounded surname (a name is no longer than 40 letters), so no run of letters and hyphens is read again from each of
# its hyphens: linear in the text
NARRATIVE = re.compile(rf"(?<![\w.'’-])(?P<author>[^\W\d_][\w'’-]{{0,40}})\s+et\s+al\.?,?\s*\((?:{YEAR})")
LEADING_CUES = re.compile(r"^(?:(?:e\.\s?g\.|i\.\s?e\.|see(?:\s+also)?|cf\.)\s*,?\s*)+", re.IGNORECASE)
AUTHOR_JOIN = re.compile(r"\s*(?:,\s*(?:&|and\b)?|&|\band\b)\s*")
TRANSCRIPTION = re.compile(r"/([^/\n]{1,120})/|\[([^\[\]\n]{1,160})\]")
IPA_MARKS = re.compile("[\u0250-\u02af\u02c8\u02cc\u02d0]")
NAME_PARENTHETICAL_REACH = 200


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def _name_word(word: str) -> bool:
    """A capitalised word of a name: a single letter too ("Mrs. B"), but not the article or pronoun ("Prof. A
    historian")."""
    return _capitalised(word) and word not in ("A", "I")


def _particle_before_name(text: str, word: re.Match[str]) -> bool:
    """A surname particle followed by a capitalised word ("Mlle. du Motel")."""
    after = NAME_WORD.match(text, word.end() + 1)
    return (word.group().lower() in SURNAME_PARTICLES and text[word.end():word.end() + 1] == " "
            and after is not None and _name_word(after.group()))


def _ends_sentence(word: str) -> bool:
    """A word with a dot that is no initial ends the sentence, and the name ("Mr. Chair. Thank you")."""
    return word.endswith(".") and INITIALS.fullmatch(word) is None


def _name_after(text: str, at: int) -> tuple[int, int] | None:
    """The name starting at ``at`` (after an honorific): up to :data:`MAX_NAME_WORDS` capitalised words joined by
    single spaces, titles before it skipped, a sentence's closing dot and a possessive left outside."""
    words: list[re.Match[str]] = []
    position = at
    while len(words) < MAX_NAME_WORDS and (word := NAME_WORD.match(text, position)) and (
            _name_word(word.group()) or _particle_before_name(text, word)):
        if word.group().lower() in TITLE_CASE_WORDS:  # a headline's or a title's words: its first is the name
            del words[1:]
            break
        words.append(word)
        if (_ends_sentence(word.group()) or word.group().endswith(POSSESSIVE)
                or not re.match(r" (?=[^\W\d_])", text[word.end():word.end() + 2])):
            break
        position = word.end() + 1
    plain_words = [plain(w.group()) for w in words]
    skip = 0
    while skip < len(words) and (n := title_length(plain_words, skip)):
        skip += n
    if skip >= len(words):
        return None
    first, last = words[skip], words[-1]
    end = last.end()
    if _ends_sentence(last.group()):  # "Smith." ends a sentence; "J." and "J.R.R." are initials
        end -= 1
    if text[end - 2:end] in POSSESSIVE:
        end -= 2
    return first.start(), end


def honorific_names(text: str) -> Iterator[tuple[int, int]]:
    """The names after honorifics (module docstring), as ``(start, end)``."""
    for match in HONORIFIC.finditer(text):
        if (name := _name_after(text, match.end())) is not None:
            yield name


def _author_spans(text: str, start: int, authors: str) -> Iterator[tuple[int, int]]:
    """The surnames of an author list ``authors`` found at ``text[start:]``; nothing when any part is no surname
    (a part that is not one or two capitalised words, maybe after a particle, is no author list)."""
    spans = []
    position = 0
    for part in AUTHOR_JOIN.split(authors):
        offset = authors.index(part, position)
        position = offset + len(part)
        found = list(re.finditer(r"\S+", re.sub(r"\s+et\s+al\.?$", "", part)))
        surname = [w.group() for w in found if w.group().lower() not in SURNAME_PARTICLES]
        if not found or not 1 <= len(surname) <= 2 or not all(
                _capitalised(w) and re.fullmatch(r"[^\W\d_][\w'’-]*", w) and any(c.islower() for c in w)
                and w.lower() not in NOT_AUTHORS and not w.endswith(POSSESSIVE) for w in surname):
            return
        spans.append((start + offset + found[0].start(), start + offset + found[-1].end()))
    yield from spans


def citation_authors(text: str) -> Iterator[tuple[int, int]]:
    """The authors of parenthetical and "et al." citations (module docstring), as ``(start, end)``."""
    for paren in PARENTHETICAL.finditer(text):
        position = paren.start(1)
        for cite in paren.group(1).split(";"):
            cue = LEADING_CUES.match(cite.lstrip())
            lead = len(cite) - len(cite.lstrip()) + (cue.end() if cue else 0)
            body = cite[lead:].rstrip()
            if (match := CITED.fullmatch(body)) is not None:
                yield from _author_spans(text, position + lead, match.group("authors"))
            position += len(cite) + 1
    for match in NARRATIVE.finditer(text):
        if match.group("author").lower() not in NOT_AUTHORS and _capitalised(match.group("author")):
            yield match.span("author")


def _in_names_parenthetical(text: str, at: int) -> bool:
    """Whether ``at`` lies inside a parenthetical opened right after a capitalised word, within
    :data:`NAME_PARENTHETICAL_REACH` characters: a name's opening ("Dvořák (/ˈdvɔːrʒɑːk/; Czech: [...]"), not a
    dictionary's "IPA (key): /nɛkst/"."""
    depth = 0
    for k in range(at - 1, max(-1, at - 1 - NAME_PARENTHETICAL_REACH), -1):
        if text[k] == ")":
            depth += 1
        elif text[k] == "(":
            if depth == 0:
                before = text[max(0, k - NAME_PARENTHETICAL_REACH):k].rstrip()  # a window: linear in the text
                word = re.search(r"[^\W\d_][\w'’.-]*$", before)
                return word is not None and _capitalised(word.group())
            depth -= 1
    return False


def pronunciations(text: str) -> Iterator[tuple[int, int]]:
    """IPA transcriptions of a name (module docstring), as ``(start, end)`` without the spaces inside the
    delimiters."""
    for match in TRANSCRIPTION.finditer(text):
        group = 1 if match.group(1) is not None else 2
        inner = match.group(group)
        if IPA_MARKS.search(inner) and inner.strip() and _in_names_parenthetical(text, match.start()):
            start = match.start(group) + len(inner) - len(inner.lstrip())
            yield start, match.start(group) + len(inner.rstrip())


KINDS = ((honorific_names, 0.8), (citation_authors, 0.7), (pronunciations, 0.6))


def find_name_cues(text: str) -> list[Detection]:
    """Every name of :data:`KINDS` in ``text``, a PERSON detection each, sorted (a span two kinds give once, at the
    higher score)."""
    best: dict[tuple[int, int], float] = {}
    for kind, score in KINDS:
        for span in kind(text):
            best[span] = max(best.get(span, 0.0), score)
    return sorted(Detection(start, end, "PERSON", score, NameCueRecognizer.name)
                  for (start, end), score in best.items())


class NameCueRecognizer:
    """The names of :func:`find_name_cues` as a recognizer (pure, no model)."""

    name = "name_cues"
    labels = ("PERSON",)

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        """Per text, the names its context gives away (:func:`find_name_cues`) scoring at least ``min_score``."""
        return [[d for d in find_name_cues(text) if d.score >= min_score] for text in texts]
