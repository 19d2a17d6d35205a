"""Device and precision resolution: bf16 only where the hardware computes it natively, unless asked for."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch

from textsift.device import (
    TorchStream,
    cpu_has_native_bf16,
    global_torch_rng,
    precision_autocast,
    resolve_detector_precision,
    resolve_precision,
)

FLAGS = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512bw {extra}\n\nprocessor\t: 1\nflags\t\t: fpu {extra}\n"


@pytest.mark.parametrize(("extra", "native"), [("avx512_bf16", True), ("amx_bf16 amx_tile", True), ("", False),
                                                ("avx512_vnni", False)])
def test_native_bf16_is_read_from_the_cpu_flags(tmp_path: Path, extra: str, native: bool) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(FLAGS.format(extra=extra), encoding="utf-8")
    assert cpu_has_native_bf16.__wrapped__(cpuinfo) is native


def test_a_missing_cpuinfo_means_no_native_bf16(tmp_path: Path) -> None:
    assert cpu_has_native_bf16.__wrapped__(tmp_path / "absent") is False


def test_auto_precision_follows_the_hardware_and_a_choice_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("textsift.device.cpu_has_native_bf16", lambda: False)
    assert resolve_precision("auto", "cpu") == "float32"
    assert resolve_precision("auto", "cuda") == "bfloat16"
    assert resolve_precision("bfloat16", "cpu") == "bfloat16"
    monkeypatch.setattr("textsift.device.cpu_has_native_bf16", lambda: True)
    assert resolve_precision("auto", "cpu") == "bfloat16"
    assert resolve_precision("float32", "cuda") == "float32"


def test_int8_is_the_detectors_cpu_precision_and_float32_on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("textsift.device.cpu_has_native_bf16", lambda: False)
    assert resolve_detector_precision("int8", "cpu") == "int8"
    assert resolve_detector_precision("int8", "cuda") == "float32"
    assert resolve_detector_precision("auto", "cpu") == "float32"
    assert resolve_detector_precision("bfloat16", "cpu") == "bfloat16"


def test_bfloat16_autocast_runs_linear_layers_in_bfloat16_on_the_cpu() -> None:
    layer = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(0))
    with precision_autocast("cpu", "bfloat16"):
        assert layer(x).dtype == torch.bfloat16
    with precision_autocast("cpu", "float32"):
        assert layer(x).dtype == torch.float32


def test_a_stream_entered_per_step_draws_as_one_seeded_run_whatever_draws_between() -> None:
    torch.manual_seed(99)
    with global_torch_rng(5):
        expected = [torch.rand(3) for _ in range(4)]
    stream, got = TorchStream(5), []
    for _ in range(4):
        with stream:
            got.append(torch.rand(3))
        torch.rand(7)  # another task's draws between the steps
    assert all(torch.equal(a, b) for a, b in zip(expected, got, strict=True))
    torch.manual_seed(99)
    outside = torch.get_rng_state()
    with stream:
        torch.rand(2)
    assert torch.equal(torch.get_rng_state(), outside)  # what was there is put back


def test_between_steps_the_lock_is_free_for_another_thread() -> None:
    stream, entered = TorchStream(1), threading.Event()

    def load() -> None:
        with global_torch_rng():
            entered.set()

    with stream:
        worker = threading.Thread(target=load)
        worker.start()
        assert not entered.wait(0.2)  # waits while a step runs
    assert entered.wait(5)  # and runs once the step is over
    worker.join()


def test_a_backward_pass_draws_nothing_so_trainings_run_it_outside_their_stream() -> None:
    """The trainings hold their stream (and its lock) for the forward pass only: dropout draws its masks there, in the
    BERT-shaped encoders' attention and hidden layers and in the detector's LSTM, and backward reuses them."""
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, hidden_dropout_prob=0.5, attention_probs_dropout_prob=0.5)
    with global_torch_rng(3):
        bert = BertModel(config).train()
        lstm = torch.nn.LSTM(16, 8, num_layers=2, dropout=0.5, bidirectional=True, batch_first=True).train()
    ids = torch.randint(0, 50, (4, 12), generator=torch.Generator().manual_seed(0))
    with global_torch_rng(4):
        out, _ = lstm(bert(input_ids=ids).last_hidden_state)
        loss = out.square().mean()
        after_forward = torch.get_rng_state()
        loss.backward()
        assert torch.equal(torch.get_rng_state(), after_forward)
    assert bert.embeddings.word_embeddings.weight.grad is not None and lstm.weight_hh_l0.grad is not None


def test_a_run_is_tagged_with_what_each_declared_precision_resolved_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` gives other bytes on another CPU under one params hash: the run records which precision it ran."""
    from textsift.runner import precision_tags

    declared = {"detection.inference_precision": "auto", "evaluate.inference_precision": "float32", "seed": 1}
    for native, resolved in ((False, "float32"), (True, "bfloat16")):
        monkeypatch.setattr("textsift.device.cpu_has_native_bf16", lambda native=native: native)
        assert precision_tags(declared, "cpu") == {"textsift.precision.detection.inference_precision": resolved,
                                                   "textsift.precision.evaluate.inference_precision": "float32"}
    assert precision_tags({"seed": 1}, "cpu") == {}
