"""Resolve the ``device`` param (``auto`` picks CUDA when torch sees a GPU, else the CPU) and the precision that
frozen evaluation models run in."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import cache
from pathlib import Path
from typing import Any, Literal

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


Precision = Literal["auto", "float32", "bfloat16"]  # as configured
Resolved = Literal["float32", "bfloat16"]  # as run
DetectorPrecision = Literal["auto", "float32", "bfloat16", "int8"]  # the detector's encoder, as configured
DetectorResolved = Literal["float32", "bfloat16", "int8"]  # as run
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})  # x86 instructions that compute bf16 products natively


@cache
def cpu_has_native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX), read from Linux's ``/proc/cpuinfo``.

    Elsewhere bf16 would be emulated, slower than float32: False (where the file is missing, too)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(NATIVE_BF16_FLAGS & set(line.partition(":")[2].split())
               for line in text.splitlines() if line.startswith("flags"))


def resolve_precision(requested: Precision, device: str) -> Resolved:
    """``auto``: bfloat16 on CUDA and on a CPU that computes it natively (about 1.6-1.9x faster for MiniLM-sized
    encoders on 2 AVX512-BF16 cores), else float32; an explicit choice is kept."""
    if requested != "auto":
        return requested
    return "bfloat16" if device == "cuda" or cpu_has_native_bf16() else "float32"


def resolve_detector_precision(requested: DetectorPrecision, device: str) -> DetectorResolved:
    """:func:`resolve_precision`, and ``int8``: the encoder's linear layers as int8 products on the CPU
    (:mod:`textsift.models.int8_linear`); on CUDA the encoder stays float32 (where bf16 autocast, the detector's
    ``mixed_precision``, is the fast path)."""
    if requested == "int8":
        return "float32" if device == "cuda" else "int8"
    return resolve_precision(requested, device)


def precision_autocast(device: str, precision: Resolved) -> AbstractContextManager[Any]:
    """bf16 autocast on ``device`` (CPU included) for ``"bfloat16"``; a no-op for ``"float32"``."""
    if precision == "float32":
        return nullcontext()
    import torch

    return torch.autocast("cuda" if device == "cuda" else "cpu", dtype=torch.bfloat16)


_GLOBAL_RNG_LOCK = threading.RLock()


def _cuda_indices(device: str) -> list[int]:
    """The CUDA device whose generator a seeded task on ``device`` draws from (none on the CPU)."""
    import torch

    return [torch.device(device).index or 0] if device.startswith("cuda") else []


@contextmanager
def global_torch_rng(seed: int | None = None, device: str = "cpu") -> Iterator[None]:
    """Torch's global generator (the CPU's, and ``device``'s on CUDA), forked (restored on exit) and seeded, for one
    task at a time.

    Dropout and module constructors draw from torch's process-wide generator. Two stage tasks
    training side by side in threads (train_detectors beside train_fill_in) interleaved their
    draws, and a fork's restore in one thread rewound the other's state: results depended on
    timing. Every use goes through this lock, so a seeded run draws the same numbers whatever
    runs beside it. ``seed`` None only isolates (constructors whose weights are replaced).
    """
    import torch

    devices = _cuda_indices(device)
    with _GLOBAL_RNG_LOCK, torch.random.fork_rng(devices=devices, device_type="cuda" if devices else "cpu"):
        if seed is not None:  # only the forked generators: torch.manual_seed would reseed every GPU's for good
            torch.random.default_generator.manual_seed(seed)
            for index in devices:
                torch.cuda.default_generators[index].manual_seed(seed)
        yield


class TorchStream:
    """A seeded stream of torch's global generator that a long training enters once per step (``with stream:``).

    Entering takes the lock of :func:`global_torch_rng`, puts this stream's state into torch's global generator (the
    CPU's, and the GPU's on CUDA) and, on exit, keeps the advanced state and puts back what was there. A training that
    wraps each step's forward pass in it draws the same dropout masks as under one ``global_torch_rng(seed)`` around
    its whole loop (bit-identical weights), whatever ran between its steps. The backward pass draws nothing (it
    reuses the forward's masks), so it runs outside: two trainings side by side overlap one's backward pass with the
    other's forward pass instead of taking turns for whole steps (two transformer layers training in two threads on 2
    cores: 11.7-14.4 s taking turns, 9.8-10.3 s overlapping), and a stage task beside a training (a model load) waits
    for one forward pass, not for the whole training."""

    def __init__(self, seed: int, device: str = "cpu") -> None:
        self._cuda = _cuda_indices(device)
        with global_torch_rng(seed, device):
            self._state = self._read()
        self._outer: tuple[Any, list[Any]] | None = None

    def _read(self) -> tuple[Any, list[Any]]:
        import torch

        return torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in self._cuda]

    def _write(self, state: tuple[Any, list[Any]]) -> None:
        import torch

        torch.set_rng_state(state[0])
        for d, cuda in zip(self._cuda, state[1], strict=True):
            torch.cuda.set_rng_state(cuda, d)

    def __enter__(self) -> TorchStream:
        _GLOBAL_RNG_LOCK.acquire()
        try:
            self._outer = self._read()
            self._write(self._state)
        except BaseException:
            _GLOBAL_RNG_LOCK.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._state = self._read()
            assert self._outer is not None
            self._write(self._outer)
        finally:
            self._outer = None
            _GLOBAL_RNG_LOCK.release()
