"""Ad-hoc commands build what they need from the catalog and the registry, producers first."""

from __future__ import annotations

from pathlib import Path

import pytest

from textsift.catalog import path
from textsift.config import parse_params
from textsift.prerequisites import ensure, missing

PARAMS = parse_params({
    "indexes": {"sources": {"w2v": {"kind": "word2vec"}, "bert": {"kind": "bert_static", "model_path": "fill_in"}}},
    "privatize": {"settings": {
        "mdp": {"kind": "metric_dp", "index": "w2v", "epsilon": 10, "replace_detected": True},
        "mdp_bert": {"kind": "metric_dp", "index": "bert", "epsilon": 10},
        "ds": {"kind": "datasifter"}, "red_gold": {"kind": "redact", "spans": "gold"}}},
    "embedding_dp": {"settings": {"lrp": {"allocation": "lrp", "epsilon_max": 100}}},
})


def _needs(setting: str) -> tuple:
    return PARAMS.privatize.settings[setting].needs()


def test_a_setting_builds_only_what_it_needs_producers_first(tmp_path: Path) -> None:
    assert missing(tmp_path, PARAMS, _needs("mdp")) == [("ingest", None), ("build_indexes", "w2v"),
                                                       ("train_detectors", None)]  # a word2vec index: no fill-in
    assert missing(tmp_path, PARAMS, _needs("mdp_bert")) == [("ingest", None), ("train_fill_in", None),
                                                            ("build_indexes", "bert")]
    assert missing(tmp_path, PARAMS, _needs("ds")) == [("ingest", None), ("train_fill_in", None)]
    assert missing(tmp_path, PARAMS, _needs("red_gold")) == [("ingest", None)]


def test_what_exists_is_not_rebuilt(tmp_path: Path) -> None:
    for name in ("corpus", "detector"):
        (tmp_path / path(name)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path(name)).write_text("{}")
    assert missing(tmp_path, PARAMS, _needs("mdp")) == [("build_indexes", "w2v")]


def test_noisy_embeddings_need_the_fit_and_everything_it_reads(tmp_path: Path) -> None:
    order = [stage for stage, _ in missing(tmp_path, PARAMS, [("embedding_manifest", "lrp")])]
    assert order == ["key", "ingest", "train_detectors", "detect", "train_fill_in", "lrp_budgets", "embedding_dp"]


def test_building_prerequisites_waits_for_no_run_it_would_race(tmp_path: Path) -> None:
    """`textsift privatize/detect/embed` train what is missing under the run lock (issue 22, item 4)."""
    from textsift.locks import RunInProgressError, project_run

    (tmp_path / "params.yaml").write_text("{}", encoding="utf-8")
    with project_run(tmp_path), pytest.raises(RunInProgressError, match=r"a textsift run is in progress.*pid \d+"):
        ensure(tmp_path, PARAMS, tmp_path / "params.yaml", _needs("red_gold"))
    assert not (tmp_path / path("corpus")).exists()  # nothing ran beside the run


def test_in_the_flow_a_setting_waits_only_for_the_producers_of_what_it_needs() -> None:
    from textsift.registry import instances, upstream_instances

    waits = {inst.key: {u.name for u in upstream_instances(inst, PARAMS)}
             for inst in instances(PARAMS) if inst.stage.name == "privatize"}
    assert waits["ds"] == {"key", "ingest", "train_fill_in"}  # runs while the detector trains
    assert waits["red_gold"] == {"key", "ingest"}
    assert waits["mdp"] == {"key", "ingest", "detect", "build_indexes@w2v"}  # its own index, the stored spans
    assert {"train_detectors", "detect", "build_indexes@w2v"}.isdisjoint(waits["mdp_bert"])
    assert "build_indexes@bert" in waits["mdp_bert"]
    probes = {inst.key: {u.name for u in upstream_instances(inst, PARAMS)}
              for inst in instances(PARAMS) if inst.stage.name == "outsider"}
    assert probes["mdp"] == {*waits["mdp"], "train_detectors", "privatize@mdp"}  # its probes detect new texts
    assert probes["ds"] == {*waits["ds"], "privatize@ds"}


def test_a_metric_dp_instance_hashes_its_own_index_only() -> None:
    """Adding or rebuilding another index re-runs none of a setting's work: DVC and the flow's cache hash the index
    (and its metrics) that the setting names, not every index."""
    from textsift.dvc_render import stage_deps
    from textsift.registry import get_stage

    deps = set(stage_deps(get_stage("privatize"), PARAMS, "mdp"))
    assert {"data/indexes/w2v", "metrics/build_indexes/w2v.json"} <= deps
    assert not {"data/indexes/bert", "metrics/build_indexes/bert.json"} & deps
    assert {"data/indexes/w2v", "data/indexes/bert"} <= set(stage_deps(get_stage("privatize"), PARAMS))  # the body


def test_the_interest_model_is_a_stage_of_its_own_that_only_the_attack_stage_waits_for() -> None:
    from textsift.registry import instances, upstream_instances

    waits = {inst.name: {u.name for u in upstream_instances(inst, PARAMS)} for inst in instances(PARAMS)}
    assert waits["train_interests"] == set()  # no input: the flow starts it at once
    assert [name for name, upstream in waits.items() if "train_interests" in upstream] == ["attack"]
    declared = {inst.name: inst.declared_params(PARAMS) for inst in instances(PARAMS)}
    assert "detectors.interests" in declared["train_interests"]
    # an interest-model setting re-runs train_interests (and the attacks), never the detector's training
    assert not [k for k in declared["train_detectors"] if k == "detectors" or k.startswith("detectors.interests")]
