"""How the pipeline's cost grows with the corpus: every stage instance on 2k, 10k and 25k real IMDB reviews.

For each size N reviews of ``../shared/data/imdb`` drawn with a fixed seed become the project's own data
(``ingest.source``: a JSONL file, ``id`` and ``label`` read, split by ingest as a user's file is), in a fresh project
folder with the shipped ``params.yaml`` (or ``--growth-params``). Every stage instance then runs in
DAG order as its own ``textsift stage`` process, as under ``dvc repro``, so each one's wall time and peak resident
memory (``wait4``'s ``ru_maxrss``: that process and the children it waited for) are its own. The per-user model
cache is off, so every size trains what it trains (a cache filled at the first size would make the larger ones
look cheaper). Per stage: seconds and peak MiB at each size,
and the growth exponent, the slope of log(seconds) over log(N) across the sizes (1: linear; above 1.1 the stage
grows faster than its input). Fixed costs (imports, model loads, training on the detector's own data) make small
sizes look sub-linear: the exponent between the two largest sizes is reported beside the overall one.

Each stage's cost is appended to ``--growth-log`` the moment it is measured, with the digest of the params, the
machine and the commit it ran under, and the figures come from that log: every size measured under the same params
on the same machine, the latest run of each (each figure names the commits its sizes ran at). So the sizes can run
one at a time (``--growth-sizes 25000`` alone takes hours) and a run stopped partway keeps what it measured.
Exponents need two sizes; a size whose stages did not all finish gives its stages' figures only.

The default sizes run the whole pipeline three times over up to 25,000 documents;
``--growth-sizes 150 300`` with the tests' tiny params checks the harness (150-170 s per size there).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from bench.harness import Figure, cpu_device
from textsift.config import load_params
from textsift.dvc_render import render_params_text
from textsift.registry import instances

REPO = Path(__file__).resolve().parents[1]
IMDB = REPO.parent / "shared" / "data" / "imdb"
SIZES = (2_000, 10_000, 25_000)
SEED = 1234


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--growth-sizes", type=int, nargs="*", default=list(SIZES), help="corpus sizes (documents)")
    parser.add_argument("--growth-params", type=Path, default=REPO / "params.yaml",
                        help="params file whose settings the grown projects use (ingest.source is replaced)")
    parser.add_argument("--growth-log", type=Path, default=REPO / "bench/results/growth.jsonl",
                        help="each stage's cost is appended here as it is measured, so a run stopped partway "
                             "(the largest size takes hours) keeps what it measured")
    parser.add_argument("--growth-keep", type=Path, default=None,
                        help="build the projects in this folder and keep them (default: a temporary folder), e.g. "
                             "to run `--only serve` against a full-size project afterwards")


@cache
def imdb_lines() -> tuple[str, ...]:
    """Every IMDB review's JSON line, train file first (read once for all sizes)."""
    return tuple(line for name in ("train.jsonl.gz", "test.jsonl.gz")
                 for line in gzip.open(IMDB / name, "rt", encoding="utf-8"))


def imdb_subset(n: int, out: Path) -> Path:
    """``n`` IMDB reviews drawn with a fixed seed from both files (the files are sorted by label, so a prefix would
    hold one class), in file order, as a JSONL file with id, text and label; ingest splits them as it would a
    user's file. Each smaller sample is a subset of each larger one (the draw is a prefix of one permutation)."""
    lines = imdb_lines()
    if n > len(lines):
        raise SystemExit(f"IMDB holds {len(lines)} reviews, fewer than {n}")
    chosen = sorted(np.random.default_rng(SEED).permutation(len(lines))[:n])
    with out.open("w", encoding="utf-8") as sink:
        for index in chosen:
            row = json.loads(lines[index])
            sink.write(json.dumps({"id": row["id"], "text": row["text"], "label": row["label"]}) + "\n")
    return out


def anchored(value: Any, base: Path) -> Any:
    """``value`` (params read from YAML) with every relative path that names a file or folder beside ``base`` made
    absolute: the real corpora (``../shared/data/...``) are found from a project folder anywhere."""
    if isinstance(value, dict):
        return {k: anchored(v, base) for k, v in value.items()}
    if isinstance(value, list):
        return [anchored(v, base) for v in value]
    if isinstance(value, str) and "/" in value and not Path(value).is_absolute() and (base / value).exists():
        return str((base / value).resolve())
    return value


def grown_project(root: Path, n: int, base: Path) -> Path:
    """A project folder whose params are ``base``'s with the first ``n`` IMDB reviews as its source (paths in them
    anchored where ``base`` lies)."""
    root.mkdir(parents=True)
    params = anchored(yaml.safe_load(base.read_text(encoding="utf-8")), base.parent)
    params["ingest"]["source"] = {"kind": "file", "path": str(imdb_subset(n, root / "imdb.jsonl")),
                                  "format": "jsonl", "text_field": "text", "label_field": "label",
                                  "id_field": "id"}
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return root


