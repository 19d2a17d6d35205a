"""Architecture rules that keep the codebase easy to change (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

from textsift.config import load_params
from textsift.dvc_render import PARAMS_FILE, render_params_text, render_text
from textsift.registry import STAGES, instances

REPO = Path(__file__).resolve().parents[2]
LIB = REPO / "components" / "textsift"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


# tracking.py reaches MLflow for the library; the pyfunc privatizer must subclass mlflow.pyfunc.PythonModel
MLFLOW_MODULES = {LIB / "tracking.py", LIB / "serving" / "model.py"}


def test_library_never_imports_prefect_and_only_tracking_imports_mlflow() -> None:
    offenders = []
    for path in LIB.rglob("*.py"):
        names = _imports(path)
        if "prefect" in names or "prefect_dask" in names:
            offenders.append(f"{path.relative_to(REPO)} imports prefect")
        if "mlflow" in names and path not in MLFLOW_MODULES:
            offenders.append(f"{path.relative_to(REPO)} imports mlflow")
    assert offenders == []


def test_committed_dvc_yaml_and_dvc_params_match_the_registry_and_params() -> None:
    params = load_params(REPO / "params.yaml")
    assert (REPO / "dvc.yaml").read_text(encoding="utf-8") == render_text(params), "stale: run `textsift dvc render`"
    committed_params = (REPO / PARAMS_FILE).read_text(encoding="utf-8")
    assert committed_params == render_params_text(params), f"{PARAMS_FILE} is stale: run `textsift dvc render`"


def test_every_registered_stage_has_a_module_and_existing_code_deps() -> None:
    for stage in STAGES:
        assert (LIB / "stages" / f"{stage.name}.py").exists()
        for dep in stage.all_code:
            assert (REPO / dep).exists(), dep


def test_instances_are_in_topological_order() -> None:
    seen: set[str] = set()
    for inst in instances(load_params(REPO / "params.yaml")):
        assert set(inst.stage.upstream) <= seen, inst.name
        seen.add(inst.stage.name)


def test_metrics_are_kept_by_git_and_the_frontier_is_a_dvc_plot() -> None:
    """`dvc metrics diff` / `dvc exp show` compare metrics files that git keeps (cache: false outputs)."""
    import subprocess

    import yaml

    doc = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    metrics = [path.replace("${item}", "ds_default") for body in doc["stages"].values()
               for entry in (body.get("do", body).get("metrics") or []) for path in entry]
    assert "metrics/evaluate.json" in metrics
    ignored = subprocess.run(["git", "check-ignore", *metrics], cwd=REPO, capture_output=True, text=True)
    assert ignored.stdout.split() == []
    plots = [next(iter(p)) for p in doc["plots"]]
    assert plots == ["reports/evaluate/frontier.csv", "reports/evaluate/embedding_dp.csv"]


def test_transformers_is_imported_at_module_level_only() -> None:
    """transformers' lazy names are not thread-safe: a function-level import in a stage running beside
    another (thread runners) failed with "cannot import name 'AutoModel'". Module-level imports run
    while ``run_stage`` imports the stage module under its lock."""
    offenders = []
    for path in [*LIB.rglob("*.py"), *(REPO / "flows").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                module = (node.module if isinstance(node, ast.ImportFrom) else
                          node.names[0].name if isinstance(node, ast.Import) else None)
                if module and module.split(".")[0] in {"transformers", "sentence_transformers"}:
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def _public_functions(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Public functions and methods of public classes in ``body``, not those nested inside functions."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if not node.name.startswith("_"):
                found.append(node)
        elif isinstance(node, ast.ClassDef):
            if not node.name.startswith("_"):
                found.extend(_public_functions(node.body))
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                found.extend(_public_functions(block))
    return found


def test_every_public_function_has_a_docstring() -> None:
    """Public functions and methods say what they do and why; dunders and nested helpers are exempt."""
    offenders = []
    for path in sorted([*LIB.rglob("*.py"), *(REPO / "flows").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in _public_functions(tree.body):
            if ast.get_docstring(func) is None:
                offenders.append(f"{path.relative_to(REPO)}:{func.lineno} {func.name}")
    assert offenders == []
