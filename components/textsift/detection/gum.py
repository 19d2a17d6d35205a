"""GUM and GENTLE: real English text of 23 genres with every entity mention annotated (METHODS.md §4.1).

The Georgetown University Multilayer corpus (GUM) and its out-of-domain companion GENTLE, one gzipped
CoNLL-U file per document in ``<folder>/conllu``, split by ``<folder>/splits.md``: GUM's train, dev
(-> ``validation``) and test, and GENTLE as ``test2`` (legal, medical, dictionary ... genres GUM lacks).
Court transcripts, biographies, letters and medical notes are what real sensitive corpora look like,
long and formally cased, where BTC and WNUT-17 are tweets. A listed document without a file is skipped
(GUM's Reddit texts are not distributed).

Text: each surface token's form (a multiword token ``We'll`` once, not its words ``We`` ``'ll``), a
space after it unless ``SpaceAfter=No``; sentences joined by a space, paragraphs (``# newpar``) by a
newline. A word inside a multiword token covers its own characters when the words spell the token
(``Lee's`` = ``Lee`` + ``'s``: GUM writes possessives so, and a name's span stops before the ``'s``),
else the whole surface token's.

GUM marks every mention (``We``, ``the petitioners``, ``this morning``); the named-entity rule that
turns mentions into DPER spans:

* person -> PERSON, place -> LOC, organization -> ORG when the mention is *named*: a word of its
  minimal span (``minspan``, 1-based word positions inside the mention) is a proper noun, or it has an
  ``identity`` (a Wikipedia title) and holds a proper noun that is a word of the identity (the
  identity alone is not enough: "a professor at X University" has the professor's identity and X's
  proper nouns). A proper noun is UPOS PROPN or PTB tag NNP/NNPS: GUM's UPOS sometimes tags a name's
  word by its form ("United" as VERB in "the United States") where its NNP keeps it a name part.
  The span runs from the first to the last proper noun of one *name*: proper nouns joined by nothing,
  quotes, hyphens or ``&``, and for places and organisations also by prepositions, determiners and
  conjunctions ("the United States" -> "United States", "the Museum of the City of Lund" -> "Museum
  of the City of Lund"; "Ann Lee of the Green Party" gives the person "Ann Lee"). The name chosen is
  the last one holding a word of the identity (a person's: of its own name, before the identity's comma and "of":
  "John FitzGibbon" for ``John_FitzGibbon,_2nd_Earl_of_Clare``), else the one holding the last proper noun of the
  minimal span (English heads come last: "webcomic artist Ann Lee"), so a mention's apposition or
  relative clause ("Lee, who ...") stays out. For PERSON the span starts after the name's titles
  (``TITLES``: Mr, Dr, General, Chief Justice, Senator ...; "Dr. Lee" -> "Lee", "State Senator Ann Lee"
  -> "Ann Lee"): a stand-in keeps the title and replaces the name. A title word ending a name ("Ann
  King") is a surname. A person name that is only titles ("Prime Minister") is dropped unless one of
  them is a word of its identity ("King" for ``Ann_King``; not when the identity is an office, a title "of"
  something: "President" for ``President_of_the_United_States`` names no one), and so is one ending in a plural
  proper noun (NNPS: "Americans", "The French", "Senate Democrats", "Puerto Ricans": a group, not a person, whatever
  its identity: GUM gives groups identities of their own, ``Americans``, ``French_people``). A name made only of
  nationality, ethnicity, religion or party words (``GROUP_WORDS``: "an American", "White", "Asian", "a Libertarian")
  is a group too, unless its identity is a person's ("White" for ``Jack_White``; "African" for ``South_Africans`` is a
  people's), and so is a party's role used as a name ("Petitioner", "the Appellee": ``PARTY_ROLES``) or a deity
  ("God"): none of them identifies a person. Neither does a role's complement, a name of at most two words after a
  preposition (and maybe a determiner) that shares no word with the identity's part before "of" ("Attorney at Law",
  "former Museum of Flight CEO", "Man of the Match"; "Catherine of Aragon" is named "Catherine"), nor a post-nominal
  ("John K. Bartram, Esquire" is named "John K. Bartram").
  A person's name comes before a clause that modifies it: no name after the mention's first relative word, finite
  verb, infinitive after "to" or participle followed by what follows a verb (a participle before its noun, "the
  lost Lenore", "the exiled Russian writer Solzhenitsyn", and a verb of naming, "a boy called Tom", are no
  clause), so "the first to win the Nobel Prize in Literature" and "a driver leaving from the George Washington
  Bus Station" name no one, and neither does "a producer for Maximum Ride, a film based on ...": the minimal
  span's last proper noun lies in the clause. A person named inside another mention by the next proper noun, an
  eponym ("Pittock" of "Pittock Mansion", "Nobel" of "the Nobel Prize"), is that mention's name, not a person
  mention (a possessive keeps it one: "Obama's White House").
* time -> DATE when the mention holds a word starting with a digit (1980, 1980s, 14th, 6:00; not
  "L2") or a month or weekday name (``MONTHS_AND_DAYS``); a vague time ("this morning", "later") names
  no date. The span is the mention without leading function words and adverbs (the, in, about, like),
  cut before a relative clause or bracket ("March 3, 1999 when it ..." -> "March 3, 1999") and trailing
  punctuation. Durations with a number ("30 days") count: they date an event as a date does.
* every other type (abstract, event, object, ...) is dropped.

Nested mentions all stay (the detector is nested); where two mentions give the same characters
("Lee" as a person inside the organization "the Lee administration"), the innermost mention's label
stays: it is the one the annotators marked on exactly those words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from textsift.corpus import Span
from textsift.detection.labelled import LabelledText
from textsift.detection.titles import plain, title_length
from textsift.errors import InputError
from textsift.readers import _read_bytes

SPLIT_SECTIONS = {"train": "train", "dev": "validation", "test": "test", "test2": "test2"}  # splits.md -> ours
GUM_TYPES = ("DATE", "LOC", "ORG", "PERSON")  # the DPER types GUM's rule gives
ETYPE_TO_DPER = {"person": "PERSON", "place": "LOC", "organization": "ORG"}
SCHEME = "GRP-etype-infstat-salience-centering-minspan-link-identity".split("-")
MONTHS_AND_DAYS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr jun "
    "jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday".split())
CONNECTOR_UPOS = frozenset({"ADP", "DET", "CCONJ"})  # words that may join proper nouns into a place or organisation
CONNECTOR_FORMS = frozenset({'"', "“", "”", "'", "‘", "’", "-", "&"})  # ... and into a person's name too
DATE_LEADING_UPOS = frozenset({"DET", "ADP", "ADV", "INTJ", "CCONJ", "SCONJ", "PUNCT"})  # "in", "about", "like"
RELATIVE_XPOS = frozenset({"WDT", "WP", "WP$", "WRB"})  # which, who, whose, when, where: a clause starts
DATE_BREAKS = frozenset({"(", "[", ";"})
NAMING_VERBS = frozenset({"named", "called", "nicknamed", "dubbed", "known", "titled", "styled", "christened"})
# words that make a person mention a group when its whole name is made of them (module docstring)
GROUP_WORDS = frozenset(
    "american african asian european hispanic latino latina latinx white black native indigenous aboriginal "
    "caucasian arab pacific islander indian alaskan hawaiian british english french german italian spanish "
    "portuguese dutch swedish polish greek russian ukrainian turkish iranian iraqi israeli palestinian egyptian "
    "nigerian chinese japanese korean vietnamese filipino pakistani bangladeshi mexican cuban brazilian "
    "argentinian canadian australian irish scottish welsh jewish muslim christian catholic protestant "
    "democrat republican libertarian conservative liberal socialist communist".split())  # ... or party
PEOPLE_WORDS = frozenset({"people", "peoples"})  # an identity naming a people: White_people
PARTY_ROLES = frozenset(
    "petitioner petitioners respondent respondents appellant appellants appellee appellees plaintiff plaintiffs "
    "defendant defendants claimant claimants applicant applicants".split())
DEITIES = frozenset({"god", "allah"})
POST_NOMINALS = frozenset({"esquire", "esq"})  # after a name and a comma: "John Bartram, Esquire"
_TOKEN_ID = re.compile(r"\d+(?:[-.]\d+)?")  # a word, a multiword token's range or an empty node
_MENTION = re.compile(r"\((\d+)-([^()]*)(\))?|(\d+)\)")  # an opening (GRP-fields, maybe closed at once) or GRP)


@dataclass(frozen=True)
class GumDocument:
    """One GUM/GENTLE document: its id (``GUM_court_loan``), genre (``court``) and labelled text."""

    doc_id: str
    genre: str
    example: LabelledText


@dataclass(frozen=True)
class _Word:
    """A syntactic word: its form, UPOS, PTB tag and the characters of its surface token."""

    form: str
    upos: str
    xpos: str
    start: int
    end: int

    @property
    def proper(self) -> bool:
        """A proper noun: UPOS PROPN or PTB tag NNP/NNPS (module docstring)."""
        return self.upos == "PROPN" or self.xpos in ("NNP", "NNPS")


@dataclass(frozen=True)
class _Mention:
    """An entity mention: its first and last word (document-wide indices) and its scheme fields."""

    first: int
    last: int
    fields: dict[str, str]


def _misc(column: str, key: str) -> str:
    """The value of ``key`` in a MISC column (``SpaceAfter=No|Entity=...``), "" when absent."""
    if f"{key}=" not in column:
        return ""
    return next((item[len(key) + 1:] for item in column.split("|") if item.startswith(f"{key}=")), "")


def _surface_tokens(rows: list[tuple[int, list[str]]]) -> list[tuple[list[str], list[tuple[int, list[str]]]]]:
    """A sentence's surface tokens, each with its words: a multiword token's range line with the words it
    covers, any other word with itself; empty nodes (``8.1``, no surface form) are left out."""
    tokens: list[tuple[list[str], list[tuple[int, list[str]]]]] = []
    covered = 0  # the last word id of the multiword token being read
    for line_no, cols in rows:
        if "." in cols[0]:
            continue
        if "-" in cols[0]:
            covered = int(cols[0].split("-")[1])
            tokens.append((cols, []))
        elif int(cols[0]) <= covered:
            tokens[-1][1].append((line_no, cols))
        else:
            tokens.append((cols, [(line_no, cols)]))
    return tokens


class _Builder:
    """Reads one CoNLL-U document line by line: its text, words and mentions."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.parts: list[str] = []
        self.length = 0
        self.words: list[_Word] = []
        self.mentions: list[_Mention] = []
        self.open: dict[str, list[tuple[int, dict[str, str]]]] = {}
        self.meta: dict[str, str] = {}
        self.new_paragraph = False

    def fail(self, line_no: int, problem: str) -> InputError:
        return InputError(f"GUM file {self.name}, line {line_no}: {problem}")

    def comment(self, line: str, line_no: int) -> None:
        """Document id, genre, entity scheme and paragraph starts from ``#`` lines."""
        key, _, value = line[1:].partition("=")
        key, value = key.strip(), value.strip()
        if key == "newpar" or key.startswith("newpar "):
            self.new_paragraph = True
        elif key == "global.Entity" and value.split("-") != SCHEME:
            raise self.fail(line_no, f"entity scheme {value!r} is not {'-'.join(SCHEME)}")
        elif key in ("newdoc id", "meta::genre"):
            self.meta[key] = value

    def sentence(self, rows: list[tuple[int, list[str]]]) -> None:
        """Appends one sentence: its surface tokens to the text, its words and mention brackets."""
        if self.parts:
            self._append("\n" if self.new_paragraph else " ")
        self.new_paragraph = False
        for surface, words in _surface_tokens(rows):
            start, end = self._token(surface)
            spelled = "".join(cols[1] for _, cols in words) == surface[1]
            for line_no, cols in words:
                self._word(cols, (start, start + len(cols[1])) if spelled else (start, end), line_no)
                start += len(cols[1]) if spelled else 0
        if self.parts[-1] == " ":  # no space after a sentence's last token: the separator follows
            self.length -= len(self.parts.pop())

    def _append(self, piece: str) -> None:
        self.parts.append(piece)
        self.length += len(piece)

    def _token(self, cols: list[str]) -> tuple[int, int]:
        """Appends a surface token (and the space after it), returning its characters."""
        start = self.length
        self._append(cols[1])
        end = self.length
        if _misc(cols[9], "SpaceAfter") != "No":
            self._append(" ")
        return start, end

    def _word(self, cols: list[str], surface: tuple[int, int], line_no: int) -> None:
        """Records a word and opens or closes the mentions its ``Entity`` brackets mark."""
        index = len(self.words)
        self.words.append(_Word(cols[1], cols[3], cols[4], *surface))
        for match in _MENTION.finditer(_misc(cols[9], "Entity")):
            group, body, closed, closing = match.groups()
            if group is not None:
                values = f"{group}-{body}".split("-", len(SCHEME) - 1)
                fields = dict(zip(SCHEME, values, strict=False))
                if closed:
                    self.mentions.append(_Mention(index, index, fields))
                else:
                    self.open.setdefault(group, []).append((index, fields))
            elif self.open.get(closing):
                first, fields = self.open[closing].pop()
                self.mentions.append(_Mention(first, index, fields))
            else:
                raise self.fail(line_no, f"entity {closing} closes without opening")

    def document(self, fallback_id: str) -> GumDocument:
        """The document read, its mentions turned into DPER spans (``_spans``)."""
        if any(self.open.values()):
            raise InputError(f"GUM file {self.name}: entities {sorted(k for k, v in self.open.items() if v)} "
                             "never close")
        if "meta::genre" not in self.meta:
            raise InputError(f"GUM file {self.name}: no '# meta::genre' line")
        text = "".join(self.parts)
        return GumDocument(self.meta.get("newdoc id", fallback_id), self.meta["meta::genre"],
                           LabelledText(text, _spans(self.words, self.mentions)))


