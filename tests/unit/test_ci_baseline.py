"""CI's DVC baseline report: stale code and params are named; data absent from a clean clone is not staleness."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "dvc_baseline.py"


def _module():
    spec = importlib.util.spec_from_file_location("dvc_baseline", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_changed_code_and_params_make_a_stage_stale() -> None:
    status = {
        "params": ["always changed"],
        "ingest": [{"changed outs": {"data/ingest/corpus.parquet": "deleted"}}],
        "evaluate": [{"changed deps": {"data/ingest/corpus.parquet": "deleted",
                                       "components/textsift/evaluation/recommend.py": "modified",
                                       "dvc.params.yaml": {"evaluate.recommend": "modified"}}},
                     {"changed outs": {"metrics/evaluate.json": "deleted"}}],
    }
    assert _module().stale(status) == {"evaluate": ["components/textsift/evaluation/recommend.py modified",
                                                    "params evaluate.recommend modified"]}
