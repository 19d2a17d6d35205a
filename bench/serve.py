"""Serving figure: `textsift serve` of a registered privatizer, requests per second and memory over many requests.

Needs a project whose pipeline has run (``--serve-root``, default ``.``: after ``make run``): the latest version
of ``textsift-privatizer`` for each ``--serve-setting`` (a redaction and a metric-DP one) is served by a real
``textsift serve`` process on 127.0.0.1 (the project's key from its key file, passed through the environment as a
deployment would). One client sends ``--serve-requests`` requests one after another (keep-alive), each one
synthetic demo text cut to 500 characters; the figure is requests per second, with the server's resident memory
after the first 1,000 requests and at the end (bounded memory: the two should match). Then ``--serve-clients``
clients send the same requests at once (each one after another): requests per second when the server joins the
requests that queue up while it works (:mod:`textsift.serving.batching`), the mean requests per model call, and
the median and 99th percentile of the time a client waits for its answer.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import psutil

from bench.harness import Figure, cpu_device
from textsift import secret_key
from textsift.config import load_params
from textsift.demo import generate_demo
from textsift.ingest_params import DemoCorpusParams
from textsift.tracking import Tracker

TOKEN = "bench-token-" + "x" * 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--serve-root", type=Path, default=Path("."), help="a project whose pipeline has run")
    parser.add_argument("--serve-setting", nargs="+", default=["redact_pseudonyms", "mdp_glove_eps25"],
                        help="the served settings, each measured on its own (a redaction and a metric-DP one)")
    parser.add_argument("--serve-requests", type=int, default=10_000)
    parser.add_argument("--serve-clients", type=int, default=8, help="clients sending at once (second figure)")


def _text(chars: int = 500) -> str:
    docs = generate_demo(DemoCorpusParams(n_docs=10), seed=5)
    return " ".join(d.text for d in docs)[:chars]


def _model_calls(url: str) -> int:
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith("textsift_model_calls_total "):
            return int(line.split()[1])
    raise RuntimeError("the server reports no textsift_model_calls_total")


def figures(args: argparse.Namespace) -> list[Figure]:
    return [figure for setting in args.serve_setting for figure in setting_figures(args, setting)]


def setting_figures(args: argparse.Namespace, setting: str) -> list[Figure]:
    """``serve.<setting>.*``: one setting's privatizer served and measured (none when it is not registered)."""
    root = args.serve_root.resolve()
    params = load_params(root / "params.yaml")
    latest = Tracker(params.tracking, root).latest_version(params.tracking.registered_privatizer, setting)
    key = secret_key.load(root)
    if latest is None or key is None:
        print(f"serve: no {params.tracking.registered_privatizer} version for {setting} (or no key) in "
              f"{root}; skipped")
        return []
    version = latest["version"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "TEXTSIFT_SERVE_TOKEN": TOKEN, secret_key.ENV: key.material.hex()}
    server = subprocess.Popen([sys.executable, "-m", "textsift", "serve", "--root", str(root), "--port", str(port),
                               "--model", f"models:/{params.tracking.registered_privatizer}/{version}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {TOKEN}"}
        deadline = time.monotonic() + 300
        while True:
            try:
                httpx.get(f"{url}/health", timeout=5).raise_for_status()
                break
            except httpx.HTTPError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"textsift serve did not start:\n{server.stderr.read()[-2000:]}") from None
                time.sleep(0.5)
        body = {"records": [{"id": "bench-1", "text": _text()}]}
        rss_1k = 0.0
        with httpx.Client(headers=headers, timeout=60) as client:
            client.post(f"{url}/privatize", json=body).raise_for_status()  # the detector's first call
            started = time.perf_counter()
            for i in range(args.serve_requests):
                client.post(f"{url}/privatize", json=body).raise_for_status()
                if i == 999:
                    rss_1k = psutil.Process(server.pid).memory_info().rss / 2**20
            seconds = time.perf_counter() - started
        rss_end = psutil.Process(server.pid).memory_info().rss / 2**20
        calls_before = _model_calls(url)
        per_client = args.serve_requests // args.serve_clients

        def client_run(_: int) -> list[float]:
            waited = []
            with httpx.Client(headers=headers, timeout=60) as client:
                for _ in range(per_client):
                    sent = time.perf_counter()
                    client.post(f"{url}/privatize", json=body).raise_for_status()
                    waited.append(time.perf_counter() - sent)
            return waited

        started = time.perf_counter()
        with ThreadPoolExecutor(args.serve_clients) as pool:
            latencies = np.concatenate([np.asarray(w) for w in pool.map(client_run, range(args.serve_clients))])
        concurrent_s = time.perf_counter() - started
        calls = _model_calls(url) - calls_before
        rss_concurrent = psutil.Process(server.pid).memory_info().rss / 2**20
    finally:
        server.terminate()
        server.wait(30)
    return [Figure(f"serve.{setting}.requests_per_s", round(args.serve_requests / seconds, 1), "requests/s",
                   cpu_device(), {"setting": setting, "requests": args.serve_requests, "text_chars": 500,
                    "rss_mib_after_1000": round(rss_1k, 1), "rss_mib_at_end": round(rss_end, 1),
                    "seconds": round(seconds, 1)}),
            Figure(f"serve.{setting}.requests_per_s_concurrent",
                   round(per_client * args.serve_clients / concurrent_s, 1), "requests/s", cpu_device(),
                   {"setting": setting, "clients": args.serve_clients,
                    "requests": per_client * args.serve_clients, "text_chars": 500,
                    "requests_per_model_call": round(per_client * args.serve_clients / max(calls, 1), 2),
                    "rss_mib_at_end": round(rss_concurrent, 1)},
                   {"name": "one client", "value": round(args.serve_requests / seconds, 1), "unit": "requests/s"},
                   round(per_client * args.serve_clients / concurrent_s / (args.serve_requests / seconds), 2)),
            *(Figure(f"serve.{setting}.latency_{name}_ms_concurrent",
                     round(float(np.percentile(latencies, q)) * 1000, 1), "ms",
                     cpu_device(), {"setting": setting, "clients": args.serve_clients,
                                    "requests": len(latencies), "text_chars": 500})
              for name, q in (("p50", 50), ("p99", 99)))]
