"""The code a registered privatizer carries: textsift's modules and the word lists they read, nothing else a working
tree holds beside them (a registered model is shared with whoever reads the registry)."""

from __future__ import annotations

import shutil
from pathlib import Path

from textsift.tracking import packed_code

PACKAGE = Path(__file__).resolve().parents[2] / "components" / "textsift"


def test_a_model_carries_modules_and_their_word_lists_never_a_stray_file(tmp_path: Path) -> None:
    tree = tmp_path / "tree" / "textsift"
    shutil.copytree(PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "notes.csv").write_text("id,text\n1,Zyxwvut Qponmlk 555-0100\n", encoding="utf-8")  # a user's stray file
    (tree / "mechanisms" / "redact" / "patients.txt").write_text("Zyxwvut Qponmlk\n", encoding="utf-8")  # read by none
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "corpus.cpython-311.pyc").write_bytes(b"\0")
    packed = packed_code(tree, tmp_path / "code")
    carried = {p.relative_to(packed).as_posix() for p in packed.rglob("*") if p.is_file()}
    assert {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts} <= carried
    assert {"mechanisms/redact/nationalities.txt", "stopwords_en.txt"} <= carried
    assert not [p for p in carried if p.endswith((".csv", ".pyc")) or "patients" in p]
    assert not any("Zyxwvut" in p.read_text(encoding="utf-8") for p in packed.rglob("*") if p.is_file())


def test_the_modules_a_served_privatizer_names_hold_its_model_and_its_mechanism() -> None:
    import importlib

    from textsift.mechanisms.base import Mechanism
    from textsift.mechanisms.redact.params import RedactSetting
    from textsift.serving.packing import served_modules

    model, mechanism = (importlib.import_module(m) for m in served_modules(RedactSetting(kind="redact"), None))
    assert hasattr(model, "PrivatizerModel")  # what tracking.log_privatizer saves
    classes = [v for v in vars(mechanism).values() if isinstance(v, type) and issubclass(v, Mechanism)]
    assert [c for c in classes if c is not Mechanism]
