"""Masked-LM training data: packed windows and BERT's 80/10/10 masking (METHODS.md §1.1).

Documents are tokenized, joined with ``[SEP]`` and cut into full windows of ``max_length``
tokens (``[CLS] ... [SEP]``), so no compute is spent on padding. Which tokens are masked is
drawn from an explicit ``torch.Generator`` on the CPU, so a seed gives the same masks on every
device.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from transformers import PreTrainedTokenizerFast

IGNORE = -100  # label of positions that do not count in the loss (PyTorch's cross-entropy default)
MASK_SHARE, RANDOM_SHARE = 0.8, 0.1  # BERT: of the chosen tokens 80% -> [MASK], 10% -> random, 10% kept


def pack_windows(texts: Sequence[str], tokenizer: PreTrainedTokenizerFast, max_length: int) -> torch.Tensor:
    """All documents as one token stream cut into ``[CLS] chunk [SEP]`` windows (last one padded).

    Returns:
        ``int64`` tensor ``[n_windows, max_length]``; empty when the texts hold no tokens.
    """
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    sep = tokenizer.sep_token_id
    stream = np.fromiter((t for doc in ids if doc for t in (*doc, sep)), dtype=np.int64)
    body = max_length - 2
    n = -(-len(stream) // body)
    padded = np.full(n * body, tokenizer.pad_token_id, dtype=np.int64)
    padded[: len(stream)] = stream
    windows = np.full((n, max_length), tokenizer.pad_token_id, dtype=np.int64)
    windows[:, 0] = tokenizer.cls_token_id
    windows[:, 1:-1] = padded.reshape(n, body)
    rows = np.arange(n)
    last = np.minimum(body, len(stream) - rows * body)  # real tokens per window
    windows[rows, last + 1] = sep
    return torch.from_numpy(windows)


def mask_for_mlm(
    windows: torch.Tensor, tokenizer: PreTrainedTokenizerFast, probability: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Choose ``probability`` of the real tokens; 80% become [MASK], 10% random, 10% kept.

    Args:
        windows: ``[batch, length]`` token ids on the CPU.
        tokenizer: supplies the special-token ids (never chosen) and the vocabulary size.
        probability: share of tokens the loss is computed on (``fill_in.mask_probability``).
        generator: CPU generator; all draws of this batch come from it.

    Returns:
        ``(inputs, labels)``; labels are ``IGNORE`` except at the chosen positions.
    """
    special = torch.tensor(sorted(tokenizer.all_special_ids))
    eligible = ~torch.isin(windows, special)
    draws = torch.rand(windows.shape, generator=generator)
    chosen = eligible & (draws < probability)
    labels = torch.where(chosen, windows, torch.full_like(windows, IGNORE))
    action = torch.rand(windows.shape, generator=generator)
    random_ids = torch.randint(len(tokenizer), windows.shape, generator=generator)
    inputs = torch.where(chosen & (action < MASK_SHARE), torch.full_like(windows, tokenizer.mask_token_id), windows)
    swap = chosen & (action >= MASK_SHARE) & (action < MASK_SHARE + RANDOM_SHARE)
    inputs = torch.where(swap, random_ids, inputs)
    return inputs, labels
