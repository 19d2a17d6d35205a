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


def _modules_imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_stages_are_one_thin_module_each_and_nothing_imports_a_stage() -> None:
    """stages/ holds one module per registered stage, each ``run`` at most 40 lines; no stage imports another and
    nothing outside stages/ imports one (the runner loads them by name): shared code lives in the packages."""
    modules = {path.stem for path in (LIB / "stages").glob("*.py")} - {"__init__"}
    assert modules == {stage.name for stage in STAGES}
    offenders = []
    for path in sorted([*LIB.rglob("*.py"), *(REPO / "flows").rglob("*.py"), *(REPO / "bench").rglob("*.py")]):
        for name in _modules_imported(path):
            if name == "textsift.stages" or name.startswith("textsift.stages."):
                offenders.append(f"{path.relative_to(REPO)} imports {name}")
    assert offenders == []
    for name in modules:
        tree = ast.parse((LIB / "stages" / f"{name}.py").read_text(encoding="utf-8"))
        run = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "run")
        assert run.end_lineno is not None and run.end_lineno - run.lineno + 1 <= 40, name


def test_mechanisms_are_classes_and_nothing_probes_them() -> None:
    """Each registered mechanism is a :class:`Mechanism` subclass; no module reads its members with ``getattr``."""
    import importlib

    from textsift.mechanisms.base import Mechanism
    from textsift.mechanisms.registry import MECHANISMS

    for registered in MECHANISMS.values():
        assert issubclass(getattr(importlib.import_module(registered.module), registered.implementation), Mechanism)
    members = {"spent", "vault_entries", "additive_metrics", "metric_weight", "serving_refusal", "document_wise",
               "fills_from_corpus", "per_document"}
    offenders = []
    for path in sorted(LIB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in members):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} getattr(..., {node.args[1].value!r})")
    assert offenders == []


def test_params_check_stage_names_against_the_catalog_which_names_every_registered_stage() -> None:
    """config validates ``orchestration.stage_timeouts`` against the catalog's producers (no config <-> registry
    cycle), which must be exactly the registered stages."""
    from textsift.catalog import stage_names
    from textsift.code_deps import imports_of

    assert set(stage_names()) == {stage.name for stage in STAGES}
    assert "textsift.registry" not in imports_of("textsift.config")  # at any depth, function-level included


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
    assert plots == ["reports/evaluate/embedding_dp.csv", "reports/evaluate/frontier.csv"]


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
