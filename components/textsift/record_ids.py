"""Record ids fit for messages: an id comes from the caller's file and may hold document text.

An id column can be the wrong column (``id_field`` naming the text), so an id is named in an error, log or
webhook only when it looks like an identifier; anything else is named by a digest. Its own module because every
stage that reports a record by id needs it, and none of them needs the ingest validation it came from.
"""

from __future__ import annotations

import hashlib
import re

ID_LIMIT = 40
_IDENTIFIER = re.compile(r"[A-Za-z0-9._:\-]+")


def short_id(doc_id: str, limit: int = ID_LIMIT) -> str:
    """A record id fit for a message, error, log or webhook: an identifier-like id (letters, digits, ``._:-``, at
    most ``limit`` characters) as it is; anything else — an id column that holds text — as ``id#`` and a digest,
    so no text reaches a message through an id (the rejects file keeps the id itself)."""
    if _IDENTIFIER.fullmatch(doc_id) and len(doc_id) <= limit:
        return doc_id
    return "id#" + hashlib.blake2b(doc_id.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
