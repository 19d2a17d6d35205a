"""The deployment for a worker on another host: its pull steps, as Prefect runs them, clone the project and bring
the outputs a teammate pushed to its DVC remote (real git, real DVC, Prefect's own step runner)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # git and dvc as the worker's environment has them


def _run(args: list[str], cwd: Path) -> None:
    subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True, timeout=120)


def _pushed_project(base: Path) -> Path:
    """A project with one DVC-tracked output pushed to its remote and committed, published as a bare repository."""
    project = base / "project"
    project.mkdir()
    _run(["git", "init", "-q"], project)
    _run([str(BIN / "dvc"), "init", "-q"], project)
    (project / "data").mkdir()
    (project / "data" / "corpus.txt").write_text("the output a teammate computed\n", encoding="utf-8")
    _run([str(BIN / "dvc"), "add", "-q", "data/corpus.txt"], project)
    _run([str(BIN / "dvc"), "remote", "add", "-q", "-d", "shared", str(base / "remote")], project)
    _run([str(BIN / "dvc"), "push", "-q"], project)
    _run(["git", "add", "-A"], project)
    _run(["git", "-c", "user.name=team", "-c", "user.email=team@example.org", "commit", "-qm", "a run"], project)
    _run(["git", "clone", "-q", "--bare", str(project), str(base / "textsift-project.git")], base)
    return base / "textsift-project.git"


def test_the_remote_deployment_clones_the_project_and_pulls_its_outputs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.deployments.steps.core import run_steps

    recipe = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    remote = next(d for d in recipe["deployments"] if d["name"] == "textsift-remote")
    assert remote["entrypoint"] == "flows/pipeline.py:pipeline" and remote["concurrency_limit"]["limit"] == 1
    published = _pushed_project(tmp_path)
    worker = tmp_path / "worker"
    worker.mkdir()
    monkeypatch.chdir(worker)
    monkeypatch.setenv("TEXTSIFT_PROJECT_REPO", published.as_uri())
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    outputs = asyncio.run(run_steps(remote["pull"]))
    clone = Path(outputs["directory"])
    assert clone.parent == worker and Path.cwd() == clone  # the flow runs in the fresh clone
    assert (clone / "data" / "corpus.txt").read_text(encoding="utf-8") == "the output a teammate computed\n"
