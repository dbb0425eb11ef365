"""What every part of the sim shares about the wire: Discord's REST prefix, intents and JSON
error codes, the REST call as a handler sees it and the error it answers with, how a reply is
written, and a gateway socket and the session that outlives it."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from .models import JSON, SimGuild

API_PREFIX = "/api/v10"

INTENT_GUILDS = 1 << 0
INTENT_GUILD_MEMBERS = 1 << 1
INTENT_GUILD_PRESENCES = 1 << 8
INTENT_GUILD_MESSAGES = 1 << 9
INTENT_DIRECT_MESSAGES = 1 << 12
INTENT_MESSAGE_CONTENT = 1 << 15

# Discord's JSON error codes used here.
UNKNOWN_CHANNEL = 10003
UNKNOWN_GUILD = 10004
UNKNOWN_MEMBER = 10007
UNKNOWN_MESSAGE = 10008
UNKNOWN_USER = 10013
UNKNOWN_EMOJI = 10014
UNKNOWN_WEBHOOK = 10015
UNKNOWN_INTERACTION = 10062
UNKNOWN_COMMAND = 10063
ALREADY_ACKNOWLEDGED = 40060
REQUEST_TOO_LARGE = 40005
MISSING_ACCESS = 50001
CANNOT_EDIT_OTHERS = 50005
MISSING_PERMISSIONS = 50013
INVALID_WEBHOOK_TOKEN = 50027
INVALID_FORM_BODY = 50035
THREAD_ARCHIVED = 50083
MAX_ACTIVE_THREADS = 160006

# What Discord sends in the Via header of every reply; discord.py honours a 429 only with it.
VIA = "1.1 google"
Reply = tuple[int, Any]
# (method, template, regex, handler, needs the bot token): a row of the REST route table.
RestRoute = tuple[str, str, re.Pattern[str], Callable[..., Awaitable[Reply]], bool]


class Fail(Exception):
    """Raised by a REST handler to answer with an error."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply)
        self.reply = reply


def error_reply(status: int, code: int, message: str, detail: str | None = None) -> Reply:
    body: JSON = {"message": message, "code": code}
    if detail is not None:
        body["errors"] = {"sim": {"_errors": [{"code": "SIM_RULE", "message": detail}]}}
    return status, body


@dataclass
class Call:
    """One REST request as the handlers see it."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: Any
    files: list[JSON]
    # time.monotonic() when the request reached the sim (after any injected delay): what
    # Discord's deadlines are measured against.
    arrived: float = field(default_factory=time.monotonic)

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("1", "true")


class Connection:
    """One gateway websocket."""

    def __init__(self, request: web.Request, ws: web.WebSocketResponse) -> None:
        self.request = request
        self.ws = ws
        self.session: Session | None = None
        self.dropped = False
        # The number of the newest ping the client answered (pings go out numbered 1, 2...).
        self.pong = 0
        self._lock = asyncio.Lock()

    async def send(self, frame: JSON) -> bool:
        """Write ``frame``; False if the socket is gone (the frame then waits for a RESUME)."""
        if self.ws.closed or self.dropped:
            return False
        async with self._lock:
            try:
                await self.ws.send_str(orjson.dumps(frame).decode())
            except (ConnectionError, RuntimeError):
                return False
        return True

    async def ping(self, number: int) -> bool:
        if self.ws.closed or self.dropped:
            return False
        async with self._lock:
            try:
                await self.ws.ping(str(number).encode())
            except (ConnectionError, RuntimeError):
                return False
        return True

    async def close(self, code: int, message: str = "") -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.ws.close(code=code, message=message.encode())

    def abort(self) -> None:
        self.dropped = True
        transport = self.request.transport
        if transport is not None:
            transport.abort()


@dataclass(eq=False)
class Session:
    """A gateway session (what RESUME continues); it outlives its sockets."""

    id: str
    shard: tuple[int, int] | None
    intents: int
    guild_ids: list[int]
    created: float = field(default_factory=time.monotonic)
    conn: Connection | None = None
    seq: int = 0
    history: list[JSON] = field(default_factory=list)
    resumes: int = 0
    heartbeats: int = 0
    ended: bool = False
    # False once the sim decided the next RESUME gets INVALID_SESSION (close_gateway).
    resumable: bool = True
    # The newest sequence number written to a socket; later ones wait for a RESUME.
    sent_seq: int = 0

    @property
    def shard_id(self) -> int:
        return self.shard[0] if self.shard else 0

    def covers(self, guild: SimGuild | None) -> bool:
        if guild is None:
            return self.shard_id == 0
        if self.shard is None:
            return True
        return guild.shard_id(self.shard[1]) == self.shard[0]

    async def dispatch(self, event: str, data: JSON) -> None:
        self.seq += 1
        seq = self.seq
        frame: JSON = {"op": 0, "t": event, "s": seq, "d": data}
        self.history.append(frame)
        del self.history[:-5000]
        if self.ended:
            return
        if self.conn is not None and await self.conn.send(frame):
            self.sent_seq = max(self.sent_seq, seq)


async def write_reply(
    request: web.Request, status: int, body: Any, headers: Mapping[str, str] | None = None
) -> web.StreamResponse:
    extra = {"Via": VIA, **(headers or {})}
    if body is None:
        response = web.Response(status=status, headers=extra)
    else:
        # discord.py only parses a reply whose Content-Type is exactly application/json;
        # aiohttp's json_response would add "; charset=utf-8".
        response = web.Response(
            status=status,
            body=orjson.dumps(body),
            headers={"Content-Type": "application/json", **extra},
        )
    # The client may be gone (it hung up during an injected reply delay); aiohttp then
    # drops the response quietly.
    with contextlib.suppress(ConnectionError):
        await response.prepare(request)
        await response.write_eof()
    return response
