"""Requests that arrive while the privatizer is busy are privatized together: one model call per batch.

The detector and the mechanisms are vectorized over documents, so a call on 16 texts costs far less than 16
calls on one. ``textsift serve`` hands every request's rows to a :class:`Batcher`; one worker takes whatever
has queued up while the previous call ran (no waiting window, so a lone request gets no added latency), up to
``max_records`` rows, calls the model once in a worker thread and gives each request its own rows back.

Joining requests changes no output: every draw is keyed by a row's id, and a request without ids gets the
model's own ids (a digest of each text, :func:`textsift.serving.model.row_ids`) before it is joined. A call that
fails is retried per request, so one bad request fails alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
from starlette.concurrency import run_in_threadpool


@dataclass
class _Pending:
    frame: pd.DataFrame
    done: asyncio.Future[pd.DataFrame]


@dataclass
class Batcher:
    """Privatize frames of concurrent requests in joined model calls (see the module docstring)."""

    predict: Callable[[pd.DataFrame], pd.DataFrame]
    max_records: int
    calls: int = 0  # model calls made (``requests / calls`` = the mean requests per call)
    _queue: asyncio.Queue[_Pending] | None = None
    _worker: asyncio.Task[None] | None = None
    _held: list[_Pending] = field(default_factory=list)

    async def submit(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The model's output rows for ``frame`` (its exception if it fails on this frame)."""
        if self._queue is None:
            self._queue = asyncio.Queue()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run())
        pending = _Pending(frame, asyncio.get_running_loop().create_future())
        await self._queue.put(pending)
        return await pending.done

    def _take(self, first: _Pending) -> list[_Pending]:
        assert self._queue is not None
        batch, rows = [first], len(first.frame)
        while not self._queue.empty() and rows < self.max_records:
            item = self._queue.get_nowait()
            if rows + len(item.frame) > self.max_records:
                self._held.append(item)  # the next call's first
                break
            batch.append(item)
            rows += len(item.frame)
        return batch

    async def _call(self, frame: pd.DataFrame) -> pd.DataFrame:
        self.calls += 1
        return await run_in_threadpool(self.predict, frame)

    async def _run(self) -> None:
        assert self._queue is not None
        while True:
            first = self._held.pop(0) if self._held else await self._queue.get()
            batch = self._take(first)
            try:
                out = await self._call(pd.concat([p.frame for p in batch], ignore_index=True))
            except Exception as err:  # noqa: BLE001 - retried per request: each gets its own outcome
                if len(batch) == 1:
                    _settle(batch[0], None, err)
                    continue
                for pending in batch:
                    try:
                        _settle(pending, await self._call(pending.frame), None)
                    except Exception as own:  # noqa: BLE001 - handed to the request that caused it
                        _settle(pending, None, own)
                continue
            start = 0
            for pending in batch:
                _settle(pending, out.iloc[start:start + len(pending.frame)].reset_index(drop=True), None)
                start += len(pending.frame)


def _settle(pending: _Pending, result: pd.DataFrame | None, error: BaseException | None) -> None:
    if pending.done.done():  # the request went away (client disconnected, cancelled)
        return
    if error is not None:
        pending.done.set_exception(error)
    else:
        pending.done.set_result(result)
