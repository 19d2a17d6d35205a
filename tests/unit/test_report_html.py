"""The HTML report keeps the page's width: every table scrolls sideways in its own box, and every string is
escaped."""

from __future__ import annotations

import re

import pandas as pd

from textsift.evaluation.report import render_report


def test_every_table_scrolls_in_its_own_box_and_no_cell_is_markup() -> None:
    wide = pd.DataFrame([{f"column_{i}": float(i) for i in range(60)} | {"setting": "<b>mdp</b>"}])
    page = render_report("t", ["summary"], {"Frontier": wide, "Leaks": pd.DataFrame({"label": ["PERSON"]})}, {})
    assert page.count("<table>") == 2
    assert len(re.findall(r"<div class='wide'><table>.*?</table></div>", page, flags=re.S)) == 2
    assert ".wide{overflow-x:auto" in page and "max-width:1100px" in page  # the page keeps its width
    assert "<b>mdp</b>" not in page and "&lt;b&gt;mdp&lt;/b&gt;" in page
