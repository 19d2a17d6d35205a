"""The configuration reference, generated from the params models: every params.yaml key with its type, default
and description (``docs/CONFIGURATION.md``, rewritten by ``textsift params reference``; a test fails when it is
stale), so the reference is never typed by hand and never drifts from what validation accepts."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from textsift.config import Params

HEADER = """# Configuration reference

Generated from the params models by `textsift params reference` (do not edit by hand). Every key of
[`params.yaml`](../params.yaml) with its type, default and meaning; `textsift params check params.yaml` prints the
effective values, `textsift params schema` the JSON schema. `<name>` stands for a key you choose (a setting, an
index source); a privacy setting's `kind` picks which of its tables applies.
"""


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds directly (a model, or a union of models)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _models(arg)]
    return []


def _mapped(annotation: Any) -> list[type[BaseModel]]:
    """The models a ``dict[str, Model]`` annotation maps names to (none for any other annotation)."""
    if typing.get_origin(annotation) is dict:
        return _models(typing.get_args(annotation)[1])
    return []


def _type_text(annotation: Any) -> str:
    """A type in words: ``int``, ``one of "cpu", "cuda"``, ``list of str``, ``str or null``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_text(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(a) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(json.dumps(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        return f"list of {_type_text(args[0])}" if args else "list"
    if origin is dict:
        return f"map of {_type_text(args[0])} to {_type_text(args[1])}"
    if annotation is type(None):
        return "null"
    return annotation.__name__ if isinstance(annotation, type) else str(annotation)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _default_text(field: Any, names_only: bool = False) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    value = field.default_factory() if field.default is PydanticUndefined else field.default
    if names_only:  # a map of named entries: which names it holds by default
        return ", ".join(f"`{name}`" for name in value) or "none"
    return f"`{json.dumps(_plain(value), default=str)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rows(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str, str, str]]:
    """(dotted key, type, default, description) of every leaf key of ``model``, depth first in declaration order."""
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        nested, mapped = _models(field.annotation), _mapped(field.annotation)
        if len(nested) == 1:
            yield from rows(nested[0], f"{key}.")
        elif mapped:
            for sub in mapped:
                kind = sub.model_fields.get("kind")
                tag = f" (kind {typing.get_args(kind.annotation)[0]})" if kind is not None else ""
                yield (f"{key}.<name>", f"{sub.__name__}{tag}", _default_text(field, names_only=True),
                       _cell(field.description or ""))
                yield from rows(sub, f"{key}.<name>.")
        else:
            yield key, _cell(_type_text(field.annotation)), _cell(_default_text(field)), _cell(field.description or "")


def render_reference() -> str:
    """The reference's Markdown: one table per top-level section of params.yaml."""
    out = [HEADER]
    section = None
    for key, type_text, default, description in rows(Params):
        top = key.split(".", 1)[0] if "." in key else "top level"
        if top != section:
            section = top
            title = top if top == "top level" else f"`{top}`"
            out += ["", f"## {title}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        out.append(f"| `{key}` | {type_text} | {default} | {description} |")
    return "\n".join(out) + "\n"
