"""The bot's optional HTTP port (``TTT_HTTP_PORT``): ``/livez``, ``/readyz`` and ``/metrics``,
served by aiohttp on the bot's own event loop.

``/livez`` answers 200 while the process serves at all. ``/readyz`` answers 200 once every
gateway shard of the process is connected and the database answers a trivial query within
a second, and 503 with the reason otherwise. ``/metrics`` is :mod:`bot.metrics` in
Prometheus' text format. What ready means and what is counted are the bot's: this module
only serves them. Under ``python -m bot serve`` the same port also takes Discord's
interactions, ``POST /interactions`` (:mod:`bot.endpoint`).

Anyone who can reach the port can send it anything: a request aiohttp cannot parse gets its
400 and one DEBUG line (not aiohttp's ERROR with a traceback), and a client gets
``TTT_HTTP_IDLE_TIMEOUT`` (5 s) to send a whole request (a slow one is closed after it), and
:data:`REQUEST_PATIENCE` to send its body and to take each answer (on Linux: one that reads
none is closed after it too). As the port stops, it still answers the requests its clients
were sending, on connections it had accepted or kept alive (``_Runner``), each answer then
closing its connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import hdrs, web
from aiohttp.http import HttpProcessingError
from aiohttp.web_protocol import RequestHandler

from bot.config import DEFAULT_HTTP_IDLE_TIMEOUT, ConfigError, http_url
from bot.metrics import CONTENT_TYPE

log = logging.getLogger(__name__)
# What aiohttp logs about the port's connections and requests.
server_log = logging.getLogger(f"{__name__}.server")

# How long a client has to send a request's body, and to take each answer.
REQUEST_PATIENCE = 5.0

# How many answers a connection carries before the last of them closes it (see _Connections):
# a client then opens one more connection every hundred requests, a few µs a request.
REQUESTS_A_CONNECTION = 100

# The largest request body read (only POST /interactions reads one): aiohttp refuses a larger
# one with 413 before reading it whole. An interaction's JSON is a few kilobytes (a clicked
# message of 40 components and 4,000 characters of text: some 20 KB).
MAX_REQUEST_BODY = 256 * 1024

# A stopping port waits for requests on the connections it has open with none under way
# (see _Runner) while its clients are still using it: until this long after its last answer
# (or after the stop), and at most STOP_PATIENCE in all. A client in mid-use sends its next
# request within milliseconds, on its busiest connection or, that one closed, on another.
LAST_REQUEST_PATIENCE = 0.5
STOP_PATIENCE = 2.0
# How often the stopping port looks again.
LAST_REQUEST_POLL = 0.005

# Linux's limit on how long data the socket sends may wait for its peer (None elsewhere).
_USER_TIMEOUT: int | None = getattr(socket, "TCP_USER_TIMEOUT", None)
_TCP = (socket.AF_INET, socket.AF_INET6)

# Why the process is not ready, or None when it is.
Readiness = Callable[[], Awaitable[str | None]]
# Every metric in Prometheus' text format, brought up to date.
Scrape = Callable[[], Awaitable[bytes]]
# The handler of Discord's interactions (bot.endpoint).
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _MalformedRequestsAreDebug(logging.Filter):
    """aiohttp answers a request it cannot parse (``GET * HTTP/1.1``, a bad header, a line too
    long...) with 400 and logs it at ERROR with a traceback. Whoever can reach the port can
    send one, so it is no error of the bot's, and must not be able to fill the log: one
    DEBUG line naming what was wrong with it, without the bytes sent."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, HttpProcessingError):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        record.msg = (
            f"{record.getMessage()}: a malformed request ({type(error).__name__}), answered 400"
        )
        record.args = None
        record.exc_info = record.exc_text = None
        return True


server_log.addFilter(_MalformedRequestsAreDebug())


