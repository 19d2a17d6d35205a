"""The flat BIO token-classification baseline of the DPER comparison (METHODS.md §4.1).

The paper compares its nested GlobalPointer output with flat taggers (BiLSTM-CRF, BERT-CRF,
Table 6 and 9): one tag per token, so a token belongs to at most one span and nested spans
cannot be represented. Here the baseline shares the detector's encoder and BiLSTM and replaces
GlobalPointer by a linear layer over the tags ``O, B-<type>, I-<type>`` (softmax, no CRF).
Tag ``0`` is ``O``; type ``c`` has ``B = 1 + 2c`` and ``I = 2 + 2c``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from textsift.models.global_pointer import TokenSpan

IGNORE = -100  # tag of positions outside the loss (special tokens, padding)


def tag_names(types: Sequence[str]) -> list[str]:
    """``["O", "B-<t0>", "I-<t0>", ...]``: the tag of index ``k`` is ``tag_names(types)[k]``."""
    return ["O", *(f"{p}-{t}" for t in types for p in ("B", "I"))]


def spans_to_tags(spans: Sequence[TokenSpan], length: int) -> list[int]:
    """BIO tags of ``length`` positions; of overlapping spans the longer (then earlier) one wins.

    Args:
        spans: ``(type, i, j)`` with inclusive positions ``< length``.
        length: positions in the sequence.
    """
    tags = [0] * length
    for c, i, j in sorted(spans, key=lambda s: (s[1] - s[2], s[1], s[0])):
        if any(tags[i:j + 1]):
            continue  # a flat tagger cannot hold a nested or overlapping span
        tags[i] = 1 + 2 * c
        for k in range(i + 1, j + 1):
            tags[k] = 2 + 2 * c
    return tags


def tags_to_spans(tags: Sequence[int]) -> list[TokenSpan]:
    """Spans of a BIO tag sequence; an ``I-t`` that continues no ``t`` span starts one (lenient)."""
    spans: list[TokenSpan] = []
    current: list[int] | None = None  # [type, i, j]
    for k, tag in enumerate(tags):
        kind, c = (0, -1) if tag <= 0 else (1 + (tag + 1) % 2, (tag - 1) // 2)  # kind 1 = B, 2 = I
        if kind == 2 and current is not None and current[0] == c and current[2] == k - 1:
            current[2] = k
            continue
        if current is not None:
            spans.append((current[0], current[1], current[2]))
            current = None
        if kind:
            current = [c, k, k]
    if current is not None:
        spans.append((current[0], current[1], current[2]))
    return spans


class FlatHead(nn.Module):
    """Tag logits per token: a linear layer over ``1 + 2·num_types`` BIO tags.

    Args:
        input_size: size of each token's feature vector (the BiLSTM output).
        num_types: entity types.
    """

    def __init__(self, input_size: int, num_types: int) -> None:
        super().__init__()
        self.num_types = num_types
        self.dense = nn.Linear(input_size, 1 + 2 * num_types)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits ``[batch, length, tags]`` (float32)."""
        return self.dense(hidden).float()


def flat_loss(logits: torch.Tensor, tags: torch.Tensor) -> torch.Tensor:
    """Mean token cross-entropy over the positions whose tag is not :data:`IGNORE`."""
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tags.reshape(-1), ignore_index=IGNORE)


def decode_tags(logits: torch.Tensor, mask: torch.Tensor) -> list[list[TokenSpan]]:
    """Per sequence, the spans of the arg-max tags at the real tokens (``mask`` true)."""
    tags = logits.argmax(dim=-1).masked_fill(~mask.bool(), 0).tolist()
    return [tags_to_spans(row) for row in tags]
