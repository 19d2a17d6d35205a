"""The learning-rate schedule shared by textsift's fine-tuning loops."""

from __future__ import annotations

from collections.abc import Callable


def warmup_then_decay(steps: int, warmup_fraction: float) -> Callable[[int], float]:
    """The learning-rate factor at each step: linear warm-up from 0 over ``warmup_fraction`` of the steps,
    then linear decay to 0 — the usual BERT fine-tuning schedule (for ``torch.optim.lr_scheduler.LambdaLR``)."""
    warmup = int(steps * warmup_fraction)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (steps - step) / max(1, steps - warmup))

    return factor
