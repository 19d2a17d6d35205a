"""Names protected at no cost to the task, on real text, beside Presidio (issue 33's goal).

Each protected type set (``names``: PERSON; ``direct``: the direct identifiers; ``all``: every type) is applied
the same way to the spans of each detector — textsift's recognizer set as shipped (a trained project: asked for the
set's types, which it resolves among themselves, as a setting of those ``labels`` does) and Presidio over spaCy
``en_core_web_sm`` (its spans of those types) — with textsift's redactor (coherent keyed stand-ins), and measured
twice:

- **protection**: the share of gold PERSON mentions of GUM test and GENTLE test2 (held out: never trained on)
  that survive whole in the output (:func:`textsift.evaluation.privacy.leak_rates`: case-insensitive, anywhere
  in the document);
- **utility**: IMDB sentiment (reviews name actors, directors and characters): the TF-IDF + logistic-regression
  baseline of ``evaluate`` trained and tested on the first ``--names-train``/``--names-test`` reviews of each
  split, original and privatized; the accuracy and its drop from the original, with a paired percentile
  bootstrap interval over test reviews.

and, apart from any detector, **stand-ins**: over every human-annotated person mention of GUM (all splits: the
redactor learns from none), whether the stand-in's first name has the gender an honorific or the first name
states (:func:`gender_agreement`).

Presidio's types map PERSON/LOCATION/ORGANIZATION to PERSON/LOC/ORG (``bench.detector_real``), so its ``direct``
set is its PERSON spans. Draws use a public bench key: this measures what is replaced, not secrecy.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.detector_real import tools
from bench.harness import BENCH_KEY, Figure, cpu_device
from textsift.config import load_params
from textsift.corpus import Span
from textsift.detection.gum import gum_examples, read_gum
from textsift.detection.real_corpora import GUM_TEST_SETS, resolve
from textsift.detection.types import DIRECT_IDENTIFIERS, ENTITY_TYPES
from textsift.evaluation.bootstrap import bootstrap, percentile_interval
from textsift.evaluation.params import TfidfLogregParams
from textsift.evaluation.privacy import leak_rates
from textsift.evaluation.utility import as_frame, train_tfidf_logreg
from textsift.mechanisms.protected_spans import consistent_spans, outermost
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.persons import mention, name_gender
from textsift.mechanisms.redact.redactor import redact, redact_text
from textsift.rng import generator

log = logging.getLogger("bench")
IMDB = Path(__file__).resolve().parents[2] / "shared" / "data" / "imdb"
TYPE_SETS = {"names": ("PERSON",), "direct": DIRECT_IDENTIFIERS, "all": ENTITY_TYPES}
Detector = Callable[[Sequence[str], Sequence[str]], list[list[Span]]]  # (texts, types) -> each text's spans


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for flag, kwargs in (
        ("--real-project", {"type": Path, "default": Path("."), "help": "project whose trained detector is used"}),
        ("--names-train", {"type": int, "default": 2000, "help": "IMDB training reviews (the first N)"}),
        ("--names-test", {"type": int, "default": 2000, "help": "IMDB test reviews (the first N)"}),
        ("--names-samples", {"type": int, "default": 1000, "help": "bootstrap resamples of the accuracy drop"}),
    ):
        try:
            parser.add_argument(flag, **kwargs)
        except argparse.ArgumentError:  # --real-project is shared with detector_real
            pass


def read_imdb(split: str, limit: int) -> tuple[list[str], list[str]]:
    """The first ``limit`` reviews of an IMDB split (``train``/``test``) and their labels."""
    texts, labels = [], []
    with gzip.open(IMDB / f"{split}.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            texts.append(row["text"])
            labels.append(row["label"])
    order = generator(BENCH_KEY, "bench.names_task", split).permutation(len(texts))[:limit]  # both labels
    return [texts[k] for k in order], [labels[k] for k in order]


def detectors(root: Path) -> dict[str, Detector]:
    """textsift (when ``root`` holds a trained detector) resolving each type set among its candidates, and Presidio
    (when installed) with its spans of the types, each detecting a list of texts once: ``detector_real``'s tools
    without spaCy alone, which no one would redact with."""
    out: dict[str, Detector] = {}
    for name, run in tools(root).items():
        if name == "textsift":
            from textsift.detect import detect_candidates
            from textsift.detection.recognizers.merge import resolve

            out[name] = _once(lambda texts: detect_candidates(texts, root=root),
                              lambda text, found, types: [d.span for d in resolve(text, found, types)])
        elif name != "spacy":
            out[name] = _once(run, lambda text, found, types: [s for s in found if s.label in types])
    return out


def _once(run: Callable[[Sequence[str]], list[list[Any]]],
          select: Callable[[str, list[Any], Sequence[str]], list[Span]]) -> Detector:
    """``select`` of the asked types from what ``run`` found in each text, each list of texts detected once."""
    found: dict[tuple[str, ...], list[list[Any]]] = {}

    def spans(texts: Sequence[str], types: Sequence[str]) -> list[list[Span]]:
        key = tuple(texts)
        if key not in found:
            found[key] = run(texts)
        return [select(text, doc, types) for text, doc in zip(texts, found[key], strict=True)]
    return spans


def protect(texts: Sequence[str], spans: Sequence[Sequence[Span]], types: Sequence[str]) -> list[str]:
    """``texts`` with the spans of ``types`` among ``spans`` (and every repeat of them) replaced by redaction's
    stand-ins."""
    chosen = [[s for s in doc if s.label in types] for doc in spans]
    setting = RedactSetting(kind="redact", labels=list(types))
    return redact(texts, [f"d{k}" for k in range(len(texts))], chosen, setting, BENCH_KEY)[0]


def correct(train: tuple[list[str], list[str]], test: tuple[list[str], list[str]]) -> np.ndarray:
    """Per test review, whether the baseline trained on ``train`` labels it right (0/1)."""
    model = train_tfidf_logreg(*train, TfidfLogregParams(), BENCH_KEY)
    return (model.predict(as_frame(test[0])) == np.asarray(test[1])).astype(np.float64)


def drop_interval(original: np.ndarray, private: np.ndarray, samples: int, level: float = 0.95
                  ) -> tuple[float, float]:
    """Paired percentile bootstrap interval of ``mean(original) - mean(private)`` over the same test reviews."""
    diff = original - private
    values = bootstrap(len(diff), samples, generator(BENCH_KEY, "bench.names_task", "bootstrap"),
                       lambda idx: diff[idx].mean(axis=1))
    return percentile_interval(values, level)


def gender_agreement(texts: Sequence[str], persons: Sequence[Sequence[Span]]) -> dict[str, tuple[int, int]]:
    """(agreeing, judged) over gold person mentions whose stand-in has a first name (two words or more: "Mr John
    Smith", "Tom Cruise"; not "Mr Smith", whose stand-in is a surname), by what states the gender: ``honorific`` (a
    gendered honorific before the mention: Mr, Mrs, Ms, Miss, Sir, ...) and ``first_name`` (no honorific; a first
    name of one gender, :func:`~textsift.mechanisms.redact.persons.name_gender`). A mention agrees when its stand-in's
    first name is of that gender."""
    setting = RedactSetting(kind="redact", labels=["PERSON"])
    tally = {"honorific": [0, 0], "first_name": [0, 0]}
    for k, (text, spans) in enumerate(zip(texts, persons, strict=True)):
        record: list[tuple[str, str, str]] = []
        redact_text(text, spans, setting, BENCH_KEY, f"d{k}", record)
        regions = outermost(consistent_spans(text, spans))
        for region, (_, stand_in, _) in zip(regions, record, strict=True):
            found = mention(text, region)
            gender = found.gender or name_gender(found.text)
            if gender is None or (len(found.words) < 2 and found.role != "first"):
                continue
            first = next((w for w in stand_in.replace(".", " ").split() if len(w) > 1), "")  # initials kept as such
            counts = tally["honorific" if found.gender else "first_name"]
            counts[0] += name_gender(first) == gender
            counts[1] += 1
    return {kind: (agreeing, judged) for kind, (agreeing, judged) in tally.items()}


def figures(args: argparse.Namespace) -> list[Figure]:
    root = args.real_project.resolve()
    runners = detectors(root)
    params = load_params(root / "params.yaml").detectors.data
    splits = gum_examples(read_gum(resolve(params.gum_path, root))) if params.gum_path else {}  # read once
    gum = {name: splits[split] for name, split in GUM_TEST_SETS.items() if splits.get(split)}
    if not runners or not gum or not (IMDB / "train.jsonl.gz").exists():
        log.warning("names_task needs a detector, GUM (detectors.data.gum_path) and %s: skipped", IMDB)
        return []
    where = cpu_device()
    gum_texts = [ex.text for examples in gum.values() for ex in examples]
    gum_persons = [[s for s in ex.spans if s.label == "PERSON"] for examples in gum.values() for ex in examples]
    train, test = read_imdb("train", args.names_train), read_imdb("test", args.names_test)
    base = correct(train, test)
    info = {"imdb_train": len(train[0]), "imdb_test": len(test[0]), "gum_sets": sorted(gum),
            "gum_person_mentions": sum(map(len, gum_persons)), "note": "GUM test/test2 never trained the detector"}
    out = [Figure("names_task.imdb.original.accuracy", float(base.mean()), "accuracy", where, info)]
    every_split = [ex for examples in splits.values() for ex in examples]  # stand-ins: every annotated person
    agreement = gender_agreement([ex.text for ex in every_split],
                                 [[s for s in ex.spans if s.label == "PERSON"] for ex in every_split])
    for kind, (agreeing, judged) in agreement.items():
        out.append(Figure(f"names_task.gum.{kind}_agreement", agreeing / max(judged, 1), "share", where,
                          {**info, "mentions_judged": judged, "gum_sets": "every split (gold spans)",
                           "note": "stand-in first names of the gender an honorific or the first name states"}))
    for tool, run in runners.items():
        for name, types in TYPE_SETS.items():
            found_gum, found_train, found_test = run(gum_texts, types), run(train[0], types), run(test[0], types)
            at = f"names_task.{tool}.{name}"
            leak = leak_rates(gum_texts, gum_persons, protect(gum_texts, found_gum, types))
            out.append(Figure(f"{at}.gum_person_leak", leak["leak.rate"], "share", where, info))
            private_train = protect(train[0], found_train, types)
            private_test = protect(test[0], found_test, types)
            scores = correct((private_train, train[1]), (private_test, test[1]))
            low, high = drop_interval(base, scores, args.names_samples)
            out.append(Figure(f"{at}.imdb_accuracy", float(scores.mean()), "accuracy", where, info))
            out.append(Figure(f"{at}.imdb_accuracy_drop", float(base.mean() - scores.mean()), "accuracy", where,
                              {**info, "ci95": [low, high], "paired": "the same test reviews"}))
            changed = sum(len(a) != len(b) or a != b for a, b in zip(test[0], private_test, strict=True))
            out.append(Figure(f"{at}.imdb_reviews_changed", changed / len(test[0]), "share", where, info))
    return out
