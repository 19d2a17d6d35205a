"""The registry renders fan-out (foreach) stages for DVC and expands them for the flow."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from textsift import dvc_render, registry
from textsift.config import Params
from textsift.errors import StageError
from textsift.registry import Stage


class FanOutParams(Params):
    settings: dict[str, int] = {"mdp_eps10": 10, "ds_default": 1}


FAN = Stage(name="privatize", summary="fan-out", reads=("corpus",), params=("seed",), gpu=True, foreach="settings")
SINK = Stage(name="evaluate", summary="sink", reads=("privatized", "privatize_metrics"))  # outs: the catalog's


@pytest.fixture
def fanned(monkeypatch: pytest.MonkeyPatch) -> FanOutParams:
    stages = (registry.get_stage("ingest"), FAN, SINK)
    monkeypatch.setattr(registry, "STAGES", stages)
    monkeypatch.setattr(dvc_render, "STAGES", stages)
    return FanOutParams()


def test_instances_expand_foreach_keys_in_sorted_order(fanned: FanOutParams) -> None:
    names = [i.name for i in registry.instances(fanned)]
    assert names == ["ingest", "privatize@ds_default", "privatize@mdp_eps10", "evaluate"]
    sink = [i for i in registry.instances(fanned) if i.name == "evaluate"][0]
    assert [u.name for u in registry.upstream_instances(sink, fanned)] == [
        "privatize@ds_default", "privatize@mdp_eps10"]
    fan = registry.instances(fanned)[1]
    assert fan.outs == ("data/privatized/ds_default.parquet", "data/privatized/ds_default.manifest.json",
                        "data/vault/ds_default.bin",
                        "data/ledger/ds_default.parquet")  # from the catalog
    assert fan.metrics == ("metrics/privatize/ds_default.json",) and FAN.upstream == ("ingest",)


def test_render_uses_dvc_foreach_and_sink_depends_on_every_instance(fanned: FanOutParams) -> None:
    doc = yaml.safe_load(dvc_render.render_text(fanned))
    fan = doc["stages"]["privatize"]
    assert fan["foreach"] == ["ds_default", "mdp_eps10"]
    assert fan["do"]["cmd"] == "textsift stage privatize --key ${item}"
    assert fan["do"]["outs"] == ["data/privatized/${item}.parquet", "data/privatized/${item}.manifest.json",
                                 "data/vault/${item}.bin",
                                 "data/ledger/${item}.parquet"]
    assert "settings.${item}" in fan["do"]["params"][0][dvc_render.PARAMS_FILE]
    assert fan["do"]["metrics"] == [{"metrics/privatize/${item}.json": {"cache": False}}]
    sink_deps = doc["stages"]["evaluate"]["deps"]
    assert {"data/privatized/ds_default.parquet", "data/privatized/mdp_eps10.parquet",
            "metrics/privatize/mdp_eps10.json"} <= set(sink_deps)


def test_unknown_stage_is_a_clear_error() -> None:
    with pytest.raises(StageError, match="unknown stage 'nope'.*ingest"):
        registry.get_stage("nope")


def test_dvc_resolves_each_privatize_instance_to_exactly_its_own_deps(tmp_path: Path) -> None:
    """DVC reads the rendered file as the registry means it: a setting depends on its own mechanism's code and the
    reads it needs, not on every mechanism (DVC's own resolver, on the shipped params)."""
    from dvc.repo import Repo

    from textsift.config import load_params

    params = load_params(Path(__file__).resolve().parents[2] / "params.yaml")
    Repo.init(str(tmp_path), no_scm=True).close()
    (tmp_path / "dvc.yaml").write_text(dvc_render.render_text(params), encoding="utf-8")
    with Repo(str(tmp_path)) as repo:
        resolved = {s.name: {d.def_path for d in s.deps} - {dvc_render.PARAMS_FILE} for s in repo.index.stages}
    stage = registry.get_stage("privatize")
    for inst in (i for i in registry.instances(params) if i.stage is stage):
        assert resolved[inst.name] == set(dvc_render.stage_deps(stage, params, inst.key)), inst.name
    kinds = {key: setting.kind for key, setting in params.privatize.settings.items()}
    for key, kind in kinds.items():
        others = {k for k in kinds.values() if k != kind}
        assert not {d for d in resolved[f"privatize@{key}"] for other in others
                    if d.endswith(f"mechanisms/{other}/mechanism.py")}, key
