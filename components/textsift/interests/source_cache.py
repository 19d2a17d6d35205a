"""Decoding the IPI model without re-reading the post at every step (METHODS.md §4.2, UniLM decoding).

Under the seq2seq mask a source token attends only to source tokens, so the post's states — and each
layer's keys and values over it — do not depend on what has been generated. ``SourceCache`` computes
them once per post; each decoding step then runs only the few target tokens through the layers,
attending to the cached source keys/values and to the target tokens up to themselves. The logits are
those of the full forward pass (tested to float tolerance), at a cost per step that no longer grows
with the post's length: beam search with evidence is several times faster on long documents.

BERT-shaped encoders only (the packaged MiniLM: ``encoder.layer[i].attention.self.query`` ...); the
RoFormer option (rotary positions) decodes with the full forward pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


def supports_source_cache(encoder: nn.Module) -> bool:
    """True for a BERT-shaped encoder whose layers this module can run step by step."""
    layers = getattr(getattr(encoder, "encoder", None), "layer", None)
    return (type(encoder).__name__ == "BertModel" and layers is not None
            and all(hasattr(layer.attention.self, "query") for layer in layers))


def _heads(x: torch.Tensor, attention: nn.Module) -> torch.Tensor:
    """(batch, L, hidden) -> (batch, heads, L, head_size)."""
    return x.view(*x.shape[:2], attention.num_attention_heads, attention.attention_head_size).transpose(1, 2)


def _layer(layer: nn.Module, hidden: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
           mask: torch.Tensor) -> torch.Tensor:
    """One BERT layer for ``hidden`` (batch, L, h) attending to ``keys``/``values`` (batch, heads, K, d) where
    ``mask`` (batch, 1, L, K) is True; the layer's own output and feed-forward blocks after it."""
    attention = layer.attention.self
    query = _heads(attention.query(hidden), attention)
    scores = (query @ keys.transpose(-1, -2)) * attention.scaling
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")).float(), dim=-1).to(values.dtype)
    context = (weights @ values).transpose(1, 2).reshape(hidden.shape)
    return layer.feed_forward_chunk(layer.attention.output(context, hidden))


@dataclass(frozen=True)
class SourceCache:
    """Per layer, the keys and values of every post's tokens; the last source state; the source mask."""

    keys: list[torch.Tensor]  # per layer (posts, heads, S, d)
    values: list[torch.Tensor]
    last_state: torch.Tensor  # (posts, hidden): the state at each post's final [SEP], which predicts token 1
    mask: torch.Tensor  # (posts, S) True for real tokens
    lengths: torch.Tensor  # (posts,) source lengths ([CLS] post [SEP])


def encode_sources(encoder: nn.Module, prefixes: list[list[int]], pad: int, device: str) -> SourceCache:
    """Run ``[CLS] post [SEP]`` of every post through the encoder once, keeping each layer's keys/values."""
    length = max(len(p) for p in prefixes)
    ids = torch.full((len(prefixes), length), pad, device=device)
    for row, prefix in enumerate(prefixes):
        ids[row, :len(prefix)] = torch.tensor(prefix, device=device)
    lengths = torch.tensor([len(p) for p in prefixes], device=device)
    mask = torch.arange(length, device=device)[None] < lengths[:, None]
    hidden = encoder.embeddings(input_ids=ids, token_type_ids=torch.zeros_like(ids))
    attend = (mask[:, None, None, :] | torch.eye(length, dtype=torch.bool, device=device)[None, None])
    keys, values = [], []
    for layer in encoder.encoder.layer:
        attention = layer.attention.self
        keys.append(_heads(attention.key(hidden), attention))
        values.append(_heads(attention.value(hidden), attention))
        hidden = _layer(layer, hidden, keys[-1], values[-1], attend)
    return SourceCache(keys, values, hidden[torch.arange(len(prefixes)), lengths - 1], mask, lengths)


def target_states(encoder: nn.Module, cache: SourceCache, posts: torch.Tensor, targets: torch.Tensor,
                  ) -> torch.Tensor:
    """The last target token's state for each row: ``targets`` (rows, T >= 1) generated so far after post
    ``posts[row]`` (an index into the cache), positions continuing after that post's source tokens."""
    rows, steps = targets.shape
    positions = cache.lengths[posts][:, None] + torch.arange(steps, device=targets.device)[None]
    hidden = encoder.embeddings(input_ids=targets, token_type_ids=torch.ones_like(targets), position_ids=positions)
    causal = torch.ones(steps, steps, dtype=torch.bool, device=targets.device).tril()
    mask = torch.cat([cache.mask[posts][:, None, :].expand(rows, steps, -1), causal[None].expand(rows, -1, -1)],
                     dim=-1)[:, None]
    for layer, keys, values in zip(encoder.encoder.layer, cache.keys, cache.values, strict=True):
        attention = layer.attention.self
        all_keys = torch.cat([keys[posts], _heads(attention.key(hidden), attention)], dim=2)
        all_values = torch.cat([values[posts], _heads(attention.value(hidden), attention)], dim=2)
        hidden = _layer(layer, hidden, all_keys, all_values, mask)
    return hidden[:, -1]
