"""key: the project's secret key (:mod:`textsift.secret_key`), checked before anything is drawn with it.

Runs every time (DVC ``always_changed``; the flow never skips it): on a fresh project it makes the key;
otherwise it finds it (``TEXTSIFT_SECRET_KEY`` or the key file) and records its fingerprint in
``key_fingerprint``, which the stages drawing with the key read — so a rotated or swapped key re-runs
exactly them, and a key that is gone while outputs made with it exist fails here, before any stage runs.
"""

from __future__ import annotations

import logging

from textsift import secret_key
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")


def run(ctx: StageContext) -> None:
    """Ensure the key; write its fingerprint (``key_fingerprint``, never the key) and tag the run with it."""
    key = secret_key.ensure(ctx.root)
    assert ctx.output("key_fingerprint").read_text(encoding="utf-8").strip() == key.fingerprint
    ctx.tracker.set_tags(ctx.run_id, {"textsift.key_fingerprint": key.fingerprint})
    log.info("key: secret key %s (from %s)", key.fingerprint, secret_key.origin())
