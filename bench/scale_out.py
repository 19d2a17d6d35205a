"""Scale-out figure: metric-DP privatization of a 200,000-document generated corpus on Dask, 1 vs 2 workers.

The corpus is the demo generator's (``--scale-docs`` documents, ~230 characters each); the index is a
synthetic one over the corpus's own vocabulary (random vectors at m = 183, Annoy with 50 trees: speed
only). The documents are cut into shards of ``--scale-shard`` documents, and a Prefect flow runs one task
per shard on a Dask LocalCluster through prefect-dask (worker PROCESSES, one thread each), first with 1
worker, then with 2. Noise is keyed by (seed, document id), so the sharded output must be byte-identical
whatever the worker count: the figure records the digest of both outputs and fails if they differ.

As a sharded stage would, each task reads its rows from the corpus Parquet and writes its own output
Parquet: only paths and row numbers pass through Prefect (whose API stores every parameter) and Dask.
Worker processes load the privatizer once from a pickle (vectors, vocabulary, Annoy path). The seconds
include the Dask cluster's start-up (a few seconds).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from prefect import flow, task
from prefect.cache_policies import NONE

from bench.harness import Figure, cpu_device, timed
from textsift import rng
from textsift.corpus import atomic_path
from textsift.demo import generate_demo
from textsift.indexes.annoy_index import AnnoySearcher, build_annoy
from textsift.ingest_params import DemoCorpusParams
from textsift.mechanisms.metric_dp.embedders import StaticEmbedder
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, privatize_shard
from textsift.tokenize import metric_dp_words

M, N_TREES, EPSILON, BETA, SEED = 183, 50, 20.0, 0.7, 1234
_LOADED: dict[str, MetricDPPrivatizer] = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scale-docs", type=int, default=200_000, help="documents of the scale-out figure")
    parser.add_argument("--scale-shard", type=int, default=5_000, help="documents per shard (one Prefect task)")


def _privatizer(path: str) -> MetricDPPrivatizer:
    """The privatizer of this worker process, unpickled on its first shard."""
    if path not in _LOADED:
        _LOADED[path] = pickle.loads(Path(path).read_bytes())
    return _LOADED[path]


@task(cache_policy=NONE, task_run_name="shard-{start}")
def privatize_shard_task(privatizer_path: str, corpus: str, start: int, stop: int, out_dir: str) -> str:
    """Privatize rows [start, stop) of the corpus Parquet; write them to their own Parquet; return its path.

    Only paths and row numbers travel through Prefect and Dask: never text (flow and task parameters
    are stored by the Prefect API).
    """
    rows = pq.read_table(corpus).slice(start, stop - start).to_pydict()
    texts = privatize_shard(_privatizer(privatizer_path), rows["text"], rows["doc_id"], SEED).texts
    path = Path(out_dir) / f"shard-{start:09d}.parquet"
    with atomic_path(path) as tmp:
        pq.write_table(pa.table({"doc_id": rows["doc_id"], "text": texts}), tmp)
    return str(path)


@flow(name="textsift-bench-scale-out")
def privatize_sharded(privatizer_path: str, corpus: str, shard: int, out_dir: str) -> list[str]:
    """One task per shard of ``shard`` documents; the shard files in document order."""
    n = pq.read_metadata(corpus).num_rows
    futures = [privatize_shard_task.submit(privatizer_path, corpus, start, min(start + shard, n), out_dir)
               for start in range(0, n, shard)]
    return [future.result() for future in futures]


def _runner(workers: int):  # noqa: ANN202 - prefect_dask is imported lazily, like the flow does
    from prefect_dask import DaskTaskRunner

    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": None})


def _digest(shards: list[str]) -> str:
    """SHA-256 over the privatized texts of every shard, in document order."""
    digest = hashlib.sha256()
    for path in shards:
        for text in pq.read_table(path, columns=["text"]).column("text").to_pylist():
            digest.update(text.encode() + b"\n")
    return digest.hexdigest()


def figures(args: argparse.Namespace) -> list[Figure]:
    from flows.temporary_api import start_temporary_api

    start_temporary_api()
    if not os.environ.get("PREFECT_API_URL"):  # worker processes must reach this process's temporary API
        from prefect.server.api.server import SubprocessASGIServer

        os.environ["PREFECT_API_URL"] = SubprocessASGIServer().api_url
    records = generate_demo(DemoCorpusParams(n_docs=args.scale_docs), SEED)
    texts, ids = [r.text for r in records], [f"doc{i}" for i in range(len(records))]
    words = sorted({w.text.lower() for text in texts[:20_000] for w in metric_dp_words(text)})
    vectors = rng.generator(SEED, "bench.scale_out.vectors").standard_normal((len(words), M)).astype(np.float32)
    chars = sum(len(t) for t in texts)
    out = []
    with tempfile.TemporaryDirectory(prefix="textsift-bench-scale-") as tmp:
        index = Path(tmp) / "index.ann"
        build_annoy(vectors, N_TREES, SEED, index)
        privatizer = MetricDPPrivatizer(StaticEmbedder(words, vectors, True), AnnoySearcher(index, M, -1), words,
                                        epsilon=EPSILON, beta=BETA, oov_policy="keep")
        pickled = Path(tmp) / "privatizer.pkl"
        pickled.write_bytes(pickle.dumps(privatizer))
        corpus = Path(tmp) / "corpus.parquet"
        pq.write_table(pa.table({"doc_id": ids, "text": texts}), corpus)
        results = {}
        for workers in (1, 2):
            out_dir = Path(tmp) / f"out-{workers}"
            out_dir.mkdir()
            seconds, shards = timed(lambda workers=workers, out_dir=out_dir: privatize_sharded.with_options(
                task_runner=_runner(workers))(str(pickled), str(corpus), args.scale_shard, str(out_dir)))
            results[workers] = (seconds, _digest(shards))
        (one_s, one_digest), (two_s, two_digest) = results[1], results[2]
        if one_digest != two_digest:
            raise AssertionError(f"sharded output differs between 1 and 2 workers: {one_digest} vs {two_digest}")
        common = {"docs": len(texts), "chars": chars, "shard_docs": args.scale_shard, "vocab": len(words), "m": M,
                  "epsilon": EPSILON, "engine": "Prefect flow on a Dask LocalCluster (prefect-dask), worker processes",
                  "output_sha256": two_digest, "identical_output": True}
        baseline = {"name": "1 Dask worker process", "value": len(texts) / one_s, "unit": "docs/s"}
        out.append(Figure("scale_out.metric_dp_docs_per_s_1_worker", len(texts) / one_s, "docs/s", cpu_device(),
                          {**common, "workers": 1, "seconds": one_s}))
        out.append(Figure("scale_out.metric_dp_docs_per_s_2_workers", len(texts) / two_s, "docs/s", cpu_device(),
                          {**common, "workers": 2, "seconds": two_s}, baseline, one_s / two_s))
    return out
