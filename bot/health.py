"""The bot's optional HTTP port (``TTT_HTTP_PORT``): ``/livez``, ``/readyz`` and ``/metrics``,
served by aiohttp on the bot's own event loop.

``/livez`` answers 200 while the process serves at all. ``/readyz`` answers 200 once every
gateway shard of the process is connected and the database answers a trivial query within
a second, and 503 with the reason otherwise. ``/metrics`` is :mod:`bot.metrics` in
Prometheus' text format. What ready means and what is counted are the bot's: this module
only serves them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.config import ConfigError
from bot.metrics import CONTENT_TYPE

log = logging.getLogger(__name__)

# Why the process is not ready, or None when it is.
Readiness = Callable[[], Awaitable[str | None]]
# Every metric in Prometheus' text format, brought up to date.
Scrape = Callable[[], Awaitable[bytes]]


class HealthServer:
    """Serves the three endpoints on ``host``:``port`` between :meth:`start` and :meth:`close`."""

    def __init__(self, host: str, port: int, *, readiness: Readiness, scrape: Scrape) -> None:
        self.host = host
        self.port = port
        self._readiness = readiness
        self._scrape = scrape
        app = web.Application()
        app.router.add_get("/livez", self._livez)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        # No access log: a scrape every few seconds would drown the bot's own lines.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)

    async def start(self) -> None:
        """Listen; a port that cannot be had stops the bot with one line naming it."""
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self.host, self.port).start()
        except OSError as error:
            await self._runner.cleanup()
            reason = error.strerror or str(error)
            raise ConfigError(
                f"TTT_HTTP_PORT {self.port}: cannot listen on {self.host}:{self.port}: {reason}"
            ) from None
        log.info("serving /livez, /readyz and /metrics on %s port %d", self.host, self.port)

    async def close(self) -> None:
        await self._runner.cleanup()

    async def _livez(self, request: web.Request) -> web.Response:
        return web.Response(text="live\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        reason = await self._readiness()
        if reason is None:
            return web.Response(text="ready\n")
        return web.Response(status=503, text=f"not ready: {reason}\n")

    async def _metrics(self, request: web.Request) -> web.Response:
        body = await self._scrape()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})
