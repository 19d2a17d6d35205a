"""Figures of the IPI interest model (METHODS.md §4.2): generation speed, full answer vs interest only.

A model is trained first on ``--ipi-posts`` synthetic posts (1 epoch: speed does not depend on how well
it learnt), then decodes ``--ipi-test`` held-out posts by beam search: the whole ``"<interest> :
<evidence>"`` (``max_len`` tokens) and only the interest (``INTEREST_ONLY_TOKENS``, what evaluate's
attacker decodes). CUDA when present.
"""

from __future__ import annotations

import argparse

import torch

from bench.harness import Figure, cpu_device, timed
from textsift.interests.inference import INTEREST_ONLY_TOKENS, generate
from textsift.interests.params import InterestParams
from textsift.interests.synthetic import generate_posts
from textsift.interests.training import score, train_interest_model

SEED = 1234


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ipi-posts", type=int, default=1000, help="synthetic posts the benchmarked model learns")
    parser.add_argument("--ipi-test", type=int, default=300, help="held-out posts decoded per figure")


def figures(args: argparse.Namespace) -> list[Figure]:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    params = InterestParams(epochs=1.0)
    model = train_interest_model(generate_posts(args.ipi_posts, "train", SEED), params, SEED, device)
    test = generate_posts(args.ipi_test, "test", SEED)
    texts = [post.text for post in test]
    full_s, full = timed(lambda: generate(model, texts))
    short_s, _ = timed(lambda: generate(model, texts, INTEREST_ONLY_TOKENS))
    where = torch.cuda.get_device_name() if device == "cuda" else cpu_device()
    common = {"posts": len(texts), "beam_size": params.beam_size, "encoder_layers": params.encoder_layers,
              "train_posts": args.ipi_posts, "epochs": params.epochs, **score(full, test)}
    return [
        Figure("interests.generate_posts_per_s", len(texts) / full_s, "posts/s", where,
               {**common, "max_len": params.max_len}),
        Figure("interests.interest_only_posts_per_s", len(texts) / short_s, "posts/s", where,
               {**common, "max_len": INTEREST_ONLY_TOKENS},
               {"name": "full answer", "value": len(texts) / full_s, "unit": "posts/s"}, full_s / short_s),
    ]
