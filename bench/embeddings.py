"""Figures of noisy sentence embeddings (METHODS.md §3): encode and noise throughput, CPU or GPU.

On ``--emb-docs`` generated demo documents (reviews of ~240 characters, what `make run` embeds):
- docs/s of the packaged MiniLM encoder, batched by length (``encode``, batch 64), beside the same
  encoder called one document at a time (the naive loop);
- rows/s of the keyed Laplace noise (one generator per document id, what makes the noise independent of
  batching and workers) beside one vectorized draw from a single generator (not reproducible per id);
- docs/s end to end: encode, then noise, at 384 dimensions.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from bench.harness import Figure, cpu_device, timed
from textsift.budgets.allocation import laplace_noise, uniform_epsilon
from textsift.budgets.sentence_encoder import encode, load_sentence_encoder
from textsift.demo import generate_demo
from textsift.device import resolve_device
from textsift.ingest_params import DemoCorpusParams
from textsift.models.detector_encoders import minilm_folder

SEED = 1234


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--emb-docs", type=int, default=2_000, help="documents embedded per figure")
    parser.add_argument("--emb-naive-docs", type=int, default=200, help="documents of the one-at-a-time baseline")


def figures(args: argparse.Namespace) -> list[Figure]:
    device = resolve_device(getattr(args, "device", None) or "auto")  # bench.run --device
    where = cpu_device() if device == "cpu" else f"cuda: {torch.cuda.get_device_name()}"
    records = generate_demo(DemoCorpusParams(n_docs=args.emb_docs), SEED)
    texts, ids = [r.text or "" for r in records], [r.doc_id for r in records]
    encoder = load_sentence_encoder(minilm_folder(), device)
    encode(encoder, texts[:64])  # warm-up: first-call allocations and kernels
    params = {"docs": len(texts), "chars_per_doc": round(float(np.mean([len(t) for t in texts])), 1),
              "encoder": "all-MiniLM-L6-v2", "batch_size": 64, "max_length": 128}
    seconds, x = timed(lambda: encode(encoder, texts, 64, 128))
    naive = texts[:args.emb_naive_docs]
    naive_seconds, _ = timed(lambda: [encode(encoder, [t], 1, 128) for t in naive])
    naive_rate = len(naive) / naive_seconds
    batched = Figure("embedding_dp.encode_docs_per_s", len(texts) / seconds, "docs/s", where, params,
                     {"name": "one document per call", "value": naive_rate, "docs": len(naive)})
    batched.ratio = batched.value / naive_rate

    sensitivity, epsilon_d = np.full(x.shape[1], 0.05), uniform_epsilon(x.shape[1], 1000.0)
    noise_seconds, _ = timed(lambda: laplace_noise(x, ids, sensitivity, epsilon_d, SEED))
    generator = np.random.default_rng(SEED)
    flat_seconds, _ = timed(lambda: x + generator.laplace(0.0, 1.0, size=x.shape) * (sensitivity / epsilon_d))
    noise = Figure("embedding_dp.noise_rows_per_s", len(ids) / noise_seconds, "rows/s", cpu_device(),
                   {"rows": len(ids), "dim": int(x.shape[1])},
                   {"name": "one vectorized draw (not keyed by id)", "value": len(ids) / flat_seconds})
    noise.ratio = noise.value / noise.baseline["value"]
    end_to_end = Figure("embedding_dp.encode_and_noise_docs_per_s", len(ids) / (seconds + noise_seconds), "docs/s",
                        where, params)
    return [batched, noise, end_to_end]
