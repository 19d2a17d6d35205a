"""materialize: a cold model cache filled once, safely, by concurrent threads and processes."""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from textsift.artifacts import dir_sha256, materialize
from textsift.errors import StageError

FILES = {"model/config.json": b'{"a": 1}', "model/model.safetensors": b"w" * 50_000, "tok/vocab.txt": b"[PAD]\n"}


class SlowSource:
    """An artifact store whose download takes a while and is counted in ``log`` (one line each)."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def find_run(self, tag: str, value: str) -> str | None:
        return "run-1"

    def download_artifacts(self, run_id: str, artifact_path: str, dest: Path) -> Path:
        with self.log.open("a") as handle:
            handle.write("download\n")
        folder = dest / artifact_path
        for name, data in FILES.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            for start in range(0, len(data), 10_000):  # written piece by piece: a reader could see it half done
                with path.open("ab") as handle:
                    handle.write(data[start : start + 10_000])
                time.sleep(0.02)
        return folder


def _pointer(tmp_path: Path) -> dict:
    reference = tmp_path / "reference"
    for name, data in FILES.items():
        (reference / name).parent.mkdir(parents=True, exist_ok=True)
        (reference / name).write_bytes(data)
    return {"name": "fill_in", "artifact_path": "fill_in", "sha256": dir_sha256(reference)}


def _materialize_and_verify(pointer: dict, log: str, cache: str) -> bool:
    folder = materialize(pointer, SlowSource(Path(log)), cache)
    return dir_sha256(folder) == pointer["sha256"]


def test_concurrent_threads_download_once_and_all_see_a_complete_model(tmp_path: Path) -> None:
    pointer, log, cache = _pointer(tmp_path), tmp_path / "downloads.log", tmp_path / "cache"
    with ThreadPoolExecutor(6) as pool:
        ok = list(pool.map(lambda _: _materialize_and_verify(pointer, str(log), str(cache)), range(6)))
    assert ok == [True] * 6
    assert log.read_text().count("download") == 1


def test_concurrent_processes_download_once(tmp_path: Path) -> None:
    pointer, log, cache = _pointer(tmp_path), tmp_path / "downloads.log", tmp_path / "cache"
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        ok = pool.starmap(_materialize_and_verify, [(pointer, str(log), str(cache))] * 3)
    assert ok == [True] * 3
    assert log.read_text().count("download") == 1


def test_a_cached_model_is_never_replaced_while_others_read_it(tmp_path: Path) -> None:
    pointer, log, cache = _pointer(tmp_path), tmp_path / "downloads.log", tmp_path / "cache"
    folder = materialize(pointer, SlowSource(log), cache)
    inode = folder.stat().st_ino
    stop = threading.Event()
    seen: list[bool] = []

    def reader() -> None:
        while not stop.is_set():
            seen.append((folder / "model" / "config.json").exists())

    thread = threading.Thread(target=reader)
    thread.start()
    for _ in range(5):
        assert materialize(pointer, SlowSource(log), cache) == folder
    stop.set()
    thread.join()
    assert all(seen) and folder.stat().st_ino == inode
    assert log.read_text().count("download") == 1


def test_a_damaged_cache_is_fetched_again_and_a_wrong_download_is_refused(tmp_path: Path) -> None:
    pointer, log, cache = _pointer(tmp_path), tmp_path / "downloads.log", tmp_path / "cache"
    folder = materialize(pointer, SlowSource(log), cache)
    (folder / "model" / "config.json").write_bytes(b"tampered")
    assert dir_sha256(materialize(pointer, SlowSource(log), cache)) == pointer["sha256"]
    assert log.read_text().count("download") == 2
    with pytest.raises(StageError, match="does not match"):
        materialize({**pointer, "sha256": "0" * 64}, SlowSource(log), cache)
    assert not (cache / ("0" * 64)).exists()


class Store:
    """An artifact store that holds the models of ``held`` (sha256s) and nothing else."""

    def __init__(self, held: set[str]) -> None:
        self.held = held

    def find_run(self, tag: str, value: str) -> str | None:
        return "run-1" if value in self.held else None

    def has_artifacts(self, run_id: str, artifact_path: str) -> bool:
        return bool(self.held)

    def download_artifacts(self, run_id: str, artifact_path: str, dest: Path) -> Path:
        raise AssertionError("model_present never downloads")


def test_a_pointer_counts_only_while_its_model_can_still_be_had(tmp_path: Path) -> None:
    from textsift.artifacts import model_present, read_pointer
    from textsift.corpus import write_json

    pointer, cache = _pointer(tmp_path), tmp_path / "cache"
    path = tmp_path / "models" / "fill_in.json"
    write_json(pointer, path)
    assert model_present(path, Store({pointer["sha256"]}), cache)  # in the MLflow store
    assert not model_present(path, Store(set()), cache)  # deleted from the store, not in the cache
    (cache / pointer["sha256"]).mkdir(parents=True)
    for name, data in FILES.items():
        (cache / pointer["sha256"] / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / pointer["sha256"] / name).write_bytes(data)
    assert model_present(path, Store(set()), cache)  # the cached copy is enough
    path.write_text(path.read_text()[:20])  # truncated
    assert not model_present(path, Store({pointer["sha256"]}), cache)
    with pytest.raises(StageError, match="fill_in.json is damaged .not a model pointer.: run the stage"):
        read_pointer(path)
