"""Saving and loading the IPI interest model as one self-contained folder (METHODS.md §4.2).

Layout: ``interests.json`` (format, :class:`InterestParams`), ``encoder/config.json`` (the encoder as
trained, after ``encoder_layers`` cut it), ``model.safetensors`` (encoder + LM head) and ``tokenizer/``.
Loading needs nothing but the folder: no pretrained checkpoint, no download.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file
from transformers import AutoConfig, AutoTokenizer

from textsift.device import global_torch_rng
from textsift.interests.inference import InterestModel
from textsift.interests.params import InterestParams
from textsift.interests.unilm import UniLMSeq2Seq
from textsift.models.detector_encoders import encoder_from_config
from textsift.models.folder_io import ENCODER, TOKENIZER, WEIGHTS, read_meta, write_model_folder
from textsift.models.loading import load_pretrained

FORMAT = "textsift.interests/1"
META = "interests.json"


def save_interest_model(im: InterestModel, folder: str | Path) -> None:
    """Write the model to ``folder`` atomically (a previous folder there is replaced)."""
    write_model_folder(folder, META, {"format": FORMAT, "params": im.params.model_dump(mode="json")}, im.model,
                       im.model.encoder, im.tokenizer)


def _load(folder: Path, device: str) -> InterestModel:
    meta = read_meta(folder, META, FORMAT, "interest model")
    params = InterestParams.model_validate_json(json.dumps(meta["params"]))
    encoder = encoder_from_config(AutoConfig.from_pretrained(str(folder / ENCODER)))
    with global_torch_rng():  # constructors draw from torch's shared generator; the weights come next
        model = UniLMSeq2Seq(encoder, torch.Generator())
    model.load_state_dict(load_file(str(folder / WEIGHTS)), strict=True)
    tokenizer = AutoTokenizer.from_pretrained(str(folder / TOKENIZER))
    return InterestModel(model.to(device).eval(), tokenizer, params, device)


def load_interest_model(folder: str | Path, device: str = "cpu") -> InterestModel:
    """A saved interest model, in eval mode on ``device``, loaded under the process-wide loading lock."""
    return load_pretrained(_load, Path(folder), device)