class _Connections:
    """What the port does with each connection, as an answer on it is about to be written
    (``on_response_prepare``):

    - at its first answer, its answers must be taken within ``patience``: a connection whose
      answers the client does not take (it reads none, and the buffers between them are full)
      is closed by the kernel after it (``TCP_USER_TIMEOUT``, Linux). aiohttp waits to write
      with no limit of its own, and without one such a client holds its connection, and the
      process's shutdown (aiohttp waits a minute for an answer being written), as long as it
      likes. Set on each connection's socket: gunicorn's workers accept on sockets it made.
    - its ``requests``-th answer closes it (``Connection: close``). Under gunicorn the workers
      share one port, and a kept-alive connection stays with the worker that accepted it;
      connections opened at once (a proxy's pool filling in a burst) are often all accepted
      by one worker, which asyncio lets accept a hundred in one go, and that worker then
      carries them, and their load, for as long as they live. Closed now and then, each is
      opened again towards whichever worker accepts it then, and the load spreads again.
    - once the port stops (``stopping``, set by :class:`_Runner`), its next answer is its
      last: its client sends the next request elsewhere."""

    def __init__(self, patience: float, requests: int) -> None:
        self._milliseconds = int(patience * 1000)
        self._requests = requests
        self._answered: weakref.WeakKeyDictionary[asyncio.BaseTransport, int] = (
            weakref.WeakKeyDictionary()
        )
        # Set as the port stops (_Runner): every answer from then on is its connection's last.
        self.stopping = False
        # When the port last answered, on any connection (the loop's time).
        self.last_answer_at = 0.0

    async def on_prepare(self, request: web.Request, response: web.StreamResponse) -> None:
        transport = request.transport
        if transport is None:
            return
        self.last_answer_at = asyncio.get_running_loop().time()
        answered = self._answered.get(transport, 0) + 1
        if answered == 1:
            self._take_answers_within(transport)
        if answered < self._requests and not self.stopping:
            self._answered[transport] = answered
            return
        self._answered.pop(transport, None)
        response.force_close()
        response.headers[hdrs.CONNECTION] = "close"

    def _take_answers_within(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if _USER_TIMEOUT is not None and sock is not None and sock.family in _TCP:
            # A connection closing meanwhile is no reason to fail its request.
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, _USER_TIMEOUT, self._milliseconds)


