"""Saving and loading a detector as one self-contained folder (METHODS.md §4.1).

Layout: ``detector.json`` (format, entity types, :class:`DetectorParams`), ``encoder/config.json``
(the encoder's architecture as trained, e.g. after ``encoder_layers`` cut it), ``model.safetensors``
(the whole network's weights) and ``tokenizer/``. Loading needs nothing but the folder: no
pretrained checkpoint, no download. These are the only functions of the detector that touch files.
"""

from __future__ import annotations

import json
from pathlib import Path

from safetensors.torch import load_file, save_file
from transformers import AutoConfig, AutoTokenizer

from textsift.corpus import atomic_dir
from textsift.device import global_torch_rng
from textsift.errors import InputError
from textsift.models.detector import Detector, DetectorNet
from textsift.models.detector_encoders import encoder_from_config
from textsift.models.detector_params import DetectorParams
from textsift.models.loading import load_pretrained

FORMAT = "textsift.detector/1"
META, WEIGHTS, ENCODER, TOKENIZER = "detector.json", "model.safetensors", "encoder", "tokenizer"


def save_detector(detector: Detector, folder: str | Path) -> None:
    """Write ``detector`` to ``folder`` atomically (a previous folder there is replaced)."""
    with atomic_dir(folder) as tmp:
        meta = {"format": FORMAT, "labels": list(detector.labels), "params": detector.params.model_dump(mode="json")}
        (tmp / META).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        detector.net.encoder.config.save_pretrained(tmp / ENCODER)
        state = {k: v.detach().to("cpu").contiguous() for k, v in detector.net.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS), metadata={"format": FORMAT})
        detector.tokenizer.save_pretrained(tmp / TOKENIZER)


def _load(folder: Path, device: str) -> Detector:
    meta_path = folder / META
    if not meta_path.exists():
        raise InputError(f"{folder} is not a saved detector (no {META})")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise InputError(f"{folder}: detector format {meta.get('format')!r}, expected {FORMAT!r}")
    params = DetectorParams.model_validate_json(json.dumps(meta["params"]))
    encoder = encoder_from_config(AutoConfig.from_pretrained(str(folder / ENCODER)))
    with global_torch_rng():  # constructors draw from the global RNG; the weights come next
        net = DetectorNet(encoder, len(meta["labels"]), params)
    net.load_state_dict(load_file(str(folder / WEIGHTS)), strict=True)
    tokenizer = AutoTokenizer.from_pretrained(str(folder / TOKENIZER))
    return Detector(net.to(device).eval(), tokenizer, tuple(meta["labels"]), params, device)


def load_detector(folder: str | Path, device: str = "cpu") -> Detector:
    """A saved detector, in eval mode on ``device``, loaded under the process-wide loading lock."""
    return load_pretrained(_load, Path(folder), device)
