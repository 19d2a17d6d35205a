"""Masked-LM training of the fill-in model on the corpus's training split (METHODS.md §1.1).

AdamW with linear warm-up and linear decay, bf16 autocast on CUDA, a held-out share of the
windows for the MLM loss and perplexity. Every random draw is seeded from ``textsift.rng``:
the window split and batch order (numpy generators), the MLM masks (a CPU ``torch.Generator``)
and dropout, which PyTorch draws from its default generator: each step's forward pass (the backward pass
draws nothing) runs in this training's own seeded stream of it (:class:`textsift.device.TorchStream`), so
training is reproducible (bit-identical on the CPU) whatever runs beside it, and no state leaks out. Progress goes to
the ``textsift`` logger as counts, losses and ETA.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch.optim.lr_scheduler import LambdaLR

from textsift.device import TorchStream, autocast
from textsift.errors import InputError
from textsift.models.fill_in import FillInModel
from textsift.models.mlm import mask_for_mlm, pack_windows
from textsift.models.params import FillInParams
from textsift.rng import generator, torch_seed

log = logging.getLogger("textsift")
PROGRESS_LOGS = 20  # progress lines per training run
StepCallback = Callable[[int, float], None]


def split_windows(windows: torch.Tensor, fraction: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded ``(train, held_out)`` split of the windows; at least one window on each side."""
    if len(windows) < 2:
        raise InputError(f"fill_in: the training split gives {len(windows)} window(s); at least 2 are needed")
    order = generator(seed, "fill_in.split").permutation(len(windows))
    n_held = min(len(windows) - 1, max(1, round(fraction * len(windows))))
    return windows[np.sort(order[n_held:])], windows[np.sort(order[:n_held])]


@torch.no_grad()
def mlm_loss(fm: FillInModel, windows: torch.Tensor, params: FillInParams, seed: int) -> float:
    """Mean masked-token cross-entropy on ``windows`` with masks fixed by the seed (comparable runs)."""
    fm.model.eval()
    masks = torch.Generator().manual_seed(torch_seed(seed, "fill_in.eval_mlm"))
    total, count = 0.0, 0
    for start in range(0, len(windows), params.batch_size):
        inputs, labels = mask_for_mlm(windows[start:start + params.batch_size], fm.tokenizer,
                                      params.mask_probability, masks)
        n = int((labels != -100).sum())
        if n == 0:
            continue
        with autocast(fm.device, params.mixed_precision):
            out = fm.model(input_ids=inputs.to(fm.device), attention_mask=(inputs != fm.tokenizer.pad_token_id)
                           .long().to(fm.device), labels=labels.to(fm.device))
        total += float(out.loss) * n
        count += n
    return total / count if count else float("nan")


def _schedule(optimizer: torch.optim.Optimizer, total: int, warmup_fraction: float) -> LambdaLR:
    """Linear warm-up over ``warmup_fraction`` of the steps, then linear decay to zero."""
    warmup = max(1, int(total * warmup_fraction))
    return LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )


def _batches(n: int, batch_size: int, total_steps: int, seed: int):
    """Index batches over shuffled epochs until ``total_steps`` batches were given."""
    order_rng = generator(seed, "fill_in.shuffle")
    step = 0
    while step < total_steps:
        order = order_rng.permutation(n)
        for start in range(0, n, batch_size):
            if step == total_steps:
                return
            yield step, np.sort(order[start:start + batch_size])
            step += 1


def _fit(fm: FillInModel, train: torch.Tensor, params: FillInParams, seed: int, on_step: StepCallback | None,
         dropout: TorchStream) -> dict:
    total = max(1, math.ceil(params.epochs * len(train) / params.batch_size))
    optimizer = torch.optim.AdamW(fm.model.parameters(), lr=params.learning_rate)
    scheduler = _schedule(optimizer, total, params.warmup_fraction)
    masks = torch.Generator().manual_seed(torch_seed(seed, "fill_in.mlm"))
    pad = fm.tokenizer.pad_token_id
    every, losses, tokens, started = max(1, total // PROGRESS_LOGS), [], 0, time.perf_counter()
    fm.model.train()
    for step, index in _batches(len(train), params.batch_size, total, seed):
        inputs, labels = mask_for_mlm(train[index], fm.tokenizer, params.mask_probability, masks)
        with dropout:  # the forward pass draws from this training's own stream (device.TorchStream)
            with autocast(fm.device, params.mixed_precision):
                out = fm.model(input_ids=inputs.to(fm.device), attention_mask=(inputs != pad).long().to(fm.device),
                               labels=labels.to(fm.device))
        out.loss.backward()  # draws nothing: another training's forward pass runs beside it
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        loss = float(out.loss.detach())
        losses.append(loss)
        tokens += int((inputs != pad).sum())
        if on_step is not None:
            on_step(step + 1, loss)
        if (step + 1) % every == 0 or step + 1 == total:
            elapsed = time.perf_counter() - started
            log.info("fill_in: step %d/%d loss %.4f, %.0f tokens/s, ETA %.0fs", step + 1, total,
                     float(np.mean(losses[-every:])), tokens / elapsed, elapsed / (step + 1) * (total - step - 1))
    seconds = time.perf_counter() - started
    tail = losses[-max(1, total // 10):]
    return {"train.steps": total, "train.loss": float(np.mean(tail)), "train.seconds": seconds,
            "train.tokens_per_s": tokens / seconds if seconds else 0.0}


def train_mlm(
    fm: FillInModel, texts: Sequence[str], params: FillInParams, seed: int, device: str,
    on_step: StepCallback | None = None,
) -> dict[str, float]:
    """Train ``fm`` in place on ``texts`` and return aggregate metrics (losses, perplexity, speed).

    Args:
        fm: model and tokenizer (moved to ``device``; left in eval mode afterwards).
        texts: the training split's documents.
        params: sizes, schedule and masking of ``fill_in``.
        seed: root seed; every draw of the run derives from it.
        device: ``"cpu"`` or ``"cuda"``.
        on_step: called with ``(step, loss)`` after every optimizer step (e.g. to log to MLflow).
    """
    window = min(params.max_length, fm.window)
    windows = pack_windows(texts, fm.tokenizer, window)
    train, held_out = split_windows(windows, params.validation_fraction, seed)
    fm.model.to(device)
    fm.device = device
    metrics = _fit(fm, train, params, seed, on_step, TorchStream(torch_seed(seed, "fill_in.dropout"), device))
    fm.model.eval()
    loss = mlm_loss(fm, held_out, params, seed)
    metrics.update({"validation.mlm_loss": loss, "validation.perplexity": math.exp(loss),
                    "train.windows": len(train), "validation.windows": len(held_out),
                    "vocab_size": len(fm.tokenizer), "window": window})
    log.info("fill_in: held-out MLM loss %.4f, perplexity %.1f on %d windows", loss, math.exp(loss), len(held_out))
    return metrics
