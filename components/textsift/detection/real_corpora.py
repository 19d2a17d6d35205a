"""Real annotated text for the detector: the Broad Twitter Corpus and WNUT-17 (METHODS.md §4.1).

Both are English social media with entities marked by people, the text a detector trained on
synthetic sentences fails on. Each keeps its own train/dev/test files as splits; the test files
never train and are the held-out real-text figures of ``train_detectors`` and ``make bench``.

BTC (CC-BY 4.0, ``btc/{train.conll.gz, dev.conll, test.conll}``, PER/LOC/ORG): its CoNLL export
splits a user name ``@colgo`` into the tokens ``@`` and ``colgo``, often each tagged ``B-PER``.
The reader restores the user name (``@colgo``, one token) and its span covers the whole name
when either piece is tagged: a user name identifies whoever it names. Labels become DPER's
(PER -> PERSON).

WNUT-17 (``wnut17/``): its annotators left user names (``@paulwalk``) unlabelled, which would
teach a detector that a user name is not personal; ``drop_user_names`` leaves the sentences that
hold one out of training (the test file has none).

:func:`real_test_sets` gathers the held-out test files of BTC, WNUT-17 and GUM (:mod:`textsift.detection.gum`):
what ``detect`` and the bench score the detector on, without the synthetic generator and the training data's
assembly (:mod:`textsift.detection.training_data`) that only ``train_detectors`` runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from textsift.corpus import Span
from textsift.detection.gum import gum_examples, read_gum
from textsift.detection.labelled import LabelledText
from textsift.detection.params import DetectorDataParams
from textsift.errors import InputError
from textsift.ingest_params import SourceParams
from textsift.readers import _read_bytes, read_records

BTC_FILES = {"train": "train.conll.gz", "validation": "dev.conll", "test": "test.conll"}
BTC_TO_DPER = {"PER": "PERSON", "LOC": "LOC", "ORG": "ORG"}
USER_NAME = re.compile(r"(?<![\w@])@\w{1,30}")
WNUT17_TYPES = ("person", "location", "corporation", "group", "product", "creative-work")
# person/location/corporation map directly; WNUT "group" (bands, teams, organizations) is ORG;
# products and creative works are not personal data and are dropped (their words become negatives).
WNUT17_TO_DPER = {"person": "PERSON", "location": "LOC", "corporation": "ORG", "group": "ORG"}
WNUT17_FILES = {"train": "wnut17train.conll", "validation": "emerging.dev.conll", "test": "emerging.test.annotated"}
GUM_TEST_SETS = {"gum_test": "test", "gum_test2": "test2"}  # real_test_sets name -> GUM split (test2: GENTLE)


def _tagged(tag: str) -> tuple[str, str]:
    """``("B"|"I"|"O", type)`` of a BIO tag (anything unparseable is outside)."""
    if len(tag) > 2 and tag[1] == "-" and tag[0] in "BI":
        return tag[0], tag[2:]
    return "O", ""


def _join_user_names(tokens: list[str], tags: list[str]) -> tuple[list[str], list[str]]:
    """``@`` followed by a name becomes one token ``@name``; its tag is the first tagged piece's, as B."""
    out_tokens: list[str] = []
    out_tags: list[str] = []
    k = 0
    while k < len(tokens):
        if tokens[k] == "@" and k + 1 < len(tokens) and re.fullmatch(r"\w+", tokens[k + 1]):
            kinds = [_tagged(tags[k]), _tagged(tags[k + 1])]
            label = next((t for kind, t in kinds if kind != "O"), "")
            out_tokens.append("@" + tokens[k + 1])
            out_tags.append(f"B-{label}" if label else "O")
            k += 2
            continue
        out_tokens.append(tokens[k])
        out_tags.append(tags[k])
        k += 1
    return out_tokens, out_tags


def bio_example(tokens: Sequence[str], tags: Sequence[str], mapping: dict[str, str]) -> LabelledText:
    """Tokens joined by single spaces and their BIO spans, types renamed by ``mapping`` (others dropped)."""
    text, spans, position = [], [], 0
    current: list | None = None  # [start, end, source label] of the span being read
    for token, tag in zip(tokens, tags, strict=True):
        kind, label = _tagged(tag)
        start = position + (1 if text else 0)
        text.append(token)
        position = start + len(token)
        if current is not None and (kind != "I" or label != current[2]):
            spans.append(Span(current[0], current[1], mapping[current[2]]))
            current = None
        if kind == "I" and current is not None:
            current[1] = position
        elif kind != "O" and label in mapping:  # B-, or an I- that continues nothing (as conlleval reads it)
            current = [start, position, label]
    if current is not None:
        spans.append(Span(current[0], current[1], mapping[current[2]]))
    return LabelledText(" ".join(text), tuple(sorted(spans, key=lambda s: (s.start, -s.end, s.label))))