def _plain(word: _Word) -> str:
    """A word lower-cased without dots, as titles and identities are compared (:func:`.titles.plain`)."""
    return plain(word.form)


def _title_length(words: list[_Word], at: int, last: int) -> int:
    """How many words of a title (``TITLES``, dots and case ignored) start at ``at`` and end by ``last``; 0: none."""
    return title_length([_plain(w) for w in words[at:last + 1]], 0)


def _after_titles(words: list[_Word], first: int, last: int) -> int | None:
    """The first proper noun after the titles in the name ``words[first:last + 1]`` (a title ending it is
    part of it: a surname); None when the name is only titles."""
    start, k = first, first
    while k <= last:
        length = _title_length(words, k, last)
        if length and k + length > last:
            if start == k:
                return None
            break
        start = k + length if length else start
        k += length or 1
    return next(k for k in range(start, last + 1) if words[k].proper)


def _names(words: list[_Word], label: str) -> list[tuple[int, int]]:
    """First and last word of each name: proper nouns joined by nothing or by connectors only (a person's
    name by quotes and hyphens alone: "Ann Lee of the Green Party" is a name and a party)."""
    names: list[tuple[int, int]] = []
    for k, word in enumerate(words):
        if not word.proper:
            continue
        joined = names and all(w.form in CONNECTOR_FORMS or label != "PERSON" and w.upos in CONNECTOR_UPOS
                               for w in words[names[-1][1] + 1:k])
        names[-1:] = [(names[-1][0], k)] if joined else [*names[-1:], (k, k)]
    return names


