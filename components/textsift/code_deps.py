"""Each stage's code dependencies, computed: the import closure of its module inside ``textsift``.

A stage's result depends on every library module its code can run, so ``dvc repro`` and the
flow's stage cache must re-run it when any of them changes. Listing them by hand went stale
(``privatize`` imported ``evaluation/geometry.py`` unlisted, so neither runner re-ran it after an
edit there), so they are read off the source: every ``import``/``from ... import`` statement of a
module, at any depth (function-level imports count; ``if TYPE_CHECKING:`` ones, for annotations, never run),
resolved to ``textsift`` modules, followed transitively; importing ``a.b.c`` also runs the packages ``a`` and
``a.b``. A data file shipped beside a module (``*.txt`` word lists, templates) counts where the module that names it
does. A module that runs nothing (a package's ``__init__`` holding its docstring only) is no dep: editing a package's
documentation re-trained every model whose code lay in it. A module imported by name (a mechanism, a loader, what
one setting runs) is named by the stage in the registry.

Orchestration modules (:data:`ORCHESTRATION`) decide *when* a stage runs and where its run is
recorded, not *what* it writes: they are neither deps nor followed, so editing the registry does not
re-run every stage. Params schema modules (:func:`is_schema`: ``config.py``, its base and every package's
``params.py``) are neither: what they decide (defaults, validation) reaches a stage as the values of the params
it declares, which ``dvc.params.yaml`` holds resolved, every default filled in, and which DVC and the flow's cache
hash by value. So adding a field to one mechanism's schema re-runs the stages whose params it changes, not every
stage that loads ``params.yaml``; a schema module holds no logic a stage runs (a test keeps it so).
"""

from __future__ import annotations

import ast
import sys
import threading
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

PACKAGE = "textsift"
LIB = "components/textsift"
ROOT = Path(__file__).resolve().parent  # the installed package folder: components/textsift
ORCHESTRATION = frozenset({"textsift.registry", "textsift.stage_cache", "textsift.dvc_render", "textsift.datasets",
                           "textsift.tracking", "textsift.locks", "textsift.telemetry", "textsift.code_deps"})
SCHEMA = frozenset({"textsift.config", "textsift.params_base", "textsift.ingest_params"})
DATA_SUFFIXES = (".txt", ".json", ".yaml", ".csv")
# CPython 3.11's AST constructor is not safe across threads: two stage tasks computing their deps at once on the
# thread runner failed with "SystemError: AST constructor recursion depth mismatch" (seen in a fresh-clone make run)
_PARSE_LOCK = threading.Lock()


def is_schema(module: str) -> bool:
    """Whether ``module`` is params schema: ``textsift.config``, what it builds on, or a package's ``params``."""
    return module in SCHEMA or module.endswith(".params")


def module_path(module: str) -> Path | None:
    """The source file of a ``textsift`` module (a package's ``__init__.py``), or None if there is none."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


@cache
def _tree(path: Path) -> ast.Module:
    with _PARSE_LOCK:
        return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _type_checking_only(node: ast.AST) -> bool:
    """Whether ``node`` is an ``if TYPE_CHECKING:`` block (``typing.TYPE_CHECKING`` too): imports for annotations,
    which never run."""
    return isinstance(node, ast.If) and ast.unparse(node.test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def _run_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` outside ``if TYPE_CHECKING:`` bodies (their ``else`` runs)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if _type_checking_only(node):
            todo.extend(node.orelse)  # type: ignore[attr-defined]
        else:
            todo.extend(ast.iter_child_nodes(node))


@cache
def imports_of(module: str) -> frozenset[str]:
    """The ``textsift`` modules ``module``'s source imports anywhere in it that runs (parents included): not those
    under ``if TYPE_CHECKING:``, for annotations only."""
    path = module_path(module)
    if path is None:
        return frozenset()
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _run_nodes(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package
                package = module if is_package else module.rsplit(".", 1)[0]
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # a submodule, when it is one
    known = {m for m in found if module_path(m) is not None}
    return frozenset(known | {p for m in known for p in _parents(m)})


def _reachable(module: str, followed: Callable[[str], bool]) -> frozenset[str]:
    """``module``, its packages and every ``textsift`` module reachable by imports through modules ``followed``."""
    seen: set[str] = set()
    todo = [module, *_parents(module)]
    while todo:
        current = todo.pop()
        if current in seen or not followed(current) or module_path(current) is None:
            continue
        seen.add(current)
        todo.extend(imports_of(current))
    return frozenset(seen)


def closure(module: str) -> frozenset[str]:
    """``module``, its packages and every ``textsift`` module reachable by imports (orchestration and schema not
    followed)."""
    return _reachable(module, lambda m: m not in ORCHESTRATION and not is_schema(m))


def runtime_closure(module: str) -> frozenset[str]:
    """``module``, its packages and every ``textsift`` module reachable by imports, schema and orchestration modules
    included: what importing and running ``module`` may load (a served model's code), not what its results hash."""
    return _reachable(module, lambda m: True)


@cache
def external_imports(module: str) -> frozenset[str]:
    """The top-level names of the packages outside ``textsift`` and the standard library that ``module``'s source
    imports anywhere in it (``sklearn`` for ``from sklearn.linear_model import ...``)."""
    path = module_path(module)
    if path is None:
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return frozenset(n for n in names if n != PACKAGE and n not in sys.stdlib_module_names)


def _relative(path: Path) -> str:
    return f"{LIB}/{path.relative_to(ROOT).as_posix()}"


@cache
def data_files(path: Path) -> tuple[Path, ...]:
    """The data files beside module ``path`` that it names in its source (a word list it reads): a data file belongs
    to the module that reads it, not to every module of its folder."""
    source = path.read_text(encoding="utf-8")
    return tuple(p for p in sorted(path.parent.iterdir())
                 if p.suffix in DATA_SUFFIXES and p.is_file() and p.name in source)


@cache
def runs_nothing(path: Path) -> bool:
    """Whether module ``path`` holds nothing but its docstring (and ``from __future__`` imports): a package's
    ``__init__`` that documents the package. Importing it runs no code, so editing its text changes no output."""
    for node in _tree(path).body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
            node.value.value, str)
        if not docstring and not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            return False
    return True


def module_files(modules: tuple[str, ...]) -> tuple[Path, ...]:
    """The source files of ``modules``' import closures that run code (not a package's docstring-only
    ``__init__``, :func:`runs_nothing`) and the data files those modules read, sorted."""
    files: set[Path] = set()
    for module in frozenset().union(*(closure(m) for m in modules)):
        path = module_path(module)
        assert path is not None
        if not runs_nothing(path):
            files.add(path)
        files.update(data_files(path))
    return tuple(sorted(files))


@cache
def stage_code(stage: str, loads: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The files ``textsift.stages.<stage>`` depends on, relative to the repository root, sorted: the
    import closure's sources (of the stage module and of the modules it ``loads`` by name, such as the
    mechanism implementations) and the data files in their packages' folders."""
    return tuple(sorted(_relative(path) for path in module_files((f"{PACKAGE}.stages.{stage}", *loads))))
