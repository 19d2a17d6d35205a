"""`textsift detect` and the library `detect(texts)` in a project that has no detector yet.

The first call trains the detector (ingest + train_detectors with the given params file); the
later ones reuse it. CLI, library and the model-level detect agree span for span.
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
from textsift.artifacts import DETECTOR_POINTER, detector_folder, read_pointer
from textsift.cli import app
from textsift.config import load_params
from textsift.detect import detect, detect_detailed
from textsift.detection.recognizers.build import build_recognizers, run_recognizers
from textsift.models.detector import detect as model_detect
from textsift.models.detector_io import load_detector
from textsift.tracking import Tracker

pytestmark = pytest.mark.integration
TEXTS = ["Maria Gonzalez moved to Lisbon in March 2019 and works at Acme Corp.",
         "Write to john.smith@example.com or call +1 415 555 0100.",
         "",
         "the food was good and the service friendly",
         "Dr. Peter Novak, born 1961-04-02, ID A1234567. " * 30]  # long: several windows


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("detect")
    params = base / "custom.yaml"
    content = tiny_params(ingest__demo__n_docs=60, ingest__max_reject_fraction=0.5)  # 1 reject in 5
    params.write_text(yaml.safe_dump(content), encoding="utf-8")
    root = base / "project"
    root.mkdir()
    source = base / "in.jsonl"
    lines = [json.dumps({"id": f"d{i}", "text": t}) for i, t in enumerate(TEXTS) if t]
    source.write_text("\n".join([*lines, "not json"]) + "\n", encoding="utf-8")
    output = base / "spans.parquet"
    result = CliRunner().invoke(app, ["detect", "--input", str(source), "--output", str(output), "--params",
                                      str(params), "--root", str(root), "--id-field", "id"])
    return {"base": base, "root": root, "params": params, "source": source, "output": output, "result": result}


def _detector(run: dict):
    tracker = Tracker(load_params(run["params"]).tracking, run["root"])
    return load_detector(detector_folder(run["root"], tracker))


def _model_spans(run: dict, texts: list[str]) -> list[list[tuple]]:
    """The trained model's own spans at its trained threshold (the recognizer set keeps them all)."""
    return [[(s.start, s.end, s.label) for s in doc] for doc in model_detect(_detector(run), texts)]


def _recognizer_spans(run: dict, texts: list[str]) -> list[list[tuple]]:
    """The project's recognizer set (params ``detection``) built from the components directly."""
    params = load_params(run["params"])
    found = run_recognizers(build_recognizers(params.detection, _detector(run)), texts, params.detection,
                            view=params.ingest.normalize)
    return [[(d.start, d.end, d.label, d.source) for d in doc] for doc in found]


def _displaces(kept: tuple, dropped: tuple) -> bool:
    """Whether a kept span of another type explains a dropped one (one type per span): same extent, or crossing."""
    (a, b, label), (c, d, other) = kept, dropped
    nested = (a <= c and d <= b) or (c <= a and b <= d)
    return label != other and a < d and c < b and ((a, b) == (c, d) or not nested)


def test_detect_trains_the_missing_detector_and_writes_spans_per_record(first_run: dict) -> None:
    assert first_run["result"].exit_code == 0, first_run["result"].output
    assert (first_run["root"] / DETECTOR_POINTER).exists()
    rows = pq.read_table(first_run["output"]).to_pylist()
    texts = [t for t in TEXTS if t]
    assert [r["id"] for r in rows] == [f"d{i}" for i, t in enumerate(TEXTS) if t]
    spans = [[(s["start"], s["end"], s["label"], s["source"]) for s in r["spans"]] for r in rows]
    assert spans == _recognizer_spans(first_run, texts)
    for model, doc in zip(_model_spans(first_run, texts), spans, strict=True):
        kept = {s[:3] for s in doc}
        assert all(m in kept or any(_displaces(k, m) for k in kept) for m in model)
    email = TEXTS[1].index("john.smith@example.com")
    assert any(s[:3] == (email, email + 22, "EMAIL") and "patterns" in s[3] for s in spans[1])
    assert all(0.5 <= s["score"] <= 1 and "text" not in s for r in rows for s in r["spans"])  # no text by default
    assert pq.read_table(first_run["output"].with_name("spans.parquet.rejects.parquet")).num_rows == 1


def test_with_text_jsonl_reuses_the_detector_and_spans_quote_the_input(first_run: dict) -> None:
    pointer = read_pointer(first_run["root"] / DETECTOR_POINTER)
    output = first_run["base"] / "spans.jsonl.gz"
    result = CliRunner().invoke(app, ["detect", "--input", str(first_run["source"]), "--output", str(output),
                                      "--params", str(first_run["params"]), "--root", str(first_run["root"]),
                                      "--id-field", "id", "--with-text"])
    assert result.exit_code == 0, result.output
    assert read_pointer(first_run["root"] / DETECTOR_POINTER) == pointer  # not retrained
    rows = pd.read_json(output, lines=True, compression="gzip").to_dict("records")
    by_id = {f"d{i}": t for i, t in enumerate(TEXTS)}
    for row in rows:
        for span in row["spans"]:
            assert span["text"] == by_id[row["id"]][span["start"]:span["end"]]
    assert sum(len(r["spans"]) for r in rows) == sum(len(r["spans"]) for r in pq.read_table(first_run["output"])
                                                      .to_pylist())


