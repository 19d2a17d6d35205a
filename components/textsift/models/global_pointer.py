"""GlobalPointer span scoring with rotary position embedding, its loss and decoding (METHODS.md §4.1).

For each entity type ``c`` two dense heads map a token's feature vector to ``q`` and ``k``
(``head_size`` each); RoPE rotates ``q_i`` by its position ``i`` and ``k_j`` by ``j``, so
``s_c(i, j) = q_i·k_j / sqrt(head_size)`` depends on the two tokens and on ``j - i`` only
(paper eq. (5)-(8)). A span ``(i, j)`` exists for ``i <= j`` between real tokens; every other
cell (the lower triangle, padding, special tokens, and in the detector the cells that would start
or end a span inside a word) holds :data:`MASKED`. Training minimizes
eq. (9), the multi-label categorical cross-entropy per (sequence, type); decoding keeps every
cell above a threshold, so nested and overlapping spans come out as they are.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch
from torch import nn

MASKED = -1e12  # score of the cells that are no span (Su's GlobalPointer uses the same constant)
ROPE_BASE = 10000.0  # RoPE's θ_k = base^(-2k / head_size) (RoFormer, eq. (4) of the DPER paper)

TokenSpan = tuple[int, int, int]  # (type index, first position, last position), positions inclusive


@lru_cache(maxsize=64)
def rope_tables(length: int, dim: int, device: torch.device | str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(cos, sin)`` of the rotation angles ``m·θ_k``, each ``[length, dim]`` (pairs interleaved).

    Constants of (length, dim, device), built once each: every forward pass asked for them twice (``q`` and ``k``),
    9% of detection's time on a CPU. Callers must not write into them.

    Args:
        length: positions ``m = 0 .. length-1``.
        dim: the (even) size of the rotated vectors.
        device: where the tables are built.
    """
    with torch.inference_mode(False), torch.no_grad():  # plain tensors: usable in training and inference alike
        theta = ROPE_BASE ** (-torch.arange(0, dim, 2, dtype=torch.float32, device=device) / dim)
        angles = torch.arange(length, dtype=torch.float32, device=device)[:, None] * theta[None, :]
        return angles.cos().repeat_interleave(2, dim=-1), angles.sin().repeat_interleave(2, dim=-1)


def apply_rope(x: torch.Tensor) -> torch.Tensor:
    """Rotate each pair ``(x_2k, x_2k+1)`` of ``x[:, m]`` by the angle ``m·θ_k`` (METHODS.md §4.1).

    Args:
        x: ``[batch, length, heads, dim]`` with positions on axis 1 and an even ``dim``.

    Returns:
        The rotated tensor (float32), same shape: ``<rope(q)_m, rope(k)_n>`` depends on ``m - n`` only.
    """
    cos, sin = rope_tables(x.shape[1], x.shape[-1], x.device)
    x = x.float()
    turned = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).reshape(x.shape)
    return x * cos[None, :, None, :] + turned * sin[None, :, None, :]


def span_cells(start_mask: torch.Tensor, end_mask: torch.Tensor | None = None) -> torch.Tensor:
    """``[batch, 1, length, length]`` booleans: ``(i, j)`` is a possible span.

    Args:
        start_mask: ``[batch, length]``, true at the tokens a span may start on.
        end_mask: true at the tokens a span may end on (default: ``start_mask``).

    Returns:
        True where ``i <= j``, ``i`` may start and ``j`` may end a span.
    """
    start = start_mask.bool()
    end = start if end_mask is None else end_mask.bool()
    length = start.shape[1]
    upper = torch.ones(length, length, dtype=torch.bool, device=start.device).triu()
    return (start[:, :, None] & end[:, None, :] & upper)[:, None]


class GlobalPointer(nn.Module):
    """Per-type span scores from token features (paper eq. (5)-(8), Algorithm 1).

    Args:
        input_size: size of each token's feature vector (the BiLSTM output).
        num_types: entity types ``C``.
        head_size: size of each type's ``q`` and ``k`` (even, for RoPE).
    """

    def __init__(self, input_size: int, num_types: int, head_size: int) -> None:
        super().__init__()
        if head_size % 2:
            raise ValueError(f"head_size must be even for RoPE, got {head_size}")
        self.num_types = num_types
        self.head_size = head_size
        self.dense = nn.Linear(input_size, num_types * 2 * head_size)  # f_QDense and f_KDense of every type

    def forward(self, hidden: torch.Tensor, start_mask: torch.Tensor, end_mask: torch.Tensor | None = None
                ) -> torch.Tensor:
        """Scores ``[batch, types, length, length]`` (float32); impossible cells hold :data:`MASKED`.

        Args:
            hidden: ``[batch, length, input_size]`` token features.
            start_mask: ``[batch, length]``, true at the real tokens a span may start on (special and
                padding tokens false).
            end_mask: the same for span ends (default: ``start_mask``).
        """
        batch, length, _ = hidden.shape
        qk = self.dense(hidden).view(batch, length, self.num_types, 2, self.head_size)
        q, k = apply_rope(qk[..., 0, :]), apply_rope(qk[..., 1, :])
        with torch.autocast(hidden.device.type, enabled=False):  # scores in float32 even under bf16 autocast
            scores = torch.einsum("bmcd,bncd->bcmn", q, k) / math.sqrt(self.head_size)
        return scores.masked_fill(~span_cells(start_mask, end_mask), MASKED)


def global_pointer_loss(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Eq. (9), ``log(1 + Σ_pos e^{-s}) + log(1 + Σ_neg e^{s})``, averaged over (sequence, type).

    Computed with ``logsumexp`` over the cells plus a zero (the ``1 +``), so it is exact and
    stable for scores of any size. Masked cells (:data:`MASKED`) add ``e^{MASKED} = 0`` to the
    negative sum; a target must never sit on one.

    Args:
        scores: ``[batch, types, length, length]`` from :class:`GlobalPointer`.
        targets: same shape, 1 at gold spans and 0 elsewhere.
    """
    s = scores.float().reshape(-1, scores.shape[-2] * scores.shape[-1])
    positive = targets.reshape_as(s).bool()
    zero = s.new_zeros(s.shape[0], 1)
    pos = torch.cat(((-s).masked_fill(~positive, -math.inf), zero), dim=1).logsumexp(dim=1)
    neg = torch.cat((s.masked_fill(positive, -math.inf), zero), dim=1).logsumexp(dim=1)
    return (pos + neg).mean()


def decode_spans(scores: torch.Tensor, threshold: float = 0.0) -> list[list[TokenSpan]]:
    """Every cell scoring above ``threshold``, per sequence: nested and overlapping spans included.

    Args:
        scores: ``[batch, types, length, length]`` from :class:`GlobalPointer`.
        threshold: the decision score (0: the point eq. (9) trains positives above and negatives below).

    Returns:
        Per sequence, ``(type, i, j)`` sorted; masked cells (``i > j``, padding) never appear.
    """
    hits = ((scores > threshold) & (scores > MASKED / 2)).nonzero().tolist()
    out: list[list[TokenSpan]] = [[] for _ in range(scores.shape[0])]
    for b, c, i, j in hits:
        out[b].append((c, i, j))
    return out
