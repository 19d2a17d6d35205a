"""A privatize setting's resources load only what its needs() name: what its instance's code deps hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from textsift.config import load_params
from textsift.errors import StageError
from textsift.mechanisms.base import Documents
from textsift.privatization.loaders import LOADERS, RECOGNIZERS, loader_modules
from textsift.privatization.resources import StageResources
from textsift.registry import StageInstance, get_stage
from textsift.stage_context import StageContext

REPO = Path(__file__).resolve().parents[2]


def test_a_setting_that_declares_no_detector_cannot_load_one(tmp_path: Path) -> None:
    params = load_params(REPO / "params.yaml")
    undetected = next(k for k, s in params.privatize.settings.items() if ("detector", None) not in s.needs())
    ctx = StageContext(tmp_path, params, StageInstance(get_stage("privatize"), undetected), None, "run")
    docs = Documents(["Ann Lee called."], ["d1"], [[]], ["d1"])
    with pytest.raises(StageError, match=f"privatize@{undetected}: its mechanism loads the detector"):
        StageResources(ctx).detected(docs, None)


def test_the_privatize_stage_reads_every_documents_spans_from_the_detect_stage_and_detects_nothing(
        tmp_path: Path) -> None:
    """A stage that only reads the detect stage's file depends on no recognizer: a document the file lacks is an
    error naming its id (never its text), where a probe of the service or a new file detects it."""
    from textsift.detection.recognizers.base import Detection
    from textsift.detection.spans_file import write_detected

    params = load_params(REPO / "params.yaml")
    detected = next(k for k, s in params.privatize.settings.items() if ("detector", None) in s.needs())
    ctx = StageContext(tmp_path, params, StageInstance(get_stage("privatize"), detected), None, "run")
    write_detected(ctx.input("detected"), ["d1"], ["Ann Lee called."], [[Detection(0, 7, "PERSON", 0.9, "model")]])
    stage = StageResources(ctx, detects_unseen=False)
    known = Documents(["Ann Lee called."], ["d1"], [[]], ["d1"])
    assert [[(s.start, s.end)] for s in stage.detected(known, None)[0]] == [[(0, 7)]]
    with pytest.raises(StageError, match="d2") as raised:
        stage.detected(Documents(["Bo Ek called."], ["d2"], [[]], ["d2"]), None)
    assert "Bo Ek" not in str(raised.value)


def test_each_need_names_the_modules_that_load_it_and_every_loader_is_named() -> None:
    assert loader_modules([("corpus", None), ("index", "w2v")]) == LOADERS["index"]
    assert set(loader_modules([("detector", None), ("fill_in", None)])) == {*LOADERS["detector"], *LOADERS["fill_in"],
                                                                            *RECOGNIZERS}
    assert set(loader_modules([("detector", None)], detects_unseen=False)) == set(LOADERS["detector"])
    source = (REPO / "components/textsift/privatization/resources.py").read_text(encoding="utf-8")
    used = {module for modules in (*LOADERS.values(), RECOGNIZERS) for module in modules}
    assert all(f'"{module}"' in source for module in used)
    assert "from textsift.detection" not in source and "from textsift.models" not in source  # only by name