def _named(words: list[_Word], fields: Mapping[str, str], names: list[tuple[int, int]],
           identity: set[str]) -> tuple[int, int] | None:
    """The name a mention is named by: the last one sharing a word with its identity, else the one holding the
    last proper noun of its minimal span, post-nominals aside (English heads come last: "webcomic artist Ann Lee";
    "John K. Bartram, Esquire"); None: unnamed."""
    matching = [(a, b) for a, b in names if any(w.proper and _plain(w) in identity for w in words[a:b + 1])]
    minimal = [int(p) - 1 for p in fields.get("minspan", "").split(",") if p.isdigit()]
    heads = [p for p in minimal if 0 <= p < len(words) and words[p].proper and _plain(words[p]) not in POST_NOMINALS]
    if matching:
        return matching[-1]
    return next((name for name in names if name[0] <= heads[-1] <= name[1]), None) if heads else None


def _person_names(words: list[_Word], own: set[str]) -> list[tuple[int, int]]:
    """The names a person mention may be named by (module docstring): before any clause modifying it and not a role's
    complement, a name of at most two words after a preposition (and maybe a determiner) that holds no word of the
    person's ``own`` name ("Attorney at Law", "Dean of Graduate Education", "Man of the Match"; "Aragon" of
    ``Catherine_of_Aragon`` too). Longer ones stay: this module joins adjacent proper nouns into one name, so an
    office's place glued to the name after it ("Governor of Washington Chris Gregoire") is one."""
    def complement(a: int, b: int) -> bool:
        before = a - 1 - (a > 1 and words[a - 1].upos == "DET")
        return (before >= 0 and words[before].upos == "ADP" and b - a < 2
                and not any(_plain(w) in own for w in words[a:b + 1]))
    return [(a, b) for a, b in _names(words, "PERSON") if b < _clause_start(words) and not complement(a, b)]


