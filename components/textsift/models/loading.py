"""One lock around every ``from_pretrained`` in the process.

transformers builds models under a process-wide "meta device" context while loading; two
threads loading at once (Prefect's thread and Dask-thread task runners run stages side by
side) can see each other's context and end with weights on the meta device
("Cannot copy out of meta tensor"). Loading is short next to using a model, so it is
serialized here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_LOAD_LOCK = threading.Lock()


def load_pretrained(loader: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``loader(*args, **kwargs)`` (e.g. ``BertForMaskedLM.from_pretrained``) under the process-wide lock."""
    with _LOAD_LOCK:
        return loader(*args, **kwargs)
