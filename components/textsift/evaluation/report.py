"""A self-contained HTML report of one pipeline run: tables and embedded plots.

No raw sensitive text: the report shows settings, metrics and plots; privatized examples
appear only when the caller passes them (``report.show_examples``), and never originals.
Every string is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence

import pandas as pd

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;max-width:1100px;color:#222}
.wide{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:1rem 0;font-size:0.9rem}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
td:first-child,th:first-child{position:sticky;left:0;background:#fff}
th{background:#f3f3f3} td.l,th.l{text-align:left}
.pareto{font-weight:bold} .note{color:#555;font-size:0.9rem}
blockquote{background:#f8f8f8;border-left:4px solid #1f77b4;margin:0.5rem 0;padding:0.5rem 1rem}
"""


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.4f}"
    return html.escape(str(value))


def html_table(frame: pd.DataFrame, bold_column: str | None = None) -> str:
    """A plain HTML table in a box that scrolls sideways (the page keeps its width; the first column, the setting,
    stays in view); rows whose ``bold_column`` is true are bold."""
    head = "".join(f"<th class='l'>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for _, row in frame.iterrows():
        cls = " class='pareto'" if bold_column and bool(row.get(bold_column)) else ""
        cells = "".join(
            f"<td class='l'>{_cell(v)}</td>" if isinstance(v, str) else f"<td>{_cell(v)}</td>" for v in row
        )
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<div class='wide'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


def render_report(
    title: str,
    summary: Sequence[str],
    tables: Mapping[str, pd.DataFrame],
    plots: Mapping[str, bytes],
    examples: Mapping[str, Sequence[str]] | None = None,
    provenance: Mapping[str, str] | None = None,
) -> str:
    """The whole HTML document (plots embedded as base64 PNG); ``provenance`` (what it was computed from:
    digests, commit, run, date) is listed under the title."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    if provenance:
        items = "".join(f"<li>{html.escape(key)}: <code>{html.escape(value)}</code></li>"
                        for key, value in provenance.items())
        parts.append(f"<h2>Provenance</h2><ul class='note'>{items}</ul>")
    parts.extend(f"<p>{html.escape(line)}</p>" for line in summary)
    for caption, png in plots.items():
        encoded = base64.b64encode(png).decode("ascii")
        parts.append(f"<h2>{html.escape(caption)}</h2><img alt='{html.escape(caption)}' "
                     f"src='data:image/png;base64,{encoded}'/>")
    for caption, frame in tables.items():
        parts.append(f"<h2>{html.escape(caption)}</h2>")
        parts.append(html_table(frame, bold_column="pareto" if "pareto" in frame.columns else None))
    if examples:
        parts.append("<h2>Privatized examples</h2><p class='note'>Privatized output only; originals are never "
                     "shown.</p>")
        for setting, texts in examples.items():
            parts.append(f"<h3>{html.escape(setting)}</h3>")
            parts.extend(f"<blockquote>{html.escape(text)}</blockquote>" for text in texts)
    parts.append("</body></html>")
    return "\n".join(parts)
