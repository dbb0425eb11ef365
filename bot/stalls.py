"""Watches the event loop for stalls: while anything blocks it, no interaction is answered."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

log = logging.getLogger(__name__)

# How often the watcher wakes: the finest stall it can see, at about 100 wake-ups a second.
TICK = 0.01
# Stalls from this long are logged at DEBUG (the load benchmark reads them) ...
NOTICEABLE = 0.01
# ... and from this long at WARNING: a third of Discord's 3 s deadline gone at once.
SEVERE = 1.0


class CpuWait:
    """How long the thread that opened it has waited for a CPU while ready to run, from
    Linux's ``/proc/.../schedstat``: the part of a stall a busy machine caused, rather than
    anything the loop ran or waited on (a blocking call, the GIL). ``seconds()`` is None
    where the kernel does not report it."""

    def __init__(self) -> None:
        path = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        try:
            self._fd: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            self._fd = None

    def seconds(self) -> float | None:
        if self._fd is None:
            return None
        # "<ns on a CPU> <ns waiting on a run queue> <time slices>"; read again at offset 0,
        # the kernel writes the current figures each time.
        return int(os.pread(self._fd, 128, 0).split()[1]) / 1e9

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> CpuWait:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


async def watch_stalls(on_stall: Callable[[float], None] | None = None) -> None:
    """Log every stall of the running loop of at least ``NOTICEABLE`` seconds, and how much
    of it the loop's thread spent waiting for a CPU, until cancelled; ``on_stall`` hears each
    one's length in seconds (the metrics count them)."""
    with CpuWait() as cpu_wait:
        while True:
            before, waited_before = time.perf_counter(), cpu_wait.seconds()
            await asyncio.sleep(TICK)
            stall = time.perf_counter() - before - TICK
            if stall < NOTICEABLE:
                continue
            if on_stall is not None:
                on_stall(stall)
            waited_after = cpu_wait.seconds()
            waited = (
                ""
                if waited_before is None or waited_after is None
                else f", {(waited_after - waited_before) * 1e3:.1f} ms of it waiting for a CPU"
            )
            if stall >= SEVERE:
                log.warning("the event loop stalled for %.0f ms%s", stall * 1e3, waited)
            else:
                log.debug("the event loop stalled for %.1f ms%s", stall * 1e3, waited)
