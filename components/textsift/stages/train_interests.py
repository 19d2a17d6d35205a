"""train_interests: the IPI interest attacker (METHODS.md §4.2), trained on seeded synthetic posts.

It reads no corpus, so it is its own stage: the flow runs it as soon as a thread is free, beside the trainings that
need the corpus, and only ``attack`` waits for it. The model is trained once per user (:mod:`textsift.user_cache`,
keyed by its params, the seed, its code, library versions and the device kind) and reused by every project and run. Its
MLflow artifact is ``interests``, its DVC output the pointer ``models/interests.json`` (``enabled: false`` when
``detectors.interests.enabled`` is off).
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from textsift import user_cache
from textsift.artifacts import SHA_TAG, write_pointer
from textsift.corpus import write_json
from textsift.device import resolve_device
from textsift.interests.inference import generate
from textsift.interests.io import save_interest_model
from textsift.interests.params import InterestParams
from textsift.interests.synthetic import generate_posts
from textsift.interests.training import score, train_interest_model
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")
ARTIFACT = "interests"
CODE = ("textsift.interests.training", "textsift.interests.synthetic", "textsift.interests.io")


def _interest_model(params: InterestParams, seed: int, device: str, folder: Path) -> dict[str, float]:
    """Train the interest model on synthetic posts, save it to ``folder``; its held-out metrics."""
    train = generate_posts(params.synthetic_train, "train", seed, params.none_rate)
    test = generate_posts(params.synthetic_test, "test", seed, params.none_rate)
    log.info("train_interests: interest model on %d synthetic posts (%d held out), %s layers", len(train),
             len(test), params.encoder_layers)
    started = time.perf_counter()
    im = train_interest_model(train, params, seed, device)
    trained_s = time.perf_counter() - started
    started = time.perf_counter()
    generated = generate(im, [post.text for post in test])
    generate_s = time.perf_counter() - started
    save_interest_model(im, folder)
    metrics = {f"interests.test.{k}": v for k, v in score(generated, test).items()}
    metrics.update({"interests.train_seconds": trained_s,
                    "interests.generate_posts_per_s": len(test) / generate_s if generate_s else 0.0})
    return metrics


def run(ctx: StageContext) -> None:
    """Train (or take from the user cache) the interest model; write the pointer ``interests`` and
    ``train_interests_metrics``: ROUGE-1/2/L, main and interest accuracy on held-out posts whose slot values no
    training post contains (those measured when the cached model was trained). The run is tagged with the model's
    sha256 and ``textsift.interests.cached``."""
    params = ctx.params.detectors.interests
    if not params.enabled:
        write_json({"name": ARTIFACT, "enabled": False}, ctx.output("interests"))
        ctx.save("train_interests_metrics", {})
        return
    seed, device = ctx.params.seed, resolve_device(ctx.params.device)
    digest = user_cache.recipe_digest(
        ARTIFACT, {"params": params.model_dump(mode="json"), "seed": seed, "device": device}, CODE)
    with tempfile.TemporaryDirectory(prefix="textsift-interests-") as tmp:
        entry = user_cache.cached_model(ARTIFACT, digest, lambda folder: _interest_model(params, seed, device, folder),
                                        Path(tmp))
        if not entry.trained:
            log.info("train_interests: interest model %s from the user cache (%s)", digest[:12], entry.folder)
        ctx.tracker.log_dir(ctx.run_id, entry.folder, ARTIFACT)
        pointer = write_pointer(ctx.output("interests"), ARTIFACT, ARTIFACT, entry.folder)
    ctx.tracker.set_tags(ctx.run_id, {SHA_TAG: pointer["sha256"], "textsift.interests.cached":
                                      str(not entry.trained).lower()})
    metrics = entry.metrics
    ctx.save("train_interests_metrics", metrics)
    ctx.log_metrics(metrics)
    log.info("train_interests: interest accuracy %.3f, ROUGE main %.3f on held-out posts",
             metrics["interests.test.interest_accuracy"], metrics["interests.test.main"])
