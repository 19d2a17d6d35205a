"""Concurrent requests are privatized in joined model calls, each getting exactly its own rows back."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pandas as pd
import pytest

from textsift.serving.app import create_app
from textsift.serving.batching import Batcher

TOKEN = "t" * 24


class FakeModel:
    """Upper-cases texts keyed by id; slow enough that requests queue up; fails on a text 'bad'."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.lock = threading.Lock()

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        with self.lock:
            self.sizes.append(len(frame))
        time.sleep(0.05)
        if (frame["text"] == "bad").any():
            raise ValueError("cannot")
        texts = [f"{i}:{t.upper()}" for i, t in zip(frame["id"], frame["text"], strict=True)]
        return pd.DataFrame({"id": frame["id"], "text": texts})


def _frame(request: int, rows: int) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"r{request}-{k}" for k in range(rows)],
                         "text": [f"text {request} {k}" for k in range(rows)]})


def test_requests_queued_meanwhile_share_a_call_and_get_their_own_rows() -> None:
    model = FakeModel()
    batcher = Batcher(model.predict, max_records=8)

    async def main() -> list[pd.DataFrame]:
        return await asyncio.gather(*(batcher.submit(_frame(r, 1 + r % 3)) for r in range(12)))

    outs = asyncio.run(main())
    for r, out in enumerate(outs):
        assert out.equals(model.predict(_frame(r, 1 + r % 3)).reset_index(drop=True))
    calls = model.sizes[:batcher.calls]
    assert batcher.calls < 12 and max(calls) <= 8 and sum(calls) == sum(1 + r % 3 for r in range(12))


def test_a_lone_request_is_one_call_of_its_own() -> None:
    model = FakeModel()
    batcher = Batcher(model.predict, max_records=8)

    async def main() -> None:
        for r in range(3):
            await batcher.submit(_frame(r, 2))

    asyncio.run(main())
    assert model.sizes == [2, 2, 2]


def test_a_failing_request_fails_alone() -> None:
    model = FakeModel()
    batcher = Batcher(model.predict, max_records=100)
    bad = pd.DataFrame({"id": ["x"], "text": ["bad"]})

    async def main() -> list[object]:
        return await asyncio.gather(*(batcher.submit(bad if r == 2 else _frame(r, 2)) for r in range(5)),
                                    return_exceptions=True)

    outs = asyncio.run(main())
    assert isinstance(outs[2], ValueError)
    assert all(isinstance(out, pd.DataFrame) and len(out) == 2 for r, out in enumerate(outs) if r != 2)


@pytest.mark.parametrize("with_ids", [True, False])
def test_the_app_answers_concurrent_requests_as_it_answers_them_one_by_one(with_ids: bool) -> None:
    model = FakeModel()
    app = create_app(model, TOKEN, "fake", "fp")

    def body(r: int) -> dict:
        return {"records": [{**({"id": f"r{r}-{k}"} if with_ids else {}), "text": f"text {r} {k}"} for k in range(2)]}

    async def main() -> tuple[list[httpx.Response], httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as client:
            together = await asyncio.gather(*(client.post("/privatize", json=body(r)) for r in range(10)))
            alone = [await client.post("/privatize", json=body(r)) for r in range(10)]
            metrics = await client.get("/metrics")
        return list(zip(together, alone, strict=True)), metrics

    pairs, metrics = asyncio.run(main())
    for together, alone in pairs:
        assert together.status_code == alone.status_code == 200
        assert together.json() == alone.json()
    assert "textsift_model_calls_total" in metrics.text
    assert len(model.sizes) < 20  # the concurrent ten shared calls
