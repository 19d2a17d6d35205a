"""The artifact catalog: each path declared once; stages read and write only through it (ARCHITECTURE.md)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from textsift.catalog import ARTIFACTS, artifact, path, written_by
from textsift.config import load_params
from textsift.errors import StageError
from textsift.registry import STAGES, StageInstance, get_stage
from textsift.stage_context import StageContext

REPO = Path(__file__).resolve().parents[2]
LITERAL = re.compile(r"""["'](?:data|models|metrics|reports)/""")


def test_no_artifact_path_is_written_outside_the_catalog() -> None:
    sources = [p for folder in ("components", "flows") for p in (REPO / folder).rglob("*.py") if p.name != "catalog.py"]
    offenders = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in sources
                 for n, line in enumerate(p.read_text().splitlines(), 1) if LITERAL.search(line)]
    assert offenders == []


def test_every_artifact_has_one_path_and_a_registered_producer_and_every_read_exists() -> None:
    assert len({a.path for a in ARTIFACTS}) == len(ARTIFACTS) and len({a.name for a in ARTIFACTS}) == len(ARTIFACTS)
    names = {s.name for s in STAGES}
    assert {a.producer for a in ARTIFACTS} <= names
    for stage in STAGES:
        for name in stage.reads:
            assert artifact(name).producer != stage.name, (stage.name, name)
        assert written_by(stage.name), stage.name  # every stage writes something
        keyed = [a for a in written_by(stage.name) if a.keyed]
        assert bool(keyed) == bool(stage.foreach), stage.name  # a fan-out stage writes per key, only it does
    assert get_stage("privatize").upstream == ("key", "ingest", "detect", "train_fill_in", "build_indexes")
    assert get_stage("outsider").upstream == ("key", "ingest", "privatize", "detect", "train_detectors",
                                             "train_fill_in", "build_indexes")  # its probes detect new texts


def test_keyed_paths_need_their_key() -> None:
    assert path("privatized", "mdp") == "data/privatized/mdp.parquet"
    with pytest.raises(StageError, match="privatized is written per privatize key"):
        path("privatized")
    with pytest.raises(StageError, match="unknown artifact 'nope'"):
        artifact("nope")


def test_a_stage_reads_only_what_it_declares_and_writes_only_its_own(tmp_path: Path) -> None:
    ctx = StageContext(tmp_path, SimpleNamespace(), StageInstance(get_stage("privatize"), "mdp"), None, "run")
    assert ctx.input("index", "w2v") == tmp_path / "data/indexes/w2v"
    assert ctx.output("privatized") == tmp_path / "data/privatized/mdp.parquet"
    with pytest.raises(StageError, match="reads 'budgets', which it does not declare"):
        ctx.input("budgets")
    with pytest.raises(StageError, match="cannot write 'corpus': ingest does"):
        ctx.output("corpus")


def test_a_stage_reads_only_the_params_it_declares(tmp_path: Path) -> None:
    params = load_params(REPO / "params.yaml")
    outsider = get_stage("outsider")  # a served metric-DP setting's probes read detection and the recognizers' view
    setting = next(name for name, s in params.privatize.settings.items() if s.kind == "metric_dp"
                   and "ingest.normalize" in StageInstance(outsider, name).declared_params(params))
    ctx = StageContext(tmp_path, params, StageInstance(outsider, setting), None, "run")
    assert ctx.params.indexes.geometry == params.indexes.geometry  # declared: the real value
    assert ctx.params.privatize.settings[setting] == params.privatize.settings[setting]  # its own fan-out entry
    assert setting in ctx.params.privatize.settings and ctx.params.seed == params.seed
    assert ctx.declared["indexes.geometry.draws"] == params.indexes.geometry.draws
    other = next(name for name in params.privatize.settings if name != setting)
    with pytest.raises(StageError, match=f"reads params key 'privatize.settings.{other}', which it does not declare"):
        _ = ctx.params.privatize.settings[other]
    assert ctx.params.ingest.normalize == params.ingest.normalize  # declared: a part of a section
    with pytest.raises(StageError, match="reads params key 'ingest.split'"):
        _ = ctx.params.ingest.split
    with pytest.raises(StageError, match="reads params key 'evaluate'"):
        _ = ctx.params.evaluate.frontier
    with pytest.raises(AttributeError, match="read-only"):
        ctx.params.seed = 1
    ingest = StageContext(tmp_path, params, StageInstance(get_stage("ingest")), None, "run")
    with pytest.raises(StageError, match="stage ingest reads params key 'detection'"):
        _ = ingest.params.detection
