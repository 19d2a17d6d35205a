"""Standing fault injection: a flow killed (SIGKILL) at the commit points of its run, rerun each time, ends with the
bytes of a run that was never interrupted; then one output of each kind damaged is rebuilt to the same bytes.

One chain: the flow runs in a child process (a fork of a forkserver that imported it once) that kills itself at
the first sampled commit point no earlier child was killed at (:mod:`tests.integration.fault_points`: just before
an output area's file takes its place, or just after for data and models; in ``make test`` before each commit to
the areas this test names, after it for the privatized corpora and the vault, and at a fixed share of the rest,
about 14 kills, all 30+ in ``make fuzz``); the next child reruns the flow, which skips what completed and redoes
the rest, until a child runs to the end. The reference is the same project, same key, run once without a fault
(``flow_run``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from tests.integration.conftest import FULL_PIPELINE, ONE_SETTING_EACH, make_project, sha256
from tests.integration.fault_points import SHARE, TEMPORARY, sampled
from textsift.secret_key import KEY_FILE

# ~130-180 s on 2 busy cores (a reference run, ~14 killed runs and the last; make fuzz: ~40): its own limit, far above
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]
MOST_KILLS = 80  # a guard: the flow has ~40 commit points, so a chain that never ends fails here
FLOW_OVERRIDES = ONE_SETTING_EACH  # a kill lands on an output area, not a file: more settings add no commit point


def _outputs(root: Path) -> dict[str, str]:
    """sha256 of every output the stages write (data, models, metrics, reports), by path."""
    found = {}
    for folder in ("data", "models", "metrics", "reports"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                found[str(path.relative_to(root))] = sha256(path)
    return found


@pytest.fixture(scope="module")
def killed_chain(tmp_path_factory: pytest.TempPathFactory, flow_run: dict) -> dict:
    from prefect.server.api.server import SubprocessASGIServer

    root = make_project(tmp_path_factory.mktemp("killed"), **{**FULL_PIPELINE, **FLOW_OVERRIDES})
    (root / KEY_FILE).parent.mkdir(parents=True)
    shutil.copy(flow_run["root"] / KEY_FILE, root / KEY_FILE)  # the same key holder: the same draws
    used = root.parent / "kill_points.txt"
    os.environ.setdefault("PREFECT_API_URL", SubprocessASGIServer().api_url)  # the session's temporary API
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.integration.fault_points"])
    from tests.integration.fault_points import run_killed

    codes = []
    for attempt in range(MOST_KILLS + 1):
        child = context.Process(target=run_killed, args=(str(root), str(used), attempt < MOST_KILLS))
        child.start()
        child.join(timeout=300)
        codes.append(child.exitcode)
        if child.exitcode == 0:
            break
        assert child.exitcode == -9, f"child {attempt} ended with {child.exitcode}, not killed"
    points = used.read_text(encoding="utf-8").split("\n")[:-1] if used.exists() else []
    seen = set(Path(f"{used}.seen").read_text(encoding="utf-8").split("\n")[:-1])
    return {"root": root, "codes": codes, "points": points, "seen": seen}


def test_kills_across_the_stages_then_the_bytes_of_an_uninterrupted_run(flow_run: dict, killed_chain: dict) -> None:
    points, seen = killed_chain["points"], killed_chain["seen"]
    assert killed_chain["codes"][-1] == 0 and len(points) == len(killed_chain["codes"]) - 1, points
    assert len(seen | set(points)) >= 30  # commit points in every stage
    share = float(os.environ.get("TEXTSIFT_FAULT_SHARE", SHARE))
    assert all(sampled(p, share) for p in points)  # kills only where sampled ...
    assert {p for p in seen if sampled(p, share)} <= set(points)  # ... and a sampled point passed had been killed at
    areas = {p.split(" ", 1)[1] for p in points}
    last_stages = {"data/lrp_budgets", "data/embeddings", "metrics/embedding_dp", "reports/evaluate",
                   "metrics/evaluate.json"}  # the end of the DAG: a kill there too, not only early on
    assert {"data/ingest", "models/detector.json", "data/privatized", "data/vault", *last_stages} <= areas, points
    want, got = _outputs(flow_run["root"]), _outputs(killed_chain["root"])
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    differ = sorted(path for path in want if got[path] != want[path])
    assert not differ, (differ, points)
    leftovers = [p for p in killed_chain["root"].rglob(".*")
                 if p.name.endswith((".tmp", ".old")) or (p.is_dir() and TEMPORARY.search(str(p)))]
    assert not leftovers  # every temporary a kill left was removed by the run that redid its write
    assert json.loads((killed_chain["root"] / "metrics/evaluate.json").read_text())


DAMAGE = {  # one output of each kind, and how it is damaged
    "data/ingest/corpus.parquet": lambda b: b[: len(b) // 2],  # a table cut short
    "data/privatized/mdp.parquet": lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:],  # one bit flipped
    "models/detector.json": lambda b: b[:5],  # a model pointer cut short
    "data/indexes/w2v/index.ann": lambda b: bytes(len(b)),  # an index folder's file zeroed
    "data/lrp_budgets/budgets.npz": lambda b: b"",  # an array file emptied
    "data/vault/red.bin": lambda b: b[:-1] + bytes([b[-1] ^ 1]),  # the sealed vault, one bit flipped
    "metrics/detect.json": lambda b: b"[]",  # a metrics file replaced
    "reports/evaluate/frontier.csv": None,  # a report deleted
}


def test_each_kind_of_damaged_output_is_rebuilt_to_the_bytes_of_an_uninterrupted_run(flow_run: dict,
                                                                                     killed_chain: dict) -> None:
    from flows.pipeline import pipeline

    root = killed_chain["root"]
    for name, damage in DAMAGE.items():
        path = root / name
        if damage is None:
            path.unlink()
        else:
            path.write_bytes(damage(path.read_bytes()))
    assert pipeline(root=str(root), return_state=True).is_completed()
    want, got = _outputs(flow_run["root"]), _outputs(root)
    assert set(got) == set(want) and not sorted(path for path in want if got[path] != want[path])
