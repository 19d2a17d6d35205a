"""`make bench-docs`: docs/BENCHMARKS.md written from a `make bench` results JSON, the only place the docs hold
measured figures.

The JSON (``bench/results/latest.json``) holds every figure of one run, and several runs' files combine (one
``--only`` run per project, say). This renders the comparisons a reader looks for first (detection on real
held-out text beside Presidio and spaCy, textsift's recall margin over Presidio with its interval, names protected
against the task's accuracy, serving throughput) and then every figure, each with the device it ran on. The page
names each results file with the day it was written (the run's day) and the commit and day it was rendered at.
Pure: figures in, Markdown out.

Usage: python -m bench.docs [--results bench/results/latest.json ...] [--output docs/BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from bench.harness import RESULTS_JSON, Figure, results_markdown
from textsift.corpus import atomic_path

OUTPUT = "docs/BENCHMARKS.md"
DETECTION_TYPES = ("PERSON", "LOC", "ORG", "DATE")
TOOLS = ("textsift", "presidio", "spacy")
TEST_SETS = {"gum_test": "GUM test", "gum_test2": "GENTLE test2", "btc": "BTC test", "wnut17": "WNUT-17 test"}
NAME_SETTINGS = {"names": "names only", "direct": "direct identifiers", "all": "every type"}


def _by_name(figures: Sequence[Figure]) -> dict[str, Figure]:
    return {f.name: f for f in figures}


def _cell(found: dict[str, Figure], name: str, digits: int = 3) -> str:
    figure = found.get(name)
    if figure is None:
        return ""
    return f"{figure.value:,.0f}" if abs(figure.value) >= 1000 else f"{figure.value:.{digits}f}"


def detection_table(figures: Sequence[Figure]) -> list[str]:
    """Per held-out test set and tool: recall by overlap per type, character precision, characters per second.
    A type the set does not mark has no cell."""
    found = _by_name(figures)
    rows = []
    for key, title in TEST_SETS.items():
        for tool in TOOLS:
            at = f"detector.real.{key}.{tool}"
            if f"{at}.char_precision" not in found:
                continue
            texts = found[f"{at}.char_precision"].params.get("texts", "")
            cells = [_cell(found, f"{at}.{label}.overlap_recall") for label in DETECTION_TYPES]
            rows.append(f"| {title} ({texts} texts) | {tool} | {' | '.join(cells)} | "
                        f"{_cell(found, f'{at}.char_precision')} | {_cell(found, f'{at}.chars_per_s')} |")
    if not rows:
        return []
    return ["## Detection on held-out real text", "",
            "Recall by >= 50% overlap with a gold span of the same type; character precision over the types each set "
            "marks (`bench/detector_real.py`). No tool trained on these files.", "",
            f"| test set | tool | {' | '.join(DETECTION_TYPES)} | char precision | chars/s |",
            "|---|---|" + "---|" * (len(DETECTION_TYPES) + 2), *rows, ""]


def _margin_cell(found: dict[str, Figure], name: str) -> str:
    figure = found.get(name)
    if figure is None:
        return ""
    low, high = figure.params["ci95"]
    return f"{100 * figure.value:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] ({figure.params['support']})"


def margin_table(figures: Sequence[Figure]) -> list[str]:
    """textsift's overlap recall minus Presidio's, in points, with its 95% paired bootstrap interval and the gold
    mentions it rests on: per test set, then per genre of the GUM sets (``bench/detector_real.py``)."""
    found = _by_name(figures)
    marker = ".margin_over_presidio."
    places = sorted({f.name.removeprefix("detector.real.").split(marker)[0] for f in figures if marker in f.name},
                    key=lambda place: (place.split(".")[0] not in TEST_SETS, place.count("."), place))
    rows = []
    for place in places:
        key, _, genre = place.partition(".")
        title = f"{TEST_SETS.get(key, key)}{f': {genre}' if genre else ''}"
        cells = [_margin_cell(found, f"detector.real.{place}{marker}{label}") for label in DETECTION_TYPES]
        rows.append(f"| {title} | {' | '.join(cells)} |")
    if not rows:
        return []
    return ["## textsift's recall margin over Presidio", "",
            "Recall points textsift finds beyond Presidio on the same gold mentions, a 95% paired bootstrap interval "
            "and the mentions compared: a genre's margin from a handful of mentions is as wide as it reads.", "",
            f"| where | {' | '.join(DETECTION_TYPES)} |", "|---|" + "---|" * len(DETECTION_TYPES), *rows, ""]


def names_table(figures: Sequence[Figure]) -> list[str]:
    """Per tool and protected type set: person mentions of GUM test/test2 left, IMDB accuracy and its drop."""
    found = _by_name(figures)
    rows = []
    for tool in TOOLS:
        for setting, title in NAME_SETTINGS.items():
            at = f"names_task.{tool}.{setting}"
            if f"{at}.gum_person_leak" not in found:
                continue
            rows.append(f"| {tool} | {title} | {_cell(found, f'{at}.gum_person_leak')} | "
                        f"{_cell(found, f'{at}.imdb_accuracy')} | {_cell(found, f'{at}.imdb_accuracy_drop')} | "
                        f"{_cell(found, f'{at}.imdb_reviews_changed')} |")
    if not rows:
        return []
    original = _cell(found, "names_task.imdb.original.accuracy")
    return ["## Names protected, and what the task keeps", "",
            "Redaction of what each tool detects: the share of GUM test/test2 gold person mentions left in the text, "
            f"and IMDB sentiment accuracy (TF-IDF) trained and tested on the redacted reviews (original text: "
            f"{original}; `bench/names_task.py`).", "",
            "| tool | protected types | person mentions left | IMDB accuracy | drop | reviews changed |",
            "|---|---|---|---|---|---|", *rows, ""]


def serving_table(figures: Sequence[Figure]) -> list[str]:
    """Per served setting: requests per second from one client and from several at once, waits, memory."""
    found = _by_name(figures)
    settings = sorted({f.params["setting"] for f in figures if f.name.startswith("serve.") and "setting" in f.params})
    rows = []
    for setting in settings:
        at = f"serve.{setting}"
        single, together = found.get(f"{at}.requests_per_s"), found.get(f"{at}.requests_per_s_concurrent")
        if single is None or together is None:
            continue
        waits = " | ".join(_cell(found, f"{at}.latency_{q}_ms_concurrent", 1) for q in ("p50", "p99"))
        rows.append(f"| {setting} | {_cell(found, f'{at}.requests_per_s', 1)} | {together.params['clients']} | "
                    f"{_cell(found, f'{at}.requests_per_s_concurrent', 1)} | "
                    f"{together.params['requests_per_model_call']} | {waits} | {single.params['rss_mib_at_end']} |")
    if not rows:
        return []
    return ["## Serving", "",
            "`textsift serve` of each registered privatizer on 127.0.0.1, requests of 500 characters "
            "(`bench/serve.py`).", "",
            "| setting | requests/s, one client | clients | requests/s, together | requests per model call | "
            "p50 ms | p99 ms | MiB at the end |", "|---|---|---|---|---|---|---|---|", *rows, ""]


def render(figures: Sequence[Figure], commit: str, day: str, sources: Sequence[str] = (f"`{RESULTS_JSON}`",)
           ) -> str:
    """The page: its provenance, the comparison tables, then every figure of the runs (``sources``: their files, as
    the header names them)."""
    devices = sorted({f.device for f in figures})
    head = ["# Benchmark figures", "",
            f"Rendered by `make bench-docs` on {day} at commit {commit} from "
            f"{', '.join(sources)} (`make bench`; the `--only` modules of each run). "
            f"Devices: {'; '.join(devices) or 'none'}.", ""]
    every = results_markdown(list(figures)).splitlines()[4:]  # its table, without its own heading and preamble
    return "\n".join([*head, *detection_table(figures), *margin_table(figures), *names_table(figures),
                      *serving_table(figures), "## Every figure", "", *every]) + "\n"


def load_figures(path: Path) -> list[Figure]:
    """The figures a results JSON holds (:func:`bench.harness.write_results`)."""
    return [Figure(**row) for row in json.loads(path.read_text(encoding="utf-8"))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", type=Path, nargs="+", default=[Path(RESULTS_JSON)])
    parser.add_argument("--output", type=Path, default=Path(OUTPUT))
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    with atomic_path(args.output) as tmp:
        figures = [figure for path in args.results for figure in load_figures(path)]
        sources = [f"`{p}` (written {date.fromtimestamp(p.stat().st_mtime).isoformat()})" for p in args.results]
        tmp.write_text(render(figures, commit, date.today().isoformat(), sources), encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