def test_library_detect_matches_the_model_and_keeps_empty_texts(first_run: dict) -> None:
    spans = detect(TEXTS, root=first_run["root"], params_path=first_run["params"])
    assert [[(s.start, s.end, s.label) for s in doc] for doc in spans] == [
        [s[:3] for s in doc] for doc in _recognizer_spans(first_run, TEXTS)]
    assert spans[2] == []
    assert all(0 <= s.start < s.end <= len(TEXTS[4]) for s in spans[4])
    with pytest.raises(TypeError, match="sequence of texts"):
        detect(TEXTS[0], root=first_run["root"], params_path=first_run["params"])


def test_an_unsupported_output_is_refused_before_any_work(tmp_path: Path, first_run: dict) -> None:
    result = CliRunner().invoke(app, ["detect", "--input", str(first_run["source"]), "--output",
                                      str(tmp_path / "spans.csv"), "--root", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert ".jsonl, .jsonl.gz or .parquet" in result.output
    assert not (tmp_path / "empty").exists()


def test_interests_flag_adds_the_inferred_interest_and_evidence_offsets_never_text(first_run: dict) -> None:
    from textsift.artifacts import INTERESTS_POINTER, interests_folder
    from textsift.detect import infer_interests
    from textsift.interests.attack import grounded
    from textsift.interests.inference import generate, parse
    from textsift.interests.io import load_interest_model

    output = first_run["base"] / "interests.parquet"
    result = CliRunner().invoke(app, ["detect", "--input", str(first_run["source"]), "--output", str(output),
                                      "--params", str(first_run["params"]), "--root", str(first_run["root"]),
                                      "--id-field", "id", "--interests"])
    assert result.exit_code == 0, result.output
    assert read_pointer(first_run["root"] / INTERESTS_POINTER)["sha256"]
    table = pq.read_table(output)
    assert {"interest", "evidence_start", "evidence_end"} <= set(table.column_names)
    assert "evidence" not in table.column_names  # generated evidence is text: only with --with-text
    texts = [t for t in TEXTS if t]
    params = load_params(first_run["params"])
    tracker = Tracker(params.tracking, first_run["root"])
    model = load_interest_model(interests_folder(first_run["root"], tracker))
    overlap = params.evaluate.interest_attack.min_evidence_overlap
    expected = [grounded(text, *parse(g), overlap) for text, g in zip(texts, generate(model, texts), strict=True)]
    assert table.column("interest").to_pylist() == expected
    assert [i for i, _ in infer_interests(texts, first_run["root"], first_run["params"])] == expected
    assert f'"docs": {float(len(texts))}' in result.output and '"interests.' in result.output  # counts per interest


def test_threshold_and_labels_apply_to_one_call_without_retraining(first_run: dict) -> None:
    pointer = read_pointer(first_run["root"] / DETECTOR_POINTER)
    output = first_run["base"] / "emails.jsonl"
    result = CliRunner().invoke(app, ["detect", "--input", str(first_run["source"]), "--output", str(output),
                                      "--params", str(first_run["params"]), "--root", str(first_run["root"]),
                                      "--id-field", "id", "--threshold", "0.99", "--label", "EMAIL"])
    assert result.exit_code == 0, result.output
    assert read_pointer(first_run["root"] / DETECTOR_POINTER) == pointer  # not retrained
    spans = [s for row in pd.read_json(output, lines=True).to_dict("records") for s in row["spans"]]
    assert spans and all(s["label"] == "EMAIL" and s["score"] >= 0.99 for s in spans)
    loose = detect_detailed(TEXTS, root=first_run["root"], params_path=first_run["params"], threshold=0.01)
    strict = detect_detailed(TEXTS, root=first_run["root"], params_path=first_run["params"], threshold=0.9)
    assert sum(map(len, loose)) > sum(map(len, strict))
    bad = CliRunner().invoke(app, ["detect", "--input", str(first_run["source"]), "--output", str(output),
                                   "--params", str(first_run["params"]), "--root", str(first_run["root"]),
                                   "--threshold", "1.5"])
    assert bad.exit_code == 2 and "threshold must be in (0, 1]" in bad.output


def test_detection_in_small_batches_reports_progress_and_finds_the_same_spans(
        first_run: dict, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A long file reports progress by characters (``detect`` printed nothing for 7 minutes before)."""
    from textsift import detect as detect_module
    from textsift.ingest_params import SourceParams

    monkeypatch.setattr(detect_module, "BATCH_CHARS", 100)
    output = first_run["base"] / "batched.parquet"
    source = SourceParams(kind="file", path=str(first_run["source"]), id_field="id", label_field=None)
    with caplog.at_level("INFO", logger="textsift"):
        detect_module.detect_file(first_run["source"], output, source, first_run["params"], first_run["root"])
    progress = [r.getMessage() for r in caplog.records if r.getMessage().startswith("detect: ")]
    # batches of <= 100 characters: [68], [56 + 42], [1,409] (a longer text alone)
    assert len(progress) == 3 and "(100%)" in progress[-1] and "left" in progress[0]
    assert pq.read_table(output).column("spans").to_pylist() == pq.read_table(first_run["output"]).column(
        "spans").to_pylist()
