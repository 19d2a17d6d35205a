"""train_fill_in: the WordPiece tokenizer and masked LM of DataSifterText (METHODS.md §1.1).

Reads the training split of ``data/ingest/corpus.parquet``; builds the model from ``fill_in``
(or continues a local checkpoint, ``fill_in.init_from``, relative to the project root) with a
tokenizer that learns nothing from the gold privacy spans and pattern matches (e-mails, phone
numbers, ...) nor from words of fewer than ``fill_in.min_doc_freq`` documents, trains
it on the device ``device`` resolves to, and logs it to MLflow in the transformers format under
the artifact path ``fill_in``. Outputs: the pointer ``models/fill_in.json`` (the model's sha256,
which the run is tagged with) and ``metrics/train_fill_in.json``. The training loss of every
step goes to MLflow with its step number; nothing derived from document text is logged.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import pandas as pd
import torch

from textsift import user_cache
from textsift.artifacts import SHA_TAG, write_pointer
from textsift.corpus import CharSpan, spans_to_python
from textsift.detection.recognizers.patterns import find_patterns
from textsift.device import resolve_device
from textsift.models.fill_in import build_model, continue_from
from textsift.models.training import train_mlm
from textsift.quality.suites import check_corpus
from textsift.rng import torch_seed
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")
ARTIFACT = "fill_in"


STEP_LOSS = "train.step_loss."  # the cached metrics carry the step losses, logged as MLflow steps


def training_documents(corpus: pd.DataFrame) -> tuple[list[str], list[list[CharSpan]]]:
    """The training split's texts and, per text, what its tokenizer must not learn: the gold privacy spans and the
    pattern recognizers' matches (e-mails, phone numbers, URLs, IDs, dates; regular expressions, so cheap, and
    there when a corpus has no gold spans; the detector's spans come later in the DAG)."""
    train = corpus[corpus["split"] == "train"]
    texts = train["text"].tolist()
    return texts, [[*spans_to_python(gold), *find_patterns(text)]
                   for text, gold in zip(texts, train["spans"], strict=True)]


def _trained(ctx: StageContext, texts: list[str], spans: list[list[CharSpan]], device: str, folder: Path
             ) -> dict[str, float]:
    """Build (or continue) and train the masked LM on ``texts`` (their privacy ``spans`` kept out of a new
    tokenizer), save it to ``folder`` (transformers format); its metrics and step losses."""
    params, fill = ctx.params, ctx.params.fill_in
    init = torch.Generator().manual_seed(torch_seed(params.seed, "fill_in.init"))
    fm = (continue_from(ctx.path(fill.init_from), init) if fill.init_from
          else build_model(texts, fill, init, spans))
    log.info("train_fill_in: %d training documents, vocabulary %d, device %s", len(texts), len(fm.tokenizer), device)
    losses: dict[str, float] = {}
    metrics = train_mlm(fm, texts, fill, params.seed, device,
                        on_step=lambda step, loss: losses.__setitem__(f"{STEP_LOSS}{step}", loss))
    ctx.tracker.save_transformers_model(fm.model.to("cpu"), fm.tokenizer, folder)
    return {**metrics, **losses}


def run(ctx: StageContext) -> None:
    """Train DataSifterText's fill-in masked LM on the corpus's training split (METHODS.md §1.1).

    Reads ``corpus``; writes the pointer ``fill_in`` and ``train_fill_in_metrics``; logs every step's loss, the metrics
    and the model (transformers format, the run tagged with its sha256) to MLflow and a line with documents,
    vocabulary size and device. On the demo corpus the model comes from the per-user cache when this recipe was
    trained before (:attr:`~textsift.stage_context.StageContext.corpus_is_demo`; tag ``textsift.fill_in.cached``).
    """
    params, fill = ctx.params, ctx.params.fill_in
    corpus = ctx.load("corpus")
    check_corpus(corpus, name="train_fill_in_input").raise_if_failed()
    texts, spans = training_documents(corpus)
    device = resolve_device(params.device)
    recipe = {"fill_in": fill.model_dump(mode="json"), "seed": params.seed, "device": device}
    data = [ctx.input("corpus"), *([ctx.path(fill.init_from)] if fill.init_from else [])]
    digest = user_cache.recipe_digest(ARTIFACT, recipe, (__name__,), data)
    with tempfile.TemporaryDirectory(prefix="textsift-fill-in-") as tmp:
        entry = user_cache.cached_model(ARTIFACT, digest, lambda folder: _trained(ctx, texts, spans, device, folder),
                                        Path(tmp), share=ctx.corpus_is_demo)
        if not entry.trained:
            log.info("train_fill_in: model %s from the user cache (the demo corpus)", digest[:12])
        ctx.tracker.log_dir(ctx.run_id, entry.folder, ARTIFACT)
        pointer = write_pointer(ctx.output("fill_in"), ARTIFACT, ARTIFACT, entry.folder)
    ctx.tracker.set_tags(ctx.run_id, {SHA_TAG: pointer["sha256"], "textsift.fill_in.cached":
                                      str(not entry.trained).lower()})
    losses = sorted((int(k[len(STEP_LOSS):]), v) for k, v in entry.metrics.items() if k.startswith(STEP_LOSS))
    ctx.tracker.log_metric_steps(ctx.run_id, "train.step_loss", losses)
    metrics = {k: v for k, v in entry.metrics.items() if not k.startswith(STEP_LOSS)}
    metrics["train.documents"] = len(texts)
    ctx.save("train_fill_in_metrics", metrics)
    ctx.log_metrics(metrics)
