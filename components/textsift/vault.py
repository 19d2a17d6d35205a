"""The pseudonym vault: which original each pseudonym stands for, sealed with the project's secret key.

Authorised re-identification (``textsift reveal``) needs the way back from a stand-in to the person; the
published corpus must never carry it. The vault holds, per document, ``(label, pseudonym, original)``
for every replaced region, encrypted with AES-GCM-SIV under a key derived from the project's secret key
(:meth:`SecretKey.derive`), so only the key holder can open it. SIV makes the
ciphertext a function of the plaintext alone (the nonce is fixed per setting): ``dvc repro`` writes
the same bytes, and a repeated nonce reveals at most that two vaults are equal.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCMSIV

from textsift.errors import ConfigError
from textsift.secret_key import SecretKey

MAGIC = b"textsift-vault-v2\n"  # then the sealing key's fingerprint and a newline, then the ciphertext
Entry = tuple[str, str, str]  # (label, pseudonym, original)


def _cipher(key: SecretKey) -> AESGCMSIV:
    return AESGCMSIV(key.derive("vault").material)


def _nonce(setting: str) -> bytes:
    return hashlib.blake2b(setting.encode(), digest_size=12).digest()


def seal(entries: dict[str, list[Entry]], setting: str, key: SecretKey) -> bytes:
    """The vault of ``setting`` (document id -> entries), encrypted and authenticated with ``key``."""
    plain = json.dumps(entries, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return MAGIC + key.fingerprint.encode() + b"\n" + _cipher(key).encrypt(_nonce(setting), plain, setting.encode())


def sealed_with(blob: bytes) -> str:
    """The fingerprint of the key that sealed a vault (public: it tells keys apart, nothing more)."""
    header = blob[len(MAGIC):len(MAGIC) + 17] if blob.startswith(MAGIC) else b""
    if len(header) != 17 or not header.endswith(b"\n"):
        raise ConfigError("not a textsift pseudonym vault (or one written by an older version: run its privatize "
                          "stage again)")
    return header[:16].decode("ascii", "replace")


def unseal(blob: bytes, setting: str, key: SecretKey) -> dict[str, list[Entry]]:
    """The entries of a sealed vault.

    Raises:
        ConfigError: ``key`` is not the one that sealed it (the message names both fingerprints), or it is and the
            vault fails authentication: another setting's vault, damaged or tampered with.
    """
    sealer = sealed_with(blob)
    if sealer != key.fingerprint:
        raise ConfigError(f"the vault of {setting} was sealed with secret key {sealer}, not yours ({key.fingerprint})"
                          )
    try:
        plain = _cipher(key).decrypt(_nonce(setting), blob[len(MAGIC) + 17:], setting.encode())
    except InvalidTag:
        raise ConfigError(f"the vault of {setting} fails authentication under its own key {sealer}: it is another "
                          f"setting's vault, or it was damaged or tampered with; run privatize@{setting} again to "
                          "rebuild it") from None
    loaded: dict[str, Any] = json.loads(plain)
    return {doc: [tuple(entry) for entry in doc_entries] for doc, doc_entries in loaded.items()}


def reveal(entries: dict[str, list[Entry]], pseudonym: str, doc_id: str | None = None) -> list[dict[str, str]]:
    """Every original that ``pseudonym`` (case-insensitive) stands for, in ``doc_id`` or in every document."""
    wanted = pseudonym.casefold()
    docs = [doc_id] if doc_id is not None else sorted(entries)
    return [{"doc_id": doc, "label": label, "pseudonym": stand_in, "original": original}
            for doc in docs for label, stand_in, original in entries.get(doc, [])
            if stand_in.casefold() == wanted]
