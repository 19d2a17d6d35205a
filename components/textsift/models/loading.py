"""Loading Hugging Face models: one lock around every ``from_pretrained``, and finding the files.

transformers builds models under a process-wide "meta device" context while loading; two
threads loading at once (Prefect's thread and Dask-thread task runners run stages side by
side) can see each other's context and end with weights on the meta device
("Cannot copy out of meta tensor"). Loading is short next to using a model, so it is
serialized here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import BertModel
from transformers.utils import logging as hf_logging

from textsift.device import global_torch_rng
from textsift.errors import InputError

_LOAD_LOCK = threading.Lock()
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt")


def load_pretrained(loader: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``loader(*args, **kwargs)`` (e.g. ``BertForMaskedLM.from_pretrained``) under the process-wide lock, its
    constructors' draws isolated from torch's shared generator (:func:`textsift.device.global_torch_rng`).

    The generator's lock is taken first, always: a load that took the load lock and then, in a constructor, the
    generator's, deadlocked beside a stage that held the generator's lock around its own load (two stage tasks
    stopped for good in a flow run: a detector load beside the sentence encoder's).

    transformers' "LOAD REPORT" is silenced for the load: it lists, as a warning, the heads
    textsift adds or drops on purpose (a classifier on the fill-in encoder, the MLM head of a
    sentence encoder) in a table on every run.
    """
    with global_torch_rng(), _LOAD_LOCK:
        level = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        try:
            return loader(*args, **kwargs)
        finally:
            hf_logging.set_verbosity(level)


def _first_holding(root: Path, names: tuple[str, ...]) -> Path | None:
    folders = sorted({p.parent for n in names for p in root.rglob(n)}, key=lambda p: (len(p.parts), str(p)))
    return folders[0] if folders else None


def hf_folders(root: str | Path) -> tuple[Path, Path]:
    """(weights folder, tokenizer folder) inside ``root``: the shallowest folders holding them.

    A plain checkpoint holds both in one folder; MLflow's transformers format keeps the weights
    in ``model/`` and the tokenizer in ``components/tokenizer/``.
    """
    root = Path(root)
    model_dir = _first_holding(root, WEIGHT_FILES)
    tokenizer_dir = _first_holding(root, TOKENIZER_FILES)
    if model_dir is None or tokenizer_dir is None or not (model_dir / "config.json").exists():
        raise InputError(f"{root} holds no Hugging Face model (no transformers model with config.json, weights "
                         "and a tokenizer)")
    return model_dir, tokenizer_dir


def bert_without_pooler(folder: str | Path) -> Any:
    """``BertModel.from_pretrained(folder)`` without a pooler; call it through :func:`load_pretrained`, which isolates
    its constructor's random draws from torch's shared generator."""
    return BertModel.from_pretrained(str(folder), add_pooling_layer=False)
