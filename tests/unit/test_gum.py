"""GUM + GENTLE as detector data: the CoNLL-U reader, the named-entity rule, splits (METHODS.md §4.1)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA
from textsift.detection.gum import GUM_TYPES, GumDocument, gum_examples, read_gum, read_gum_file
from textsift.detection.labelled import LabelledText
from textsift.detection.params import DetectorDataParams
from textsift.detection.real_corpora import GUM_TEST_SETS, real_test_sets
from textsift.detection.titles import TITLES
from textsift.detection.training_data import build_detector_data, real_corpus_paths, split_long
from textsift.errors import InputError

HEADER = ("# newdoc id = {doc_id}\n"
          "# global.Entity = GRP-etype-infstat-salience-centering-minspan-link-identity\n"
          "# meta::genre = {genre}\n")
# Invented text. Sentence 1: a titled person whose possessive is a multiword token that spells it, an object
# mention around it, an organisation with a place nested, a time mention with a weekday. Sentence 2: a
# common-noun person, a pronoun in a multiword token, an empty node, a dated time mention with a nested year,
# a vague time. Paragraph 2: a multiword token that does not spell its words, a title-only person, a person
# inside an organisation named by its identity (same characters), "United" tagged VERB (NNP).
ROWS = """# newpar
# text = Dr. Ann Lee's letter reached the Bank of Lund this Monday.
1	Dr.	Dr.	PROPN	NNP	_	_	_	_	Entity=(2-object-new-nnnnn-cf2-5-sgl(1-person-new-sssss-cf1-2,3-coref-Ann_Lee
2	Ann	Ann	PROPN	NNP	_	_	_	_	_
3-4	Lee's	_	_	_	_	_	_	_	_
3	Lee	Lee	PROPN	NNP	_	_	_	_	Entity=1)
4	's	's	PART	POS	_	_	_	_	_
5	letter	letter	NOUN	NN	_	_	_	_	Entity=2)
6	reached	reach	VERB	VBD	_	_	_	_	_
7	the	the	DET	DT	_	_	_	_	Entity=(3-organization-new-sssss-cf3-2-coref-Bank_of_Lund
8	Bank	Bank	PROPN	NNP	_	_	_	_	_
9	of	of	ADP	IN	_	_	_	_	_
10	Lund	Lund	PROPN	NNP	_	_	_	_	Entity=(4-place-new-sssss-cf4-1-coref-Lund)3)
11	this	this	DET	DT	_	_	_	_	Entity=(5-time-new-nnnnn-cf5-2-sgl
12	Monday	Monday	PROPN	NNP	_	_	_	_	Entity=5)|SpaceAfter=No
13	.	.	PUNCT	.	_	_	_	_	_

# text = The clerk said we'll answer in May 2020, not this morning.
1	The	the	DET	DT	_	_	_	_	Entity=(6-person-new-nnnnn-cf6-2-sgl
2	clerk	clerk	NOUN	NN	_	_	_	_	Entity=6)
3	said	say	VERB	VBD	_	_	_	_	_
4-5	we'll	_	_	_	_	_	_	_	_
4	we	we	PRON	PRP	_	_	_	_	Entity=(7-person-new-nnnnn-cf7-1-coref)
5	'll	will	AUX	MD	_	_	_	_	_
6	answer	answer	VERB	VB	_	_	_	_	_
6.1	answer	answer	VERB	VB	_	_	_	_	CopyOf=6
7	in	in	ADP	IN	_	_	_	_	Entity=(8-time-new-nnnnn-cf8-2-sgl
8	May	May	PROPN	NNP	_	_	_	_	_
9	2020	2020	NUM	CD	_	_	_	_	Entity=(9-time-new-nnnnn-cf9-1-sgl)8)|SpaceAfter=No
10	,	,	PUNCT	,	_	_	_	_	_
11	not	not	PART	RB	_	_	_	_	_
12	this	this	DET	DT	_	_	_	_	Entity=(10-time-new-nnnnn-cf10-2-sgl
13	morning	morning	NOUN	NN	_	_	_	_	Entity=10)|SpaceAfter=No
14	.	.	PUNCT	.	_	_	_	_	_

