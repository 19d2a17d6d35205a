"""`textsift privatize` / `evaluate` on a file, through the CLI, in a project without models yet.

The params file lives outside the project (``--params``), so building the missing ingest corpus
and word2vec index with it shows the ad-hoc run uses that file, not ``<root>/params.yaml``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import tiny_params
from textsift.cli import app

pytestmark = pytest.mark.integration
N_DOCS = 60  # the demo corpus of the params file (the default of tiny_params is 120)
OVERRIDES = {
    "ingest__demo__n_docs": N_DOCS,
    "ingest__max_reject_fraction": 0.1,
    "indexes__sources": {"w2v": {"kind": "word2vec", "dim": 16, "epochs": 1, "min_count": 1, "n_trees": 2}},
    "indexes__geometry": {"epsilons": [50], "k_list": [1], "draws": 5, "vocab_sample": 5},
    "privatize__settings": {"mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": 20}},
}
TEXTS = ["the food was good and the service friendly", "the room was cold and the staff rude",
         "call me tomorrow about the trip", "the movie was long but the ending good"]


def _input(path: Path, n: int, bad: int) -> Path:
    """``n`` unlabelled documents, then ``bad`` records that are not JSON."""
    lines = [json.dumps({"id": f"doc-{i}", "text": f"{TEXTS[i % len(TEXTS)]} number {i}"}) for i in range(n)]
    lines += ['{"id": "cut", "text": "the middle of'] * bad
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One privatize run that builds the project's corpus and index, with 1 reject in 21 records."""
    base = tmp_path_factory.mktemp("adhoc")
    params = base / "conf" / "custom.yaml"
    params.parent.mkdir()
    params.write_text(yaml.safe_dump(tiny_params(**OVERRIDES)), encoding="utf-8")
    root = base / "project"
    root.mkdir()
    source = _input(base / "in.jsonl", 20, 1)
    output = base / "made" / "here" / "out.csv"
    result = CliRunner().invoke(app, [
        "privatize", "--input", str(source), "--setting", "mdp", "--output", str(output), "--params", str(params),
        "--root", str(root), "--id-field", "id", "--label-field", "none"])
    return {"root": root, "params": params, "source": source, "output": output, "result": result, "base": base}


def test_missing_models_are_built_with_the_params_file_given(setup: dict) -> None:
    assert setup["result"].exit_code == 0, setup["result"].output
    root: Path = setup["root"]
    assert not (root / "params.yaml").exists()
    assert json.loads((root / "metrics/ingest.json").read_text())["docs.read"] == N_DOCS
    assert (root / "data/indexes/w2v/manifest.json").exists()


def test_unlabelled_input_is_privatized_with_rejects_beside_the_output(setup: dict) -> None:
    output: Path = setup["output"]
    private = pd.read_csv(output)
    assert list(private.columns) == ["id", "text", "split"]
    assert list(private["id"]) == [f"doc-{i}" for i in range(20)]
    assert set(private["split"]) == {"train", "validation", "test"}
    rejects = pq.read_table(output.with_name("out.csv.rejects.parquet")).to_pylist()
    assert rejects == [{"doc_id": "row-21", "reason": "malformed", "source_line": 21,
                        "raw": b'{"id": "cut", "text": "the middle of'}]
    assert '"docs.rejected": 1' in setup["result"].output


def test_evaluate_an_unlabelled_file_gives_privacy_metrics(setup: dict) -> None:
    out = setup["base"] / "metrics.json"
    result = CliRunner().invoke(app, [
        "evaluate", "--original", str(setup["source"]), "--privatized", str(setup["output"]),
        "--params", str(setup["params"]), "--id-field", "id", "--label-field", "none", "--output", str(out)])
    assert result.exit_code == 0, result.output
    metrics = json.loads(out.read_text())
    assert 0 < metrics["privacy.token_change_fraction"] <= 1
    assert not [k for k in metrics if k.startswith("tfidf_logreg")]


def test_too_many_rejects_fail_after_writing_them(setup: dict, tmp_path: Path) -> None:
    source = _input(tmp_path / "worse.jsonl", 8, 2)
    output = tmp_path / "worse.parquet"
    result = CliRunner().invoke(app, [
        "privatize", "--input", str(source), "--setting", "mdp", "--output", str(output),
        "--params", str(setup["params"]), "--root", str(setup["root"]), "--id-field", "id", "--label-field", "none"])
    assert result.exit_code == 2
    assert "2 of 10 records rejected" in result.output and "{'malformed': 2}" in result.output
    assert "first ids: row-9, row-10" in result.output
    assert not output.exists()
    assert pq.read_table(tmp_path / "worse.parquet.rejects.parquet").num_rows == 2


def test_bad_output_suffix_and_missing_params_fail_before_any_work(setup: dict, tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    common = ["privatize", "--input", str(setup["source"]), "--setting", "mdp", "--root", str(root)]
    result = CliRunner().invoke(app, [*common, "--output", str(tmp_path / "o.xlsx"), "--params", str(setup["params"])])
    assert result.exit_code == 2 and "must be one of .csv, .tsv, .jsonl, .parquet" in result.output
    result = CliRunner().invoke(app, [*common, "--output", str(tmp_path / "o.csv")])
    assert result.exit_code == 2 and f"{root / 'params.yaml'}: no such params file" in result.output
    assert list(root.iterdir()) == []