def _clause_start(words: list[_Word]) -> int:
    """Where a clause modifying a person mention starts (module docstring): its first relative word, finite verb,
    infinitive after "to", or participle followed by what follows a verb ("based on", "leaving from"; not one before
    its noun: "the lost Lenore", "the exiled Russian writer"); never a proper noun so tagged or a verb of naming. Its
    length when none does."""
    def starts_clause(k: int) -> bool:
        word = words[k]
        before, after = words[k - 1] if k else None, words[k + 1] if k + 1 < len(words) else None
        if word.xpos in RELATIVE_XPOS:
            return True
        if word.upos not in ("VERB", "AUX") or word.proper or word.form.lower() in NAMING_VERBS:
            return False
        if word.xpos in ("VBN", "VBG"):
            return after is None or after.upos not in ("NOUN", "PROPN", "ADJ", "ADV", "PUNCT")
        return word.xpos in ("VBD", "VBZ", "VBP") or (word.xpos == "VB" and before is not None
                                                      and before.xpos == "TO")
    return next((k for k in range(len(words)) if starts_clause(k)), len(words))


def _name_words(words: list[_Word], fields: Mapping[str, str], label: str) -> tuple[int, int] | None:
    """First and last word of a named mention's name (PERSON: after its titles), or None when not named."""
    ordered = [t for t in re.split(r"[_\W]+", fields.get("identity", "").lower()) if t]
    identity = set(ordered)
    if label == "PERSON":  # a person's own name: the identity before its comma and "of" ("Catherine" of Aragon)
        written = unquote(fields.get("identity", "")).lower()  # John_FitzGibbon%2C_2nd_Earl_of_Clare
        own = [t for t in re.split(r"[_\W]+", written.split(",")[0]) if t]
        own = own[:own.index("of")] if "of" in own else own
        name = _named(words, fields, _person_names(words, set(own)), set(own))
    else:
        name = _named(words, fields, _names(words, label), identity)
    if name is None:
        return None
    first, last = name
    if label != "PERSON":
        return first, last
    start = _after_titles(words, first, last)
    office = bool(title_length(ordered, 0)) and "of" in identity  # President_of_the_United_States
    if start is None and identity & {_plain(w) for w in words[first:last + 1]} and not office:
        start = first  # only titles, but the identity's: a name (King, for a person whose name it is)
    group = words[last].xpos == "NNPS"  # "Americans", "The French", "Senate Democrats": a group
    return None if start is None or group or _no_one(words[start:last + 1], ordered) else (start, last)


