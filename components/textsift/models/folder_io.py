"""The self-contained model folder shared by the detector and the IPI model: metadata JSON, the encoder's
config, every weight in one safetensors file and the tokenizer. Only these functions touch the files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from safetensors.torch import save_file
from torch import nn

from textsift.corpus import atomic_dir
from textsift.errors import InputError

WEIGHTS, ENCODER, TOKENIZER = "model.safetensors", "encoder", "tokenizer"


def write_model_folder(folder: str | Path, meta_name: str, meta: dict[str, Any], net: nn.Module, encoder: nn.Module,
                       tokenizer: Any) -> None:
    """Write ``net`` (its encoder's config, all weights) and ``tokenizer`` to ``folder`` atomically."""
    with atomic_dir(folder) as tmp:
        (tmp / meta_name).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        encoder.config.save_pretrained(tmp / ENCODER)
        state = {k: v.detach().to("cpu").contiguous() for k, v in net.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS), metadata={"format": meta["format"]})
        tokenizer.save_pretrained(tmp / TOKENIZER)


def read_meta(folder: Path, meta_name: str, fmt: str, what: str) -> dict[str, Any]:
    """The folder's metadata, checked to be of format ``fmt`` (``what`` names the model in errors)."""
    path = folder / meta_name
    if not path.exists():
        raise InputError(f"{folder} is not a saved {what} (no {meta_name})")
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("format") != fmt:
        raise InputError(f"{folder}: {what} format {meta.get('format')!r}, expected {fmt!r}")
    return meta
