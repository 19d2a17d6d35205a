"""Report which committed DVC stages are stale, and why (CI prints it; it never blocks a landing).

A resolved issue's commit should carry a ``dvc.lock`` (and ``metrics/``) reproduced from its own code and
params. ``dvc status`` on CI's clean clone says which stages are not: their code deps or params differ from
what the lock recorded. Data deps and outputs are absent on a clean clone (they live in the DVC cache), so a
missing one is not staleness and is left out; always-changed stages (``params``, ``key``) are too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def stale(status: dict) -> dict[str, list[str]]:
    """Per stage, its changed code files and params keys (``dvc status --json`` entries)."""
    out: dict[str, list[str]] = {}
    for stage, entries in status.items():
        reasons = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue  # "always changed"
            for path, change in entry.get("changed deps", {}).items():
                if isinstance(change, dict):  # a params file: {key: "modified" | "new" | "deleted"}
                    reasons += [f"params {key} {how}" for key, how in change.items()]
                elif change != "deleted":
                    reasons.append(f"{path} {change}")
        if reasons:
            out[stage] = reasons
    return out


def main() -> int:
    """Print the stale stages and their reasons; always exit 0 (the report informs, never blocks)."""
    dvc = Path(sys.executable).parent / "dvc"  # this venv's
    proc = subprocess.run([str(dvc), "status", "--json"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"DVC baseline: `dvc status` failed ({proc.stderr.strip()[-300:]})")
        return 0
    found = stale(json.loads(proc.stdout or "{}"))
    if not found:
        print("DVC baseline: dvc.lock matches this commit's code and params (no stale stage)")
        return 0
    print(f"DVC baseline: {len(found)} stage(s) stale against this commit's code or params "
          "(re-run `dvc repro` and commit dvc.lock + metrics/):")
    for stage, reasons in sorted(found.items()):
        shown = ", ".join(reasons[:4]) + (f" (+{len(reasons) - 4} more)" if len(reasons) > 4 else "")
        print(f"  {stage}: {shown}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as err:  # noqa: BLE001 - a report: it must never stop CI before make test
        print(f"DVC baseline: not reported ({type(err).__name__}: {err})")
