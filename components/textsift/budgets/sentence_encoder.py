"""The sentence encoder of the LRP budgets: mean-pooled, L2-normalized transformer states (METHODS.md §3 step 1).

By default this is the packaged all-MiniLM-L6-v2 (:func:`textsift.models.detector_encoders.minilm_folder`),
whose sentence-transformers recipe is exactly this one (mean pooling over the attention mask, then L2
normalization); the corpus-trained fill-in model's encoder can stand in for it (its folder holds a
``BertForMaskedLM``; ``AutoModel`` keeps the encoder and drops the MLM head). The same encoder embeds the
published sentences and the candidate sentences of step 2, so the sensitivity Δf_d is measured in the
units of the published embedding.

Batches hold texts of similar token length (longest first), so padding is small; each row's vector does
not depend on the batch it sat in beyond float32 rounding. Inference runs in float32 without autograd.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from textsift.errors import ConfigError
from textsift.models.loading import hf_folders, load_pretrained

NORM_FLOOR = 1e-12  # a zero vector stays zero instead of dividing by 0


@dataclass(frozen=True)
class SentenceEncoder:
    """A tokenizer and a transformer encoder (eval mode) on ``device`` (METHODS.md §3 step 1)."""

    tokenizer: Any
    model: Any
    device: str

    @property
    def dim(self) -> int:
        """Width of the sentence embedding (the encoder's hidden size)."""
        return int(self.model.config.hidden_size)

    @property
    def max_positions(self) -> int:
        """Most tokens one forward pass can take, ``[CLS]`` and ``[SEP]`` included."""
        return int(self.model.config.max_position_embeddings)


def load_sentence_encoder(folder: Path, device: str) -> SentenceEncoder:
    """Load the sentence encoder of METHODS.md §3 step 1 from a local model folder.

    Args:
        folder: A Hugging Face folder (plain or MLflow layout), e.g. ``minilm_folder()`` or the fill-in
            model's folder.
        device: ``"cpu"`` or ``"cuda"`` (already resolved).

    Returns:
        The encoder in eval mode on ``device``.

    Raises:
        InputError: ``folder`` holds no Hugging Face model.
    """
    model_dir, tokenizer_dir = hf_folders(folder)
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, str(tokenizer_dir))
    model = load_pretrained(AutoModel.from_pretrained, str(model_dir))  # a missing pooler's draws isolated there
    return SentenceEncoder(tokenizer, model.to(device).eval(), device)


def _token_ids(encoder: SentenceEncoder, texts: Sequence[str], max_length: int) -> list[list[int]]:
    """``[CLS] … [SEP]`` ids of every text, truncated to ``max_length`` (an empty text: ``[CLS] [SEP]``)."""
    if not texts:
        return []
    batch = encoder.tokenizer(list(texts), truncation=True, max_length=max_length)
    return [list(ids) for ids in batch["input_ids"]]


def _pooled(encoder: SentenceEncoder, rows: list[list[int]]) -> torch.Tensor:
    """Mean of the last hidden states over each row's real tokens, L2-normalized: [len(rows), dim] float32."""
    width = max(len(r) for r in rows)
    pad = encoder.tokenizer.pad_token_id or 0
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
        attention[i, :len(row)] = 1
    ids, attention = ids.to(encoder.device), attention.to(encoder.device)
    with torch.inference_mode():
        hidden = encoder.model(input_ids=ids, attention_mask=attention).last_hidden_state.float()
        weights = attention.unsqueeze(-1).float()
        mean = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        norm = mean.norm(dim=1, keepdim=True).clamp(min=NORM_FLOOR)
        return (mean / norm).cpu()


def encode(encoder: SentenceEncoder, texts: Sequence[str], batch_size: int = 64,
           max_length: int = 128) -> np.ndarray:
    """Sentence embeddings: mean pooling over the attention mask, then L2 norm (METHODS.md §3 step 1).

    Texts are batched by token length (longest first) and the rows put back in input order, so the
    result depends on ``batch_size`` only through float32 rounding (about 1e-6).

    Args:
        encoder: From :func:`load_sentence_encoder`.
        texts: Sentences or documents; an empty text is embedded as ``[CLS] [SEP]``. Not mutated.
        batch_size: Texts per forward pass (>= 1).
        max_length: Tokens kept per text, ``[CLS]`` and ``[SEP]`` included; clipped to the encoder's
            position limit. Longer texts are truncated (their tail does not count).

    Returns:
        Unit-norm embeddings in input order, shape [len(texts), dim], float32.

    Raises:
        ConfigError: ``batch_size`` < 1 or ``max_length`` < 2.
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if max_length < 2:
        raise ConfigError(f"max_length must be >= 2 ([CLS] and [SEP]), got {max_length}")
    ids = _token_ids(encoder, texts, min(int(max_length), encoder.max_positions))
    out = np.zeros((len(ids), encoder.dim), dtype=np.float32)
    order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # stable: ties keep input order
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        out[chunk] = _pooled(encoder, [ids[i] for i in chunk]).numpy()
    return out
