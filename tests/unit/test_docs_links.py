"""The docs a newcomer reads hold together offline: every relative link points at a file of the repository, the
README stays a short user guide (reference material lives in docs/), and measured figures come from `make bench`
(docs/BENCHMARKS.md is rendered from its JSON) rather than being typed by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
README_MAX_LINES = 150

# [text](target) and ![alt](target); the target ends at whitespace (an optional "title" follows) or ")"
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target  (reference-style definitions)
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
# a measured rate, latency, memory or speed-up ("61,400 chars/s", "132 ms", "935 MiB", "in 311 s", "3.4x faster")
TIMING = re.compile(r"\d[\d,.]*\s?(?:chars|docs|rows|requests|req|windows|words|posts|tokens)/s\b"
                    r"|\b\d[\d,.]*\s?(?:ms|MiB|GiB)\b|\bin \d[\d,.]*\s?(?:s|min)\b|\b\d[\d.]*x (?:faster|slower)\b")
BENCHMARKS = REPO / "docs" / "BENCHMARKS.md"
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)  # http:, https:, mailto:, //host


def _prose(text: str) -> str:
    """The Markdown without fenced code blocks and inline code spans (links there are not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def relative_targets(text: str) -> list[str]:
    """Every relative link target of a Markdown text, without its #anchor (in-page anchors are skipped)."""
    prose = _prose(text)
    out = []
    for target in [*INLINE_LINK.findall(prose), *REFERENCE_LINK.findall(prose)]:
        if EXTERNAL.match(target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path:
            out.append(path)
    return out


def test_the_link_parser_finds_relative_targets_and_skips_code_and_urls() -> None:
    text = ("See [m](docs/METHODS.md#1-datasifter), [r](../README.md) and ![p](img/x.png \"t\").\n"
            "[ref]: docs/REFERENCE.md\n[web](https://example.org/a.md) [here](#anchor) `[no](code.md)`\n"
            "```\n[no](fenced.md)\n```\n")
    assert relative_targets(text) == ["docs/METHODS.md", "../README.md", "img/x.png", "docs/REFERENCE.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_a_file_of_the_repository(doc: Path) -> None:
    broken = []
    for target in relative_targets(doc.read_text(encoding="utf-8")):
        resolved = (doc.parent / target).resolve()
        if not resolved.exists() or not resolved.is_relative_to(REPO):
            broken.append(target)
    assert broken == [], f"{doc.relative_to(REPO)} links to missing files: {broken}"


def test_the_docs_a_newcomer_reads_exist_and_cite_nothing_outside_the_repository() -> None:
    for name in ("ARCHITECTURE.md", "METHODS.md", "REFERENCE.md"):
        assert (REPO / "docs" / name).is_file(), name
    for doc in DOCS:
        assert "../shared/docs" not in doc.read_text(encoding="utf-8"), doc.name


def test_measured_figures_are_rendered_from_the_bench_json_never_typed_by_hand() -> None:
    assert TIMING.findall("at 61,400 chars/s, p99 132 ms, 935 MiB, in 311 s, 3.4x faster") == [
        "61,400 chars/s", "132 ms", "935 MiB", "in 311 s", "3.4x faster"]
    typed = {doc.name: TIMING.findall(_prose(doc.read_text(encoding="utf-8"))) for doc in DOCS if doc != BENCHMARKS}
    assert {name: found for name, found in typed.items() if found} == {}, "run `make bench-docs` and link to it"
    assert BENCHMARKS.read_text(encoding="utf-8").startswith("# Benchmark figures\n\nRendered by `make bench-docs`")


def test_readme_is_a_short_user_guide() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move reference material to docs/"


def test_the_configuration_reference_is_generated_from_the_params_models() -> None:
    """docs/CONFIGURATION.md is what `textsift params reference` writes: every key of the models, none by hand."""
    from textsift.config import Params
    from textsift.config_reference import render_reference, rows

    committed = (REPO / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
    assert committed == render_reference(), "stale: run `textsift params reference`"
    keys = [key for key, *_ in rows(Params)]
    assert "privatize.settings.<name>.epsilon" in keys and "evaluate.recommend.leak_rate" in keys
    assert all(f"| `{key}` |" in committed for key in keys)
