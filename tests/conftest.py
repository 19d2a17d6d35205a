"""Shared test setup: the process prepared as every entry point does, Prefect state in a temporary home, tiny
params."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

_PREFECT_HOME = tempfile.mkdtemp(prefix="textsift-prefect-")
atexit.register(shutil.rmtree, _PREFECT_HOME, ignore_errors=True)  # its Prefect database: 9 MB per test process
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.pop("MLFLOW_TRACKING_URI", None)
os.environ.setdefault("PREFECT_LOGGING_EXTRA_LOGGERS", "textsift")
os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")

from textsift.config import parse_params  # noqa: E402
from textsift.entry_point import prepare_process  # noqa: E402

prepare_process()
# Prefect's console handler may log after pytest closed its capture streams at exit; that
# is noise, not a failure.
logging.raiseExceptions = False

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


# The longest test files, longest first (seconds on 2 busy cores, fresh-clone make test's durations, 2026-11-28).
LONGEST_FIRST = ("test_runs_agree.py",  # 160-240: 9 kills and reruns, a stack and a Dask run
                 "test_dvc_repro.py",  # 160-230
                 "test_pipeline_flow.py",  # 60-95 (with the frontier, report and tracking-privacy tests)
                 "test_dvc_params.py",  # 30-50
                 "test_user_model_cache.py")  # 35-50


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest test files first, the rest in collection order (a stable sort keeps every file's own order).

    `make test` hands whole files to two xdist workers in this order (``--no-loadscope-reorder``; xdist's own
    order, most tests first, started the two DVC files, one test each, last, and the suite waited ~3 min for
    them): the longest then run beside the rest, not after it.
    """
    rank = {name: position for position, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def tiny_params(**overrides: object) -> dict:
    """Complete params.yaml content for fast tests: a small demo corpus.

    Every key is written out, defaults included, so a test reads any value from the file (DVC reads the
    rendered ``dvc.params.yaml``, so a sparse params.yaml works too: ``test_dvc_params``). Overrides use ``__``
    for nesting.
    """
    params: dict = {
        "seed": 7,
        "device": "cpu",
        "ingest": {"demo": {"n_docs": 120}},
        "fill_in": {"vocab_size": 300, "hidden_size": 32, "num_layers": 1, "num_heads": 2, "intermediate_size": 64,
                    "max_length": 64, "epochs": 1, "batch_size": 16},
        "detectors": {"data": {"synthetic_docs": 200},
                      "model": {"encoder": "roformer", "encoder_layers": 1, "roformer_hidden": 32, "roformer_heads": 2,
                                "roformer_intermediate": 64, "lstm_hidden": 16, "head_size": 16, "shape_dim": 8,
                                "max_length": 64, "stride": 16, "epochs": 1, "batch_size": 16},
                      "compare_flat": False,
                      "interests": {"synthetic_train": 40, "synthetic_test": 12, "epochs": 1, "batch_size": 8,
                                    "encoder_layers": 1, "max_len": 6, "beam_size": 2}},
        "embedding_dp": {"encoder": "fill_in", "max_length": 64, "batch_size": 32,
                         "sensitivity": {"top_k": 4, "max_words": 30, "min_words": 10},
                         "relevance": {"hidden": [16], "epochs": 20},
                         "grid": {"a": [1.0], "b": [0.0, 0.5], "gamma": [1.0]},
                         "attacker": {"min_positives": 5, "max_words": 3},
                         "settings": {"lrp_eps50": {"allocation": "lrp", "epsilon_max": 50},
                                      "uniform_eps50": {"allocation": "uniform", "epsilon_max": 50}}},
        "evaluate": {"tfidf_logreg": {"n_features_log2": 12, "max_iter": 200},
                     "transformer": {"encoder": "fill_in", "encoder_layers": None, "epochs": 1, "batch_size": 16,
                                     "max_length": 64}},
    }
    for dotted, value in overrides.items():
        node = params
        parts = dotted.split("__")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return parse_params(params).model_dump(mode="json")


@pytest.fixture(autouse=True)
def _no_leaked_tracking_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without MLFLOW_TRACKING_URI (MLflow's fluent API sets it process-wide)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder with tiny params.yaml."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(tiny_params()), encoding="utf-8")
    return tmp_path


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is absent (a fresh clone): real-data tests skipped")
    return SHARED_DATA


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module: tiny models gain nothing from more, and a shared 2-core machine loses a lot."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
