"""Training the DPER detector or its flat baseline on labelled spans (METHODS.md §4.1).

Examples are any objects with ``.text`` and ``.spans`` (``textsift.corpus.Span``). Texts become
token windows; GlobalPointer learns eq. (9) against the gold spans of each window, the flat
baseline token cross-entropy against BIO tags. AdamW (a pretrained encoder at
``learning_rate``, the layers trained from scratch at ``head_learning_rate``), linear warm-up
and decay, gradient clipping, bf16 autocast on CUDA. Randomness is seeded from
``textsift.rng``: new weights (a ``torch.Generator``), the batch order (a numpy generator) and
dropout, which PyTorch draws from its default generator: each step's forward pass runs in this training's own seeded
stream of it (:class:`textsift.device.TorchStream`), as in :mod:`textsift.models.training`.

Batches hold windows of similar length (:func:`textsift.models.bucketing.length_batches`): GlobalPointer scores every
(start, end) pair, so a batch costs the square of its longest window, and random batches of this
mix (tweets, synthetic sentences, corpus documents) padded to 2.2x the tokens and 4x the pairs.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import torch
from torch.optim.lr_scheduler import LambdaLR

from textsift.device import TorchStream
from textsift.errors import InputError
from textsift.models.bucketing import length_batches
from textsift.models.detector import Detector, Example, build_detector, forward_windows
from textsift.models.detector_windows import Window, make_windows, text_token_spans, tokenize, window_targets
from textsift.models.flat_tagging import IGNORE, flat_loss, spans_to_tags
from textsift.models.global_pointer import TokenSpan, global_pointer_loss
from textsift.models.params import DetectorParams
from textsift.rng import generator, torch_seed

log = logging.getLogger("textsift")


class TrainedDetector(NamedTuple):
    """A trained detector (eval mode) and its mean training loss per epoch."""

    detector: Detector
    epoch_losses: list[float]


def training_windows(detector: Detector, examples: Sequence[Example]) -> tuple[list[Window], list[list[TokenSpan]]]:
    """All windows of the examples and, per window, the gold spans it holds whole (window positions).

    A span cut by a window border is no target of that window (its cut part is a negative there:
    a cut span is not an entity); with ``stride`` overlap another window holds it whole.
    """
    texts = [ex.text for ex in examples]
    encoded = tokenize(detector.tokenizer, texts)
    types = {label: c for c, label in enumerate(detector.labels)}
    gold = [text_token_spans(enc, ex.spans, types) for enc, ex in zip(encoded, examples, strict=True)]
    windows = make_windows(detector.tokenizer, texts, detector.params.max_length, detector.params.stride, encoded)
    return windows, [window_targets(w, gold[w.text_index]) for w in windows]


def batch_loss(detector: Detector, windows: Sequence[Window], targets: Sequence[Sequence[TokenSpan]]) -> torch.Tensor:
    """The loss of one batch: eq. (9) for GlobalPointer, BIO cross-entropy for the flat head."""
    output, _ = forward_windows(detector, windows)
    if detector.params.model == "global_pointer":
        cells = [(row, c, i, j) for row, spans in enumerate(targets) for c, i, j in spans]
        gold = torch.zeros(output.shape, device=output.device)
        if cells:
            gold[tuple(torch.tensor(cells, device=output.device).T)] = 1.0
        return global_pointer_loss(output, gold)
    tags = torch.full(output.shape[:2], IGNORE, dtype=torch.long)
    for row, (window, spans) in enumerate(zip(windows, targets, strict=True)):
        n = len(window.offsets)
        tags[row, 1:n + 1] = torch.tensor(spans_to_tags([(c, i - 1, j - 1) for c, i, j in spans], n))
    return flat_loss(output, tags.to(output.device))


def _freeze_word_embeddings(detector: Detector) -> None:
    """``freeze_word_embeddings``: no gradient and no optimizer step over a pretrained encoder's word embeddings."""
    if detector.params.freeze_word_embeddings and detector.params.encoder != "roformer":
        detector.net.encoder.get_input_embeddings().weight.requires_grad_(False)


def _optimizer(detector: Detector) -> torch.optim.Optimizer:
    params = detector.params
    net = detector.net
    scratch = params.encoder == "roformer"
    encoder = [p for p in net.encoder.parameters() if p.requires_grad]
    new = [p for m in net.new_modules() for p in m.parameters() if p.requires_grad]
    groups = [{"params": encoder, "lr": params.head_learning_rate if scratch else params.learning_rate},
              {"params": new, "lr": params.head_learning_rate}]
    return torch.optim.AdamW(groups, weight_decay=params.weight_decay)