class _Runner(web.AppRunner):
    """aiohttp's runner, whose stop answers the requests its clients were sending.

    aiohttp's stop stops listening, then at once closes every connection with no request
    under way: one that had only just opened, or a kept-alive one between two requests (a
    proxy's in mid-use, whose next request was on its way). That request met a closed
    connection, unanswered, where another of gunicorn's workers would have answered it.
    Between the two, this runner makes every answer from then on its connection's last
    (``Connection: close``), and waits for requests on the connections with none under way
    while the clients still use the port: until :data:`LAST_REQUEST_PATIENCE` after its
    last answer (or after the stop), at most :data:`STOP_PATIENCE`. A client whose busy
    connection an answer closed sends its next request on another it kept idle, and that
    one is answered (and closed) too. Then it stops as aiohttp does, those requests answered
    as every other in flight, and the connections still idle closed."""

    def __init__(self, app: web.Application, *, connections: _Connections, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._connections = connections

    async def cleanup(self) -> None:
        for site in list(self.sites):
            await site.stop()
        connections = self._connections
        connections.stopping = True
        loop = asyncio.get_running_loop()
        stopped = loop.time()
        # The accepts under way make their connections meanwhile.
        await asyncio.sleep(LAST_REQUEST_POLL)
        # Polled: aiohttp says nothing when a connection's request begins.
        while (  # noqa: ASYNC110
            self._any_idle_connection()
            and loop.time() < max(stopped, connections.last_answer_at) + LAST_REQUEST_PATIENCE
            and loop.time() < stopped + STOP_PATIENCE
        ):
            await asyncio.sleep(LAST_REQUEST_POLL)
        await super().cleanup()

    def _any_idle_connection(self) -> bool:
        server = self.server
        return server is not None and any(
            connection.transport is not None and _without_a_request(connection)
            for connection in server.connections
        )


def _without_a_request(connection: RequestHandler) -> bool:
    """Whether ``connection`` has no request under way, nor one read and not yet begun.
    Private API: its ``_request_in_progress`` and ``_messages``."""
    return not connection._request_in_progress and not connection._messages


class HealthServer:
    """Serves the three endpoints on ``host``:``port`` between :meth:`start` and :meth:`close`,
    and ``POST /interactions`` with ``interactions`` if given. Port 0 picks a free one
    (:attr:`port` says which once started).

    A connection idle for ``idle_timeout`` seconds is closed. aiohttp's timer for that starts
    when a connection opens or answers, and is not reset by what arrives, so it is also how
    long a client has to send a whole request: one that sends part of a request and then
    trickles or stalls ("slowloris") is closed after it (aiohttp's own default is an hour).
    A client has ``request_patience`` to send a body and to take each answer, and a connection
    carries ``requests_a_connection`` answers at most (see ``_Connections``)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        readiness: Readiness,
        scrape: Scrape,
        interactions: Handler | None = None,
        idle_timeout: float = DEFAULT_HTTP_IDLE_TIMEOUT,
        request_patience: float = REQUEST_PATIENCE,
        requests_a_connection: int = REQUESTS_A_CONNECTION,
    ) -> None:
        self.host = host
        self.port = port
        self._readiness = readiness
        self._scrape = scrape
        self.app = app = web.Application(client_max_size=MAX_REQUEST_BODY)
        connections = _Connections(request_patience, requests_a_connection)
        app.on_response_prepare.append(connections.on_prepare)
        # First of the application's shutdown hooks, before any of them awaits anything.
        app.on_shutdown.append(self._close_connections_without_a_request)
        if interactions is not None:
            app.router.add_post("/interactions", interactions)
        app.router.add_get("/livez", self._livez)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        # No access log: a scrape every few seconds would drown the bot's own lines.
        # Its own (start) or gunicorn's worker's (bot.gunicorn_app), which serves it on the
        # sockets gunicorn shares.
        self.runner = _Runner(
            app,
            connections=connections,
            access_log=None,
            handle_signals=False,
            logger=server_log,
            keepalive_timeout=idle_timeout,
            # A request's unread body is read and dropped for as long, then the connection is
            # closed (these endpoints read none).
            lingering_time=request_patience,
            # Bodies are read as sent. Discord signs the bytes it sends, uncompressed; aiohttp
            # would inflate a body sent with Content-Encoding first, and one that does not
            # inflate raised out of the read, even the dropped body of a GET /livez: a 500 or
            # a traceback at ERROR, for anyone.
            auto_decompress=False,
        )

    async def start(self) -> None:
        """Listen; an address or port that cannot be had stops the bot with one line naming
        the setting (TTT_HTTP_HOST or TTT_HTTP_PORT)."""
        await self.runner.setup()
        try:
            await web.TCPSite(self.runner, self.host, self.port).start()
        except OSError as error:
            await self.runner.cleanup()
            reason = error.strerror or str(error)
            # A name that does not resolve, or an address no interface of this host has, is
            # the host's to fix; anything else (taken, privileged) the port's.
            if isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL:
                setting = f"TTT_HTTP_HOST {self.host}"
            else:
                setting = f"TTT_HTTP_PORT {self.port}"
            raise ConfigError(
                f"{setting}: cannot listen on {self.host}:{self.port}: {reason}"
            ) from None
        self.port = int(self.runner.addresses[0][1])
        log.info("serving /livez, /readyz and /metrics on %s port %d", self.host, self.port)

    async def close(self) -> None:
        await self.runner.cleanup()

    async def _close_connections_without_a_request(self, app: web.Application) -> None:
        """Close, as the port stops, each connection that has no request under way or read.

        aiohttp's stop closes the idle connections (``Server.pre_shutdown``, just before the
        shutdown hooks) by marking them, and a mark ends a connection only where its handler
        already waits for a request. One whose handler had not begun to wait stays open
        marked, and aiohttp ignores the request that then arrives on it
        (aio-libs/aiohttp#2298): its client waited for an answer that never came, and the
        stop for that client to give up, up to the runner's shutdown timeout (28.5 s under
        gunicorn, whose worker is replaced only once it exits). :class:`_Runner`'s wait for
        last requests leaves no such connection in practice (each accepted connection's
        handler has begun by its end); this is the net behind it, which tells such a client
        at once and lets the stop go on (a request read, not yet begun, is answered)."""
        server = self.runner.server
        if server is None:
            return
        for connection in server.connections:
            if _without_a_request(connection):
                connection.force_close()

    def url(self, path: str) -> str:
        """Where ``path`` is served, as a URL."""
        return http_url(self.host, self.port, path)

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
