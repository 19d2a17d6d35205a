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
