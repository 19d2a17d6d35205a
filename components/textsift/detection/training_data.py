"""The DPER detector's train/validation/test sets, mixed from three sources (METHODS.md §4.1).

Sources, each optional:
    corpus: the corpus's own gold spans (canonical frame: ``text``, ``split``, ``spans``; ``doc_id``
        names documents in errors). Its splits are kept: train -> train, validation -> validation,
        test -> test, so a corpus test document is never trained on. A corpus without any span gets
        silver labels on its training split from offline teachers (``silver``; unlabelled text
        would teach "nothing here is personal"), or is skipped when there are none.
    synthetic: ``synthetic.generate`` sentences (PERSON, LOC, ORG, JOB, EDU, DATE, EMAIL, PHONE, ID,
        URL, nested).
    WNUT-17: English social-media NER (``read_wnut17``). A folder keeps its own train/dev/test files.
    BTC: the Broad Twitter Corpus (``real_corpora.read_btc``), its own train/dev/test files.
    GUM: GUM + GENTLE, whole documents of 23 genres (``gum.read_gum``): GUM train/dev kept as splits,
        GUM test and GENTLE test2 both test (never trained on).

Synthetic (and single-file WNUT) examples are assigned by ``rng.stable_key(seed, STAGE, id)``
thresholds, so an example's split depends only on the seed and its id, never on how many examples
there are. Examples longer than ``max_chars`` are cut at sentence or word ends outside every span.
Finally a training example whose text also occurs in validation or test, or a validation example
whose text occurs in test, is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from textsift.corpus import SPLITS, Span, spans_to_python
from textsift.detection.gum import GUM_TYPES, gum_examples, read_gum
from textsift.detection.labelled import LabelledText
from textsift.detection.params import DetectorDataParams, SilverParams
from textsift.detection.real_corpora import (
    BTC_TO_DPER,
    WNUT17_FILES,
    drop_user_names,
    read_btc,
    read_conll_examples,
    relabel,
    resolve,
    wnut_mapping,
)
from textsift.detection.recognizers.base import Recognizer
from textsift.detection.silver import silver_spans
from textsift.detection.synthetic import generate
from textsift.detection.types import ENTITY_TYPES
from textsift.errors import InputError
from textsift.rng import stable_key

STAGE = "detector_data"
GUM_SPLITS = {"train": "train", "validation": "validation", "test": "test", "test2": "test"}  # GUM's -> detector's
_SENTENCE_END = ".!?\n"


@dataclass(frozen=True)
class DetectorData:
    """Examples per split, the source of each (same order), and the detector's label set.

    ``annotated`` names, per source, the labels that source annotates: WNUT-17 never marks dates,
    e-mails or IDs, the demo corpus never marks EDU, so a trainer may mask those labels' loss on
    that source's examples rather than learn them as negatives.
    """

    train: tuple[LabelledText, ...]
    validation: tuple[LabelledText, ...]
    test: tuple[LabelledText, ...]
    sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    label_set: tuple[str, ...] = ()
    annotated: dict[str, tuple[str, ...]] = field(default_factory=dict)
    dropped_duplicates: int = 0
    metrics: dict[str, float] = field(default_factory=dict)

    def counts(self) -> dict[str, dict[str, int]]:
        """Examples per split and source, e.g. ``{"train": {"synthetic": 16000, "corpus": 84}}``."""
        out: dict[str, dict[str, int]] = {}
        for split, names in self.sources.items():
            out[split] = {name: names.count(name) for name in dict.fromkeys(names)}
        return out


def hashed_split(example_id: str, seed: int, validation: float, test: float) -> str:
    """``test``, ``validation`` or ``train`` from a keyed hash of (seed, id): no dependence on set size."""
    u = stable_key(seed, STAGE, example_id) / 2.0**64
    return "test" if u < test else "validation" if u < test + validation else "train"


def _cut_at(text: str, blocked: set[int], start: int, max_chars: int) -> int:
    """The end of the piece from ``start``: a sentence end, else a word end, else any position
    outside every span within ``max_chars``; past it only when a span straddles the whole window."""
    limit = min(len(text), start + max_chars)
    allowed = [c for c in range(limit, start, -1) if c not in blocked]
    for good in (lambda c: text[c - 1] in _SENTENCE_END and (c == len(text) or text[c].isspace()),
                 lambda c: c == len(text) or text[c].isspace()):
        found = next((c for c in allowed if good(c)), None)
        if found is not None:
            return found
    if allowed:
        return allowed[0]
    return next(c for c in range(limit + 1, len(text) + 1) if c not in blocked)


def split_long(example: LabelledText, max_chars: int) -> list[LabelledText]:
    """``example`` cut into pieces of at most ``max_chars`` (longer only around an over-long span).

    Cuts never fall inside a span, so every span lands whole in one piece; whitespace at piece
    edges is dropped.
    """
    text = example.text
    if len(text) <= max_chars:
        return [example]
    blocked = {c for s in example.spans for c in range(s.start + 1, s.end)}
    pieces: list[LabelledText] = []
    start = 0
    while start < len(text):
        while start < len(text) and text[start].isspace():
            start += 1
        if start == len(text):
            break
        end = len(text) if len(text) - start <= max_chars else _cut_at(text, blocked, start, max_chars)
        piece = text[start:end].rstrip()
        spans = tuple(Span(s.start - start, s.end - start, s.label) for s in example.spans
                      if start <= s.start and s.end <= start + len(piece))
        pieces.append(LabelledText(piece, spans))
        start = end
    return pieces


def corpus_examples(frame: pd.DataFrame, mapping: Mapping[str, str]) -> list[tuple[str, LabelledText]]:
    """(split, example) for every corpus document, labels renamed; [] when no document has spans.

    Raises:
        InputError: a split that is not train/validation/test, or a span outside its text
            (the message names document ids, never text).
    """
    ids = frame["doc_id"].astype(str).tolist() if "doc_id" in frame else [f"row-{k}" for k in range(len(frame))]
    bad = [doc_id for doc_id, split in zip(ids, frame["split"], strict=True) if split not in SPLITS]
    if bad:
        raise InputError(f"{len(bad)} corpus documents have a split other than {SPLITS}, e.g. {bad[:5]}")
    spans = [spans_to_python(cell) for cell in frame["spans"]]
    if not any(spans):
        return []
    out = []
    for doc_id, text, split, doc_spans in zip(ids, frame["text"], frame["split"], spans, strict=True):
        try:
            example = LabelledText(str(text), tuple(doc_spans))
        except ValueError as err:
            raise InputError(f"corpus document {doc_id}: {err}") from None
        out.append((str(split), relabel(example, mapping, keep_unmapped=True)))
    return out


def read_wnut17(path: str | Path) -> dict[str, tuple[LabelledText, ...]]:
    """WNUT-17 examples with WNUT's own labels (``person``, ``location``, ...), read by ``readers``.

    Args:
        path: The WNUT-17 folder (``WNUT17_FILES`` become train/validation/test) or one CoNLL file
            (returned under ``"all"``, to be split by hash).

    Returns:
        Split (or ``"all"``) -> examples in file order. A tag naming several types
        (``B-creative-work,B-person``) keeps the first; records the reader flags are skipped.

    Raises:
        InputError: a file is missing or unreadable.
    """
    path = Path(path)
    files = {split: path / name for split, name in WNUT17_FILES.items()} if path.is_dir() else {"all": path}
    return {split: read_conll_examples(file) for split, file in files.items()}


def build_detector_data(params: DetectorDataParams, seed: int, corpus: pd.DataFrame | None = None,
                        wnut17: Mapping[str, Sequence[LabelledText]] | None = None,
                        btc: Mapping[str, Sequence[LabelledText]] | None = None,
                        gum: Mapping[str, Sequence[LabelledText]] | None = None,
                        teachers: Sequence[Recognizer] | None = None) -> DetectorData:
    """Mix the sources into train/validation/test (pure: the caller reads the files).

    Args:
        params: Sources, synthetic size, split shares, ``max_chars``.
        seed: Root seed (synthetic sentences and hashed splits derive from it).
        corpus: The canonical corpus frame, used when ``params.corpus_spans``.
        wnut17: ``read_wnut17(params.wnut17_path)``; ignored when ``params.wnut17_path`` is None.
            Training sentences with an unlabelled user name are left out (``drop_user_names``).
        btc: ``read_btc(params.btc_path)``; ignored when ``params.btc_path`` is None.
        gum: ``gum_examples(read_gum(params.gum_path))``; ignored when ``params.gum_path`` is None. Its
            ``test`` and ``test2`` splits both become test; its training documents appear ``params.gum_repeat``
            times (each copy re-cased by its own keyed draw).
        teachers: recognizers that label the corpus's training split (``params.silver``:
            :mod:`textsift.detection.silver`); their agreement figures land in ``metrics``.

    Returns:
        The three splits (corpus, then synthetic, WNUT-17, BTC, GUM examples), sources and label set.
        A share ``params.real_case_rate`` of real training sentences is re-cased (:func:`recase`).
    """
    rows: list[tuple[str, str, LabelledText]] = []  # (split, source, example)
    annotated: dict[str, tuple[str, ...]] = {}
    metrics: dict[str, float] = {}
    if params.corpus_spans and corpus is not None:
        rows += [(split, "corpus", ex) for split, ex in corpus_examples(corpus, params.corpus_labels)]
        if rows:
            annotated["corpus"] = tuple(sorted({s.label for _, _, ex in rows for s in ex.spans}))
        if teachers and silver_applies(params, corpus):
            rows, metrics = _with_silver(rows, corpus, params.silver, teachers)
            annotated["corpus"] = tuple(sorted({s.label for _, src, ex in rows if src == "corpus" for s in ex.spans}))
    if params.synthetic_docs:
        annotated["synthetic"] = ENTITY_TYPES
    for i, ex in enumerate(generate(params.synthetic_docs, seed)):
        rows.append((hashed_split(f"synthetic/{i}", seed, params.validation, params.test), "synthetic", ex))
    if params.wnut17_path is not None and wnut17 is not None:
        mapping = wnut_mapping(params.wnut17_labels)
        annotated["wnut17"] = tuple(sorted(set(mapping.values())))
        for part, examples in wnut17.items():
            kept = drop_user_names(examples) if part in ("train", "all") else examples
            for k, ex in enumerate(kept):
                split = part if part in SPLITS else hashed_split(f"wnut17/{part}/{k}", seed, params.validation,
                                                                 params.test)
                example = relabel(ex, mapping, keep_unmapped=False)
                rows.append((split, "wnut17", recase(example, seed, f"wnut17/{part}/{k}", params.real_case_rate)
                             if split == "train" else example))
    if params.btc_path is not None and btc is not None:
        annotated["btc"] = tuple(sorted(set(BTC_TO_DPER.values())))
        for part, examples in btc.items():
            rows += [(part, "btc", recase(ex, seed, f"btc/{part}/{k}", params.real_case_rate) if part == "train"
                      else ex) for k, ex in enumerate(examples)]
    if params.gum_path is not None and gum is not None:
        annotated["gum"] = GUM_TYPES
        for part, examples in gum.items():
            split = GUM_SPLITS[part]
            if split != "train":
                rows += [(split, "gum", ex) for ex in examples]
                continue
            rows += [("train", "gum", recase(ex, seed, f"gum/{part}/{k}" + (f"/{copy}" if copy else ""),
                                             params.real_case_rate))
                     for copy in range(params.gum_repeat) for k, ex in enumerate(examples)]
    return replace(_assemble(rows, params.max_chars, annotated), metrics=metrics)


def silver_applies(params: DetectorDataParams, corpus: pd.DataFrame | None) -> bool:
    """Whether teachers label the corpus: ``always``, or ``auto`` and the corpus has no gold span."""
    if corpus is None or not params.corpus_spans or params.silver.use == "never":
        return False
    return params.silver.use == "always" or not any(len(cell) for cell in corpus["spans"])


def _with_silver(rows: list[tuple[str, str, LabelledText]], corpus: pd.DataFrame, params: SilverParams,
                 teachers: Sequence[Recognizer]) -> tuple[list[tuple[str, str, LabelledText]], dict[str, float]]:
    """``rows`` with the corpus's training documents labelled by the teachers (gold spans kept and winning);
    other corpus splits stay as they are (without gold they are left out: nothing to score against)."""
    gold = {ex.text: ex for split, source, ex in rows if source == "corpus" and split == "train"}
    train = [str(t) for t, split in zip(corpus["text"], corpus["split"], strict=True) if split == "train"]
    train = train[: params.max_docs]
    spans, metrics = silver_spans(train, teachers, params.min_score,
                                  [list(gold[t].spans) if t in gold else [] for t in train] if gold else None)
    labelled = [("train", "corpus", LabelledText(t, tuple(s))) for t, s in zip(train, spans, strict=True)]
    kept = [r for r in rows if not (r[1] == "corpus" and r[0] == "train")]
    return labelled + kept, metrics


def recase(example: LabelledText, seed: int, example_id: str, rate: float) -> LabelledText:
    """The example in upper or lower case for a keyed-hash share ``rate`` of ids (offsets unchanged), else as is.

    Casing is how a detector trained on edited text misses ``JOHN SMITH`` in a form or
    ``john smith`` in a chat; changing case keeps every character offset (checked, as some
    characters change length when re-cased).
    """
    u = stable_key(seed, STAGE, f"case/{example_id}") / 2.0**64
    if u >= rate:
        return example
    text = example.text.upper() if u < rate / 2 else example.text.lower()
    return LabelledText(text, example.spans) if len(text) == len(example.text) else example


def _assemble(rows: list[tuple[str, str, LabelledText]], max_chars: int,
              annotated: dict[str, tuple[str, ...]]) -> DetectorData:
    """Cut long examples, drop train/validation texts that recur in a later split, collect labels."""
    by_split: dict[str, list[tuple[str, LabelledText]]] = {split: [] for split in SPLITS}
    for split, source, example in rows:
        by_split[split] += [(source, piece) for piece in split_long(example, max_chars)]
    dropped = 0
    seen: set[str] = set()
    for split in ("test", "validation", "train"):
        kept = [(s, ex) for s, ex in by_split[split] if ex.text not in seen]
        dropped += len(by_split[split]) - len(kept)
        seen |= {ex.text for _, ex in by_split[split]}
        by_split[split] = kept
    found = {s.label for pairs in by_split.values() for _, ex in pairs for s in ex.spans}
    found |= {label for labels in annotated.values() for label in labels}
    base = [t for t in ENTITY_TYPES if t in found]
    return DetectorData(
        *(tuple(ex for _, ex in by_split[split]) for split in SPLITS),
        sources={split: tuple(s for s, _ in by_split[split]) for split in SPLITS},
        label_set=(*base, *sorted(found - set(base))),
        annotated=annotated,
        dropped_duplicates=dropped,
    )


def real_corpus_paths(params: DetectorDataParams, root: Path | None) -> list[Path]:
    """The WNUT-17, BTC and GUM paths that ``params`` sets, resolved against ``root``.

    Raises:
        InputError: a set path does not exist, naming its param (a digest or a reader would fail on it later,
            without saying which setting to change).
    """
    paths = []
    for name in ("wnut17_path", "btc_path", "gum_path"):
        given = getattr(params, name)
        if given is None:
            continue
        path = resolve(given, root)
        if not path.exists():
            raise InputError(f"{path} does not exist (detectors.data.{name}; the real corpora lie in "
                             "../shared/data beside the checkout; set it to null to train without them)")
        paths.append(path)
    return paths


def limited(splits: dict[str, tuple[LabelledText, ...]], limit: int | None) -> dict[str, tuple[LabelledText, ...]]:
    """The first ``limit`` training sentences (GUM: documents) of a real corpus (its other splits whole)."""
    return {k: v[:limit] if limit is not None and k in ("train", "all") else v for k, v in splits.items()}


def load_detector_data(params: DetectorDataParams, seed: int, corpus: pd.DataFrame | None = None,
                       root: Path | None = None, teachers: Sequence[Recognizer] | None = None) -> DetectorData:
    """``build_detector_data`` with WNUT-17, BTC and GUM read from their paths (relative to ``root``; for the stage)."""
    wnut = limited(read_wnut17(resolve(params.wnut17_path, root)), params.real_limit) if params.wnut17_path else None
    btc = limited(read_btc(resolve(params.btc_path, root)), params.real_limit) if params.btc_path else None
    gum = (limited(gum_examples(read_gum(resolve(params.gum_path, root))), params.real_limit) if params.gum_path
           else None)
    return build_detector_data(params, seed, corpus, wnut, btc, gum, teachers)


