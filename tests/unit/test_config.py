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


@pytest.mark.parametrize("epsilon", [float("inf"), float("nan"), "7", True, 0, -1])
def test_epsilon_must_be_a_finite_positive_number(epsilon: object) -> None:
    raw = {"indexes": {"sources": {"w2v": {"kind": "word2vec"}}},
           "privatize": {"settings": {"mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": epsilon}}}}
    with pytest.raises(ConfigError, match=r"privatize\.settings\.mdp\.metric_dp\.epsilon"):
        parse_params(raw)


@pytest.mark.parametrize(("key", "value"), [("seed", "7"), ("seed", True), ("ingest.max_chars", 2.5),
                                            ("ingest.dedupe", "yes"), ("ingest.split.test", "0.2")])
def test_values_are_not_coerced_from_other_types(key: str, value: object) -> None:
    raw: dict = {}
    node = raw
    *parents, leaf = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        parse_params(raw)


def test_an_empty_settings_map_is_an_error_and_the_default_privatizes() -> None:
    with pytest.raises(ConfigError, match=r"privatize\.settings"):
        parse_params({"privatize": {"settings": {}}})
    assert list(Params().privatize.settings) == ["ds_default"]


def test_a_missing_params_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such params file"):
        load_params(tmp_path / "params.yaml")


def test_schema_default_fill_order_is_what_params_yaml_ships() -> None:
    from textsift.mechanisms.datasifter.params import DataSifterSetting

    shipped = {s.fill_order for s in load_params(REPO / "params.yaml").privatize.settings.values()
               if s.kind == "datasifter"}
    assert shipped == {DataSifterSetting(kind="datasifter").fill_order} == {"parallel"}


@pytest.mark.parametrize(("raw", "key"), [
    ({"privatize": {"settings": {"m": {"kind": "metric_dp", "index": "w2v", "epsilon": 1e-320}}}}, "epsilon"),
    ({"privatize": {"settings": {"m": {"kind": "metric_dp", "index": "w2v", "epsilon": 1e308}}}}, "epsilon"),
    ({"embedding_dp": {"settings": {"e": {"allocation": "lrp", "epsilon_max": 1e-320}}}}, "epsilon_max"),
    ({"privatize": {"settings": {"r": {"kind": "redact", "placeholder": "[{label.__class__.__mro__}]"}}}},
     "placeholder"),
    ({"privatize": {"settings": {"r": {"kind": "redact", "placeholder": "[{label}:{other}]"}}}}, "placeholder"),
    ({"privatize": {"settings": {"r": {"kind": "redact", "placeholder": "[{label!r:>9}]"}}}}, "placeholder"),
    ({"privatize": {"settings": {"r": {"kind": "redact", "placeholder": "[{label]"}}}}, "placeholder"),
    ({"orchestration": {"stage_timeouts": {"evalute": 60}}}, "stage_timeouts"),
])
def test_unsafe_or_meaningless_privacy_params_are_errors_naming_the_key(raw: dict, key: str) -> None:
    raw = {"indexes": {"sources": {"w2v": {"kind": "word2vec"}}}, **raw}
    with pytest.raises(ConfigError, match=key):
        parse_params(raw)


def test_the_placeholder_may_repeat_its_label_and_epsilon_bounds_hold_at_their_ends() -> None:
    params = parse_params({"indexes": {"sources": {"w2v": {"kind": "word2vec"}}}, "privatize": {"settings": {
        "r": {"kind": "redact", "placeholder": "<{label}/{label}>"},
        "lo": {"kind": "metric_dp", "index": "w2v", "epsilon": 1e-3},
        "hi": {"kind": "metric_dp", "index": "w2v", "epsilon": 1e5}}},
        "orchestration": {"stage_timeouts": {"evaluate": 60}}})
    assert params.privatize.settings["r"].placeholder == "<{label}/{label}>"


def test_replace_labels_must_be_types_detection_finds() -> None:
    with pytest.raises(ConfigError, match="replace_labels: PERSN is never detected"):
        parse_params({"embedding_dp": {"replace_labels": ["PERSN"]}})
    parse_params({"embedding_dp": {"replace_labels": ["DIAGNOSIS"], "spans": "gold"}})  # a corpus's own gold label
