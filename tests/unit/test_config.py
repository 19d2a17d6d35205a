"""params.yaml schema: defaults, frozen models, and errors that name the bad key."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from textsift.config import Params, flatten, load_params, parse_params
from textsift.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def test_committed_params_are_valid_and_complete() -> None:
    params = load_params(REPO / "params.yaml")
    assert params == Params.model_validate(params.model_dump())
    assert flatten(params)["ingest.split.test"] == params.ingest.split.test


def test_unknown_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"ingest\.splt: unknown key"):
        parse_params({"ingest": {"splt": {"test": 0.2}}})


def test_out_of_range_value_is_named() -> None:
    with pytest.raises(ConfigError, match=r"ingest\.max_reject_fraction"):
        parse_params({"ingest": {"max_reject_fraction": 1.5}})


def test_split_must_leave_training_data() -> None:
    with pytest.raises(ConfigError, match="train gets the rest"):
        parse_params({"ingest": {"split": {"validation": 0.5, "test": 0.5}}})


def test_file_source_needs_a_path() -> None:
    with pytest.raises(ConfigError, match="source.path"):
        parse_params({"ingest": {"source": {"kind": "file"}}})


def test_models_are_frozen() -> None:
    with pytest.raises(pydantic.ValidationError):
        Params().seed = 3  # type: ignore[misc]


def test_bad_yaml_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("seed: [unclosed", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_params(path)
