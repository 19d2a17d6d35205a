"""Int8 linear layers (the detector encoder's CPU inference): close to float32, and a row's output its own."""

from __future__ import annotations

import torch
from torch import nn

from textsift.models.int8_linear import Int8Linear, quantize_linears


def _layer(in_features: int, out_features: int, bias: bool = True, seed: int = 0) -> nn.Linear:
    torch.manual_seed(seed)
    return nn.Linear(in_features, out_features, bias=bias)


def test_int8_products_stay_within_rounding_of_float32() -> None:
    for bias in (True, False):
        layer = _layer(384, 96, bias)
        x = torch.randn(4, 7, 384, generator=torch.Generator().manual_seed(1))
        exact, approx = layer(x).detach(), Int8Linear(layer)(x)
        assert approx.shape == exact.shape == (4, 7, 96) and approx.dtype == torch.float32
        error = (approx - exact).abs().max() / exact.abs().max()
        assert 0 < error < 0.02, error  # rounded (not float32), by 8 bits' worth per row and channel


def test_a_rows_output_does_not_depend_on_the_rows_beside_it() -> None:
    """Per-row activation scales and exact int32 sums: a row alone and beside rows 1,000x larger give the same bits
    (one scale per input tensor, PyTorch's dynamic quantization, would round the small row to nearly nothing)."""
    quantized = Int8Linear(_layer(64, 32))
    gen = torch.Generator().manual_seed(2)
    row = torch.randn(1, 64, generator=gen)
    loud = 1000 * torch.randn(5, 64, generator=gen)
    alone = quantized(row)
    for batch in (torch.cat([row, loud]), torch.cat([loud, row]), torch.cat([loud[:2], row, loud[2:]])):
        position = next(i for i in range(len(batch)) if torch.equal(batch[i], row[0]))
        assert torch.equal(quantized(batch)[position], alone[0])
    per_tensor_scale = torch.cat([row, loud]).abs().max() / 127
    assert (torch.round(row / per_tensor_scale) == 0).float().mean() > 0.9  # what one shared scale would do


def test_a_zero_row_gives_the_bias() -> None:
    layer = _layer(16, 8)
    assert torch.equal(Int8Linear(layer)(torch.zeros(2, 16)), layer.bias.detach().expand(2, 8))


def test_quantize_linears_replaces_every_linear_layer_and_nothing_else() -> None:
    net = nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8), nn.Sequential(nn.Linear(8, 4), nn.GELU(), nn.Linear(4, 2)))
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(3))
    before = net(x).detach()
    assert quantize_linears(net) == 3
    assert [type(m).__name__ for m in net.modules() if not isinstance(m, nn.Sequential)] == [
        "Int8Linear", "LayerNorm", "Int8Linear", "GELU", "Int8Linear"]
    assert torch.allclose(net(x), before, atol=0.05 * before.abs().max().item())
