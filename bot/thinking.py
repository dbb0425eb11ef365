"""The engine's slow work, away from the event loop, so that other channels are answered meanwhile.

- The square boards: 3x3 and 4x4 answer by lookup or rules in microseconds, on the loop; 5x5's
  searches run in a worker thread (its exact search and book share tables kept in this process).
- Ultimate tic-tac-toe: every move of its computer player, and its hints and reviews, search for
  their whole budget in pure Python. In a thread that would hold the interpreter lock the event
  loop needs (twelve games against the strongest level would slow every other answer), so they
  run in worker processes, started on first use from a fork server that imported only the
  engine (:mod:`game`), never the bot's own modules. Each task names a position by its moves:
  what crosses to a worker is a few integers, and what comes back a cell or a review.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import random
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from game.budget import SearchBudget
from game.ultimate import UltimateBoard
from game.ultimate_ai import get_ultimate_strategy
from game.ultimate_review import UltimateMoveReview, review_ultimate_game, ultimate_best_move

log = logging.getLogger(__name__)

_T = TypeVar("_T")

# From this side up, a square board's engine may search for its whole budget.
SEARCHED_FROM_SIZE = 5
# How much lower a worker process's scheduling priority is than the bot's (see _new_pool).
WORKER_NICENESS = 10
# What a worker process imports before it takes work: the engine alone.
_WORKER_PRELOAD = ["game.ultimate_review"]


def ultimate_move(
    moves: tuple[int, ...], level: str, seed: int, budget: SearchBudget | None
) -> int:
    """The move of the computer player ``level`` in the ultimate position ``moves`` make: run in
    a worker process (so it takes and gives only plain values)."""
    strategy = get_ultimate_strategy(level, random.Random(seed), budget)
    return strategy.choose(UltimateBoard.from_moves(moves))


async def think(size: int, work: Callable[[], _T]) -> _T:
    """The engine's ``work`` (a move, a hint, a review) on a square ``size`` board: in a worker
    thread on the boards where the engine searches, so that other games are answered meanwhile."""
    if size >= SEARCHED_FROM_SIZE:
        return await asyncio.to_thread(work)
    return work()


def ultimate_hint(moves: tuple[int, ...]) -> int:
    """A hint: the best move for the player to move in the ultimate position ``moves`` make, by
    the strongest level's search (the same on every machine): run in a worker process."""
    return ultimate_best_move(UltimateBoard.from_moves(moves))


def ultimate_review(moves: tuple[int, ...]) -> tuple[UltimateMoveReview, ...]:
    """Every move of the ultimate game ``moves`` played, judged by the strongest level's search
    (seconds of searching): run in a worker process."""
    return review_ultimate_game(moves)


class EngineWorkers:
    """A pool of ``workers`` processes (default: one a core) for ultimate's searches, started
    on first use."""

    def __init__(self, workers: int | None = None) -> None:
        self._workers = workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None

    async def run(self, work: Callable[..., _T], *args: object) -> _T:
        """``work(*args)`` in a worker process: ``work`` a function of this module, ``args``
        plain values. A pool whose process died is replaced for the next task (this one fails
        with the pool's error)."""
        pool = self._pool
        if pool is None:
            pool = self._pool = self._new_pool()
        try:
            # Submitting may start a worker, which waits for the fork server (started, and its
            # imports done, on first use): seconds on a busy machine, never on the event loop.
            submitted = await asyncio.to_thread(pool.submit, work, *args)
            return await asyncio.wrap_future(submitted)
        except BrokenProcessPool:
            log.warning("an engine worker process died: starting new ones for the next task")
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise

    @property
    def started(self) -> bool:
        """Whether worker processes were started (by a task since the last :meth:`close`)."""
        return self._pool is not None

    def _new_pool(self) -> ProcessPoolExecutor:
        # Not fork: the bot has threads running (the storage's, the default executor's), and a
        # child forked from it could inherit a lock one of them held.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_WORKER_PRELOAD)
        # Below the bot's own priority: a search waits a moment for a core, the event loop
        # does not (bench.ultimate_load: beside twelve searching games, the loop waited for a
        # CPU behind workers of equal priority).
        return ProcessPoolExecutor(
            self._workers, mp_context=context, initializer=os.nice, initargs=(WORKER_NICENESS,)
        )

    def close(self) -> None:
        """Stop the worker processes (a task still running is not waited for)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
