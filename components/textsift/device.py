"""Resolve the ``device`` param: ``auto`` picks CUDA when torch sees a GPU, else the CPU."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
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
