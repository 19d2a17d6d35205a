"""glibc's allocator set for tensor work: a freed activation waits in the process for the next step.

By default glibc hands every block above its mmap threshold (adjusted as it goes, at most 32 MiB) back to
the OS when it is freed, and trims a heap's free top above twice that; a training or inference step frees
and allocates the same activations again, so each step faulted them in again, page by page, in the
kernel. With both thresholds at 1 GiB, a block is reused unless it is over 1 GiB or, in a thread's arena
(the flow runs stages in threads), over its 64 MiB heap. A cold ``make run`` on 2 cores, one morning: system
time 157 s -> 83 s (of 28.5 and 26.7 CPU-minutes), the run 975 s -> 909 s, peak memory 4.5 -> 5.3 GB. One arena
for every thread (``arena_max`` 1) would also reuse the larger blocks (``train_fill_in``'s logits) but
cost 7.0 GB, and the detector, training beside the interest model in that one arena, took 492 s against
437 s (the run 941 s).

Called at every entry point (:func:`textsift.entry_point.prepare_process`); the settings are process-wide.
They also go to child processes (Dask workers, ``textsift stage`` under ``dvc repro``) as ``GLIBC_TUNABLES``, read when
they start. Only where freed memory waits changes, never a number computed.
"""

from __future__ import annotations

import ctypes
import os
import platform

ENV = "GLIBC_TUNABLES"
GIB = 1 << 30
# GLIBC_TUNABLES name -> (mallopt's parameter: M_MMAP_THRESHOLD, M_TRIM_THRESHOLD in malloc.h; value)
SETTINGS = {"glibc.malloc.mmap_threshold": (-3, GIB), "glibc.malloc.trim_threshold": (-1, GIB)}


def keep_freed_memory() -> bool:
    """Apply :data:`SETTINGS` to this process (``mallopt``) and export them to its children; True when applied.

    Nothing is done off glibc (macOS, musl) or where ``GLIBC_TUNABLES`` is set: the user's own settings, or
    those a textsift parent process exported, already apply.
    """
    if os.environ.get(ENV) or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)
    if not all(libc.mallopt(param, value) == 1 for param, value in SETTINGS.values()):
        return False
    os.environ[ENV] = ":".join(f"{name}={value}" for name, (_, value) in SETTINGS.items())
    return True
