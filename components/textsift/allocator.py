"""glibc's allocator set for tensor work: freed tensor memory waits in the process for the next step.

By default glibc hands every block above its mmap threshold (adjusted as it goes, at most 32 MiB) back to
the OS when it is freed and trims the heap's top, and a thread allocates from its own arena, whose heaps
cannot hold a block over 64 MiB at all. A training or inference step frees and allocates the same
activations again, so each step faulted them in again, page by page, in the kernel. ``train_fill_in`` in a
thread, as the flow runs it (2 cores, demo corpus): 5.6 M minor page faults, 12 s of system time, 78 s;
with one arena and both thresholds at 1 GiB, 0.5 M faults, 2 s, 64 s, peak memory 1.93 -> 2.22 GB.

Called at every entry point (CLI, flows, tests, benchmarks) before threads start: an arena limit does not
move a thread already attached to another arena. The settings also go to child processes (Dask workers,
``textsift stage`` under ``dvc repro``) as ``GLIBC_TUNABLES``, read when they start. Only where freed
memory waits changes, never a number computed.
"""

from __future__ import annotations

import ctypes
import os
import platform

ENV = "GLIBC_TUNABLES"
GIB = 1 << 30
SETTINGS = {"glibc.malloc.arena_max": 1, "glibc.malloc.mmap_threshold": GIB, "glibc.malloc.trim_threshold": GIB}
_MALLOPT = {"glibc.malloc.arena_max": -8, "glibc.malloc.mmap_threshold": -3,  # M_ARENA_MAX, M_MMAP_THRESHOLD,
            "glibc.malloc.trim_threshold": -1}                                # M_TRIM_THRESHOLD (malloc.h)


def keep_freed_memory() -> bool:
    """Apply :data:`SETTINGS` to this process (``mallopt``) and export them to its children; True when applied.

    Nothing is done off glibc (macOS, musl) or where ``GLIBC_TUNABLES`` is set: the user's own settings, or
    those a textsift parent process exported, already apply.
    """
    if os.environ.get(ENV) or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)
    if not all(libc.mallopt(_MALLOPT[name], value) == 1 for name, value in SETTINGS.items()):
        return False
    os.environ[ENV] = ":".join(f"{name}={value}" for name, value in SETTINGS.items())
    return True