# newpar
# text = Ann's here: Mr. President met Lee and the Lee administration in the United States.
1-2	Ann's	_	_	_	_	_	_	_	_
1	Ann	Ann	PROPN	NNP	_	_	_	_	Entity=(11-person-giv:act-sssss-cf1-1-coref-Ann_Lee)
2	is	be	AUX	VBZ	_	_	_	_	_
3	here	here	ADV	RB	_	_	_	_	SpaceAfter=No
4	:	:	PUNCT	:	_	_	_	_	_
5	Mr.	Mr.	PROPN	NNP	_	_	_	_	Entity=(12-person-new-sssss-cf2-1,2-coref
6	President	President	PROPN	NNP	_	_	_	_	Entity=12)
7	met	meet	VERB	VBD	_	_	_	_	_
8	Lee	Lee	PROPN	NNP	_	_	_	_	Entity=(1-person-giv:act-sssss-cf1-1-coref-Ann_Lee)
9	and	and	CCONJ	CC	_	_	_	_	_
10	the	the	DET	DT	_	_	_	_	Entity=(13-organization-new-sssss-cf3-3-coref-Lee_administration
11	Lee	Lee	PROPN	NNP	_	_	_	_	Entity=(1-person-giv:act-sssss-cf1-1-coref-Ann_Lee)
12	administration	administration	NOUN	NN	_	_	_	_	Entity=13)
13	in	in	ADP	IN	_	_	_	_	_
14	the	the	DET	DT	_	_	_	_	Entity=(14-place-new-sssss-cf4-2,3-coref-United_States
15	United	unite	VERB	NNP	_	_	_	_	_
16	States	State	PROPN	NNPS	_	_	_	_	Entity=14)|SpaceAfter=No
17	.	.	PUNCT	.	_	_	_	_	_
"""
TEXT = ("Dr. Ann Lee's letter reached the Bank of Lund this Monday. The clerk said we'll answer in May 2020, not "
        "this morning.\nAnn's here: Mr. President met Lee and the Lee administration in the United States.")
SPLITS = {"train": ["TEST_letter_lee", "TEST_letter_gone"], "dev": ["TEST_letter_dev"],
          "test": ["TEST_letter_test"], "test2": ["TEST_legal_test"]}
DAYS = {"TEST_letter_dev": "Tuesday", "TEST_letter_test": "Friday", "TEST_legal_test": "Sunday"}  # distinct texts


def _strings(ex: LabelledText) -> list[tuple[str, str]]:
    return [(ex.text[s.start:s.end], s.label) for s in ex.spans]


def _write(path: Path, doc_id: str = "TEST_letter_lee", genre: str = "letter") -> Path:
    text = HEADER.format(doc_id=doc_id, genre=genre) + ROWS.replace("Monday", DAYS.get(doc_id, "Monday"))
    path.write_bytes(gzip.compress(text.encode("utf-8")))
    return path


def _read_invented(tmp_path: Path, doc_id: str, genre: str, rows: str) -> LabelledText:
    """An invented CoNLL-U document (``HEADER`` and ``rows``) written as GUM ships it and read back."""
    path = tmp_path / f"{doc_id}.conllu.gz"
    path.write_bytes(gzip.compress((HEADER.format(doc_id=doc_id, genre=genre) + rows).encode()))
    return read_gum_file(path).example


def _gum_folder(root: Path) -> Path:
    """A GUM-shaped folder: splits.md (one listed training document has no file, as Reddit's) and conllu/."""
    (root / "conllu").mkdir(parents=True)
    (root / "splits.md").write_text("# Splits\n\nintro\n\n" + "".join(
        f"## {section}\n\n" + "".join(f"  * {name}\n" for name in names) + "\n" for section, names in SPLITS.items()),
        encoding="utf-8")
    for names in SPLITS.values():
        for name in names:
            if name != "TEST_letter_gone":
                _write(root / "conllu" / f"{name}.conllu.gz", name, name.split("_")[1])
    return root


def test_text_is_rebuilt_from_surface_tokens_and_mentions_follow_the_rule(tmp_path: Path) -> None:
    doc = read_gum_file(_write(tmp_path / "TEST_letter_lee.conllu.gz"))
    assert (doc.doc_id, doc.genre) == ("TEST_letter_lee", "letter")
    assert doc.example.text == TEXT
    assert _strings(doc.example) == [
        ("Ann Lee", "PERSON"),  # title left out; the possessive's word 's stays out (the words spell Lee's)
        ("Bank of Lund", "ORG"), ("Lund", "LOC"), ("Monday", "DATE"),  # nested; "this" left out
        ("May 2020", "DATE"), ("2020", "DATE"),  # "in" left out; "this morning", "we", "The clerk" give nothing
        ("Ann's", "PERSON"),  # Ann + is do not spell Ann's: the word covers the whole surface token
        ("Lee", "PERSON"), ("Lee", "PERSON"),  # "Mr. President" is only titles; Lee inside the organisation
        ("United States", "LOC"),
    ]
    assert doc.example.spans[0].start == 4 and doc.example.spans[-2].label == "PERSON"


def test_folder_splits_skip_absent_documents_and_errors_name_files_never_text(tmp_path: Path) -> None:
    folder = _gum_folder(tmp_path / "gum")
    documents = read_gum(folder)
    assert {split: [d.doc_id for d in docs] for split, docs in documents.items()} == {
        "train": ["TEST_letter_lee"], "validation": ["TEST_letter_dev"], "test": ["TEST_letter_test"],
        "test2": ["TEST_legal_test"]}
    assert documents["test2"][0].genre == "legal"
    with pytest.raises(InputError, match=r"detectors\.data\.gum_path"):
        read_gum(tmp_path / "nowhere")
    (folder / "conllu" / "TEST_legal_test.conllu.gz").unlink()
    with pytest.raises(InputError, match="test2"):
        read_gum(folder)
    bad = folder / "conllu" / "TEST_letter_dev.conllu.gz"
    bad.write_bytes(gzip.compress((HEADER + "1\tLee\tSecretword\n").encode()))
    with pytest.raises(InputError, match=r"TEST_letter_dev\.conllu\.gz, line 4") as caught:
        read_gum_file(bad)
    assert "Lee" not in str(caught.value) and "Secretword" not in str(caught.value)


def test_gum_joins_training_its_test_splits_never_train_and_are_the_real_test_sets(tmp_path: Path) -> None:
    folder = _gum_folder(tmp_path / "gum")
    params = DetectorDataParams(synthetic_docs=0, corpus_spans=False, gum_path=str(folder), real_case_rate=0.0)
    gum = gum_examples(read_gum(folder))
    data = build_detector_data(params, 7, gum=gum)
    assert data.annotated == {"gum": GUM_TYPES} and data.label_set == ("PERSON", "LOC", "ORG", "DATE")
    assert data.counts() == {"train": {"gum": 1}, "validation": {"gum": 1}, "test": {"gum": 2}}
    assert build_detector_data(params.model_copy(update={"gum_path": None}), 7, gum=gum).counts()["train"] == {}
    repeated = build_detector_data(params.model_copy(update={"gum_repeat": 3}), 7, gum=gum)
    assert repeated.counts() == {"train": {"gum": 3}, "validation": {"gum": 1}, "test": {"gum": 2}}  # train only
    assert set(repeated.train) == set(data.train) and repeated.test == data.test
    sets = real_test_sets(params.model_copy(update={"gum_path": "gum"}), root=tmp_path)
    assert set(sets) == set(GUM_TEST_SETS) and sets["gum_test2"] == gum["test2"]
    assert real_corpus_paths(params, None) == [folder]
    with pytest.raises(InputError, match=r"detectors\.data\.gum_path"):
        real_corpus_paths(params.model_copy(update={"gum_path": "nowhere/gum"}), tmp_path)


# --- the real corpus (../shared/data/gum beside the checkout; skipped on a fresh clone) ---

GUM_FOLDER = SHARED_DATA / "gum"


@pytest.fixture(scope="module")
def real_gum() -> dict[str, tuple[GumDocument, ...]]:
    if not (GUM_FOLDER / "splits.md").is_file():
        pytest.skip("GUM is absent from ../shared/data")
    return read_gum(GUM_FOLDER)


def _listed() -> dict[str, list[str]]:
    """splits.md's document names per section, read here independently of the reader."""
    listed: dict[str, list[str]] = {}
    for line in (GUM_FOLDER / "splits.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            listed[line[3:].strip()] = []
        elif line.strip().startswith("* ") and listed:
            listed[list(listed)[-1]].append(line.strip()[2:])
    return listed


def test_real_split_counts_match_splits_md_and_genres_are_read(real_gum: dict[str, tuple[GumDocument, ...]]) -> None:
    ours = {"train": "train", "dev": "validation", "test": "test", "test2": "test2"}
    for section, names in _listed().items():
        present = [n for n in names if (GUM_FOLDER / "conllu" / f"{n}.conllu.gz").is_file()]
        assert all("_reddit_" in n for n in set(names) - set(present))  # only Reddit's texts are not distributed
        assert [d.doc_id for d in real_gum[ours[section]]] == present
    assert all(d.genre and d.doc_id.split("_")[1] == d.genre for docs in real_gum.values() for d in docs)
    assert {d.genre for d in real_gum["test2"]} >= {"legal", "medical"}
    assert {d.genre for d in real_gum["test"]} == {d.genre for d in real_gum["train"]}


def test_real_spans_are_trimmed_in_range_and_of_every_type(real_gum: dict[str, tuple[GumDocument, ...]]) -> None:
    titled = re.compile(r"(?i)(?:" + "|".join(r"\.?\s+".join(t) for t in TITLES) + r")\.?\s")
    for docs in real_gum.values():
        for doc in docs:
            text = doc.example.text
            for s in doc.example.spans:
                assert 0 <= s.start < s.end <= len(text) and s.label in GUM_TYPES
                assert text[s.start:s.end] == text[s.start:s.end].strip(), (doc.doc_id, s)
                assert s.label != "PERSON" or not titled.match(text[s.start:s.end]), (doc.doc_id, s)
    for split in ("train", "test", "test2"):
        assert {s.label for d in real_gum[split] for s in d.example.spans} == set(GUM_TYPES)


def test_real_sentences_are_rebuilt_as_written(real_gum: dict[str, tuple[GumDocument, ...]]) -> None:
    for doc in (real_gum["test"][0], real_gum["test2"][0]):
        position = 0
        with gzip.open(GUM_FOLDER / "conllu" / f"{doc.doc_id}.conllu.gz", "rt", encoding="utf-8") as lines:
            for line in lines:
                if line.startswith("# text = "):
                    sentence = line[len("# text = "):].rstrip("\n")
                    found = doc.example.text.find(sentence, position)
                    assert found in (position, position + 1), doc.doc_id  # after one separator
                    position = found + len(sentence)
        assert position == len(doc.example.text)


def test_real_test_documents_never_reach_the_detectors_training_split(
        real_gum: dict[str, tuple[GumDocument, ...]]) -> None:
    params = DetectorDataParams(synthetic_docs=0, corpus_spans=False, gum_path=str(GUM_FOLDER))
    data = build_detector_data(params, 7, gum=gum_examples(real_gum))
    assert set(data.sources["train"]) == {"gum"} and data.train
    held_out = {piece.text for split in ("test", "test2") for d in real_gum[split]
                for piece in split_long(d.example, params.max_chars)}
    assert not held_out & {ex.text for ex in data.train}
    train_docs = [d.example.text.lower() for d in real_gum["train"]]  # re-cased training documents stay found
    assert all(any(ex.text.lower() in doc for doc in train_docs) for ex in data.train)
    assert held_out <= {ex.text for ex in data.test}


GROUPS = """# newpar
# text = Senate Democrats met Ann Williams.
1	Senate	Senate	PROPN	NNP	_	_	_	_	Entity=(1-person-new-nnnnn-cf1-2-coref
2	Democrats	Democrat	PROPN	NNPS	_	_	_	_	Entity=1)
3	met	meet	VERB	VBD	_	_	_	_	_
4	Ann	Ann	PROPN	NNP	_	_	_	_	Entity=(2-person-new-sssss-cf2-1,2-coref-Ann_Williams
5	Williams	Williams	PROPN	NNP	_	_	_	_	Entity=2)|SpaceAfter=No
6	.	.	PUNCT	.	_	_	_	_	_
"""


def test_a_person_mention_ending_in_a_plural_proper_noun_is_a_group_not_a_name(tmp_path: Path) -> None:
    example = _read_invented(tmp_path, "TEST_news_groups", "news", GROUPS)
    assert _strings(example) == [("Ann Williams", "PERSON")]


# Invented text. A group with its own identity (GUM gives "Americans" one), a plural proper noun whose identity is a
# person's (tagged as a group, read as one), an eponym inside a place, a possessive person inside a place, a clause
# naming someone else after a person mention's head, and a participle before a name.
NOT_PERSONS = """# newpar
# text = Americans met Edwards at the Pittock Mansion and Platt's Hall, the first to win the Nobel Prize, ...
1	Americans	American	PROPN	NNPS	_	_	_	_	Entity=(1-person-new-nnnnn-cf1-1-coref-Americans)
2	met	meet	VERB	VBD	_	_	_	_	_
3	Edwards	Edwards	PROPN	NNPS	_	_	_	_	Entity=(2-person-new-sssss-cf2-1-coref-John_Edwards)
4	at	at	ADP	IN	_	_	_	_	_
5	the	the	DET	DT	_	_	_	_	Entity=(3-place-new-sssss-cf3-2,3-coref-Pittock_Mansion
6	Pittock	Pittock	PROPN	NNP	_	_	_	_	Entity=(4-person-new-sssss-cf4-1-coref-Henry_Pittock)
7	Mansion	Mansion	PROPN	NNP	_	_	_	_	Entity=3)
8	and	and	CCONJ	CC	_	_	_	_	_
9-10	Platt's	_	_	_	_	_	_	_	_
9	Platt	Platt	PROPN	NNP	_	_	_	_	Entity=(5-place-new-sssss-cf5-3,4-sgl(6-person-new-sssss-cf6-1-sgl
10	's	's	PART	POS	_	_	_	_	Entity=6)
11	Hall	Hall	PROPN	NNP	_	_	_	_	Entity=5)|SpaceAfter=No
12	,	,	PUNCT	,	_	_	_	_	_
13	the	the	DET	DT	_	_	_	_	Entity=(7-person-new-sssss-cf7-2,7-sgl
14	first	first	ADJ	JJ	_	_	_	_	_
15	to	to	PART	TO	_	_	_	_	_
16	win	win	VERB	VB	_	_	_	_	_
17	the	the	DET	DT	_	_	_	_	_
18	Nobel	Nobel	PROPN	NNP	_	_	_	_	_
19	Prize	Prize	PROPN	NNP	_	_	_	_	Entity=7)|SpaceAfter=No
20	,	,	PUNCT	,	_	_	_	_	_
21	the	the	DET	DT	_	_	_	_	Entity=(8-person-new-sssss-cf8-3-sgl
22	lost	lose	VERB	VBN	_	_	_	_	_
23	Lenore	Lenore	PROPN	NNP	_	_	_	_	Entity=8)|SpaceAfter=No
24	.	.	PUNCT	.	_	_	_	_	_
"""


def test_groups_eponyms_and_names_in_a_modifying_clause_are_no_person_mentions(tmp_path: Path) -> None:
    example = _read_invented(tmp_path, "TEST_news_nonpersons", "news", NOT_PERSONS)
    assert _strings(example) == [
        ("Pittock Mansion", "LOC"),  # "Pittock" names the mansion here: no person mention of its own
        ("Platt", "PERSON"), ("Hall", "LOC"),  # a possessive keeps the person
        ("Lenore", "PERSON"),  # "lost" is a participle before the name, not a clause after it
    ]  # "Americans" and "Edwards" (NNPS) are groups whatever their identity; "the first to win ..." names no one


PARTICIPLES = """# newpar
# text = the exiled Russian writer Solzhenitsyn met a producer based in Lund
1	the	the	DET	DT	_	_	_	_	Entity=(1-person-new-sssss-cf1-5-sgl
2	exiled	exile	VERB	VBN	_	_	_	_	_
3	Russian	Russian	ADJ	JJ	_	_	_	_	_
4	writer	writer	NOUN	NN	_	_	_	_	_
5	Solzhenitsyn	Solzhenitsyn	PROPN	NNP	_	_	_	_	Entity=1)
6	met	meet	VERB	VBD	_	_	_	_	_
7	a	a	DET	DT	_	_	_	_	Entity=(2-person-new-sssss-cf2-2,6-sgl
8	producer	producer	NOUN	NN	_	_	_	_	_
9	based	base	VERB	VBN	_	_	_	_	_
10	in	in	ADP	IN	_	_	_	_	_
11	Lund	Lund	PROPN	NNP	_	_	_	_	Entity=2)
"""


def test_a_participle_before_its_noun_is_no_clause_one_before_a_preposition_is(tmp_path: Path) -> None:
    example = _read_invented(tmp_path, "TEST_news_participles", "news", PARTICIPLES)
    assert _strings(example) == [("Solzhenitsyn", "PERSON")]  # "Lund" is where, not who


# Invented text. Person mentions that identify no one: a nationality with no identity, a race with a people's
# identity, a party's role, a deity, an office's title; beside them a surname that is a group word ("White" for
# Jack_White) and a title that is a person's name ("King" for Ann_King), which stay names.
NO_ONE = """# newpar
# text = An American told White voters, the Petitioner, God and the President about White and King.
1	An	a	DET	DT	_	_	_	_	Entity=(1-person-new-sssss-cf1-2-sgl
2	American	American	PROPN	NNP	_	_	_	_	Entity=1)
3	told	tell	VERB	VBD	_	_	_	_	_
4	White	White	PROPN	NNP	_	_	_	_	Entity=(2-person-new-sssss-cf2-1-sgl-White_people)
5	voters	voter	NOUN	NNS	_	_	_	_	SpaceAfter=No
6	,	,	PUNCT	,	_	_	_	_	_
7	the	the	DET	DT	_	_	_	_	Entity=(3-person-new-sssss-cf3-2-sgl
8	Petitioner	Petitioner	PROPN	NNP	_	_	_	_	Entity=3)|SpaceAfter=No
9	,	,	PUNCT	,	_	_	_	_	_
10	God	God	PROPN	NNP	_	_	_	_	Entity=(4-person-new-sssss-cf4-1-sgl-God)
11	and	and	CCONJ	CC	_	_	_	_	_
12	the	the	DET	DT	_	_	_	_	Entity=(5-person-new-sssss-cf5-2-sgl-President_of_the_United_States
13	President	President	PROPN	NNP	_	_	_	_	Entity=5)
14	about	about	ADP	IN	_	_	_	_	_
15	White	White	PROPN	NNP	_	_	_	_	Entity=(6-person-new-sssss-cf6-1-sgl-Jack_White)
16	and	and	CCONJ	CC	_	_	_	_	_
17	King	King	PROPN	NNP	_	_	_	_	Entity=(7-person-new-sssss-cf7-1-sgl-Ann_King)|SpaceAfter=No
18	.	.	PUNCT	.	_	_	_	_	_
"""


def test_groups_roles_deities_and_offices_are_no_person_but_a_persons_own_name_stays(tmp_path: Path) -> None:
    example = _read_invented(tmp_path, "TEST_court_noone", "court", NO_ONE)
    assert _strings(example) == [("White", "PERSON"), ("King", "PERSON")]
    assert example.spans[0].start == example.text.rindex("White")  # Jack White's, not the voters'


# Invented text. A role's complement (a name of one or two words, not the person's identity), a post-nominal after a
# comma, a party's member, a people named by its identity ("South_Africans"), a place after "of" in a person's
# identity, a complement after a determiner; beside them an office's place glued to the name after it, which stays.
COMPLEMENTS = """# newpar
# text = Professor of Psychiatry, John Bartram, Esquire, a Libertarian, African, Governor of Ohio Ann Lee, ...
1	Professor	Professor	PROPN	NNP	_	_	_	_	Entity=(1-person-new-sssss-cf1-1,3-sgl
2	of	of	ADP	IN	_	_	_	_	_
3	Psychiatry	Psychiatry	PROPN	NNP	_	_	_	_	Entity=1)|SpaceAfter=No
4	,	,	PUNCT	,	_	_	_	_	_
5	John	John	PROPN	NNP	_	_	_	_	Entity=(2-person-new-sssss-cf2-1,2,4-sgl
6	Bartram	Bartram	PROPN	NNP	_	_	_	_	SpaceAfter=No
7	,	,	PUNCT	,	_	_	_	_	_
8	Esquire	Esquire	PROPN	NNP	_	_	_	_	Entity=2)|SpaceAfter=No
9	,	,	PUNCT	,	_	_	_	_	_
10	a	a	DET	DT	_	_	_	_	Entity=(3-person-new-sssss-cf3-2-sgl
11	Libertarian	Libertarian	PROPN	NNP	_	_	_	_	Entity=3)|SpaceAfter=No
12	,	,	PUNCT	,	_	_	_	_	_
13	African	African	PROPN	NNP	_	_	_	_	Entity=(4-person-new-sssss-cf4-1-sgl-South_Africans)|SpaceAfter=No
14	,	,	PUNCT	,	_	_	_	_	_
15	Governor	Governor	PROPN	NNP	_	_	_	_	Entity=(5-person-new-sssss-cf5-1,3,4,5-sgl
16	of	of	ADP	IN	_	_	_	_	_
17	Ohio	Ohio	PROPN	NNP	_	_	_	_	_
18	Ann	Ann	PROPN	NNP	_	_	_	_	_
19	Lee	Lee	PROPN	NNP	_	_	_	_	Entity=5)|SpaceAfter=No
20	,	,	PUNCT	,	_	_	_	_	_
21	Catherine	Catherine	PROPN	NNP	_	_	_	_	Entity=(6-person-new-sssss-cf6-1,3-sgl-Catherine_of_Aragon
22	of	of	ADP	IN	_	_	_	_	_
23	Aragon	Aragon	PROPN	NNP	_	_	_	_	Entity=6)|SpaceAfter=No
24	,	,	PUNCT	,	_	_	_	_	_
25	Man	Man	PROPN	NNP	_	_	_	_	Entity=(7-person-new-sssss-cf7-1,4-sgl
26	of	of	ADP	IN	_	_	_	_	_
27	the	the	DET	DT	_	_	_	_	_
28	Match	Match	PROPN	NNP	_	_	_	_	Entity=7)
"""


def test_a_roles_complement_a_post_nominal_a_party_member_and_a_people_are_no_persons_name(tmp_path: Path) -> None:
    example = _read_invented(tmp_path, "TEST_letter_roles", "letter", COMPLEMENTS)
    assert _strings(example) == [
        ("John Bartram", "PERSON"),  # the name before ", Esquire"
        ("Ohio Ann Lee", "PERSON"),  # three adjacent proper nouns are one name here: longer than a complement
        ("Catherine", "PERSON"),  # "Aragon" is her identity's place, after its "of": not her name
    ]  # "Psychiatry" (a professor's field), "a Libertarian" (a party's member), "African" (South_Africans), "Man of
    # the Match" (a prize's complement after a determiner): no one
