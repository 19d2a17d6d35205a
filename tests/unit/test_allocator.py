"""The allocator settings keep a freed 48 MiB block (over glibc's 32 MiB) for the next step; children inherit them."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from textsift.allocator import ENV, SETTINGS

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator only")

BLOCK_PAGES = (48 << 20) // os.sysconf("SC_PAGE_SIZE")
STEPS = 8
# In a fresh interpreter: the settings (or not), then a thread that allocates, fills and frees a 48 MiB block
# STEPS times, as a training step does with its activations; it prints whether the settings were applied, the
# minor page faults of the loop and what a child process finds in its environment.
PROBE = f"""
import ctypes, os, resource, subprocess, sys, threading
from textsift.allocator import keep_freed_memory
applied = keep_freed_memory()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
faults = []
def steps():
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for _ in range({STEPS}):
        block = libc.malloc({48 << 20})
        ctypes.memset(block, 1, {48 << 20})
        libc.free(ctypes.c_void_p(block))
    faults.append(resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before)
thread = threading.Thread(target=steps)
thread.start(); thread.join()
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('{ENV}'))"], capture_output=True,
                       text=True, check=True).stdout.strip()
print(applied, faults[0], child)
"""


def _probe(env_value: str | None) -> tuple[bool, int, str]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if env_value is not None:
        env[ENV] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True).stdout
    applied, faults, child = out.split()
    return applied == "True", int(faults), child


def test_freed_blocks_are_reused_in_a_thread_and_children_inherit_the_settings() -> None:
    applied, faults, child = _probe(None)
    assert applied
    assert faults < 2 * BLOCK_PAGES  # the first step faults the block in; the others reuse it
    assert dict(item.split("=") for item in child.split(":")) == {k: str(v) for k, (_, v) in SETTINGS.items()}


def test_settings_already_in_the_environment_are_left_alone() -> None:
    applied, faults, child = _probe("glibc.malloc.check=0")  # a user's own tunables: glibc's defaults otherwise
    assert not applied and child == "glibc.malloc.check=0"
    assert faults > (STEPS - 1) * BLOCK_PAGES  # without the settings every step faults the block in again
