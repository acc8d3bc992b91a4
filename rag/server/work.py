"""The core's work in `rag serve`: a fixed pool of threads, answers stopped when their client hangs up, and how
long a new question would wait, from measured answer times.

- **A fixed pool.** Retrieval, the reranker and the extractive answer are CPU work on the same cores; more threads
  than cores only share them and each holds its own buffers (and malloc arena), so `RAG_SERVE_WORKERS` threads
  (the core count by default) do every answering step and the rest wait their turn.
- **A hang-up stops the answer.** Uvicorn does not fail a send to a client that has left, so nothing would ever
  notice: each request's receive channel is watched, an answer is pulled from the core one event at a time, and
  once the client is gone no further event is pulled and the answer's generator is closed (closing the LLM's
  stream, `rag.pipeline`). A step that has not started is dropped; one in progress is waited for, so the
  admission slot is held until the work has really stopped.
- **A burst is refused early.** Each answering request's busy time (the sum of its steps) feeds a moving average;
  a new question is admitted only if the questions ahead of it, at that rate on this many workers, leave it an
  answer within `RAG_SERVE_MAX_WAIT` seconds (admission.py). Refusing at once beats admitting a question its
  client will have given up on.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

T = TypeVar("T")

# Weight of the newest answer in the moving average: about the last ten answers count.
SMOOTHING = 0.2


class ClientGone(Exception):
    """The client hung up: stop working on its answer."""


@dataclass
class Ticket:
    """One answering request while it is in flight: the worker seconds it has used so far."""

    busy: float = 0.0
    gone: bool = False  # the client left before the answer was done: its partial time is no answer's time


current_ticket: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("current_ticket", default=None)


class Departure:
    """Watches a request's receive channel (its body already read) and is set once the client hangs up."""

    def __init__(self, receive: Receive) -> None:
        self.event = asyncio.Event()
        self._task = asyncio.ensure_future(self._watch(receive))

    async def _watch(self, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.event.set()
                return

    @property
    def gone(self) -> bool:
        return self.event.is_set()

    def stop(self) -> None:
        self._task.cancel()


class Work:
    """The worker threads, the requests in flight, and the measured seconds of work per answer."""

    def __init__(self, workers: int, max_wait: float, seconds_per_answer: float = 0.5) -> None:
        self.workers = workers
        self.max_wait = max_wait
        self.seconds_per_answer = seconds_per_answer
        self.in_flight = 0  # changed on the event loop's thread only
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix="rag-answer")

    # -- admission -------------------------------------------------------------------------------------------

    def expected_wait(self) -> float:
        """Seconds until a question admitted now would be answered: the ones ahead of it and its own, shared
        out over the workers."""
        return (self.in_flight + 1) * self.seconds_per_answer / self.workers

    def record(self, ticket: Ticket) -> None:
        if ticket.busy > 0 and not ticket.gone:
            self.seconds_per_answer += SMOOTHING * (ticket.busy - self.seconds_per_answer)

    # -- running steps ---------------------------------------------------------------------------------------

    async def run(self, fn: Callable[..., T], *args: Any, departure: Departure | None = None) -> T:
        """`fn(*args)` on a worker thread. With `departure`, a client that has left raises `ClientGone`: at once
        if the step had not started, after it finishes if it had."""
        if departure is not None and departure.gone:
            raise ClientGone
        took = [0.0]

        def timed() -> T:
            started = time.perf_counter()
            try:
                return fn(*args)
            finally:
                took[0] = time.perf_counter() - started

        future = self.executor.submit(timed)
        waiting = asyncio.wrap_future(future)
        ticket = current_ticket.get()
        try:
            if departure is None:
                return await waiting
            left = asyncio.ensure_future(departure.event.wait())
            try:
                await asyncio.wait({waiting, left}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                left.cancel()
            if not waiting.done():
                if ticket is not None:
                    ticket.gone = True
                if future.cancel():  # not started: nothing runs for a client that has gone
                    raise ClientGone
                await asyncio.wait({waiting})  # in progress: the slot is held until it stops
                raise ClientGone
            return waiting.result()
        finally:
            if ticket is not None:
                ticket.busy += took[0]

    async def pull(self, events: Iterator[T], departure: Departure | None = None) -> T | None:
        """The next item of a blocking iterator, pulled on a worker (None at its end)."""
        return await self.run(next, events, None, departure=departure)

    async def drain(self, events: Iterator[T], departure: Departure | None = None) -> list[T]:
        """Every item of a blocking iterator, each pulled on a worker; `ClientGone` once the client has left."""
        items = []
        while (item := await self.pull(events, departure)) is not None:
            items.append(item)
        return items

    async def close(self, events: Iterator[Any]) -> None:
        """Close a generator on a worker (its `finally` may close an HTTP stream)."""
        close = getattr(events, "close", None)
        if close is not None:
            await self.run(close)

    async def stream(self, pieces: Iterator[str], receive: Receive, send: Send, headers: dict[str, str]) -> None:
        """Send `pieces` (Server-Sent Events text, pulled on a worker) as a 200 event stream until they end or
        the client hangs up; either way the generator is closed on a worker before this returns."""
        departure = Departure(receive)
        raw_headers = [(b"content-type", b"text/event-stream; charset=utf-8")]
        raw_headers += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        try:
            await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            while (piece := await self.pull(pieces, departure)) is not None:
                await send({"type": "http.response.body", "body": piece.encode(), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except ClientGone:
            pass
        finally:
            departure.stop()
            await self.close(pieces)

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


class EventStream(Response):
    """A Server-Sent Events response whose pieces come from a blocking generator through `Work.stream`."""

    def __init__(self, work: Work, pieces: Iterator[str], headers: dict[str, str]) -> None:
        self.work, self.pieces, self.extra_headers = work, pieces, headers
        self.status_code, self.background = 200, None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.work.stream(self.pieces, receive, send, self.extra_headers)