def _schedule(optimizer: torch.optim.Optimizer, total: int, warmup_fraction: float) -> LambdaLR:
    """Linear warm-up over ``warmup_fraction`` of the steps, then linear decay to zero."""
    warmup = max(1, int(total * warmup_fraction))
    return LambdaLR(optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup))))


def _fit(detector: Detector, windows: list[Window], targets: list[list[TokenSpan]], seed: int, dropout: TorchStream,
         stream: str = "detector.shuffle") -> list[float]:
    params = detector.params
    per_epoch = math.ceil(len(windows) / params.batch_size)
    optimizer = _optimizer(detector)
    scheduler = _schedule(optimizer, per_epoch * params.epochs, params.warmup_fraction)
    order_rng = generator(seed, stream)
    trainable = [p for group in optimizer.param_groups for p in group["params"]]
    losses = []
    steps, every, started = per_epoch * params.epochs, max(1, per_epoch * params.epochs // 20), time.perf_counter()
    detector.net.train()
    lengths = [len(w.input_ids) for w in windows]
    for epoch in range(params.epochs):
        total = 0.0
        batches = length_batches(lengths, params.batch_size, order_rng)
        for step, index in enumerate(batches, start=epoch * per_epoch + 1):
            with dropout:  # the forward pass draws from this training's own stream (device.TorchStream)
                loss = batch_loss(detector, [windows[i] for i in index], [targets[i] for i in index])
            loss.backward()  # draws nothing: another training's forward pass runs beside it
            torch.nn.utils.clip_grad_norm_(trainable, params.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            total += float(loss.detach())
            if step % every == 0 and step < steps:
                elapsed = time.perf_counter() - started
                log.info("detector: step %d/%d loss %.4f, %.1f windows/s, ETA %.0fs", step, steps, float(loss.detach()),
                         step * params.batch_size / elapsed, elapsed / step * (steps - step))
        losses.append(total / per_epoch)
        log.info("detector: epoch %d/%d loss %.4f (%d windows)", epoch + 1, params.epochs, losses[-1], len(windows))
    return losses


def train_detector(
    examples: Sequence[Example], params: DetectorParams, seed: int, device: str = "cpu",
    labels: Sequence[str] | None = None, encoder_folder: str | Path | None = None,
) -> TrainedDetector:
    """Build a detector (or flat baseline, ``params.model``) and train it on ``examples``.

    Args:
        examples: objects with ``.text`` and ``.spans``; spans of types outside ``labels`` are ignored.
        params: sizes, windows and the schedule (``epochs``, ``batch_size``, learning rates, warm-up).
        seed: root seed; the same seed gives the same weights and predictions (bit-identical on the CPU).
        device: ``"cpu"`` or ``"cuda"`` (resolve ``auto`` with :func:`textsift.device.resolve_device`).
        labels: entity types (default: every span label of the examples, sorted).
        encoder_folder: the folder of ``encoder: fill_in``.

    Returns:
        The trained detector in eval mode and the mean loss of each epoch.
    """
    labels = tuple(labels) if labels is not None else tuple(sorted({s.label for ex in examples for s in ex.spans}))
    if not labels:
        raise InputError("detector: the training examples hold no spans, so there is no entity type to learn")
    init = torch.Generator().manual_seed(torch_seed(seed, "detector.init"))
    detector = build_detector(params, labels, init, encoder_folder, device)
    _freeze_word_embeddings(detector)
    windows, targets = training_windows(detector, examples)
    if not windows:
        raise InputError("detector: the training examples hold no tokens")
    losses = _fit(detector, windows, targets, seed, TorchStream(torch_seed(seed, "detector.dropout"), device))
    detector.net.eval()
    return TrainedDetector(detector, losses)


def continue_training(detector: Detector, examples: Sequence[Example], epochs: int, seed: int,
                      rate_scale: float = 1.0) -> TrainedDetector:
    """Train an already trained ``detector`` further on ``examples`` for ``epochs`` (same types, optimizer recipe
    and schedule shape as :func:`train_detector`, its learning rates times ``rate_scale``; its own batch order and
    dropout streams). Returns the detector, trained in place, in eval mode."""
    trained_with = detector.params
    detector.params = trained_with.model_copy(update={
        "epochs": epochs, "learning_rate": trained_with.learning_rate * rate_scale,
        "head_learning_rate": trained_with.head_learning_rate * rate_scale})
    _freeze_word_embeddings(detector)
    windows, targets = training_windows(detector, examples)
    if not windows:
        raise InputError("detector: the examples to continue training on hold no tokens")
    detector.net.train()
    losses = _fit(detector, windows, targets, seed, TorchStream(torch_seed(seed, "detector.continue.dropout"),
                                                                detector.device), "detector.continue.shuffle")
    detector.net.eval()
    detector.params = trained_with.model_copy(update={"epochs": trained_with.epochs})
    return TrainedDetector(detector, losses)
