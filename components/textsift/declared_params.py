"""A stage reads only the params it declares: a read-only view of ``Params`` that enforces it.

DVC re-runs a stage when a params key it lists changes, and the flow's stage cache hashes the same
keys; a key a stage reads without declaring it changes its output while both runners keep the stale
one (``build_indexes`` read ``privatize.production``, ``privatize`` read ``indexes.geometry``, both
undeclared). A running stage therefore sees its params through :class:`DeclaredParams`: reading
a declared key (or anything under it) returns the real value; walking towards one returns
another view; anything else raises :class:`~textsift.errors.StageError` naming the key.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from textsift.errors import StageError


class DeclaredParams:
    """``node`` (a params model or mapping at ``path``) as seen by a stage declaring ``declared`` keys."""

    __slots__ = ("_declared", "_node", "_path", "_stage")

    def __init__(self, node: Any, declared: tuple[str, ...], stage: str, path: str = "") -> None:
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_declared", declared)
        object.__setattr__(self, "_stage", stage)
        object.__setattr__(self, "_path", path)

    def _child(self, name: str, value: Any) -> Any:
        dotted = f"{self._path}.{name}" if self._path else str(name)
        if any(dotted == key or dotted.startswith(f"{key}.") for key in self._declared):
            return value
        if any(key.startswith(f"{dotted}.") for key in self._declared):
            return DeclaredParams(value, self._declared, self._stage, dotted)
        raise StageError(f"stage {self._stage} reads params key {dotted!r}, which it does not declare, so dvc "
                         f"repro and the stage cache would not re-run it when it changes (registry params: "
                         f"{', '.join(self._declared)})")

    def __getattr__(self, name: str) -> Any:
        return self._child(name, getattr(self._node, name))

    def __getitem__(self, key: str) -> Any:
        return self._child(key, self._node[key])

    def __contains__(self, key: object) -> bool:
        return key in self._node  # the names of entries are structure, not values

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` when the node has ``key``, else ``default``; a present key must be declared."""
        return self[key] if key in self._node else default

    def items(self) -> Iterator[tuple[str, Any]]:
        """(key, value) pairs of the node, each value read through the declared-key check."""
        return ((key, self[key]) for key in self._node)

    def values(self) -> Iterator[Any]:
        """The node's values, each read through the declared-key check."""
        return (self[key] for key in self._node)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("params are read-only")

    def __repr__(self) -> str:
        return f"DeclaredParams({self._path or '<root>'} for {self._stage})"
