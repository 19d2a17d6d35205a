"""`dvc repro` runs the registry's stages; twice gives identical outputs; code edits re-run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.conftest import REPO, dvc_ran, dvc_run, dvc_stale, sha256
from textsift import secret_key

# a full `dvc repro`, a no-op, a forced one of the stages that draw or train, and a partial one:
# each stage a separate `textsift stage` process (~7 s of imports, MLflow and DVC bookkeeping);
# 200-300 s on 2 busy cores, so its own limit, far above that, instead of the suite's 600 s
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]
OUTPUTS = ("data/ingest/corpus.parquet", "data/ingest/rejects.parquet", "metrics/ingest.json",
           "models/fill_in.json", "data/indexes/w2v/index.ann", "data/indexes/w2v/vocab.txt",
           "data/privatized/mdp.parquet", "metrics/privatize/mdp.json",
           "data/lrp_budgets/embeddings.parquet", "data/lrp_budgets/budgets.npz",
           "data/embeddings/uni.parquet", "data/embeddings/uni.manifest.json",
           "metrics/evaluate.json", "metrics/evaluate_embeddings.json", "reports/evaluate/utility.csv",
           "reports/evaluate/frontier.csv", "reports/evaluate/embedding_dp.csv")


FORCED = ("ingest", "train_fill_in", "build_indexes@w2v", "privatize@mdp")


def _hashes(root: Path) -> dict[str, str]:
    return {out: sha256(root / out) for out in OUTPUTS}


def test_repro_twice_is_identical_and_code_changes_rerun_only_affected_stages(dvc_project: Path) -> None:
    root = dvc_project
    first = dvc_run(["dvc", "repro"], root)
    for stage in ("ingest", "train_fill_in", "build_indexes@w2v", "privatize@mdp", "lrp_budgets", "embedding_dp@uni",
                  "evaluate"):
        assert f"Running stage '{stage}'" in first
    hashes = _hashes(root)

    again = dvc_run(["dvc", "repro"], root)
    assert dvc_ran(again) == set()  # nothing changed, nothing ran
    # the stages that draw or train, recomputed from scratch (each its own process): byte-identical outputs. The
    # rest (lrp_budgets, embedding_dp, evaluate) is compared after a rerun by the Dask and fault-injection tests;
    # forcing the whole DAG here took a third of this test (~350 s of 1,100 on CI's busy cores)
    forced = dvc_run(["dvc", "repro", "--force", "--single-item", *FORCED], root)
    assert dvc_ran(forced) == set(FORCED)
    assert _hashes(root) == hashes

    # which stages a code edit makes stale, read from `dvc status` (each edit alone), then one repro of both
    library_file = root / "components/textsift/evaluation/report.py"
    library_file.write_text(library_file.read_text() + "\n# touched by the test\n")
    assert dvc_stale(dvc_run(["dvc", "status"], root)) == {"evaluate"}
    geometry = root / "components/textsift/evaluation/geometry.py"  # imported by privatize, listed by nobody
    geometry.write_text(geometry.read_text() + "\n# touched by the test\n")
    stale = dvc_stale(dvc_run(["dvc", "status"], root)) - {"evaluate"}
    assert "privatize@mdp" in stale and not stale & {"ingest", "train_fill_in", "lrp_budgets", "embedding_dp@uni"}
    after_edits = dvc_ran(dvc_run(["dvc", "repro"], root))
    assert {"privatize@mdp", "evaluate"} <= after_edits
    assert not after_edits & {"ingest", "train_fill_in", "lrp_budgets", "embedding_dp@uni"}
    status = dvc_run(["dvc", "status"], root)
    assert "always changed" in status and "changed deps" not in status and "changed outs" not in status

    # a teammate's clone of the pushed project, holding the key: `dvc pull` brings every output, nothing recomputes
    _commit_and_push(root, root.parent / "remote")
    clone = root.parent / "clone"
    dvc_run(["git", "clone", "-q", str(root), str(clone)], root.parent)
    assert not (clone / OUTPUTS[0]).exists()
    dvc_run(["dvc", "pull"], clone)
    keyless = dvc_run(["dvc", "repro"], clone, check=False)  # no silent new key re-drawing every release
    assert "were made with secret key" in keyless and dvc_ran(keyless) == set()
    shutil.copy2(root / secret_key.KEY_FILE, clone / secret_key.KEY_FILE)
    assert dvc_ran(dvc_run(["dvc", "repro"], clone)) == set()
    assert _hashes(clone) == _hashes(root)


def _commit_and_push(root: Path, remote: Path) -> None:
    """What a team does after a run: outputs to a DVC remote (here a local folder), the lock file to git."""
    shutil.copy(REPO / ".gitignore", root / ".gitignore")
    with (root / ".gitignore").open("a", encoding="utf-8") as ignore:
        ignore.write("/.dvc-site/\n")
    dvc_run(["dvc", "remote", "add", "-d", "shared", str(remote)], root)
    dvc_run(["dvc", "push"], root)
    dvc_run(["git", "add", "-A"], root)
    dvc_run(["git", "-c", "user.name=team", "-c", "user.email=team@example.org", "commit", "-qm", "a run"], root)

