"""A deployment passes the project's secret key as a real Prefect Secret block (on Prefect's local API)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from prefect.blocks.system import Secret

from textsift import secret_key
from textsift.errors import ConfigError


def test_a_secret_block_supplies_the_key_without_writing_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.pipeline import use_secret_block

    monkeypatch.setenv(secret_key.ENV, "")  # recorded, so what use_secret_block sets is undone after the test
    given = secret_key.SecretKey(bytes(range(100, 132)))
    Secret(value=given.material.hex()).save("textsift-key-test", overwrite=True)
    assert use_secret_block("textsift-key-test") == given.fingerprint
    assert os.environ[secret_key.ENV] == given.material.hex()
    assert secret_key.ensure(tmp_path).material == given.material
    assert not (tmp_path / secret_key.KEY_FILE).exists()
    Secret(value="not a key").save("textsift-key-bad", overwrite=True)
    with pytest.raises(ConfigError, match="not a hex key") as err:
        use_secret_block("textsift-key-bad")
    assert "not a key" not in str(err.value)
