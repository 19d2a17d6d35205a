"""Models load correctly when several task threads load them at once (Prefect/Dask threads)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from textsift.models.fill_in import build_model, load_fill_in
from textsift.models.params import FillInParams

TINY = FillInParams(vocab_size=120, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, max_length=32)


def test_concurrent_loads_give_real_weights(tmp_path: Path) -> None:
    fm = build_model(["the cat sat on the mat", "a dog ran in the park"] * 10, TINY, torch.Generator().manual_seed(1))
    fm.model.save_pretrained(tmp_path)
    fm.tokenizer.save_pretrained(tmp_path)
    with ThreadPoolExecutor(max_workers=6) as pool:
        loaded = list(pool.map(lambda _: load_fill_in(tmp_path, "cpu"), range(12)))
    reference = fm.model.state_dict()
    for model in loaded:
        assert all(p.device.type == "cpu" for p in model.model.parameters())
        state = model.model.state_dict()
        assert all(torch.equal(state[k], reference[k]) for k in reference)


def test_loading_a_classifier_from_the_fill_in_model_prints_no_load_report(tmp_path: Path, capfd) -> None:
    from transformers import BertForSequenceClassification

    from textsift.models.loading import load_pretrained

    fm = build_model(["the cat sat on the mat", "a dog ran in the park"] * 10, TINY, torch.Generator().manual_seed(1))
    fm.model.save_pretrained(tmp_path)
    capfd.readouterr()
    model = load_pretrained(BertForSequenceClassification.from_pretrained, tmp_path, num_labels=2)
    assert model.classifier.out_features == 2
    captured = capfd.readouterr()
    assert "LOAD REPORT" not in captured.err + captured.out
    assert "Loading weights" not in captured.err  # no progress bar per load


def test_a_load_beside_a_task_holding_the_generator_lock_cannot_deadlock() -> None:
    """Task A holds torch's generator lock around a load (the sentence encoder did); task B's load constructs modules,
    which take that lock inside the load. With the load lock taken before the generator's, each held what the other
    waited for (a flow run stopped for good)."""
    import threading

    from textsift.device import global_torch_rng
    from textsift.models.loading import load_pretrained

    b_inside_its_load = threading.Event()

    def constructs_modules() -> str:
        b_inside_its_load.set()
        with global_torch_rng():
            return "b"

    def a() -> None:
        with global_torch_rng():
            b_inside_its_load.wait(1.0)  # the old order: B is inside its load, holding the load lock
            done.append(load_pretrained(lambda: "a"))

    done: list[str] = []
    threads = [threading.Thread(target=a, daemon=True),
               threading.Thread(target=lambda: done.append(load_pretrained(constructs_modules)), daemon=True)]
    threads[0].start()
    time.sleep(0.1)  # A holds the generator's lock
    threads[1].start()
    for thread in threads:
        thread.join(timeout=20)
    assert sorted(done) == ["a", "b"]
