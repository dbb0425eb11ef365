"""Watches the event loop for stalls: while anything blocks it, no interaction is answered."""

from __future__ import annotations

import asyncio
import logging
import time

log = logging.getLogger(__name__)

# How often the watcher wakes: the finest stall it can see, at about 100 wake-ups a second.
TICK = 0.01
# Stalls from this long are logged at DEBUG (the load benchmark reads them) ...
NOTICEABLE = 0.01
# ... and from this long at WARNING: a third of Discord's 3 s deadline gone at once.
SEVERE = 1.0


async def watch_stalls() -> None:
    """Log every stall of the running loop of at least ``NOTICEABLE`` seconds, until
    cancelled."""
    while True:
        before = time.perf_counter()
        await asyncio.sleep(TICK)
        stall = time.perf_counter() - before - TICK
        if stall >= SEVERE:
            log.warning("the event loop stalled for %.0f ms", stall * 1e3)
        elif stall >= NOTICEABLE:
            log.debug("the event loop stalled for %.1f ms", stall * 1e3)
