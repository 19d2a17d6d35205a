"""What a pipeline flow run tells its Prefect UI: its MLflow parent run, its report and the frontier.

The flow publishes one markdown artifact (key ``textsift-pipeline``) per run, so the Prefect run
page links to the MLflow parent run (a clickable URL when MLflow is a server; the ``make
mlflow-ui`` recipe for the local sqlite store) and shows the privacy-utility frontier as a
table. Only aggregates and names go there, never document text. The MLflow parent run is named
after what ran: ``pipeline <date time> <corpus>``.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from textsift.catalog import path as catalog_path
from textsift.evaluation.recommend import epsilon_text
from textsift.ingest_params import SourceParams

ARTIFACT_KEY = "textsift-pipeline"
FRONTIER = catalog_path("frontier")
REPORT = catalog_path("report")
FRONTIER_COLUMNS = ("setting", "mechanism", "utility", "utility_drop", "privacy_risk", "leak_rate", "passes",
                    "recommended", "pareto")
TIMES_KEY = "textsift-stage-times"


def corpus_label(source: SourceParams) -> str:
    """``demo`` or the input file's name (no folders: they may name a person or a client)."""
    return "demo" if source.kind == "demo" or not source.path else Path(source.path).name


def parent_run_name(source: SourceParams, now: datetime) -> str:
    """The MLflow parent run's name: ``pipeline 2026-11-23 14:05 demo``."""
    return f"pipeline {now:%Y-%m-%d %H:%M} {corpus_label(source)}"


def mlflow_run_link(tracking_uri: str, experiment_id: str, run_id: str) -> str | None:
    """The MLflow UI address of a run when the tracking URI is a server, else None."""
    if not tracking_uri.startswith(("http://", "https://")):
        return None
    return f"{tracking_uri.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"


def _cell(value: str) -> str:
    try:
        return f"{float(value):.3f}"
    except ValueError:
        return value.replace("|", "/")


def frontier_table(root: Path) -> list[str]:
    """The frontier as markdown table lines (empty when evaluate wrote none)."""
    path = root / FRONTIER
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    columns = [c for c in FRONTIER_COLUMNS if rows and c in rows[0]]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row[c]) for c in columns) + " |" for row in rows]
    return lines


def proposal_lines(root: Path, run_id: str) -> list[str]:
    """What the run proposes and the exact command that ships it (the end of ``make run``'s log), or that nothing
    passed; empty when evaluate wrote no frontier."""
    path = root / FRONTIER
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    proposed = [row for row in rows if row.get("recommended") == "True"]
    if not proposed:
        return ["Proposed setting: none passes the recommendation rule (each setting's verdict: the frontier and "
                "the report)."]
    row = proposed[0]
    shipped = next((r["setting"] for r in rows if r.get("passes") == "True" and r.get("served_passes") == "True"),
                   None)
    if row.get("served_passes", "True") == "True":
        served = ""
    elif row.get("not_served"):
        served = (f" It is not served ({row['not_served']}); " + (
            f"the best setting that passes and is: {shipped}." if shipped else "no setting that passes is."))
    else:
        served = (f" Served, it leaks {_cell(row.get('served_leak', ''))} (a request carries no gold spans): promote "
                  "refuses it without --accept-failing.")
    epsilon = epsilon_text(float(row.get("epsilon_p50") or "nan"))
    return [f"Proposed setting: {row['setting']} ({row['mechanism']}; utility lower bound {_cell(row['utility_low'])}, "
            f"privacy risk {_cell(row['privacy_risk'])}; {epsilon}).{served} To approve it:",
            f'  textsift promote {row["setting"]} --run {run_id} --reason "<why you chose it>"']


def summary_markdown(root: Path, run_name: str, tracking_uri: str, experiment_id: str, run_id: str) -> str:
    """The artifact's markdown: where the MLflow runs and the report are, and the frontier."""
    link = mlflow_run_link(tracking_uri, experiment_id, run_id)
    where = (f"[{run_name}]({link})" if link else
             f"`{run_name}` (run `{run_id}`, experiment `{experiment_id}` in `{tracking_uri}`; "
             "browse with `make mlflow-ui` -> http://127.0.0.1:5000)")
    lines = [f"# textsift: {run_name}", "", f"- MLflow parent run: {where}",
             f"- Report: `{root / REPORT}`", f"- Frontier: `{root / FRONTIER}`", ""]
    table = frontier_table(root)
    if table:
        lines += ["## Privacy-utility frontier", "", *table]
    return "\n".join(lines) + "\n"


def stage_times(seconds: dict[str, float]) -> list[dict[str, str]]:
    """The time table of a run: one row per stage instance, slowest first, with its share of the summed time.

    Stages run side by side, so the shares are of the summed stage time, not of the wall-clock time."""
    total = sum(seconds.values()) or 1.0
    rows = [{"stage": name, "seconds": f"{value:.1f}", "share": f"{100 * value / total:.0f}%"}
            for name, value in sorted(seconds.items(), key=lambda item: -item[1])]
    return [*rows, {"stage": "(all stages)", "seconds": f"{sum(seconds.values()):.1f}", "share": "100%"}]


def stage_time_lines(rows: list[dict[str, str]]) -> list[str]:
    """The time table as aligned text lines (the end of ``make run``'s log)."""
    width = max(len(r["stage"]) for r in rows)
    return [f"  {r['stage']:<{width}}  {r['seconds']:>8} s  {r['share']:>4}" for r in rows]
