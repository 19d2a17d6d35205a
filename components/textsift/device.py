"""Resolve the ``device`` param: ``auto`` picks CUDA when torch sees a GPU, else the CPU."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from textsift.errors import ConfigError


def resolve_device(requested: str) -> str:
    """``"cpu"`` or ``"cuda"``; asking for CUDA without a GPU is a clear error."""
    import torch

    available = torch.cuda.is_available()
    if requested == "auto":
        return "cuda" if available else "cpu"
    if requested == "cuda" and not available:
        raise ConfigError("device: 'cuda' requested but torch sees no CUDA device (use 'auto' or 'cpu')")
    return requested


def autocast(device: str, enabled: bool) -> AbstractContextManager[Any]:
    """bf16 autocast on CUDA when ``enabled`` (mixed precision); a no-op on the CPU."""
    if device == "cuda" and enabled:
        import torch

        return torch.autocast("cuda", dtype=torch.bfloat16)
    return nullcontext()


_GLOBAL_RNG_LOCK = threading.RLock()


@contextmanager
def global_torch_rng(seed: int | None = None, device: str = "cpu") -> Iterator[None]:
    """Torch's global generator, forked (restored on exit) and seeded, for one task at a time.

    Dropout and module constructors draw from torch's process-wide generator. Two stage tasks
    training side by side in threads (train_detectors beside train_fill_in) interleaved their
    draws, and a fork's restore in one thread rewound the other's state: results depended on
    timing. Every use goes through this lock, so a seeded run draws the same numbers whatever
    runs beside it. ``seed`` None only isolates (constructors whose weights are replaced).
    """
    import torch

    devices = [torch.device(device).index or 0] if device == "cuda" else []
    with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=devices, device_type="cuda" if devices else "cpu"):
        if seed is not None:
            torch.manual_seed(seed)
        yield
