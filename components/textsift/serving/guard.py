"""What bounds and records the use of a served privatizer: a per-token rate limit and an audit log of counts.

Anyone with a token can query the service as often as they like; every answer is a fresh release (its ε composes
for the texts they send) and costs the server time. :class:`RateLimit` caps the records a token may have privatized
per minute (a token bucket: bursts up to one minute's allowance, refilled continuously), so a leaked token is slowed
and shows up. :class:`AuditLog` appends one JSON line per request — when, which token (a digest, never the token),
the status and how many records — and never a text or an id (a client's id may be text).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path


def token_digest(token: str) -> str:
    """12 hex digits naming a token in logs and limits (a digest: the token itself is a credential)."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


class RateLimit:
    """At most ``per_minute`` records per token per minute, as a token bucket; ``per_minute`` 0 means no limit."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 0:
            raise ValueError(f"the rate limit must be >= 0 records per minute, got {per_minute}")
        self.per_minute = per_minute
        self.clock = clock
        self.lock = threading.Lock()
        self.buckets: dict[str, tuple[float, float]] = {}  # token digest -> (records available, when counted)

    def take(self, token: str, records: int) -> float:
        """Spend ``records`` of ``token``'s allowance: 0.0 when granted, else the seconds until it would be (inf:
        more records than a minute allows)."""
        if self.per_minute == 0:
            return 0.0
        if records > self.per_minute:
            return float("inf")
        now, rate = self.clock(), self.per_minute / 60.0
        with self.lock:
            available, since = self.buckets.get(token, (float(self.per_minute), now))
            available = min(float(self.per_minute), available + (now - since) * rate)
            if records <= available:
                self.buckets[token] = (available - records, now)
                return 0.0
            self.buckets[token] = (available, now)
            return (records - available) / rate


class AuditLog:
    """One JSON line per request in ``path`` (appended, created with mode 0600): counts, never text."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600, exist_ok=True)

    def record(self, token: str | None, status: int, records: int, seconds: float) -> None:
        """Append the request's line: UTC time, token digest (None: no or a wrong token), status, records, seconds."""
        if self.path is None:
            return
        line = json.dumps({"at": datetime.now(UTC).isoformat(timespec="milliseconds"),
                           "token": token_digest(token) if token else None, "status": status,
                           "records": records, "seconds": round(seconds, 6)})
        with self.lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
