"""Index folders: save/load round trip, searchers, and the exact GPU search (METHODS.md §2)."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from textsift import rng
from textsift.errors import StageError
from textsift.indexes import store
from textsift.indexes.annoy_index import AnnoySearcher
from textsift.indexes.exact_index import ExactSearcher
from textsift.indexes.projection import project_vocabulary
from textsift.indexes.store import load_index, save_index

N, D = 300, 64


def _brute_force(items: np.ndarray, queries: np.ndarray) -> np.ndarray:
    distances = ((queries[:, None, :].astype(np.float64) - items[None, :, :]) ** 2).sum(axis=2)
    return distances.argmin(axis=1)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    vectors = rng.generator(3, "test", "vectors").standard_normal((N, D)).astype(np.float32)
    items = project_vocabulary([f"w{i}" for i in range(N)], vectors, beta=0.9, delta=1e-6, omega="sqrt_log",
                               generator=rng.generator(3, "test", "projection"))
    folder = tmp_path_factory.mktemp("index")
    save_index(folder, items, {"beta": 0.9, "source": "t"}, n_trees=10, annoy_seed=5)
    queries = rng.generator(3, "test", "queries").standard_normal((200, items.dim)).astype(np.float32)
    return folder, queries


def test_round_trip_gives_identical_items_and_neighbours(saved: tuple[Path, np.ndarray]) -> None:
    folder, queries = saved
    first, second = load_index(folder), load_index(folder)
    assert first.words == [f"w{i}" for i in range(N)] and first.manifest["format"] == 2
    assert first.projection is not None and first.projection.shape == (D, first.vectors.shape[1])
    np.testing.assert_array_equal(first.vectors, second.vectors)
    a = first.searcher("annoy", "cpu", search_k=-1).nearest(queries)
    np.testing.assert_array_equal(a, second.searcher("annoy", "cpu").nearest(queries))
    items = first.searcher("annoy", "cpu").nearest(first.vectors)
    np.testing.assert_array_equal(items, np.arange(N))  # every item is its own nearest neighbour


def test_exact_search_equals_brute_force_and_annoy_agrees_at_high_search_k(saved: tuple[Path, np.ndarray]) -> None:
    index = load_index(saved[0])
    queries = saved[1]
    truth = _brute_force(index.vectors, queries)
    exact = index.searcher("exact", "cpu")
    assert isinstance(exact, ExactSearcher)
    np.testing.assert_array_equal(exact.nearest(queries), truth)
    annoy = index.searcher("annoy", "cpu", search_k=5000).nearest(queries)
    assert (annoy == truth).mean() > 0.97


def test_auto_search_is_exact_for_small_indexes_and_annoy_for_large_ones(
    saved: tuple[Path, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    index = load_index(saved[0])
    assert isinstance(index.searcher("auto", "cpu"), ExactSearcher)
    monkeypatch.setattr(store, "EXACT_CPU_MAX_CELLS", index.vectors.size - 1)
    assert isinstance(index.searcher("auto", "cpu"), AnnoySearcher)
    assert isinstance(index.searcher("exact", "cpu"), ExactSearcher)


def test_annoy_searcher_pickles_as_its_path(saved: tuple[Path, np.ndarray]) -> None:
    searcher = load_index(saved[0]).searcher("annoy", "cpu", search_k=100)
    clone = pickle.loads(pickle.dumps(searcher))
    assert isinstance(clone, AnnoySearcher) and len(pickle.dumps(searcher)) < 500
    np.testing.assert_array_equal(clone.nearest(saved[1]), searcher.nearest(saved[1]))


def test_k_nearest_distances_are_sorted_and_exact(saved: tuple[Path, np.ndarray]) -> None:
    index = load_index(saved[0])
    got = ExactSearcher(index.vectors).k_nearest_distances(index.vectors[:5], 4)
    full = np.sort(np.linalg.norm(index.vectors[:5, None] - index.vectors[None], axis=2), axis=1)[:, :4]
    np.testing.assert_allclose(got, full, atol=1e-2)  # float32 ||q||² − 2q·v + ||v||² cancels near 0
    assert np.all(got[:, 0] < 1e-2)


def test_missing_index_is_a_stage_error(tmp_path: Path) -> None:
    with pytest.raises(StageError, match="build_indexes"):
        load_index(tmp_path / "nope")


def test_an_index_of_the_old_format_is_refused(saved: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    """Format 1 indexes output raw corpus words (issue #8): they must be rebuilt, never reused."""
    old = tmp_path / "old"
    shutil.copytree(saved[0], old)
    manifest = json.loads((old / "manifest.json").read_text())
    (old / "manifest.json").write_text(json.dumps({**manifest, "format": 1}))
    with pytest.raises(StageError, match="format 1.*run build_indexes"):
        load_index(old)


def test_inputs_are_saved_beside_the_outputs(saved: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    index = load_index(saved[0])
    assert index.input_words == index.words and index.input_vectors is index.vectors  # saved without inputs
    vectors = rng.generator(4, "test", "inputs").standard_normal((N, D)).astype(np.float32)
    items = project_vocabulary(index.words, vectors, beta=0.9, delta=1e-6,
                               omega="sqrt_log", generator=rng.generator(3, "test", "projection"))
    outputs = items.subset(np.arange(N) % 3 == 0)
    save_index(tmp_path, outputs, {"beta": 0.9}, n_trees=2, annoy_seed=5, inputs=items)
    both = load_index(tmp_path)
    assert both.words == outputs.words and both.input_words == items.words and len(both.vectors) == N // 3
    np.testing.assert_array_equal(both.input_vectors, items.vectors)
    np.testing.assert_array_equal(both.searcher("exact", "cpu").nearest(outputs.vectors), np.arange(N // 3))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_exact_gpu_search_equals_cpu_brute_force() -> None:
    generator = rng.generator(9, "test", "gpu")
    items = generator.standard_normal((20000, 183)).astype(np.float32)
    queries = generator.standard_normal((3000, 183)).astype(np.float32)
    got = ExactSearcher(items, "cuda").nearest(queries)
    truth = _brute_force(items, queries[:300])
    assert (got[:300] == truth).all() or np.allclose(
        np.linalg.norm(items[got[:300]] - queries[:300], axis=1), np.linalg.norm(items[truth] - queries[:300], axis=1),
        rtol=1e-5)
    np.testing.assert_array_equal(got, ExactSearcher(items, "cpu").nearest(queries))
