"""Streaming figure: `textsift privatize` of a generated file of a million documents, peak memory and time.

The file is the demo generator's (``--stream-docs`` documents, ~250 characters and 2 gold PERSON/...
spans each, JSONL); the setting redacts the gold spans with keyed pseudonyms (no model: the figure is
the streaming path's, not a detector's). The command runs as its own process, so its peak resident
memory (``ru_maxrss``) is its own; it is run with the default chunk (10,000 records) and, when
``--stream-compare`` is given, again with one chunk holding the whole file, and the figure fails
unless both outputs hold the same rows.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from bench.harness import Figure, cpu_device
from textsift.demo import iter_demo, write_demo_jsonl
from textsift.ingest_params import DemoCorpusParams

SETTING = {"kind": "redact", "spans": "gold", "style": "pseudonym"}
_MEASURE = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(rc)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stream-docs", type=int, default=1_000_000, help="documents of the streaming figure")
    parser.add_argument("--stream-compare", action="store_true", help="also privatize the file in one chunk")


def _privatize(workdir: Path, source: Path, output: Path, chunk_docs: int) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one ``textsift privatize`` process."""
    cmd = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "textsift", "privatize", "--input", str(source),
           "--setting", "red", "--output", str(output), "--params", str(workdir / "params.yaml"),
           "--root", str(workdir), "--id-field", "id", "--spans-field", "spans", "--chunk-docs", str(chunk_docs)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"textsift privatize failed:\n{proc.stderr[-3000:]}")
    return seconds, int(proc.stdout.strip().splitlines()[-1]) / 1024


def figures(args: argparse.Namespace) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="textsift-stream-") as tmp:
        workdir = Path(tmp)
        (workdir / "params.yaml").write_text(yaml.safe_dump({
            "device": "cpu", "ingest": {"demo": {"n_docs": 200}}, "privatize": {"settings": {"red": SETTING}}}))
        source = workdir / "corpus.jsonl"
        write_demo_jsonl(iter_demo(DemoCorpusParams(n_docs=args.stream_docs), seed=99), source)
        size_mb = source.stat().st_size / 2**20
        seconds, rss = _privatize(workdir, source, workdir / "chunked.parquet", 10_000)
        params = {"docs": args.stream_docs, "file_mib": round(size_mb, 1), "chunk_docs": 10_000,
                  "setting": json.dumps(SETTING), "seconds": round(seconds, 1),
                  "docs_per_s": round(args.stream_docs / seconds, 1)}
        baseline = None
        if args.stream_compare:
            whole_seconds, whole_rss = _privatize(workdir, source, workdir / "whole.parquet", args.stream_docs)
            if not pq.read_table(workdir / "chunked.parquet").equals(pq.read_table(workdir / "whole.parquet")):
                raise RuntimeError("the chunked output differs from the one-chunk output")
            params["identical_to_one_chunk"] = True
            baseline = {"name": "one chunk (the whole file in memory)", "value": round(whole_rss, 1),
                        "seconds": round(whole_seconds, 1)}
        return [Figure("privatize_stream.peak_rss", round(rss, 1), "MiB", cpu_device(), params, baseline,
                       round(rss / baseline["value"], 3) if baseline else None)]
