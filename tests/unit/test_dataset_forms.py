"""Each catalog artifact's form: what ctx.load gives back is what ctx.save was given, in stable bytes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from textsift.catalog import ARTIFACTS
from textsift.dataset_forms import FORMS, form
from textsift.errors import StageError


def test_every_artifact_names_a_form_or_the_package_that_owns_it() -> None:
    import importlib

    for artifact in ARTIFACTS:
        name = artifact.form_name
        if name not in FORMS:  # a package that reads and writes it itself
            importlib.import_module(name)
    assert {a.name for a in ARTIFACTS if a.form_name == "metrics"} == {
        a.name for a in ARTIFACTS if a.metrics} - {"evaluate_metrics", "evaluate_embeddings_metrics",
                                                   "frontier_metrics", "attack_metrics"}


def test_saved_values_load_back_the_same_and_save_the_same_bytes(tmp_path: Path) -> None:
    corpus = pd.DataFrame({"doc_id": ["a", "b"], "text": ["Ann  met\r\nBob", "x"], "label": ["p", "q"],
                           "split": ["train", "test"], "spans": [[{"start": 0, "end": 3, "label": "PERSON"}], []],
                           "interest": [None, "sports"]})
    cases = {"corpus": corpus, "table": pa.table({"doc_id": ["a"], "epsilon": [2.5]}),
             "json": {"b": [1, 2], "a": {"c": None}}, "csv": pd.DataFrame({"setting": ["s"], "utility": [0.1234567]}),
             "blob": b"\x89PNG\x00"}
    for name, value in cases.items():
        path = tmp_path / f"{name}.out"
        form(name).save(value, path)
        first = path.read_bytes()
        loaded = form(name).load(path)
        if name == "corpus":
            assert loaded["text"].tolist() == corpus["text"].tolist()  # the text as given, line break included
            assert loaded["spans"].map(len).tolist() == [1, 0]
        elif name == "table":
            assert loaded.to_dict("list") == {"doc_id": ["a"], "epsilon": [2.5]}
        elif name == "csv":
            assert loaded["utility"].tolist() == [0.123457]  # 6 decimals
        else:
            assert loaded == value
        form(name).save(loaded if name not in ("table",) else value, path)
        assert path.read_bytes() == first, name  # a value read back saves the same bytes
    form("blob").save("<p>é</p>", tmp_path / "r.html")
    assert (tmp_path / "r.html").read_bytes() == "<p>é</p>".encode()


def test_a_metrics_file_keeps_every_metric_but_timings_each_as_a_float(tmp_path: Path) -> None:
    form("metrics").save({"docs": 9, "privatize.seconds": 1.5, "tokens_per_s": 100.0, "leak.rate": 0.25},
                         tmp_path / "m.json")
    assert form("metrics").load(tmp_path / "m.json") == {"docs": 9.0, "leak.rate": 0.25}
    assert '"docs": 9.0' in (tmp_path / "m.json").read_text()


def test_an_artifact_its_package_owns_is_refused_naming_the_package(tmp_path: Path) -> None:
    with pytest.raises(StageError, match="textsift.indexes.store"):
        form("textsift.indexes.store").load(tmp_path / "index")
    with pytest.raises(StageError, match="textsift.artifacts"):
        form("textsift.artifacts").save({}, tmp_path / "fill_in.json")
