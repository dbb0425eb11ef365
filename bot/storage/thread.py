"""The thread the SQLite engine's database lives in: operations handed over from the event loop
run there one after another, those asked for while it is busy as one batch."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class StorageThread:
    """The thread the database lives in, and the operations waiting for it.

    Operations asked for while the thread is busy wait, in order, and then run as one batch,
    their results coming back to the event loop in one wake-up. A hand-off per operation
    (``run_in_executor``) costs a queue put, a thread wake-up and an event-loop wake-up each
    time: under load that was more of the event loop's time than SQLite's own work. Each
    operation is still its own read or transaction; only the hand-off is shared. The queue
    and the busy flag are only touched on the event loop.
    """

    def __init__(self) -> None:
        # One worker: sqlite3 connections belong to the thread that made them.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tttbot-sqlite")
        self._waiting: deque[tuple[Callable[[], Any], asyncio.Future[Any]]] = deque()
        self._busy = False

    def run(self, call: Callable[[], T]) -> asyncio.Future[T]:
        """``call()``'s result, once the thread has run it. Cancelling the future before
        the thread gets to it means it does not run."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._waiting.append((call, future))
        if not self._busy:
            self._hand_over(loop)
        return future

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False)

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        batch = list(self._waiting)
        self._waiting.clear()
        self._busy = True
        self._executor.submit(self._run_batch, loop, batch)

    def _run_batch(
        self,
        loop: asyncio.AbstractEventLoop,
        batch: list[tuple[Callable[[], Any], asyncio.Future[Any]]],
    ) -> None:
        """In the thread. Reading ``cancelled()`` here races with the loop, harmlessly: an
        operation whose caller is cancelled meanwhile still runs, as it would had it started."""
        outcomes: list[tuple[bool, Any] | None] = []
        for call, future in batch:
            if future.cancelled():
                outcomes.append(None)
                continue
            try:
                outcomes.append((True, call()))
            except BaseException as error:  # delivered to the caller, as an executor does
                outcomes.append((False, error))
        loop.call_soon_threadsafe(self._delivered, loop, batch, outcomes)

    def _delivered(
        self,
        loop: asyncio.AbstractEventLoop,
        batch: list[tuple[Callable[[], Any], asyncio.Future[Any]]],
        outcomes: list[tuple[bool, Any] | None],
    ) -> None:
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if outcome is None or future.cancelled():
                continue
            succeeded, value = outcome
            if succeeded:
                future.set_result(value)
            else:
                future.set_exception(value)
        self._busy = False
        if self._waiting:
            self._hand_over(loop)
