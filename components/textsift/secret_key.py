"""The project's secret key: the randomness that decides what is released, known only to its holder.

Differential privacy and pseudonymity assume the noise is secret. Draws keyed by the public ``seed``
of ``params.yaml`` let anyone holding the repository and a published corpus regenerate them: confirm
a guessed name by recomputing its pseudonym, subtract regenerated Laplace noise from an embedding,
replay DataSifter's masks. So every draw that decides what is released (metric-DP noise, DataSifter's
masks, fills, clusters and partners, LRP noise, pseudonyms) is a keyed PRF — BLAKE2b keyed with this
key (:mod:`textsift.rng`) — of (stage, document id). The holder of the key reproduces every output
byte for byte (``dvc repro``); nobody else can regenerate a draw. The public ``seed`` keeps what is not
secret: splits, model initialisation, bootstrap resamples, the demo corpus.

Where the key comes from, first match wins: the environment variable :data:`ENV` (64 hex digits; how a
deployment passes a Prefect ``Secret`` block's value), else the file :data:`KEY_FILE` (mode 0600, git-
and DVC-ignored), else a new key from OS entropy written there — unless outputs made with a key exist
here (:data:`FINGERPRINT_FILE` says which), which is an error: a silent new key would re-make them with
other noise. Outputs carry only the key's fingerprint, a keyed hash of a constant that tells keys apart
and reveals nothing of them. The ``key`` stage, which runs every time (DVC ``always_changed``), records it
in :data:`FINGERPRINT_FILE`, which the stages drawing with the key read: a rotated key, a swapped key
file or another :data:`ENV` re-runs exactly those, under ``dvc repro`` and the flow alike.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from textsift.catalog import path as catalog_path
from textsift.corpus import atomic_path
from textsift.errors import ConfigError
from textsift.locks import STATE_DIR

log = logging.getLogger("textsift")
ENV = "TEXTSIFT_SECRET_KEY"
KEY_FILE = f"{STATE_DIR}/secret.key"
RETIRED_DIR = f"{STATE_DIR}/retired-keys"  # rotated-out keys, <fingerprint>.key: they open old vaults, never draw
FINGERPRINT_FILE = catalog_path("key_fingerprint")  # public: written by the key stage, read by the keyed ones
KEY_BYTES = 32
_FINGERPRINT_MESSAGE = b"textsift key fingerprint v1"


@dataclass(frozen=True, repr=False, eq=False)
class SecretKey:
    """256 secret bits. Its repr, str and pickles by Prefect never show them; compare fingerprints instead."""

    material: bytes

    def __post_init__(self) -> None:
        if len(self.material) != KEY_BYTES:
            raise ConfigError(f"a textsift secret key is {KEY_BYTES} bytes ({2 * KEY_BYTES} hex digits)")

    @property
    def fingerprint(self) -> str:
        """16 hex digits naming the key: BLAKE2b keyed with it, of a constant (no information on the key)."""
        return hashlib.blake2b(_FINGERPRINT_MESSAGE, key=self.material, digest_size=8).hexdigest()

    def derive(self, purpose: str) -> SecretKey:
        """Another key, a PRF of this one and ``purpose``: independent of it for anyone without it (an attack's
        no-information baseline, the vault's cipher), reproducible by its holder."""
        return SecretKey(hashlib.blake2b(purpose.encode(), key=self.material, person=b"textsift-derive",
                                         digest_size=KEY_BYTES).digest())

    def __repr__(self) -> str:
        return f"SecretKey(fingerprint={self.fingerprint})"

    __str__ = __repr__


def new_key() -> SecretKey:
    """A fresh key from OS entropy."""
    return SecretKey(secrets.token_bytes(KEY_BYTES))


def _from_hex(value: str, origin: str) -> SecretKey:
    try:
        material = bytes.fromhex(value.strip())
    except ValueError:
        raise ConfigError(f"{origin}: not a hex key (expected {2 * KEY_BYTES} hex digits)") from None
    if len(material) != KEY_BYTES:
        raise ConfigError(f"{origin}: expected {2 * KEY_BYTES} hex digits, got {len(value.strip())}")
    return SecretKey(material)


def recorded_fingerprint(root: Path) -> str | None:
    """The fingerprint of the key the outputs here were made with, or None when no key has been used."""
    path = root / FINGERPRINT_FILE
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def _write_fingerprint(root: Path, key: SecretKey) -> None:
    if recorded_fingerprint(root) != key.fingerprint:
        path = root / FINGERPRINT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(key.fingerprint + "\n", encoding="utf-8")


def _write_key_file(root: Path, key: SecretKey, relative: str = KEY_FILE) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others, not even briefly
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(key.material.hex() + "\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def origin() -> str:
    """Where :func:`load` takes the key from: the environment variable when set, else the key file."""
    return f"${ENV}" if os.environ.get(ENV) else KEY_FILE


def _read_key_file(path: Path, shown: str) -> SecretKey:
    """The key in ``path``; one readable by others is made private first, with a warning (as ssh insists on)."""
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        path.chmod(0o600)
        log.warning("%s was readable by other users (mode %o): now 0600; if others could read it, rotate the key "
                    "(`textsift key rotate`)", shown, mode)
    try:
        return _from_hex(path.read_bytes().decode("ascii"), shown)
    except UnicodeDecodeError:
        raise ConfigError(f"{shown}: not a textsift key file (expected {2 * KEY_BYTES} hex digits on one line); "
                          f"restore it, or set ${ENV}") from None


def load(root: Path) -> SecretKey | None:
    """The project's key from :data:`ENV` or :data:`KEY_FILE`; None when neither holds one."""
    value = os.environ.get(ENV)
    if value:
        return _from_hex(value, f"${ENV}")
    path = root / KEY_FILE
    if path.is_file():
        return _read_key_file(path, str(KEY_FILE))
    return None


def keyring(root: Path) -> dict[str, SecretKey]:
    """Every key this project has held, by fingerprint: the current one and those ``rotate`` retired (they open
    vaults sealed before a rotation; nothing draws with them)."""
    ring = {}
    folder = Path(root) / RETIRED_DIR
    for path in sorted(folder.glob("*.key")) if folder.is_dir() else ():
        key = _read_key_file(path, f"{RETIRED_DIR}/{path.name}")
        ring[key.fingerprint] = key
    current = load(Path(root))
    if current is not None:
        ring[current.fingerprint] = current
    return ring


def ensure(root: Path) -> SecretKey:
    """The project's key, created on the first run; records its fingerprint (:data:`FINGERPRINT_FILE`).

    Raises:
        ConfigError: outputs here were made with a key that is gone (neither :data:`ENV` nor the key file).
    """
    root = Path(root)
    key = load(root)
    if key is None:
        recorded = recorded_fingerprint(root)
        if recorded is not None:
            raise ConfigError(
                f"the outputs in {root} were made with secret key {recorded} and neither ${ENV} nor {KEY_FILE} "
                f"holds it: restore the key, or run `textsift key rotate` to make a new one (every privatized "
                f"output is then made again with new noise)")
        key = new_key()
        _write_key_file(root, key)
        log.info("created the project's secret key %s (%s, mode 0600; keep it: it reproduces the outputs)",
                 key.fingerprint, KEY_FILE)
    _write_fingerprint(root, key)
    return key


def rotate(root: Path) -> tuple[str | None, SecretKey]:
    """Replace the key file with a fresh key, under the project's run lock; (old fingerprint, new key).

    The old key is kept in :data:`RETIRED_DIR` (mode 0600): vaults sealed with it still open (``textsift reveal``),
    and nothing draws with it again. The fingerprint file changes with the key, so ``dvc repro`` and the flow
    re-make every output drawn with it.

    Raises:
        ConfigError: :data:`ENV` sets the key (rotate it where it is kept).
        RunInProgressError: a run holds the project (its outputs would mix two keys).
    """
    root = Path(root)
    if os.environ.get(ENV):
        raise ConfigError(f"${ENV} is set: rotate the key where it is kept (the variable or the Prefect Secret "
                          f"block that sets it), not the key file")
    from textsift.locks import project_run

    with project_run(root, command="key rotate"):
        old_key = load(root)
        if old_key is not None:
            _write_key_file(root, old_key, f"{RETIRED_DIR}/{old_key.fingerprint}.key")
        old = recorded_fingerprint(root)
        key = new_key()
        _write_key_file(root, key)
        _write_fingerprint(root, key)
    return old, key
