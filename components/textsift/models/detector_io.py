"""Saving and loading a detector as one self-contained folder (METHODS.md §4.1).

Layout: ``detector.json`` (format, entity types, :class:`DetectorParams`, the calibrated per-type thresholds),
``encoder/config.json`` (the encoder's architecture as trained, e.g. after ``encoder_layers`` cut it),
``model.safetensors`` (the whole network's weights) and ``tokenizer/``. Loading needs nothing but the folder: no
pretrained checkpoint, no download. These are the only functions of the detector that touch files.
"""

from __future__ import annotations

import json
from pathlib import Path

from safetensors.torch import load_file
from transformers import AutoConfig, AutoTokenizer

from textsift.device import DetectorResolved, global_torch_rng
from textsift.models.detector import Detector, DetectorNet, set_precision
from textsift.models.detector_encoders import encoder_from_config
from textsift.models.folder_io import ENCODER, TOKENIZER, WEIGHTS, read_meta, write_model_folder
from textsift.models.loading import load_pretrained
from textsift.models.params import DetectorParams

FORMAT = "textsift.detector/1"
META = "detector.json"


def save_detector(detector: Detector, folder: str | Path) -> None:
    """Write ``detector`` to ``folder`` atomically (a previous folder there is replaced)."""
    meta = {"format": FORMAT, "labels": list(detector.labels), "params": detector.params.model_dump(mode="json"),
            "thresholds": dict(sorted(detector.thresholds.items()))}
    write_model_folder(folder, META, meta, detector.net, detector.net.encoder, detector.tokenizer)


def _load(folder: Path, device: str, precision: DetectorResolved) -> Detector:
    meta = read_meta(folder, META, FORMAT, "detector")
    params = DetectorParams.model_validate_json(json.dumps(meta["params"]))
    encoder = encoder_from_config(AutoConfig.from_pretrained(str(folder / ENCODER)))
    with global_torch_rng():  # constructors draw from the global RNG; the weights come next
        net = DetectorNet(encoder, len(meta["labels"]), params)
    net.load_state_dict(load_file(str(folder / WEIGHTS)), strict=True)
    tokenizer = AutoTokenizer.from_pretrained(str(folder / TOKENIZER))
    thresholds = {str(label): float(value) for label, value in meta.get("thresholds", {}).items()}
    return Detector(set_precision(net.to(device).eval(), precision), tokenizer, tuple(meta["labels"]), params, device,
                    thresholds)


def load_detector(folder: str | Path, device: str = "cpu", precision: DetectorResolved = "float32") -> Detector:
    """A saved detector, in eval mode on ``device``, loaded under the process-wide loading lock; ``precision``
    (params ``detection.inference_precision``, resolved) is what its encoder computes in."""
    return load_pretrained(_load, Path(folder), device, precision)
