"""`textsift privatize` streams: chunks change no output, rejects are counted before any work, memory stays flat."""

from __future__ import annotations

import json
import logging
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import tiny_params
from textsift import adhoc, chunked
from textsift.chunked import combine_metrics
from textsift.errors import InputError
from textsift.ingest_params import SourceParams

SETTINGS = {"privatize__settings": {
    "red": {"kind": "redact", "spans": "gold", "style": "pseudonym"},
    "red_tag": {"kind": "redact", "spans": "gold", "style": "placeholder"},
}}
SRC = SourceParams(kind="file", path="x", id_field="id", spans_field="spans")
NAMES = ["Maria Lopez", "John Smith", "Aiko Tanaka", "Omar Haddad"]


def _docs(n: int, filler: int = 0) -> list[dict]:
    rows = []
    for i in range(n):
        name = NAMES[i % len(NAMES)]
        text = f"note {i}: {name} called about the invoice" + " and the delivery" * filler
        rows.append({"id": f"d{i}", "text": text, "label": "ab"[i % 2],
                     "spans": [{"start": text.index(name), "end": text.index(name) + len(name), "label": "PERSON"}]})
    return rows


def _project(tmp_path: Path, rows: list[dict], **overrides: object) -> tuple[Path, Path]:
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(tiny_params(**{**SETTINGS, "ingest__demo__n_docs": 40, **overrides})))
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return params, source


@pytest.mark.parametrize("suffix", [".jsonl", ".csv.gz", ".parquet"])
def test_chunks_change_no_output_and_totals_add_up(tmp_path: Path, suffix: str) -> None:
    params, source = _project(tmp_path, _docs(53))
    whole = adhoc.privatize_file(source, tmp_path / f"whole{suffix}", "red", params, tmp_path, SRC)
    chunked = adhoc.privatize_file(source, tmp_path / f"chunked{suffix}", "red", params, tmp_path, SRC, chunk_docs=7)
    assert (whole["privatize.chunks"], chunked["privatize.chunks"]) == (1, 8)
    assert chunked["regions_replaced"] == whole["regions_replaced"] == 53
    assert chunked["docs.accepted"] == 53 and chunked["split.test"] == whole["split.test"] > 0
    if suffix == ".parquet":
        assert pd.read_parquet(tmp_path / "whole.parquet").equals(pd.read_parquet(tmp_path / "chunked.parquet"))
    else:
        import gzip
        opener = gzip.open if suffix.endswith(".gz") else open
        with opener(tmp_path / f"whole{suffix}", "rb") as a, opener(tmp_path / f"chunked{suffix}", "rb") as b:
            assert a.read() == b.read()
    if suffix == ".parquet":  # each document's own name is gone (a pseudonym may be another document's name)
        out = pd.read_parquet(tmp_path / "whole.parquet")
        assert not any(NAMES[int(i[1:]) % len(NAMES)] in text for i, text in zip(out["id"], out["text"], strict=True))


def test_the_split_is_the_one_ingest_draws(tmp_path: Path) -> None:
    params, source = _project(tmp_path, _docs(40))
    adhoc.privatize_file(source, tmp_path / "out.parquet", "red_tag", params, tmp_path, SRC, chunk_docs=6)
    frame = adhoc.read_file_corpus(source, SRC, adhoc.load_params(params))
    assert list(pd.read_parquet(tmp_path / "out.parquet")["split"]) == list(frame["split"])


def test_too_many_rejects_fail_before_anything_is_privatized(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _docs(20) + [{"id": f"e{i}", "text": "", "label": "a"} for i in range(5)]
    params, source = _project(tmp_path, rows)
    monkeypatch.setattr(adhoc, "privatize_corpus", lambda *a, **k: pytest.fail("privatized before the check"))
    with pytest.raises(InputError, match=r"5 of 25 records rejected"):
        adhoc.privatize_file(source, tmp_path / "out.jsonl", "red", params, tmp_path, SRC)
    assert not (tmp_path / "out.jsonl").exists() and (tmp_path / "out.jsonl.rejects.parquet").exists()


def test_a_failing_chunk_leaves_no_output_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    params, source = _project(tmp_path, _docs(30))
    real, calls = adhoc.privatize_corpus, []

    def fail_third(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("killed")
        return real(*args, **kwargs)
    monkeypatch.setattr(adhoc, "privatize_corpus", fail_third)
    with pytest.raises(RuntimeError, match="killed"):
        adhoc.privatize_file(source, tmp_path / "out.csv", "red", params, tmp_path, SRC, chunk_docs=10)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("out", ".out"))) == [
        "out.csv.rejects.parquet"]


