"""Which release a privacy draw belongs to: two releases never share noise, one release reproduces byte for byte.

A published output is an equation in the clean data and the noise. Two outputs drawn from the same noise are two
equations in the same unknowns: two embedding sets that scale one Laplace draw solve exactly for the clean
embeddings, two metric-DP settings that scale one draw emit the same word far more often than independent noise
would, and a service that pseudonymizes with the published corpus's draws confirms guessed names. So every draw that
decides what is released derives from a key of the release it belongs to, and from the content it perturbs:

- :func:`release_key` — the project's secret key derived for (mechanism kind, setting name, digest of the setting's
  parameters and of what else its draws depend on, scope). Two settings, or one setting whose parameters or index
  changed, draw independently; ``scope``
  separates what the pipeline publishes (:data:`PUBLISHED`) from what ``textsift serve`` answers (:data:`SERVED`).
- :func:`draw_name` — the per-document name every generator of a release is keyed by: the document's id and a
  digest of its content. Another text under the same id (an edited document, another file's ``row-1``, a request
  naming a published id) draws afresh; the same text under the same id and setting gives the same output, which is
  no new release at all (nothing composes). ``dvc repro`` reproduces every output from the key alone.

A served request gets a draw name from OS entropy (:func:`fresh_draw_name`): what a client sends never steers a draw,
so no query reproduces a published stand-in or a published noise vector.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from typing import Any

from textsift.secret_key import SecretKey

PUBLISHED = "published"  # what the pipeline and the ad-hoc commands release
SERVED = "served"  # what `textsift serve` answers: a key no published output was drawn with
_SEP = "\x1f"


# parameters added after settings had releases, with the value that keeps a setting as it was: left out of the digest
# while they hold it, so adding one re-keys no existing release (its outputs stay as they were, byte for byte)
ADDED_LATER: dict[str, Any] = {"operators": {}}


def setting_digest(setting: Any) -> str:
    """16 hex digits of a setting's validated parameters (a pydantic model, or any JSON-able mapping), those of
    :data:`ADDED_LATER` left out while they hold their first value."""
    fields = setting.model_dump(mode="json") if hasattr(setting, "model_dump") else setting
    kept = {k: v for k, v in fields.items() if k not in ADDED_LATER or v != ADDED_LATER[k]}
    return hashlib.blake2b(json.dumps(kept, sort_keys=True).encode(), digest_size=8).hexdigest()


def release_key(secret: SecretKey, kind: str, name: str, setting: Any, scope: str = PUBLISHED,
                context: Mapping[str, Any] | None = None) -> SecretKey:
    """The key of one setting's releases: a PRF of the secret key and (scope, kind, name, parameters) and, when given,
    ``context``: what else its draws depend on (``Mechanism.release_context``: a metric-DP setting's index), so a
    release over a rebuilt index (another β, vocabulary or corpus) draws afresh instead of rescaling the same noise."""
    parts = ("release", scope, kind, name, setting_digest(setting))
    return secret.derive(_SEP.join((*parts, setting_digest(dict(context))) if context else parts))


def content_digest(content: str | bytes) -> str:
    """32 hex digits of a document's content (its text, or the bytes of the vector its noise is added to)."""
    data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def draw_name(doc_id: str, content: str | bytes) -> str:
    """The name a document's draws are keyed by: its id and its content digest (never published)."""
    return f"{doc_id}{_SEP}{content_digest(content)}"


def fresh_draw_name() -> str:
    """A served record's draw name: 128 bits of OS entropy, so a request cannot choose or repeat a draw."""
    return "served" + _SEP + secrets.token_hex(16)


def measured_draw_name(measurement: str, probe: int) -> str:
    """The draw name of a stage's probe of the served path (``measurement``'s ``probe``-th record): fixed, so the key
    holder's figures of what the service answers repeat run after run, and never one the service draws (those are
    fresh). The answers it keys stay inside the stage: only their aggregates are written."""
    return "measured" + _SEP + measurement + _SEP + str(probe)
