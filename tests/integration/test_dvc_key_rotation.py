"""`dvc repro` and the secret key: a rotated key re-runs exactly the stages that draw with it, with other noise;
the holder's old key gives the old bytes back (issue 20). Its own module, so pytest-xdist runs it beside
test_dvc_repro instead of after it: each `textsift stage` process costs ~7 s of imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import dvc_ran, dvc_restored, dvc_run, sha256
from textsift.secret_key import KEY_FILE

# a partial `dvc repro` and three keyed re-runs:
# each stage a separate `textsift stage` process (~7 s of imports, MLflow and DVC bookkeeping);
# 200-300 s on 2 busy cores, so its own limit, far above that, instead of the suite's 600 s. The models come from
# the per-user model cache (they draw no key; trainings' identity is test_dvc_repro's subject)
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]
KEYED = ["privatize@mdp", "embedding_dp@uni"]  # the stages that draw with the key (evaluate, downstream, not run)
KEYED_OUTPUTS = ("data/privatized/mdp.parquet", "metrics/privatize/mdp.json", "data/embeddings/uni.parquet",
                 "data/embeddings/uni.manifest.json")
KEY_FREE_OUTPUTS = ("data/ingest/corpus.parquet", "models/fill_in.json", "models/detector.json",
                    "data/indexes/w2v/index.ann", "data/lrp_budgets/embeddings.parquet", "data/lrp_budgets/budgets.npz")


def _hashes(root: Path) -> dict[str, str]:
    return {out: sha256(root / out) for out in (*KEYED_OUTPUTS, *KEY_FREE_OUTPUTS)}


def test_a_rotated_key_reruns_only_the_keyed_stages_and_the_old_key_restores_the_old_bytes(dvc_project: Path) -> None:
    root = dvc_project
    first = dvc_run(["dvc", "repro", *KEYED], root, model_cache=True)
    assert {"ingest", "lrp_budgets", *KEYED} <= dvc_ran(first)
    before, old_key = _hashes(root), (root / KEY_FILE).read_bytes()
    manifest = (root / "data/embeddings/uni.manifest.json").read_text(encoding="utf-8")
    assert old_key.strip().decode() not in manifest and '"seed"' not in manifest

    dvc_run(["textsift", "key", "rotate"], root)
    rotated = dvc_run(["dvc", "repro", *KEYED], root, model_cache=True)
    assert dvc_ran(rotated) == set(KEYED)
    after = _hashes(root)
    assert all(after[out] != before[out] for out in ("data/privatized/mdp.parquet", "data/embeddings/uni.parquet"))
    assert all(after[out] == before[out] for out in KEY_FREE_OUTPUTS)

    (root / KEY_FILE).write_bytes(old_key)  # the holder restores the key the outputs were made with
    restored = dvc_run(["dvc", "repro", *KEYED], root, model_cache=True)
    assert dvc_restored(restored) == set(KEYED), restored[-2000:]
    assert _hashes(root) == before

    (root / KEY_FILE).unlink()  # the key is lost: an error, never a silent new key
    lost = dvc_run(["dvc", "repro", *KEYED], root, check=False, model_cache=True)
    assert "made with secret key" in lost and "textsift key rotate" in lost