def _no_one(name: list[_Word], identity: list[str]) -> bool:
    """Whether a person mention's name identifies no one (module docstring): a party's role or a deity, or only group
    words with no identity or a group's ("White_people", "Americans", "African_American", "South_Africans")."""
    plain_words = {_plain(w) for w in name}
    if plain_words <= PARTY_ROLES | DEITIES:
        return True
    groupish = GROUP_WORDS | PEOPLE_WORDS | {"of", "the", "americas"}
    people = bool(identity) and (identity[-1] in PEOPLE_WORDS or identity[-1].removesuffix("s") in GROUP_WORDS
                                 and identity[-1].endswith("s"))
    return plain_words <= GROUP_WORDS and (people or all(t in groupish or t.removesuffix("s") in GROUP_WORDS
                                                         for t in identity))


def _date_words(words: list[_Word]) -> tuple[int, int] | None:
    """A time mention's date (module docstring), or None when it names none."""
    end = next((k for k, w in enumerate(words) if w.xpos in RELATIVE_XPOS or w.form in DATE_BREAKS), len(words))
    first = next((k for k in range(end) if words[k].upos not in DATE_LEADING_UPOS), end)
    last = next((k for k in range(end - 1, first - 1, -1) if words[k].upos != "PUNCT"), first - 1)
    dated = any(w.form[:1].isdigit() or w.form.lower().rstrip(".") in MONTHS_AND_DAYS for w in words[first:last + 1])
    return (first, last) if dated else None


def _mention_span(words: list[_Word], mention: _Mention) -> Span | None:
    """The DPER span a mention gives under the module's rule, or None."""
    inside = words[mention.first:mention.last + 1]
    etype = mention.fields.get("etype", "")
    if etype == "time":
        label, chosen = "DATE", _date_words(inside)
    elif etype in ETYPE_TO_DPER:
        label = ETYPE_TO_DPER[etype]
        chosen = _name_words(inside, mention.fields, label)
    else:
        return None
    return None if chosen is None else Span(inside[chosen[0]].start, inside[chosen[1]].end, label)


