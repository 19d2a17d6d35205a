"""Integration fixtures: a real Prefect flow run on the tiny demo corpus, shared per module."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import tiny_params

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def _temporary_api_with_watchdog() -> None:
    """Prefect's temporary API started as ``make run`` starts it (:mod:`flows.temporary_api`): if this test process
    dies at a time limit, its watchdog stops the server instead of leaving it running for good."""
    from flows.temporary_api import start_temporary_api

    start_temporary_api()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_project(root: Path, **overrides: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "params.yaml").write_text(yaml.safe_dump(tiny_params(**overrides)), encoding="utf-8")
    return root


def flow_run_logs(flow_run_id: str) -> list[str]:
    """Every log line Prefect holds for the flow run, page by page (a page is at most 200)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    messages: list[str] = []
    with get_client(sync_client=True) as client:
        while page := client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])), limit=200,
                                       offset=len(messages)):
            messages.extend(log.message for log in page)
    return messages


# The whole product on the tiny corpus: a tiny detector, a word2vec index and a public GloVe one, one setting per
# mechanism (detector-driven protection on), a served metric-DP setting over the public index, plus a
# second DataSifterText setting: two tasks fetching the fill-in model into a cold cache at once is how
# the first `make run` on a fresh clone failed.
FULL_PIPELINE = {
    "indexes__sources": {"w2v": {"kind": "word2vec", "dim": 32, "epochs": 2, "min_count": 1, "n_trees": 5},
                         "glove": {"kind": "glove", "vocabulary": "public", "public_words": 3000, "n_trees": 5}},
    "indexes__geometry": {"epsilons": [5, 500], "k_list": [1, 5], "draws": 20, "vocab_sample": 20},
    "privatize__settings": {
        "ds": {"kind": "datasifter", "fill_order": "parallel", "replacement": "rake_keyphrase", "k_clusters": 3},
        "ds2": {"kind": "datasifter", "pw": 0.3, "replacement": "none", "mask_detected": True},
        "mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": 20},
        "mdp_det": {"kind": "metric_dp", "index": "w2v", "epsilon": 20, "replace_detected": True},
        "mdp_pub": {"kind": "metric_dp", "index": "glove", "epsilon": 10, "replace_detected": True},
        "red": {"kind": "redact", "spans": "both", "vault": True, "labels": ["all"]},
    },
    "report__show_examples": True,
}
# One setting of each mechanism, for the modules that run the pipeline again and again (killed and rerun, on a Dask
# cluster): the second DataSifterText, the detector-driven metric-DP settings, the public index, the uniform noisy
# embeddings beside the LRP ones and the transformer classifier (a head on the encoder's features, about half of each
# evaluate run: test_pipeline_flow's) add no stage kind, output area or placement to what they check, only minutes.
# Such a module sets it as its ``FLOW_OVERRIDES``.
ONE_SETTING_EACH = {"privatize__settings": {name: FULL_PIPELINE["privatize__settings"][name]  # type: ignore[index]
                                            for name in ("ds", "mdp", "red")},
                    "indexes__sources": {"w2v": FULL_PIPELINE["indexes__sources"]["w2v"]},  # type: ignore[index]
                    "embedding_dp__settings": {"lrp_eps50": {"allocation": "lrp", "epsilon_max": 50}},
                    "evaluate__transformer__enabled": False}


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


# The whole DAG with its fan-out, sized to run fast through separate processes.
DVC_PARAMS = {
    "indexes__sources": {"w2v": {"kind": "word2vec", "dim": 16, "epochs": 1, "min_count": 1, "n_trees": 2}},
    "indexes__geometry": {"epsilons": [10], "k_list": [1], "draws": 5, "vocab_sample": 5},
    "privatize__settings": {"mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": 50}},
    "embedding_dp__settings": {"uni": {"allocation": "uniform", "epsilon_max": 50}},
    "evaluate__transformer__enabled": False,
    "detectors__data__synthetic_docs": 60,
}


def dvc_run(cmd: list[str], cwd: Path, check: bool = True, model_cache: bool = False, timeout: int = 600) -> str:
    """Run a command (dvc, textsift, git) in a DVC project with this venv's tools, without the caller's key and,
    unless ``model_cache``, without the per-user model cache (every model trained from scratch: the identity checks
    compare real trainings)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DVC_SITE_CACHE_DIR": str(cwd / ".dvc-site")}
    if not model_cache:
        env["TEXTSIFT_CACHE_DIR"] = "off"
    env.pop("TEXTSIFT_SECRET_KEY", None)
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0 or not check, f"{cmd} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


def dvc_ran(output: str) -> set[str]:
    """The stages a ``dvc repro`` ran (the key and params stages run every time: they check the key and params)."""
    return set(re.findall(r"Running stage '([^']+)'", output)) - {"key", "params"}


def dvc_stale(output: str) -> set[str]:
    """The stages a ``dvc status`` reports with changed dependencies or outputs (not the always-changed key and
    params stages)."""
    stale: set[str] = set()
    stage = None
    for line in output.splitlines():
        if line and not line[0].isspace() and line.rstrip().endswith(":"):
            stage = line.rstrip()[:-1]
        elif stage is not None and ("changed deps" in line or "changed outs" in line):
            stale.add(stage)
    return stale


def dvc_restored(output: str) -> set[str]:
    """The stages a ``dvc repro`` ran or restored from DVC's run cache (same deps as an earlier run)."""
    return dvc_ran(output) | set(re.findall(r"Stage '([^']+)' is cached", output))


def new_dvc_project(root: Path) -> Path:
    """A fresh git + DVC project at ``root`` with a copy of the library and DVC_PARAMS, its dvc.yaml rendered."""
    make_project(root, **DVC_PARAMS)
    shutil.copytree(REPO / "components", root / "components",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / ".dvcignore", root / ".dvcignore")
    dvc_run(["textsift", "dvc", "render"], root)
    dvc_run(["git", "init", "-q"], root)
    dvc_run(["dvc", "init", "-q"], root)
    dvc_run(["dvc", "config", "core.analytics", "false"], root)
    return root


@pytest.fixture
def dvc_project(tmp_path: Path) -> Path:
    """A fresh DVC project (:func:`new_dvc_project`) for one test."""
    return new_dvc_project(tmp_path / "project")