def test_progress_is_logged_per_chunk_with_an_eta(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    params, source = _project(tmp_path, _docs(30))
    with caplog.at_level(logging.INFO, logger="textsift"):
        adhoc.privatize_file(source, tmp_path / "out.jsonl", "red", params, tmp_path, SRC, chunk_docs=10)
    lines = [r.getMessage() for r in caplog.records if "documents (" in r.getMessage()]
    assert len(lines) == 3 and "30 of 30 documents (100%)" in lines[-1] and "left" in lines[0]


def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """Peak Python memory of a streamed run stays a fraction of the input's size (it held the whole file before)."""
    params, source = _project(tmp_path, _docs(2000, filler=200))  # ~7 MB of text
    adhoc.privatize_file(source, tmp_path / "warm.jsonl", "red_tag", params, tmp_path, SRC, chunk_docs=50)
    tracemalloc.start()
    try:
        adhoc.privatize_file(source, tmp_path / "out.jsonl", "red_tag", params, tmp_path, SRC, chunk_docs=50)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = source.stat().st_size
    assert size > 6_000_000 and peak < size / 3, (peak, size)


def test_combined_metrics_sum_totals_and_weight_the_rest_by_documents() -> None:
    parts = [(10, {"tokens": 100.0, "fraction": 0.5, "epsilon": 5.0}), (30, {"tokens": 200.0, "fraction": 0.1,
                                                                           "epsilon": 5.0})]
    assert combine_metrics(parts, ("tokens",)) == {"tokens": 300.0, "fraction": pytest.approx(0.2), "epsilon": 5.0}


def test_a_streamed_file_reports_ingests_counts_and_loads_its_resources_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """spans.total, labels.distinct and interests.known came back with the stream; resources are built per file."""
    from textsift.privatization import resources as resources_module

    params, source = _project(tmp_path, _docs(30))
    built = []
    real = resources_module.StageResources

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, ctx: object) -> None:
            built.append(1)
            super().__init__(ctx)
    monkeypatch.setattr(adhoc, "StageResources", Counting)
    metrics = adhoc.privatize_file(source, tmp_path / "out.jsonl", "red", params, tmp_path, SRC, chunk_docs=7)
    assert built == [1] and metrics["privatize.chunks"] == 5
    assert metrics["spans.total"] == 30 and metrics["labels.distinct"] == 2 and metrics["interests.known"] == 0
    assert sum(metrics[f"split.{s}"] for s in ("train", "validation", "test")) == 30


def test_per_token_rates_are_weighted_by_tokens() -> None:
    parts = [(10, {"tokens": 1000.0, "changed": 0.5}), (10, {"tokens": 100.0, "changed": 0.1})]
    assert combine_metrics(parts, ("tokens",), weight="tokens")["changed"] == pytest.approx(510 / 1100)


def test_a_rerun_removes_the_stale_temporaries_of_its_own_output_and_rejects_only(tmp_path: Path) -> None:
    import os
    import time
    params, source = _project(tmp_path, _docs(12))
    stale = [tmp_path / ".out.jsonl.k1ll3d_0.tmp", tmp_path / ".out.jsonl.rejects.parquet.k1ll3d_0.tmp"]
    newer, other = tmp_path / ".out.jsonl.l4ter_00.tmp", tmp_path / ".other.jsonl.k1ll3d_0.tmp"
    for path in (*stale, newer, other):
        path.write_text("partial", encoding="utf-8")
        os.utime(path, (time.time() - 3600,) * 2)
    os.utime(newer, (time.time() + 3600,) * 2)  # begun after this run began: another run's, still being written
    adhoc.privatize_file(source, tmp_path / "out.jsonl", "red", params, tmp_path, SRC)
    assert not any(p.exists() for p in stale) and newer.exists() and other.exists()


SIGTERMED = """
import os, signal, sys
from pathlib import Path
from textsift import adhoc
from textsift.ingest_params import SourceParams

real, calls = adhoc.privatize_corpus, []
def stopped_on_the_second(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGTERM)
    return real(*args, **kwargs)
adhoc.privatize_corpus = stopped_on_the_second
root = Path(sys.argv[1])
adhoc.privatize_file(root / "in.jsonl", root / "out.jsonl", "red", root / "params.yaml", root,
                     SourceParams(kind="file", path="x", id_field="id", spans_field="spans"), chunk_docs=5)
"""


def test_sigterm_is_a_clean_exit_that_leaves_no_temporary(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    _project(tmp_path, _docs(20))
    done = subprocess.run([sys.executable, "-c", SIGTERMED, str(tmp_path)], capture_output=True, timeout=300)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr.decode()[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".out", "out"))) == [
        "out.jsonl.rejects.parquet"]


@pytest.mark.parametrize("same_mtime", [False, True])
def test_a_file_replaced_between_the_passes_fails_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            same_mtime: bool) -> None:
    """Replaced by a file of as many records and bytes (every id changed): by its stat, or, with its modification
    time put back, by the digest of its records — before the output is written."""
    import os
    params, source = _project(tmp_path, _docs(12))
    before = source.stat()
    real = adhoc.check_reject_fraction

    def replace_then_check(*args: object, **kwargs: object) -> None:
        source.write_text(source.read_text(encoding="utf-8").replace('"id": "d', '"id": "e'), encoding="utf-8")
        if same_mtime:
            os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
        real(*args, **kwargs)
    monkeypatch.setattr(adhoc, "check_reject_fraction", replace_then_check)
    with pytest.raises(InputError, match=r"^in\.jsonl changed between the two passes over it \((its size or "
                       r"modification time|the ids or texts of its records)\)") as err:
        adhoc.privatize_file(source, tmp_path / "out.jsonl", "red", params, tmp_path, SRC, chunk_docs=5)
    assert ("ids or texts" in str(err.value)) == same_mtime and "\n" not in str(err.value)
    assert not (tmp_path / "out.jsonl").exists() and not list(tmp_path.glob(".out.jsonl.*.tmp"))


def test_a_slow_step_is_logged_every_heartbeat_with_counts_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """One long chunk (a huge record) is no longer silent until it is done."""
    import time
    params, source = _project(tmp_path, _docs(4))
    real = adhoc.privatize_corpus

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(1.0)
        return real(*args, **kwargs)
    monkeypatch.setattr(adhoc, "privatize_corpus", slow)
    monkeypatch.setattr(chunked, "HEARTBEAT_SECONDS", 0.2)
    with caplog.at_level(logging.INFO, logger="textsift"):
        adhoc.privatize_file(source, tmp_path / "out.jsonl", "red", params, tmp_path, SRC)
    beats = [r.getMessage() for r in caplog.records if "still working" in r.getMessage()]
    assert len(beats) >= 3 and beats[0].startswith("privatize@red: still working: 0 of 4 documents done")
    assert not any(name in line for line in beats for name in NAMES)
