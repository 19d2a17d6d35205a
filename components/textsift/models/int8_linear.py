"""Linear layers as int8 matrix products: the detector encoder's inference on CPUs (``detection.inference_precision``).

Each weight row (an output channel) is scaled into int8 once; each input row (a token) is scaled into int8 when it
arrives, by its own largest magnitude. The product accumulates exactly in int32 and is scaled back to float32.
Two properties follow, and are why this design and not PyTorch's dynamic quantization (one scale per input tensor):

- **A token's output depends on that token alone.** Its scale is its own and integer sums are exact in any order, so a
  document's scores do not move with the documents batched beside it: served alone or released in a corpus, the same
  text gets the same spans (bfloat16 moved confidences by up to 3.8e-3 with their batch mates).
- **Every CPU computes the same integers**, with or without int8 instructions; only the speed differs (AVX512-VNNI
  cores multiply int8 about 3-4x faster than float32 on MiniLM's shapes).

The cost is rounding: one input row and one weight row each keep 8 bits relative to their largest entry.
"""

from __future__ import annotations

import torch
from torch import nn

INT8_MAX = 127.0
TINY = 1e-12  # an all-zero row's scale: its int8 row is zeros, and so is its product


class Int8Linear(nn.Module):
    """``y = x W^T + b`` computed as ``(x_q W_q) * x_scale * w_scale + b`` with int8 ``x_q`` (per row) and ``W_q``
    (per output channel).

    Attributes:
        weight_q: the weight, int8, transposed to ``(in_features, out_features)`` as :func:`torch._int_mm` reads it.
        weight_scale: per output channel, the float32 step of ``weight_q``.
        bias: the float32 bias, or None.
    """

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        weight = linear.weight.detach().to(torch.float32)
        scale = weight.abs().amax(dim=1).clamp_min(TINY) / INT8_MAX
        self.register_buffer("weight_q", torch.round(weight / scale[:, None]).to(torch.int8).t().contiguous())
        self.register_buffer("weight_scale", scale)
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().to(torch.float32).clone())
        self.in_features, self.out_features = linear.in_features, linear.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x @ W^T + b`` for float ``x`` of any leading shape, each row of ``x`` quantized by its own scale."""
        rows = x.reshape(-1, self.in_features).to(torch.float32)
        scale = rows.abs().amax(dim=1, keepdim=True).clamp_min_(TINY).div_(INT8_MAX)
        quantized = torch.div(rows, scale).round_().to(torch.int8)
        out = torch._int_mm(quantized, self.weight_q).to(torch.float32).mul_(scale).mul_(self.weight_scale)
        if self.bias is not None:
            out.add_(self.bias)
        return out.reshape(*x.shape[:-1], self.out_features)


def quantize_linears(module: nn.Module) -> int:
    """Replace every :class:`torch.nn.Linear` inside ``module`` by its :class:`Int8Linear`, in place (for inference:
    the int8 layers do not train); the number replaced."""
    replaced = 0
    for parent in list(module.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear):
                setattr(parent, name, Int8Linear(child))
                replaced += 1
    return replaced
