"""The SQLite engine's hand-off to its thread: operations run one after another, in the order
asked, each result (or error) reaching its own caller; those asked for while the thread is
busy run as one batch and come back together; one cancelled before its turn does not run."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable

import pytest

from bot.storage.thread import StorageThread


@pytest.fixture
def storage_thread() -> StorageThread:
    return StorageThread()


def blocker() -> tuple[threading.Event, Callable[[], str]]:
    """An operation that holds the thread until the event is set."""
    release = threading.Event()

    def hold() -> str:
        assert release.wait(5)
        return "held"

    return release, hold


async def test_results_and_errors_reach_their_own_callers_in_order(
    storage_thread: StorageThread,
) -> None:
    ran: list[int] = []

    def record(value: int) -> int:
        ran.append(value)
        if value == 2:
            raise ValueError("two")
        return value * 10

    futures = [storage_thread.run(functools.partial(record, value)) for value in range(4)]
    results = await asyncio.gather(*futures, return_exceptions=True)
    storage_thread.shutdown()
    assert ran == [0, 1, 2, 3]
    assert results[:2] == [0, 10]
    assert isinstance(results[2], ValueError)
    assert results[3] == 30


async def test_operations_asked_for_while_busy_come_back_in_one_wake_up(
    storage_thread: StorageThread,
) -> None:
    release, hold = blocker()
    first = storage_thread.run(hold)
    waiting = [storage_thread.run(functools.partial(int, value)) for value in range(5)]
    await asyncio.sleep(0.05)
    assert not any(future.done() for future in waiting)
    release.set()
    assert await first == "held"
    # The five ran as one batch after the blocker: the first of them done means all are.
    await waiting[0]
    assert [future.done() for future in waiting] == [True] * 5
    assert [future.result() for future in waiting] == [0, 1, 2, 3, 4]
    storage_thread.shutdown()


async def test_an_operation_cancelled_before_its_turn_does_not_run(
    storage_thread: StorageThread,
) -> None:
    release, hold = blocker()
    ran: list[str] = []
    first = storage_thread.run(hold)
    cancelled = storage_thread.run(lambda: ran.append("cancelled"))
    after = storage_thread.run(lambda: ran.append("after"))
    cancelled.cancel()
    release.set()
    await first
    await after
    storage_thread.shutdown()
    assert ran == ["after"]