def read_btc_file(path: Path) -> tuple[LabelledText, ...]:
    """The sentences of one BTC CoNLL file (``token<TAB>tag``), user names restored, DPER labels."""
    examples = []
    for block in _read_bytes(path).decode("utf-8", "replace").split("\n\n"):
        rows = [line.split("\t") for line in block.split("\n") if line.strip()]
        rows = [(r[0].strip(), r[-1].strip() if len(r) > 1 else "O") for r in rows if r[0].strip()]
        if rows:
            tokens, tags = _join_user_names([r[0] for r in rows], [r[1] for r in rows])
            examples.append(bio_example(tokens, tags, BTC_TO_DPER))
    return tuple(examples)


def read_btc(path: str | Path) -> dict[str, tuple[LabelledText, ...]]:
    """BTC's train/validation/test splits from its folder (``BTC_FILES``).

    Raises:
        InputError: the folder or one of its files is missing.
    """
    folder = Path(path)
    missing = [name for name in BTC_FILES.values() if not (folder / name).is_file()]
    if missing:
        raise InputError(f"Broad Twitter Corpus folder {folder} lacks {missing} (detectors.data.btc_path; "
                         "set it to null to train without BTC)")
    return {split: read_btc_file(folder / name) for split, name in BTC_FILES.items()}


def drop_user_names(examples: Sequence[LabelledText]) -> tuple[LabelledText, ...]:
    """The examples without an unlabelled ``@user`` name (WNUT-17 never labels them)."""
    def unlabelled_name(ex: LabelledText) -> bool:
        return any(not any(s.start <= m.start() < s.end for s in ex.spans) for m in USER_NAME.finditer(ex.text))
    return tuple(ex for ex in examples if not unlabelled_name(ex))


def read_conll_examples(path: Path) -> tuple[LabelledText, ...]:
    """A CoNLL file's sentences with their own labels (the shared reader; flagged records skipped)."""
    if not path.is_file():
        raise InputError(f"annotated file not found: {path}")
    records = read_records(path, SourceParams(kind="file", path=str(path), format="conll", label_field=None))
    return tuple(LabelledText(rec.text, tuple(Span(s.start, s.end, s.label.split(",")[0]) for s in rec.spans))
                 for rec in records if rec.problem is None and rec.text)


def resolve(path: str, root: Path | None) -> Path:
    """A params path: as given when absolute, else relative to the project ``root`` (or the working folder)."""
    given = Path(path)
    return given if given.is_absolute() or root is None else root / given


def relabel(example: LabelledText, mapping: Mapping[str, str], keep_unmapped: bool) -> LabelledText:
    """Spans renamed by ``mapping``; a label not in it is kept (``keep_unmapped``) or dropped."""
    spans = [Span(s.start, s.end, mapping.get(s.label, s.label)) for s in example.spans
             if keep_unmapped or s.label in mapping]
    return LabelledText(example.text, tuple(sorted(set(spans), key=lambda s: (s.start, -s.end, s.label))))


def wnut_mapping(choice: Literal["dper", "own"] | dict[str, str]) -> dict[str, str]:
    """WNUT-17 type -> detector label: DPER's (``dper``), WNUT's own types (``own``) or a given mapping."""
    if choice == "dper":
        return dict(WNUT17_TO_DPER)
    return {t: t for t in WNUT17_TYPES} if choice == "own" else dict(choice)


def real_test_sets(params: DetectorDataParams, root: Path | None = None) -> dict[str, tuple[LabelledText, ...]]:
    """The held-out test split of each configured real corpus (``btc``, ``wnut17``, ``gum_test``, ``gum_test2``:
    GUM's test and GENTLE's, whole documents, ``GUM_TEST_SETS``), labels as the detector's.

    These never train the detector (``build_detector_data`` keeps each corpus's test file as
    its test split): the real-text figures of ``train_detectors``, ``detect`` and ``make bench``.
    A single-file WNUT-17 path has no test file and gives none.
    """
    out: dict[str, tuple[LabelledText, ...]] = {}
    if params.btc_path:
        out["btc"] = read_btc(resolve(params.btc_path, root))["test"]
    if params.wnut17_path and resolve(params.wnut17_path, root).is_dir():
        mapping = wnut_mapping(params.wnut17_labels)
        test = read_conll_examples(resolve(params.wnut17_path, root) / WNUT17_FILES["test"])
        out["wnut17"] = tuple(relabel(ex, mapping, keep_unmapped=False) for ex in test)
    if params.gum_path:
        gum = gum_examples(read_gum(resolve(params.gum_path, root)))
        out.update({name: gum[split] for name, split in GUM_TEST_SETS.items()})
    return out