def run_measured(command: list[str], cwd: Path) -> tuple[float, float]:
    """``command``'s wall seconds and peak resident memory in MiB (``wait4``: it and the children it waited for),
    without the per-user model cache; fails loudly."""
    started = time.perf_counter()
    env = {**os.environ, "TEXTSIFT_CACHE_DIR": "off"}
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{errors.decode()[-3000:]}")
    return seconds, usage.ru_maxrss / 1024  # Linux reports KiB


@dataclass(frozen=True)
class Run:
    """What makes measurements comparable across invocations: the digest of the validated params (defaults filled
    in, as DVC reads them) and the machine (its CPU, and whether it has a GPU)."""

    params: str
    device: str

    @classmethod
    def of(cls, params: Path) -> Run:
        validated = render_params_text(load_params(params)).encode()
        gpu = "; GPU" if shutil.which("nvidia-smi") else ""
        return cls(hashlib.sha256(validated).hexdigest()[:12], cpu_device() + gpu)


def commit() -> str:
    """The checkout's commit (short), recorded beside each measurement."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                          text=True).stdout.strip() or "unknown"


def stage_costs(root: Path, n: int, log: Path, run: Run) -> None:
    """Run every stage instance of the project one after another in DAG order, appending each one's (seconds, peak
    MiB) to ``log`` as a JSON line the moment it is measured."""
    textsift = str(Path(sys.executable).parent / "textsift")
    log.parent.mkdir(parents=True, exist_ok=True)
    for inst in instances(load_params(root / "params.yaml")):
        command = [textsift, "stage", inst.stage.name, *(["--key", inst.key] if inst.key else [])]
        seconds, peak = run_measured(command, root)
        with log.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps({"size": n, "stage": inst.name, "seconds": round(seconds, 2),
                                   "peak_mib": round(peak, 1), **asdict(run), "commit": commit()}) + "\n")


def logged_costs(log: Path, run: Run) -> tuple[dict[int, dict[str, tuple[float, float]]], dict[int, list[str]]]:
    """(seconds, peak MiB) per size and stage instance from ``log``, of ``run``'s params and machine (the latest line
    of each, in DAG order), and the commits those lines ran at; a line a killed run left half written is skipped."""
    kept: dict[int, dict[str, dict]] = {}
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if all(entry.get(k) == v for k, v in asdict(run).items()):
                kept.setdefault(entry["size"], {})[entry["stage"]] = entry
    by_size = {n: {stage: (e["seconds"], e["peak_mib"]) for stage, e in entries.items()}
               for n, entries in sorted(kept.items())}
    commits = {n: sorted({e.get("commit", "unknown") for e in entries.values()}) for n, entries in kept.items()}
    return by_size, commits


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The least-squares slope of log(seconds) over log(size)."""
    xs, ys = [math.log(s) for s in sizes], [math.log(max(t, 1e-6)) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def figures(args: argparse.Namespace) -> list[Figure]:
    sizes = sorted(set(args.growth_sizes))
    if not sizes or sizes[0] < 1:
        raise SystemExit("--growth-sizes: positive sizes")
    run = Run.of(args.growth_params)
    with tempfile.TemporaryDirectory(prefix="textsift-growth-") as tmp:
        folder = args.growth_keep or Path(tmp)
        for n in sizes:
            stage_costs(grown_project(folder / f"n{n}", n, args.growth_params), n, args.growth_log, run)
    by_size, commits = logged_costs(args.growth_log, run)
    measured = list(by_size)
    info = {"sizes": measured, "corpus": f"IMDB reviews (N drawn with seed {SEED})", "params": str(args.growth_params),
            "params_digest": run.params, "commits": {str(n): commits[n] for n in measured}}
    out = []
    for name in dict.fromkeys(stage for costs in by_size.values() for stage in costs):
        at = [n for n in measured if name in by_size[n]]
        seconds = [by_size[n][name][0] for n in at]
        stage = name.replace("@", ".")
        for n, s in zip(at, seconds, strict=True):
            out.append(Figure(f"growth.{stage}.seconds.{n}", s, "s", run.device, info))
            out.append(Figure(f"growth.{stage}.peak_mib.{n}", by_size[n][name][1], "MiB", run.device, info))
        if len(at) >= 2:
            out.append(Figure(f"growth.{stage}.exponent", exponent(at, seconds), "slope", run.device,
                              {**info, "largest_two": exponent(at[-2:], seconds[-2:])}))
    for n, costs in by_size.items():
        out.append(Figure(f"growth.total.seconds.{n}", sum(c[0] for c in costs.values()), "s", run.device,
                          {**info, "stages": len(costs)}))
        out.append(Figure(f"growth.total.peak_mib.{n}", max(c[1] for c in costs.values()), "MiB", run.device,
                          {**info, "stages": len(costs)}))
    return out
