"""A full disk is one line naming the file and the fix, and nothing already written is lost.

Filled for real where the machine allows (a 256 KiB tmpfs, as root), else by the kernel's own ENOSPC from
``/dev/full``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from textsift.config import TrackingParams
from textsift.corpus import atomic_dir, atomic_path, corpus_table, read_corpus, write_table
from textsift.errors import StorageError
from textsift.tracking import Tracker


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB filesystem of its own (skipped where mounting is not allowed)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = shutil.which("mount") and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True, check=False)
    if not mounted or mounted.returncode != 0:
        pytest.skip("no tmpfs mount here (not root): the /dev/full tests stand in")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)  # lazy: MLflow holds the db


def _corpus(n: int) -> pd.DataFrame:
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(n)], "text": [f"document {i} " * 40 for i in range(n)],
                         "label": "a", "split": "train", "spans": [[] for _ in range(n)]})


def test_the_kernels_enospc_is_one_line_naming_the_output_and_the_old_output_stays(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(StorageError, match=rf"no space left on the disk holding {target} .*free space") as caught:
        with atomic_path(target) as tmp, open("/dev/full", "wb") as full:
            tmp.write_bytes(b"half")
            full.write(b"x" * 65536)
            full.flush()
    assert "\n" not in str(caught.value) and caught.value.__cause__ is None
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]
    with pytest.raises(StorageError, match="index"), atomic_dir(tmp_path / "index"), open("/dev/full", "wb") as full:
        full.write(b"x" * 65536)
        full.flush()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_a_corpus_too_big_for_its_disk_fails_with_one_line_and_the_previous_corpus_is_readable(
        small_disk: Path) -> None:
    target = small_disk / "corpus.parquet"
    write_table(corpus_table(_corpus(5)), target)
    with pytest.raises(StorageError, match="no space left on the disk holding .*corpus.parquet"):
        write_table(corpus_table(_corpus(20_000)), target)
    assert len(read_corpus(target)) == 5
    assert sorted(p.name for p in small_disk.iterdir()) == ["corpus.parquet"]


def test_an_mlflow_store_on_a_full_disk_is_named(small_disk: Path) -> None:
    filler = small_disk / "filler"
    try:  # fill the disk
        with filler.open("wb") as out:
            while True:
                out.write(b"\0" * 4096)
                out.flush()
    except OSError:
        pass
    with pytest.raises(StorageError, match=rf"the MLflow store {small_disk / 'mlruns.db'} cannot be used"):
        Tracker(TrackingParams(), small_disk)


def test_a_damaged_mlflow_store_is_named_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "mlruns.db").write_bytes(b"not a database, " * 64)
    with pytest.raises(StorageError, match=r"mlruns.db cannot be used \(file is not a database\): restore it"):
        Tracker(TrackingParams(), tmp_path)


def test_a_full_disk_under_any_wrapper_is_one_line_naming_the_project_and_other_errors_pass_through(
        tmp_path: Path) -> None:
    """What a stage meets on a full disk: MLflow's exception raised from SQLAlchemy's from sqlite's, or an OSError
    copying an artifact; both become one StorageError (never retried by the flow), anything else is untouched."""
    import errno
    import sqlite3

    from mlflow.exceptions import MlflowException

    from textsift.corpus import disk_full_named

    def wrapped() -> None:
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.OperationalError as err:
            raise MlflowException("(sqlite3.OperationalError) database or disk is full") from err

    for fault in (wrapped, lambda: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device"))):
        with pytest.raises(StorageError, match=rf"no space left on the disk holding {tmp_path} while stage x ran"):
            with disk_full_named(tmp_path, "stage x ran"):
                fault()
    with pytest.raises(KeyError), disk_full_named(tmp_path, "stage x ran"):
        raise KeyError("not a disk")
