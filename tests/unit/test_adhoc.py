"""Ad-hoc privatize: output checks, rejects beside the output, unlabelled input, the params file used."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from tests.conftest import tiny_params
from textsift import adhoc, runner
from textsift.chunked import ChunkWriter
from textsift.config import parse_params
from textsift.corpus import REJECTS_SCHEMA
from textsift.errors import ConfigError, InputError
from textsift.ingest_params import SourceParams
from textsift.record_ids import short_id

SETTINGS = {
    "indexes__sources": {"w2v": {"kind": "word2vec", "dim": 8, "epochs": 1, "min_count": 1, "n_trees": 2}},
    "privatize__settings": {"mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": 20}},
}


def _params_file(path: Path, **overrides: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(tiny_params(**{**SETTINGS, **overrides})), encoding="utf-8")
    return path


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _docs(n: int, label: bool = True) -> list[dict]:
    return [{"id": f"d{i}", "text": f"document number {i} says hello", **({"label": "ab"[i % 2]} if label else {})}
            for i in range(n)]


SRC = SourceParams(kind="file", path="x", id_field="id")


class _Stop(Exception):
    pass


@pytest.mark.parametrize("name", ["out.txt", "out.conll", "out", "out.parquet.gz", "out.xlsx"])
def test_unknown_output_suffix_names_the_supported_ones(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match=r"must be one of \.csv, \.tsv, \.jsonl, \.parquet"):
        adhoc.output_format(tmp_path / name)


def test_known_output_suffixes() -> None:
    assert adhoc.output_format(Path("a.b.CSV")) == ("csv", False)
    assert adhoc.output_format(Path("a.jsonl.gz")) == ("jsonl", True)
    assert adhoc.output_format(Path("a.parquet")) == ("parquet", False)


def test_output_is_checked_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    params = _params_file(tmp_path / "params.yaml")
    monkeypatch.setattr(adhoc, "read_records", lambda *a, **k: pytest.fail("read the input"))
    monkeypatch.setattr(runner, "run_stage", lambda *a, **k: pytest.fail("ran a stage"))
    source = _jsonl(tmp_path / "in.jsonl", _docs(4))
    with pytest.raises(InputError, match="out.xlsx.*must be one of"):
        adhoc.privatize_file(source, tmp_path / "out.xlsx", "mdp", params, tmp_path, SRC)
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(InputError, match="cannot create the output folder"):
        adhoc.privatize_file(source, tmp_path / "a_file" / "out.csv", "mdp", params, tmp_path, SRC)
    with pytest.raises(InputError, match="overwrite the input"):
        adhoc.privatize_file(source, source, "mdp", params, tmp_path, SRC)


def test_missing_output_folder_is_created(tmp_path: Path) -> None:
    output = tmp_path / "new" / "deeper" / "out.csv"
    adhoc.check_output(output, tmp_path / "in.csv")
    assert output.parent.is_dir()


def test_missing_params_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    source = _jsonl(tmp_path / "in.jsonl", _docs(4))
    with pytest.raises(ConfigError, match=r"absent\.yaml: no such params file"):
        adhoc.privatize_file(source, tmp_path / "o.csv", "mdp", tmp_path / "absent.yaml", tmp_path, SRC)


def test_missing_models_are_built_with_the_given_params_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    params = _params_file(tmp_path / "conf" / "custom.yaml")
    root = tmp_path / "project"  # no params.yaml here: only custom.yaml can build the index
    root.mkdir()
    calls: list[dict] = []

    def fake_run_stage(name: str, **kwargs: object) -> dict:
        calls.append({"name": name, **kwargs})
        if name == "build_indexes":
            raise _Stop
        return {}

    monkeypatch.setattr(runner, "run_stage", fake_run_stage)  # what prerequisites.ensure runs
    source = _jsonl(tmp_path / "in.jsonl", _docs(10))
    with pytest.raises(_Stop):
        adhoc.privatize_file(source, tmp_path / "o.csv", "mdp", params, root, SRC)
    assert [(c["name"], c["key"], c["params_path"]) for c in calls] == [
        ("ingest", None, params), ("build_indexes", "w2v", params)]


def test_rejects_are_written_beside_the_output_and_the_fraction_enforced(tmp_path: Path) -> None:
    params = parse_params(tiny_params(ingest__max_reject_fraction=0.2))
    long_id = "an id that is far too long to be quoted whole in a message " * 3
    rows = [*_docs(7), {"id": "nolabel", "text": "x y"}, {"id": long_id, "text": "  ", "label": "a"}]
    source = _jsonl(tmp_path / "in.jsonl", rows)
    with source.open("ab") as fh:
        fh.write(b'{"id": "broken", "text": \n')
    rejects = adhoc.rejects_path(tmp_path / "out.csv")
    assert rejects == tmp_path / "out.csv.rejects.parquet"
    with pytest.raises(InputError) as err:
        adhoc.load_file(source, SRC, params, rejects=rejects)
    message = str(err.value)
    assert "3 of 10 records rejected" in message and "max_reject_fraction=20.0%" in message
    assert "{'empty': 1, 'malformed': 1, 'missing_label': 1}" in message and str(rejects) in message
    assert "nolabel" in message and long_id[:20] not in message and short_id(long_id) in message  # a digest, no text
    table = pq.read_table(rejects)
    assert table.schema == REJECTS_SCHEMA
    got = {r["doc_id"]: (r["reason"], r["source_line"], r["raw"]) for r in table.to_pylist()}
    assert got["row-10"] == ("malformed", 10, b'{"id": "broken", "text": ')
    assert got["nolabel"][:2] == ("missing_label", 8) and got[long_id][0] == "empty"

    frame, counts = adhoc.load_file(source, SRC, parse_params(tiny_params(ingest__max_reject_fraction=0.3)),
                                    rejects=rejects)
    assert len(frame) == 7 and counts["docs.rejected"] == 3 and counts["rejected.malformed"] == 1


def _write(frame: pd.DataFrame, path: Path, source: SourceParams) -> None:
    """Write a frame the way ``textsift privatize`` writes its chunks."""
    writer = ChunkWriter(path, *adhoc.output_format(path))
    writer.append(adhoc.output_columns(frame, source))
    writer.close()


def test_unlabelled_input_gets_one_class_splits_and_no_label_column(tmp_path: Path) -> None:
    params = parse_params(tiny_params())
    source = _jsonl(tmp_path / "in.jsonl", _docs(20, label=False))
    unlabelled = SRC.model_copy(update={"label_field": None})
    frame, counts = adhoc.load_file(source, unlabelled, params, rejects=tmp_path / "r.parquet")
    assert len(frame) == 20 and set(frame["label"]) == {""} and counts["docs.rejected"] == 0
    assert frame["split"].value_counts().to_dict() == {"train": 14, "test": 4, "validation": 2}
    out = tmp_path / "out.jsonl.gz"
    _write(frame, out, unlabelled)
    written = pd.read_json(gzip.open(out), lines=True)
    assert list(written.columns) == ["id", "text", "split"] and list(written["id"]) == list(frame["doc_id"])


def test_labelled_output_keeps_the_label_column_name(tmp_path: Path) -> None:
    params = parse_params(tiny_params())
    source = _jsonl(tmp_path / "in.jsonl", [{"key": r["id"], "body": r["text"], "y": r["label"]} for r in _docs(6)])
    src = SourceParams(kind="file", path="x", id_field="key", text_field="body", label_field="y")
    frame = adhoc.read_file_corpus(source, src, params)
    _write(frame, tmp_path / "out.tsv", src)
    written = pd.read_csv(tmp_path / "out.tsv", sep="\t")
    assert list(written.columns) == ["key", "body", "y", "split"] and list(written["y"]) == list("ababab")


def test_reading_logs_counts_and_no_text(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    source = _jsonl(tmp_path / "in.jsonl", [*_docs(6), {"id": "e", "text": "", "label": "a"}])
    with caplog.at_level("INFO", logger="textsift"):
        adhoc.load_file(source, SRC, parse_params(tiny_params(ingest__max_reject_fraction=0.5)),
                        rejects=tmp_path / "r.parquet")
    messages = "\n".join(r.getMessage() for r in caplog.records if r.name == "textsift")
    assert "7 records: 6 accepted, 1 rejected" in messages and "first ids: e" in messages
    assert "document number" not in messages
