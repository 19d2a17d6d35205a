"""The project's secret key (textsift.secret_key): created once, kept private, never silently replaced."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from textsift import rng, secret_key
from textsift.config import load_params
from textsift.dvc_render import stage_deps
from textsift.errors import ConfigError, StageError
from textsift.registry import STAGES, StageInstance, get_stage
from textsift.secret_key import ENV, FINGERPRINT_FILE, KEY_FILE, SecretKey
from textsift.stage_context import StageContext

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def test_the_first_run_creates_a_private_key_and_later_runs_read_it(tmp_path: Path) -> None:
    key = secret_key.ensure(tmp_path)
    path = tmp_path / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (tmp_path / FINGERPRINT_FILE).read_text().strip() == key.fingerprint
    again = secret_key.ensure(tmp_path)
    assert again.material == key.material and len(key.material) == 32
    assert key.material.hex() not in repr(key) + str(key) and key.fingerprint in repr(key)
    assert secret_key.ensure(tmp_path / "other").fingerprint != key.fingerprint  # OS entropy, per project


def test_a_missing_key_for_existing_outputs_is_an_error_not_a_new_key(tmp_path: Path) -> None:
    key = secret_key.ensure(tmp_path)
    (tmp_path / KEY_FILE).unlink()
    with pytest.raises(ConfigError, match=f"made with secret key {key.fingerprint}.*textsift key rotate"):
        secret_key.ensure(tmp_path)
    assert not (tmp_path / KEY_FILE).exists()
    old, new = secret_key.rotate(tmp_path)
    assert old == key.fingerprint != new.fingerprint == secret_key.ensure(tmp_path).fingerprint


def test_the_environment_variable_wins_and_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given = SecretKey(bytes(range(32)))
    monkeypatch.setenv(ENV, given.material.hex())
    assert secret_key.ensure(tmp_path).material == given.material
    assert not (tmp_path / KEY_FILE).exists()  # a deployment's key is never written to disk
    assert secret_key.recorded_fingerprint(tmp_path) == given.fingerprint
    with pytest.raises(ConfigError, match="rotate the key where it is kept"):
        secret_key.rotate(tmp_path)
    monkeypatch.setenv(ENV, "not-hex")
    with pytest.raises(ConfigError, match=ENV) as err:
        secret_key.ensure(tmp_path)
    assert "not-hex" not in str(err.value)
    monkeypatch.setenv(ENV, "ab" * 16)
    with pytest.raises(ConfigError, match="expected 64 hex digits"):
        secret_key.ensure(tmp_path)


def test_keyed_draws_are_a_prf_of_the_key_reproducible_only_with_it() -> None:
    a, b = SecretKey(bytes(range(32))), SecretKey(bytes(range(1, 33)))
    draw = rng.generator(a, "metric_dp", "doc-1").standard_normal(4)
    assert (rng.generator(SecretKey(bytes(range(32))), "metric_dp", "doc-1").standard_normal(4) == draw).all()
    assert not (rng.generator(b, "metric_dp", "doc-1").standard_normal(4) == draw).any()
    assert not (rng.generator(a, "metric_dp", "doc-2").standard_normal(4) == draw).any()
    seeds = {rng.stable_key(s, "metric_dp", "doc-1") for s in range(2000)}
    assert rng.stable_key(a, "metric_dp", "doc-1") not in seeds  # no public seed reproduces a keyed draw


def test_only_keyed_stages_draw_with_the_key_and_their_dvc_deps_name_its_fingerprint(tmp_path: Path) -> None:
    params = load_params(REPO / "params.yaml")
    keyed = {s.name for s in STAGES if s.keyed}
    assert keyed == {"privatize", "outsider", "embedding_dp"}  # outsider: its baseline and the service's draws
    for stage in STAGES:
        deps = stage_deps(stage, params)
        assert (FINGERPRINT_FILE in deps) == (stage.name in keyed), stage.name
        assert KEY_FILE not in deps
    ctx = StageContext(tmp_path, params, StageInstance(get_stage("ingest")), None, "run")
    with pytest.raises(StageError, match="not keyed"):
        _ = ctx.secret_key
    setting = next(iter(params.privatize.settings))
    ctx = StageContext(tmp_path, params, StageInstance(get_stage("privatize"), setting), None, "run")
    assert ctx.secret_key.fingerprint == secret_key.ensure(tmp_path).fingerprint


def test_git_ignores_the_key_file() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", KEY_FILE], cwd=REPO)
    assert ignored.returncode == 0


def test_rotate_retires_the_old_key_which_still_opens_its_vaults(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from textsift.catalog import path as catalog_path
    from textsift.cli import app
    from textsift.vault import seal

    old = secret_key.ensure(tmp_path)
    vault = tmp_path / catalog_path("vault", "red")
    vault.parent.mkdir(parents=True)
    vault.write_bytes(seal({"d1": [("PERSON", "Eve Ray", "Ann Lee")]}, "red", old))
    was, new = secret_key.rotate(tmp_path)
    assert was == old.fingerprint != new.fingerprint
    retired = tmp_path / secret_key.RETIRED_DIR / f"{old.fingerprint}.key"
    assert stat.S_IMODE(retired.stat().st_mode) == 0o600
    assert set(secret_key.keyring(tmp_path)) == {old.fingerprint, new.fingerprint}
    assert secret_key.load(tmp_path).fingerprint == new.fingerprint  # draws use the new key only
    runner = CliRunner()
    found = runner.invoke(app, ["reveal", "--setting", "red", "--pseudonym", "eve ray", "--root", str(tmp_path)])
    assert found.exit_code == 0 and '"original": "Ann Lee"' in found.output
    missing = runner.invoke(app, ["reveal", "--setting", "red", "--pseudonym", "Nobody", "--root", str(tmp_path)])
    assert missing.exit_code == 1


def test_rotate_waits_for_no_run(tmp_path: Path) -> None:
    from textsift.locks import RunInProgressError, project_run

    key = secret_key.ensure(tmp_path)
    with project_run(tmp_path), pytest.raises(RunInProgressError):
        secret_key.rotate(tmp_path)
    assert secret_key.load(tmp_path).fingerprint == key.fingerprint  # untouched


def test_a_key_file_readable_by_others_is_made_private_and_a_binary_one_is_named(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    key = secret_key.ensure(tmp_path)
    path = tmp_path / KEY_FILE
    path.chmod(0o644)
    with caplog.at_level("WARNING", logger="textsift"):
        assert secret_key.load(tmp_path).fingerprint == key.fingerprint
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and "readable by other users" in caplog.text
    path.write_bytes(bytes(range(200, 256)))
    with pytest.raises(ConfigError, match=f"{KEY_FILE}: not a textsift key file"):
        secret_key.load(tmp_path)
