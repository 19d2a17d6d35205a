"""The growth bench's log is its record: sizes measured in separate runs combine, other params or machines do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.pipeline_growth import Run, anchored, exponent, logged_costs


def _line(size: int, stage: str, seconds: float, run: Run, commit: str = "") -> str:
    return json.dumps({"size": size, "stage": stage, "seconds": seconds, "peak_mib": size / 10, "params": run.params,
                       "device": run.device, "commit": commit or f"c{size}"})


def test_sizes_logged_by_separate_runs_combine_and_the_latest_line_of_a_stage_counts(tmp_path: Path) -> None:
    ours, other_params, other_machine = Run("p1", "cpu x2"), Run("p2", "cpu x2"), Run("p1", "cpu x16")
    log = tmp_path / "growth.jsonl"
    log.write_text("\n".join([
        _line(2000, "ingest", 4.0, ours), _line(2000, "evaluate", 99.0, ours),
        _line(10000, "ingest", 20.0, other_params), _line(10000, "ingest", 30.0, other_machine),
        _line(10000, "ingest", 25.0, ours, "old"),  # replaced by a later run of the same size: its commit is not named
        _line(10000, "ingest", 21.0, ours), _line(2000, "evaluate", 100.0, ours),
        _line(10000, "evaluate", 1.0, ours)[:30],  # a killed run's half-written line
    ]) + "\n")
    costs, commits = logged_costs(log, ours)
    assert list(costs) == [2000, 10000] and commits == {2000: ["c2000"], 10000: ["c10000"]}
    assert costs[2000] == {"ingest": (4.0, 200.0), "evaluate": (100.0, 200.0)}
    assert costs[10000] == {"ingest": (21.0, 1000.0)}  # evaluate at 10k never finished: no line
    assert logged_costs(tmp_path / "none.jsonl", ours) == ({}, {})


def test_the_exponent_is_one_for_linear_cost_and_two_for_quadratic() -> None:
    sizes = [2000, 10000, 25000]
    assert exponent(sizes, [s * 0.01 for s in sizes]) == pytest.approx(1.0)
    assert exponent(sizes, [(s / 1000) ** 2 for s in sizes]) == pytest.approx(2.0)


def test_a_grown_project_finds_the_real_corpora_its_params_name_relative_to_the_checkout(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (tmp_path / "shared" / "data" / "gum").mkdir(parents=True)
    checkout.mkdir()
    params = {"detectors": {"data": {"gum_path": "../shared/data/gum", "btc_path": None}},
              "notes": ["../shared/data/gum", "plain words"], "ingest": {"normalize": "a/b"}}
    assert anchored(params, checkout) == {
        "detectors": {"data": {"gum_path": str((tmp_path / "shared/data/gum").resolve()), "btc_path": None}},
        "notes": [str((tmp_path / "shared/data/gum").resolve()), "plain words"], "ingest": {"normalize": "a/b"}}
