"""The Prefect artifact of a pipeline run: MLflow link, report, frontier; names without folders."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from flows.run_summary import frontier_table, mlflow_run_link, parent_run_name, summary_markdown
from textsift.ingest_params import SourceParams


def test_run_name_says_when_and_which_corpus_without_its_folders() -> None:
    when = datetime(2026, 11, 23, 14, 5)
    assert parent_run_name(SourceParams(), when) == "pipeline 2026-11-23 14:05 demo"
    source = SourceParams(kind="file", path="/clients/acme/notes.jsonl.gz")
    assert parent_run_name(source, when) == "pipeline 2026-11-23 14:05 notes.jsonl.gz"


def test_a_server_gets_a_clickable_run_link_and_sqlite_the_ui_recipe(tmp_path: Path) -> None:
    assert mlflow_run_link("http://127.0.0.1:5000/", "3", "abc") == "http://127.0.0.1:5000/#/experiments/3/runs/abc"
    assert mlflow_run_link("sqlite:///x/mlruns.db", "3", "abc") is None
    text = summary_markdown(tmp_path, "pipeline x demo", "sqlite:///x/mlruns.db", "3", "abc")
    assert "make mlflow-ui" in text and "`abc`" in text
    assert "## Privacy-utility frontier" not in text  # evaluate wrote no frontier here


def test_the_frontier_becomes_a_table_of_rounded_aggregates(tmp_path: Path) -> None:
    (tmp_path / "reports/evaluate").mkdir(parents=True)
    (tmp_path / "reports/evaluate/frontier.csv").write_text(
        "setting,mechanism,utility,leak_rate,leak_source,utility_drop,privacy_risk,passes,recommended,pareto\n"
        "red,redact,0.82812,0.006,gold spans,-0.008,0.97,False,False,True\n", encoding="utf-8")
    table = frontier_table(tmp_path)
    assert table[0] == ("| setting | mechanism | utility | utility_drop | privacy_risk | leak_rate | passes | "
                        "recommended | pareto |")
    assert table[2] == "| red | redact | 0.828 | -0.008 | 0.970 | 0.006 | False | False | True |"
    text = summary_markdown(tmp_path, "run", "http://h:1", "1", "r")
    assert "[run](http://h:1/#/experiments/1/runs/r)" in text and table[2] in text


def test_the_time_table_is_slowest_first_with_shares_and_a_total() -> None:
    from flows.run_summary import stage_time_lines, stage_times

    rows = stage_times({"ingest": 1.0, "evaluate": 3.0})
    assert rows == [{"stage": "evaluate", "seconds": "3.0", "share": "75%"},
                    {"stage": "ingest", "seconds": "1.0", "share": "25%"},
                    {"stage": "(all stages)", "seconds": "4.0", "share": "100%"}]
    assert stage_time_lines(rows)[0] == "  evaluate           3.0 s   75%"


def test_the_run_ends_naming_the_proposal_and_the_command_that_approves_it(tmp_path: Path) -> None:
    from flows.run_summary import proposal_lines

    assert proposal_lines(tmp_path, "r1") == []  # no frontier: nothing to say
    frontier = tmp_path / "reports/evaluate/frontier.csv"
    frontier.parent.mkdir(parents=True)
    header = "setting,mechanism,utility_low,privacy_risk,passes,served_passes,served_leak,epsilon_p50,recommended\n"
    rows = "mdp,metric_dp,0.7182,0.146,True,True,,2232.0,True\nred,redact,0.8,0.3,False,False,0.4,,False\n"
    frontier.write_text(header + rows, encoding="utf-8")
    lines = proposal_lines(tmp_path, "r1")
    assert lines[0].startswith("Proposed setting: mdp (metric_dp; utility lower bound 0.718, privacy risk 0.146; "
                               "median epsilon per document 2,232).")
    assert lines[1] == '  textsift promote mdp --run r1 --reason "<why you chose it>"'
    frontier.write_text(header + "red,redact,0.8,0.01,True,False,0.394,,True\n", encoding="utf-8")
    assert "not differentially private). Served, it leaks 0.394" in proposal_lines(tmp_path, "r1")[0]
    frontier.write_text(header + "red,redact,0.8,0.3,False,False,0.4,,False\n", encoding="utf-8")
    assert proposal_lines(tmp_path, "r1")[0].startswith("Proposed setting: none passes")
    header = header.replace("recommended", "not_served,recommended")
    frontier.write_text(header + "mdp,metric_dp,0.7,0.1,True,False,,50.0,its index is the corpus's,True\n"
                        "red,redact,0.6,0.1,True,True,0.01,,,False\n", encoding="utf-8")
    assert ("It is not served (its index is the corpus's); the best setting that passes and is: red. To approve it:"
            in proposal_lines(tmp_path, "r1")[0])
