"""Property-based fuzzing of the params schema: any params file — arbitrary bytes, or the shipped params.yaml with a
value replaced, a key removed or an unknown key added anywhere — gives validated params or one ``ConfigError`` naming
the file, never another exception.

Examples (:mod:`tests.fuzzing`): 50 byte strings and 100 edits of the shipped file per CI run, about 10 s on two
shared cores; ``make fuzz`` draws 10,000.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import fuzz
from textsift.config import Params, load_params
from textsift.errors import ConfigError

SURFACE = 150  # inputs per CI run: 50 byte strings, 100 edits
SHIPPED = yaml.safe_load((Path(__file__).resolve().parents[2] / "params.yaml").read_text(encoding="utf-8"))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=12))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a nested mapping/list (the places an edit can go)."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


PATHS = _paths(SHIPPED)[1:]


def _load(text: bytes) -> Params | ConfigError:
    """The params of a file holding ``text``, or the ConfigError loading it raised (anything else fails the test)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "params.yaml"
        path.write_bytes(text)
        try:
            return load_params(path)
        except ConfigError as err:
            assert str(path) in str(err) or "params" in str(err), str(err)
            return err


@fuzz(50, SURFACE)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_any_bytes_give_params_or_a_config_error(data: bytes) -> None:
    _load(data)


@fuzz(100, SURFACE)
@given(st.data())
def test_any_edit_of_the_shipped_params_gives_params_or_a_config_error(data: st.DataObject) -> None:
    params = copy.deepcopy(SHIPPED)
    path = data.draw(st.sampled_from(PATHS))
    parent = params
    for part in path[:-1]:
        parent = parent[part]
    edit = data.draw(st.sampled_from(("replace", "remove", "add")))
    if edit == "replace":
        parent[path[-1]] = data.draw(_values)
    elif edit == "remove" and isinstance(parent, dict):
        del parent[path[-1]]
    elif edit == "remove":
        parent.pop(path[-1])
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=8))] = data.draw(_values)
    _load(yaml.safe_dump(params, allow_unicode=True).encode("utf-8", "surrogatepass"))
