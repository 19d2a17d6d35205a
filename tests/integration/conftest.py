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


# The whole product on the tiny corpus: a tiny detector and word2vec index, one setting per mechanism
# (detector-driven protection on), plus a
# second DataSifterText setting: two tasks fetching the fill-in model into a cold cache at once is how
# the first `make run` on a fresh clone failed.
FULL_PIPELINE = {
    "indexes__sources": {"w2v": {"kind": "word2vec", "dim": 32, "epochs": 2, "min_count": 1, "n_trees": 5}},
    "indexes__geometry": {"epsilons": [5, 500], "k_list": [1, 5], "draws": 20, "vocab_sample": 20},
    "privatize__settings": {
        "ds": {"kind": "datasifter", "fill_order": "parallel", "replacement": "rake_keyphrase", "k_clusters": 3},
        "ds2": {"kind": "datasifter", "pw": 0.3, "replacement": "none", "mask_detected": True},
        "mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": 20},
        "mdp_det": {"kind": "metric_dp", "index": "w2v", "epsilon": 20, "replace_detected": True},
        "red": {"kind": "redact", "spans": "both", "vault": True},
    },
    "report__show_examples": True,
}


@pytest.fixture(scope="module")
def flow_run(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict:
    """Run the whole pipeline flow once (thread task runner) in a fresh project folder.

    A test module may set ``FLOW_OVERRIDES`` (tiny_params overrides) to change the run.
    """
    from flows.pipeline import pipeline

    overrides = {**FULL_PIPELINE, **getattr(request.module, "FLOW_OVERRIDES", {})}
    root = make_project(tmp_path_factory.mktemp("flow"), **overrides)
    state = pipeline(root=str(root), return_state=True)
    assert state.is_completed(), state.message
    return {"root": root, "result": state.result(), "flow_run_id": state.state_details.flow_run_id}
