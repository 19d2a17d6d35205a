"""make bench writes its figures twice from one list: the JSON and the Markdown table beside it."""

from __future__ import annotations

import json
from pathlib import Path

from bench.harness import Figure, write_results


def test_the_markdown_table_holds_every_figure_of_the_json(tmp_path: Path) -> None:
    figures = [Figure("detect.chars_per_s", 24300.5, "chars/s", "cpu: x2",
                      baseline={"name": "presidio.chars_per_s", "value": 12000.0}, ratio=2.025),
               Figure("serve.p50_ms", 3.25, "ms", "cpu: x2")]
    write_results(figures, tmp_path / "latest.json")
    assert [f["name"] for f in json.loads((tmp_path / "latest.json").read_text())] == [f.name for f in figures]
    table = (tmp_path / "latest.md").read_text(encoding="utf-8").splitlines()
    assert "| detect.chars_per_s | 24,300 chars/s | cpu: x2 | presidio.chars_per_s: 12,000 | 2.02x |" in table
    assert "| serve.p50_ms | 3.25 ms | cpu: x2 |  |  |" in table


def test_the_benchmarks_page_compares_the_tools_per_test_set_and_lists_every_figure(tmp_path: Path) -> None:
    from bench.docs import load_figures, render

    def recall(at: str, label: str, value: float) -> Figure:
        return Figure(f"detector.real.{at}.{label}.overlap_recall", value, "recall", "cpu: x2", {"texts": 30})

    figures = [recall("gum_test.textsift", "PERSON", 0.889), recall("gum_test.textsift", "DATE", 0.921),
               Figure("detector.real.gum_test.textsift.char_precision", 0.7741, "precision", "cpu: x2", {"texts": 30}),
               Figure("detector.real.gum_test.textsift.chars_per_s", 60226.9, "chars/s", "cpu: x2", {"texts": 30}),
               recall("btc.presidio", "PERSON", 0.236),
               Figure("detector.real.btc.presidio.char_precision", 0.563, "precision", "cpu: x2", {"texts": 2000}),
               Figure("detector.real.gum_test.margin_over_presidio.ORG", 0.0918, "recall", "cpu: x2",
                      {"ci95": [0.029, 0.1546], "support": 207}),
               Figure("detector.real.gum_test2.legal.margin_over_presidio.LOC", 0.2105, "recall", "cpu: x2",
                      {"ci95": [0.0, 0.4737], "support": 19}),
               Figure("names_task.imdb.original.accuracy", 0.822, "accuracy", "cpu: x2"),
               Figure("names_task.textsift.names.gum_person_leak", 0.054, "share", "gpu: y"),
               Figure("serve.redact.requests_per_s", 60.7, "requests/s", "cpu: x2",
                      {"setting": "redact", "rss_mib_at_end": 680.2}),
               Figure("serve.redact.requests_per_s_concurrent", 90.4, "requests/s", "cpu: x2",
                      {"setting": "redact", "clients": 8, "requests_per_model_call": 3.9}),
               Figure("serve.redact.latency_p99_ms_concurrent", 112.0, "ms", "cpu: x2", {"setting": "redact"})]
    write_results(figures, tmp_path / "latest.json")
    page = render(load_figures(tmp_path / "latest.json"), "abc1234", "2026-11-28").splitlines()
    assert "| GUM test (30 texts) | textsift | 0.889 |  |  | 0.921 | 0.774 | 60,227 |" in page  # LOC, ORG unmeasured
    assert "| BTC test (2000 texts) | presidio | 0.236 |  |  |  | 0.563 |  |" in page
    assert "| GUM test |  |  | +9.2 [+2.9, +15.5] (207) |  |" in page  # the set first, then its genres
    assert page.index("| GUM test |  |  | +9.2 [+2.9, +15.5] (207) |  |") + 1 == page.index(
        "| GENTLE test2: legal |  | +21.1 [+0.0, +47.4] (19) |  |  |")
    assert "| textsift | names only | 0.054 |  |  |  |" in page
    assert "| redact | 60.7 | 8 | 90.4 | 3.9 |  | 112.0 | 680.2 |" in page  # p50 unmeasured
    assert any("abc1234" in line and "2026-11-28" in line and "cpu: x2; gpu: y" in line for line in page)
    assert sum(line.startswith(("| detector.", "| names_task.", "| serve.")) for line in page) == len(figures)
