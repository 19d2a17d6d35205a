"""Integration fixtures: a real Prefect flow run on the tiny demo corpus, shared per module."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from tests.conftest import tiny_params


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_project(root: Path, **overrides: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "params.yaml").write_text(yaml.safe_dump(tiny_params(**overrides)), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def flow_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Run the whole pipeline flow once (thread task runner) in a fresh project folder."""
    from flows.pipeline import pipeline

    root = make_project(tmp_path_factory.mktemp("flow"))
    state = pipeline(root=str(root), return_state=True)
    assert state.is_completed(), state.message
    return {"root": root, "result": state.result(), "flow_run_id": state.state_details.flow_run_id}
