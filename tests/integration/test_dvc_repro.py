"""`dvc repro` runs the registry's stages; twice gives identical outputs; code edits re-run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import make_project, sha256
from textsift.secret_key import KEY_FILE

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
OUTPUTS = ("data/ingest/corpus.parquet", "data/ingest/rejects.parquet", "metrics/ingest.json",
           "models/fill_in.json", "data/indexes/w2v/index.ann", "data/indexes/w2v/vocab.txt",
           "data/privatized/mdp.parquet", "metrics/privatize/mdp.json",
           "data/lrp_budgets/embeddings.parquet", "data/lrp_budgets/budgets.npz",
           "data/embeddings/uni.parquet", "data/embeddings/uni.manifest.json",
           "metrics/evaluate.json", "metrics/evaluate_embeddings.json", "reports/evaluate/utility.csv",
           "reports/evaluate/frontier.csv", "reports/evaluate/embedding_dp.csv")
# The whole DAG with its fan-out, sized to run fast through separate processes.
PARAMS = {
    "indexes__sources": {"w2v": {"kind": "word2vec", "dim": 16, "epochs": 1, "min_count": 1, "n_trees": 2}},
    "indexes__geometry": {"epsilons": [10], "k_list": [1], "draws": 5, "vocab_sample": 5},
    "privatize__settings": {"mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": 50}},
    "embedding_dp__settings": {"uni": {"allocation": "uniform", "epsilon_max": 50}},
    "evaluate__transformer__enabled": False,
    "detectors__data__synthetic_docs": 60,
}


def _run(cmd: list[str], cwd: Path) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DVC_SITE_CACHE_DIR": str(cwd / ".dvc-site")}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


def _hashes(root: Path) -> dict[str, str]:
    return {out: sha256(root / out) for out in OUTPUTS}


def _ran(output: str) -> set[str]:
    """The stages a ``dvc repro`` ran (the key stage runs every time: it checks the key)."""
    return set(re.findall(r"Running stage '([^']+)'", output)) - {"key"}


def _restored(output: str) -> set[str]:
    """The stages a ``dvc repro`` ran or restored from DVC's run cache (same deps as an earlier run)."""
    return _ran(output) | set(re.findall(r"Stage '([^']+)' is cached", output))


@pytest.fixture
def dvc_project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "project", **PARAMS)
    shutil.copytree(REPO / "components", root / "components",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / ".dvcignore", root / ".dvcignore")
    _run(["textsift", "dvc", "render"], root)
    _run(["git", "init", "-q"], root)
    _run(["dvc", "init", "-q"], root)
    _run(["dvc", "config", "core.analytics", "false"], root)
    return root


def test_repro_twice_is_identical_and_code_changes_rerun_only_affected_stages(dvc_project: Path) -> None:
    root = dvc_project
    first = _run(["dvc", "repro"], root)
    for stage in ("ingest", "train_fill_in", "build_indexes@w2v", "privatize@mdp", "lrp_budgets", "embedding_dp@uni",
                  "evaluate"):
        assert f"Running stage '{stage}'" in first
    hashes = _hashes(root)

    again = _run(["dvc", "repro"], root)
    assert _ran(again) == set()  # nothing changed, nothing ran
    forced = _run(["dvc", "repro", "--force"], root)
    assert "Running stage 'ingest'" in forced
    assert _hashes(root) == hashes  # recomputed from scratch: byte-identical outputs

    library_file = root / "components/textsift/evaluation/report.py"
    library_file.write_text(library_file.read_text() + "\n# touched by the test\n")
    after_edit = _run(["dvc", "repro"], root)
    assert "Running stage 'evaluate'" in after_edit
    assert "Running stage 'ingest'" not in after_edit and "Running stage 'lrp_budgets'" not in after_edit
    geometry = root / "components/textsift/evaluation/geometry.py"  # imported by privatize, listed by nobody
    geometry.write_text(geometry.read_text() + "\n# touched by the test\n")
    after_geometry = _run(["dvc", "repro"], root)
    assert "Running stage 'privatize@mdp'" in after_geometry
    assert "Running stage 'ingest'" not in after_geometry and "Running stage 'train_fill_in'" not in after_geometry
    status = _run(["dvc", "status"], root)
    assert "always changed" in status and "changed deps" not in status and "changed outs" not in status

    # A new key re-runs exactly the stages that draw with it, with other noise; the old key gives the old outputs
    # back, byte for byte: reproducible by the key holder, and by nobody else.
    before, old_key = _hashes(root), (root / KEY_FILE).read_bytes()
    _run(["textsift", "key", "rotate"], root)
    rotated = _run(["dvc", "repro"], root)
    assert _ran(rotated) == {"privatize@mdp", "embedding_dp@uni", "evaluate"}
    after = _hashes(root)
    changed = {out for out in OUTPUTS if after[out] != before[out]}
    assert {"data/privatized/mdp.parquet", "data/embeddings/uni.parquet"} <= changed
    assert not any(out.startswith(("data/ingest", "models/", "data/indexes", "data/lrp_budgets")) for out in changed)
    (root / KEY_FILE).write_bytes(old_key)  # the holder restores the key the outputs were made with
    restored = _run(["dvc", "repro"], root)
    assert _restored(restored) == {"privatize@mdp", "embedding_dp@uni", "evaluate"}, restored[-2000:]
    assert _hashes(root) == before
