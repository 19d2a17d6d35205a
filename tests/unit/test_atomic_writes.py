"""Atomic writers: all or nothing, and outputs as readable as a plain write would make them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from textsift.corpus import atomic_dir, atomic_path, write_json


@pytest.fixture(params=[0o022, 0o027, 0o077])
def umask(request: pytest.FixtureRequest):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def test_files_and_folders_get_the_umask_permissions_not_0600(tmp_path: Path, umask: int) -> None:
    write_json({"a": 1}, tmp_path / "m.json")
    with atomic_dir(tmp_path / "index") as tmp:
        (tmp / "vocab.txt").write_text("x", encoding="utf-8")
    assert (tmp_path / "m.json").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "index").stat().st_mode & 0o777 == 0o777 & ~umask


def test_a_failed_write_leaves_the_old_output_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("crash")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
