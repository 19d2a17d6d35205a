"""`textsift embed` and the library `embed(texts, ids, setting)` in a project that has no fit yet.

The first call builds what the setting needs (ingest, detector, fill-in, lrp_budgets, embedding_dp@setting);
then documents of the corpus embedded again under their own ids come out as their published rows: the
same step 1, encoder, fitted ε_d and keyed noise.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import tiny_params
from textsift.cli import app
from textsift.corpus import read_corpus
from textsift.embed import embed

pytestmark = pytest.mark.integration
SETTING = "lrp_eps50"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("embed")
    params = base / "custom.yaml"
    params.write_text(yaml.safe_dump(tiny_params(ingest__demo__n_docs=60)), encoding="utf-8")
    root = base / "project"
    root.mkdir()
    source = base / "in.jsonl"
    source.write_text('{"id": "x", "text": "placeholder"}\n', encoding="utf-8")
    first = CliRunner().invoke(app, ["embed", "--input", str(source), "--output", str(base / "first.parquet"),
                                     "--setting", SETTING, "--params", str(params), "--root", str(root),
                                     "--id-field", "id"])
    corpus = read_corpus(root / "data/ingest/corpus.parquet")
    sample = corpus.head(12)
    source.write_text("".join(json.dumps({"id": d, "text": t, "label": lab}) + "\n"
                              for d, t, lab in zip(sample["doc_id"], sample["text"], sample["label"], strict=True)),
                      encoding="utf-8")
    output = base / "noisy.parquet"
    result = CliRunner().invoke(app, ["embed", "--input", str(source), "--output", str(output), "--setting", SETTING,
                                      "--params", str(params), "--root", str(root), "--id-field", "id",
                                      "--label-field", "label"])
    return {"root": root, "params": params, "first": first, "result": result, "output": output, "sample": sample}


def test_embed_builds_the_missing_fit_and_writes_no_text(embedded: dict) -> None:
    assert embedded["first"].exit_code == 0, embedded["first"].output
    assert embedded["result"].exit_code == 0, embedded["result"].output
    root = embedded["root"]
    assert (root / f"data/embeddings/{SETTING}.manifest.json").exists()
    out = pd.read_parquet(embedded["output"])
    assert list(out.columns) == ["doc_id", "split", "label", "embedding"]
    assert list(out["doc_id"]) == list(embedded["sample"]["doc_id"])
    assert list(out["label"]) == list(embedded["sample"]["label"])


def test_corpus_documents_come_out_as_their_published_rows(embedded: dict) -> None:
    published = pd.read_parquet(embedded["root"] / f"data/embeddings/{SETTING}.parquet").set_index("doc_id")
    out = pd.read_parquet(embedded["output"])
    ours = np.stack(out["embedding"].to_numpy())
    theirs = np.stack(published.loc[out["doc_id"], "embedding"].to_numpy())
    np.testing.assert_allclose(ours, theirs, atol=1e-4)  # float32 encoder rounding differs by batch only
    library = embed(embedded["sample"]["text"].tolist(), embedded["sample"]["doc_id"].tolist(), SETTING,
                    embedded["root"], embedded["params"])
    np.testing.assert_allclose(library, ours, atol=1e-4)
    other_ids = embed(embedded["sample"]["text"].tolist(), [f"new-{i}" for i in range(12)], SETTING,
                      embedded["root"], embedded["params"])
    assert np.abs(other_ids - ours).mean() > 0.1 * np.abs(ours).mean()  # a new id draws new noise


def test_unknown_setting_and_bad_output_are_clear_errors(embedded: dict, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["--input", str(embedded["output"]), "--params", str(embedded["params"]), "--root", str(embedded["root"])]
    unknown = runner.invoke(app, ["embed", *args, "--output", str(tmp_path / "o.parquet"), "--setting", "nope"])
    assert unknown.exit_code != 0 and "embedding_dp.settings has no 'nope'" in unknown.output
    suffix = runner.invoke(app, ["embed", *args, "--output", str(tmp_path / "o.csv"), "--setting", SETTING])
    assert suffix.exit_code != 0 and "must end in .parquet" in suffix.output
    with pytest.raises(TypeError, match="sequence of texts"):
        embed("one string", ["a"], SETTING, embedded["root"], embedded["params"])
