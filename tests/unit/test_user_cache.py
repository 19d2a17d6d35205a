"""The per-user model cache: built once, verified on every read, rebuilt when damaged, one builder at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from textsift import user_cache
from textsift.user_cache import cached_model, recipe_digest

CODE = ("textsift.interests.synthetic",)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


class Builder:
    """Writes a two-file model and counts its calls."""

    def __init__(self, content: str = "weights", seconds: float = 0.0) -> None:
        self.calls, self.content, self.seconds = 0, content, seconds

    def __call__(self, folder: Path) -> dict[str, float]:
        self.calls += 1
        time.sleep(self.seconds)
        folder.mkdir(parents=True)
        (folder / "weights.bin").write_text(self.content, encoding="utf-8")
        (folder / "config.json").write_text("{}", encoding="utf-8")
        return {"accuracy": 0.75}


def test_an_entry_is_built_once_then_reused_with_its_metrics(cache: Path, tmp_path: Path) -> None:
    build = Builder()
    first = cached_model("m", "d1", build, tmp_path / "scratch")
    second = cached_model("m", "d1", build, tmp_path / "scratch")
    assert (first.trained, second.trained, build.calls) == (True, False, 1)
    assert first.folder == second.folder and first.folder.is_relative_to(cache)
    assert second.metrics == {"accuracy": 0.75}
    assert (second.folder / "weights.bin").read_text(encoding="utf-8") == "weights"


@pytest.mark.parametrize("damage", ["edit", "remove_file", "remove_manifest", "corrupt_manifest"])
def test_a_damaged_entry_is_rebuilt(cache: Path, tmp_path: Path, damage: str) -> None:
    build = Builder()
    entry = cached_model("m", "d1", build, tmp_path / "scratch")
    manifest = entry.folder.parent / user_cache.MANIFEST
    if damage == "edit":
        (entry.folder / "weights.bin").write_text("tampered", encoding="utf-8")
    elif damage == "remove_file":
        (entry.folder / "config.json").unlink()
    elif damage == "remove_manifest":
        manifest.unlink()
    else:
        manifest.write_text("{not json", encoding="utf-8")
    again = cached_model("m", "d1", build, tmp_path / "scratch")
    assert (again.trained, build.calls) == (True, 2)
    assert (again.folder / "weights.bin").read_text(encoding="utf-8") == "weights"
    assert cached_model("m", "d1", build, tmp_path / "scratch").trained is False


def test_a_failed_build_leaves_no_entry(cache: Path, tmp_path: Path) -> None:
    def crash(folder: Path) -> dict[str, float]:
        folder.mkdir(parents=True)
        (folder / "weights.bin").write_text("half", encoding="utf-8")
        raise RuntimeError("killed mid-training")

    with pytest.raises(RuntimeError):
        cached_model("m", "d1", crash, tmp_path / "scratch")
    assert not (cache / "models" / "m" / "d1").exists()
    assert [p.name for p in (cache / "models" / "m").iterdir()] == [".d1.lock"]  # no temporary folder left
    assert cached_model("m", "d1", Builder(), tmp_path / "scratch").trained is True


def test_runs_asking_at_once_build_it_once(cache: Path, tmp_path: Path) -> None:
    build = Builder(seconds=0.3)
    entries: list[user_cache.Entry] = []
    threads = [threading.Thread(target=lambda: entries.append(cached_model("m", "d1", build, tmp_path / "s")))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert build.calls == 1
    assert sorted(entry.trained for entry in entries) == [False, False, False, True]


def test_off_builds_every_time_in_the_callers_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(user_cache.ENV, user_cache.OFF)
    build = Builder()
    entry = cached_model("m", "d1", build, tmp_path / "scratch")
    cached_model("m", "d1", build, tmp_path / "scratch2")
    assert build.calls == 2 and entry.folder == tmp_path / "scratch" / user_cache.MODEL


def test_the_default_place_is_the_users_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(user_cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache.cache_root() == tmp_path / "xdg" / "textsift"


def test_the_digest_changes_with_every_part_of_the_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = recipe_digest("m", {"epochs": 3, "seed": 1}, CODE)
    assert recipe_digest("m", {"seed": 1, "epochs": 3}, CODE) == base  # key order is not part of it
    assert recipe_digest("m", {"epochs": 4, "seed": 1}, CODE) != base
    assert recipe_digest("other", {"epochs": 3, "seed": 1}, CODE) != base
    assert recipe_digest("m", {"epochs": 3, "seed": 1}, ("textsift.interests.training",)) != base
    source = tmp_path / "module.py"
    source.write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(user_cache, "module_files", lambda modules: (source,))
    before = recipe_digest("m", {"epochs": 3}, CODE)
    source.write_text("x = 2\n", encoding="utf-8")  # the training code changed: another entry
    changed = recipe_digest("m", {"epochs": 3}, CODE)
    assert changed != before
    monkeypatch.setattr(user_cache.metadata, "version", lambda package: "9.9")  # another torch: another entry
    assert recipe_digest("m", {"epochs": 3}, CODE) != changed


def test_the_detector_digest_follows_the_detector_params_the_registry_declares(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from tests.conftest import tiny_params
    from textsift.config import parse_params
    from textsift.declared_params import DeclaredParams
    from textsift.registry import StageInstance, get_stage
    from textsift.stages.train_detectors import _detector_digest

    corpus = tmp_path / "corpus.parquet"
    corpus.write_bytes(b"the corpus")
    instance = StageInstance(get_stage("train_detectors"))

    def digest(**overrides: object) -> str:
        params = parse_params(tiny_params(detectors__data__wnut17_path=None, detectors__data__btc_path=None,
                                          **overrides))
        ctx = SimpleNamespace(params=DeclaredParams(params, instance.declared_params(params), instance.name),
                              instance=instance, root=tmp_path, input=lambda name: corpus)
        return _detector_digest(ctx, "cpu", None, False)  # type: ignore[arg-type]

    base = digest()
    assert digest(detectors__interests__epochs=2) == base  # train_interests' params: not the detector's recipe
    assert digest(tracking__log_models=False) == base  # declared, but not a detector setting
    for changed in ({"detectors__model__epochs": 2}, {"detectors__data__synthetic_docs": 201},
                    {"detectors__compare_flat": True}, {"detectors__pretrain__replay": 2.0}, {"seed": 8}):
        assert digest(**changed) != base, changed
    corpus.write_bytes(b"another corpus")
    assert digest() != base
