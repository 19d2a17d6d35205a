"""Adding a privacy mechanism is its package plus one line in ``textsift.mechanisms.registry`` (issue 19's goal:
three files at most). The test adds a small one — ``kind: digits``, every digit replaced by ``#`` — to a copy of
the library, touching only those files, and uses it the way users do: validated from a params file, run by
``textsift privatize`` on a CSV, and hashed in the ``privatize`` stage's code deps (so ``dvc repro`` re-runs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[2]

CONFIG = '''"""``kind: digits``: every digit of a text replaced by ``#`` (a test's mechanism)."""

from typing import Literal

from textsift.params_base import Frozen


class DigitsSetting(Frozen):
    kind: Literal["digits"]
    mark: str = "#"

    def needs(self) -> tuple[tuple[str, str | None], ...]:
        return ()
'''

MECHANISM = '''"""The ``digits`` mechanism."""

import re

from textsift.mechanisms.base import Mechanism, PrivatizeResult


class Digits(Mechanism):
    per_document = True

    def privatize(self, docs, setting, resources, key, *, vault=False):
        texts = [re.sub(r"[0-9]", setting.mark, text) for text in docs.texts]
        return PrivatizeResult(texts, {"digits_replaced": float(sum(ch.isdigit() for t in docs.texts for ch in t))})
'''


def _add_digits_mechanism(lib: Path) -> set[Path]:
    """Write the package and register it (its import and its entry); the set of files touched."""
    package = lib / "mechanisms" / "digits"
    package.mkdir()
    (package / "__init__.py").write_text(CONFIG, encoding="utf-8")
    (package / "mechanism.py").write_text(MECHANISM, encoding="utf-8")
    registry = lib / "mechanisms" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    anchor = "MECHANISMS: dict[str, Registered] = {\n"
    assert anchor in text
    entry = '    "digits": Registered(DigitsSetting, "textsift.mechanisms.digits.mechanism", "Digits"),\n'
    text = text.replace(anchor, anchor + entry)
    text = text.replace("from textsift.mechanisms.redact.params import RedactSetting\n",
                        "from textsift.mechanisms.redact.params import RedactSetting\n"
                        "from textsift.mechanisms.digits import DigitsSetting\n")
    registry.write_text(text, encoding="utf-8")
    return {package / "__init__.py", package / "mechanism.py", registry}


def test_a_new_mechanism_is_its_package_and_one_registry_line(tmp_path: Path) -> None:
    lib = tmp_path / "components" / "textsift"
    shutil.copytree(REPO / "components" / "textsift", lib, ignore=shutil.ignore_patterns("__pycache__"))
    touched = _add_digits_mechanism(lib)
    assert len(touched) <= 3

    project = tmp_path / "project"
    project.mkdir()
    (project / "params.yaml").write_text(yaml.safe_dump({
        "privatize": {"settings": {"no_digits": {"kind": "digits"}}},
    }), encoding="utf-8")
    pd.DataFrame({"text": [f"call 555-01{i:02d} about order {i}" for i in range(40)],
                  "label": ["a", "b"] * 20}).to_csv(project / "in.csv", index=False)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "components")}
    done = subprocess.run(
        [sys.executable, "-m", "textsift", "privatize", "--input", "in.csv", "--setting", "no_digits",
         "--output", "out.csv"], cwd=project, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    out = pd.read_csv(project / "out.csv")
    assert len(out) == 40 and out["text"].str.contains("call ###-####").all()
    assert not out["text"].str.contains("[0-9]").any()

    deps = subprocess.run(
        [sys.executable, "-c", "from textsift.registry import get_stage; print('\\n'.join(get_stage('privatize')"
         ".all_code))"], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert deps.returncode == 0, deps.stderr[-2000:]
    assert "components/textsift/mechanisms/digits/mechanism.py" in deps.stdout.split()

    bad = {"privatize": {"settings": {"no_digits": {"kind": "digits", "epsilon": 1}}}}
    (project / "bad.yaml").write_text(yaml.safe_dump(bad), encoding="utf-8")
    check = subprocess.run([sys.executable, "-m", "textsift", "params", "check", "bad.yaml"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode != 0 and "privatize.settings.no_digits.digits.epsilon" in check.stderr + check.stdout
