"""Figures of metric-DP word replacement (METHODS.md §2): privatizer throughput vs the notebook.

On one synthetic index (random vectors are fine for speed: ``--mdp-vocab`` words at m = 183,
Annoy with 50 trees, as the notebook's word2vec index):
- tokens/s of the batched privatizer (``privatize_shard``) vs a faithful re-implementation of
  the notebook's per-word ``replace_word`` (one Python call per word: numpy noise, a torch
  vector lookup, torch + numpy, one Annoy query) on the same vectors, texts, ε and search_k;
- (worker scaling is bench/scale_out.py's figure: Dask through prefect-dask, 200,000 documents);
- agreement of Annoy's answer with the exact nearest neighbour at the default search_k and
  at search_k = 2000, with queries/s, and the exact search's queries/s (CUDA when present).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import numpy as np
import torch
from annoy import AnnoyIndex

from bench.harness import Figure, cpu_device, timed
from textsift import rng
from textsift.indexes.annoy_index import AnnoySearcher, build_annoy
from textsift.indexes.exact_index import ExactSearcher
from textsift.mechanisms.metric_dp.embedders import StaticEmbedder
from textsift.mechanisms.metric_dp.noise import sample_noise
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, privatize_shard

M, N_TREES, EPSILON, BETA, SEED = 183, 50, 20.0, 0.7, 1234
WORDS_PER_DOC = 50
_NOTEBOOK_BREAK = re.compile(r"\!|\,|\n|\.|\?|\-|\;|\:|\(|\)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mdp-vocab", type=int, default=100_000, help="metric-DP index size (words)")
    parser.add_argument("--mdp-tokens", type=int, default=50_000, help="token occurrences privatized per figure")
    parser.add_argument("--mdp-queries", type=int, default=2_000, help="queries for the Annoy agreement figures")


def notebook_replace_word(word, vocab_vectors, stoi, itos, ann_index, epsilon, dims, beta, generator):  # noqa: ANN001, ANN201
    """The notebook's ``replace_word`` (uncased word2vec branch), its noise drawn from a seeded generator."""
    sensitive_word = word.lower()
    rand_vec = generator.normal(size=dims)
    normalized_vec = rand_vec / np.linalg.norm(rand_vec)
    noise = normalized_vec * generator.gamma(shape=dims, scale=(1 + beta) / epsilon)
    original_vec = vocab_vectors[stoi.get(sensitive_word, 0)]
    noisy_vector = original_vec + noise
    closest_item = ann_index.get_nns_by_vector(noisy_vector, 1)[0]
    return itos[closest_item] if stoi.get(sensitive_word, 0) != 0 else sensitive_word


def notebook_privatize(texts: list[str], vocab_vectors: torch.Tensor, words: list[str], ann_index: object) -> list[str]:
    """The notebook's ``privatize_example_static`` loop over documents, phrases and words."""
    stoi = {w: i for i, w in enumerate(words)}
    generator = rng.generator(SEED, "bench.notebook")
    out = []
    for text in texts:
        clean = text.replace("'", " ").replace("/", " ").replace("  ", " ").replace('"', "")
        phrases = [p.strip() for p in _NOTEBOOK_BREAK.split(clean) if p.strip()]
        kept = [w for phrase in phrases for w in (
            notebook_replace_word(word, vocab_vectors, stoi, words, ann_index, EPSILON, M, BETA, generator)
            for word in phrase.split(" ")) if w not in ('"', "'", ",")]
        out.append(" ".join(kept))
    return out


def _corpus(words: list[str], n_tokens: int) -> tuple[list[str], list[str]]:
    generator = rng.generator(SEED, "bench.corpus")
    picks = generator.integers(0, len(words), size=(max(1, n_tokens // WORDS_PER_DOC), WORDS_PER_DOC))
    texts = [" ".join(words[j] for j in row[:25]) + ", " + " ".join(words[j] for j in row[25:]) + "." for row in picks]
    return texts, [f"doc{i}" for i in range(len(texts))]


def _agreement(searcher: AnnoySearcher, exact: ExactSearcher, vectors: np.ndarray, n: int) -> list[Figure]:
    generator = rng.generator(SEED, "bench.agreement")
    items = generator.integers(0, len(vectors), n)
    queries = (vectors[items] + sample_noise(generator, n, M, EPSILON, BETA)).astype(np.float32)
    exact_s, truth = timed(lambda: exact.nearest(queries))
    out = [Figure("metric_dp.exact_queries_per_s", n / exact_s, "queries/s", f"{exact.device} (torch)",
                  {"vocab": len(vectors), "m": M})]
    for search_k in (-1, 2000):
        probe = AnnoySearcher(searcher.path, M, search_k)
        seconds, got = timed(lambda probe=probe: probe.nearest(queries))
        label = "default" if search_k == -1 else str(search_k)
        out.append(Figure(f"metric_dp.annoy_agreement.search_k_{label}", float((got == truth).mean()), "fraction",
                          cpu_device(), {"queries": n, "queries_per_s": n / seconds, "n_trees": N_TREES,
                                         "search_k": search_k, "epsilon": EPSILON, "vocab": len(vectors)}))
    return out


def figures(args: argparse.Namespace) -> list[Figure]:
    vectors = rng.generator(SEED, "bench.vectors").standard_normal((args.mdp_vocab, M)).astype(np.float32)
    words = [f"w{i}" for i in range(args.mdp_vocab)]
    texts, ids = _corpus(words, args.mdp_tokens)
    tokens = len(texts) * WORDS_PER_DOC
    device = cpu_device()
    with tempfile.TemporaryDirectory(prefix="textsift-bench-mdp-") as tmp:
        path = Path(tmp) / "index.ann"
        build_s, _ = timed(lambda: build_annoy(vectors, N_TREES, SEED, path))
        searcher = AnnoySearcher(path, M, search_k=-1)
        privatizer = MetricDPPrivatizer(StaticEmbedder(words, vectors, True), searcher, words, epsilon=EPSILON,
                                        beta=BETA, oov_policy="keep")
        common = {"vocab": args.mdp_vocab, "m": M, "tokens": tokens, "n_trees": N_TREES, "search_k": -1,
                  "epsilon": EPSILON, "annoy_build_s": build_s}
        ann_index = AnnoyIndex(M, "euclidean")
        ann_index.load(str(path))
        base_s, _ = timed(lambda: notebook_privatize(texts, torch.from_numpy(vectors), words, ann_index))
        baseline = {"name": "notebook per-word replace_word", "value": tokens / base_s, "unit": "tokens/s"}
        ours_s, _ = timed(lambda: privatize_shard(privatizer, texts, ids, SEED))
        out = [
            Figure("metric_dp.privatize_tokens_per_s", tokens / ours_s, "tokens/s", device,
                   {**common, "workers": 1}, baseline, base_s / ours_s),
        ]
        exact_device = "cuda" if torch.cuda.is_available() else "cpu"
        out.extend(_agreement(searcher, ExactSearcher(vectors, exact_device), vectors, args.mdp_queries))
    return out