def _eponym(words: list[_Word], mention: _Mention, mentions: list[_Mention]) -> bool:
    """Whether a person mention is the start of another mention's name: the word after it is a proper noun inside a
    mention that holds both ("Pittock" of "Pittock Mansion"; a possessive between them does not count)."""
    after = mention.last + 1  # GUM puts a possessive's 's inside the mention ("Platt's" of "Platt's Hall")
    return (mention.fields.get("etype") == "person" and after < len(words) and words[after].proper
            and words[mention.last].xpos != "POS"
            and any(m.first <= mention.first and m.last >= after for m in mentions if m is not mention))


def _spans(words: list[_Word], mentions: list[_Mention]) -> tuple[Span, ...]:
    """Every mention's span; characters given by several mentions keep the innermost (fewest words) one's label."""
    best: dict[tuple[int, int], tuple[int, Span]] = {}
    for mention in mentions:
        span = None if _eponym(words, mention, mentions) else _mention_span(words, mention)
        size = mention.last - mention.first
        if span is not None and ((span.start, span.end) not in best or size < best[(span.start, span.end)][0]):
            best[(span.start, span.end)] = (size, span)
    return tuple(sorted((s for _, s in best.values()), key=lambda s: (s.start, -s.end, s.label)))


def _sentences(lines: list[str], builder: _Builder) -> Iterator[list[tuple[int, list[str]]]]:
    """The token rows of each sentence (comment lines go to ``builder``), with their line numbers."""
    rows: list[tuple[int, list[str]]] = []
    for line_no, line in enumerate(lines, start=1):
        if line.startswith("#"):
            builder.comment(line, line_no)
        elif line.strip():
            cols = line.split("\t")
            if len(cols) != 10 or not _TOKEN_ID.fullmatch(cols[0]):
                raise builder.fail(line_no, "not a CoNLL-U token line (10 columns, a word id first)")
            rows.append((line_no, cols))
        elif rows:
            yield rows
            rows = []
    if rows:
        yield rows


def read_gum_file(path: Path) -> GumDocument:
    """One CoNLL-U document (gzipped or not) as text and DPER spans.

    Raises:
        InputError: the file is missing, not UTF-8, or not well-formed CoNLL-U (the message names the
            file and line, never its text).
    """
    try:
        lines = _read_bytes(path).decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise InputError(f"GUM file {path.name}: not UTF-8 at byte {err.start}") from None
    builder = _Builder(path.name)
    for rows in _sentences(lines, builder):
        builder.sentence(rows)
    return builder.document(path.name.split(".")[0])


def read_splits(path: Path) -> dict[str, list[str]]:
    """Document names per split from ``splits.md`` (``## dev`` sections of ``* name`` items), our split names."""
    out: dict[str, list[str]] = {}
    section: str | None = None
    for line in _read_bytes(path).decode("utf-8", "replace").splitlines():
        if line.startswith("## "):
            section = SPLIT_SECTIONS.get(line[3:].strip())
            if section is not None:
                out[section] = []
        elif section is not None and line.strip().startswith("* "):
            out[section].append(line.strip()[2:].strip())
    return out


def read_gum(path: str | Path) -> dict[str, tuple[GumDocument, ...]]:
    """GUM's ``train``/``validation``/``test`` and GENTLE's ``test2`` documents, each in ``splits.md`` order.

    Raises:
        InputError: the folder lacks ``splits.md`` (or one of its four sections) or ``conllu/``, a split has
            no document file, or a file is unreadable (named, never quoted).
    """
    folder = Path(path)
    if not (folder / "splits.md").is_file() or not (folder / "conllu").is_dir():
        raise InputError(f"GUM folder {folder} lacks splits.md or conllu/ (detectors.data.gum_path; "
                         "set it to null to train without GUM)")
    splits = read_splits(folder / "splits.md")
    out: dict[str, tuple[GumDocument, ...]] = {}
    for split in SPLIT_SECTIONS.values():
        present = [f for name in splits.get(split, []) if (f := folder / "conllu" / f"{name}.conllu.gz").is_file()]
        if not present:
            raise InputError(f"GUM folder {folder}: no document of split {split} (splits.md, conllu/)")
        out[split] = tuple(read_gum_file(f) for f in present)
    return out


def gum_examples(documents: Mapping[str, tuple[GumDocument, ...]]) -> dict[str, tuple[LabelledText, ...]]:
    """The labelled texts of each split (whole documents; the detector's data cuts them)."""
    return {split: tuple(doc.example for doc in docs) for split, docs in documents.items()}
