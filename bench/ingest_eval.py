"""Figures of the foundation: ingest throughput and the baseline evaluation's wall time.

Both run the real stages (MLflow logging and Great Expectations included) in a scratch
project on a generated demo corpus, so the numbers are what a user's `make run` pays.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import yaml

from bench.harness import Figure, cpu_device, timed
from textsift.demo import generate_demo
from textsift.ingest_params import DemoCorpusParams
from textsift.runner import run_stage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n-docs", type=int, default=50_000, help="documents for the ingest figures")


def figures(args: argparse.Namespace) -> list[Figure]:
    n_docs = args.n_docs
    device = cpu_device()
    gen_seconds, _ = timed(lambda: generate_demo(DemoCorpusParams(n_docs=n_docs), 1234))
    out = [Figure("demo.generate_docs_per_s", n_docs / gen_seconds, "docs/s", device, {"n_docs": n_docs})]
    with tempfile.TemporaryDirectory(prefix="textsift-bench-") as tmp:
        root = Path(tmp)
        # the baseline row only: the transformer needs the fill-in model (its own figures are in bench.datasifter)
        params = {"seed": 1234, "ingest": {"demo": {"n_docs": n_docs}}, "evaluate": {"transformer": {"enabled": False}}}
        (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
        ingest_seconds, _ = timed(lambda: run_stage("ingest", root=root))
        accepted = json.loads((root / "metrics/ingest.json").read_text())["docs.accepted"]
        out.append(Figure(
            "ingest.docs_per_s", n_docs / ingest_seconds, "docs/s", device,
            {"n_docs": n_docs, "accepted": accepted, "includes": "generation+validation+GX+write"},
        ))
        eval_seconds, _ = timed(lambda: run_stage("evaluate", root=root))
        out.append(Figure(
            "evaluate.baseline_wall_s", eval_seconds, "s", device,
            {"n_docs": accepted, "classifier": "tfidf_logreg", "includes": "fit+score+GX+log model"},
        ))
    return out
