"""The Discord-compatible server: REST routes, the gateway, test verbs and waits.

Design:

* One aiohttp application serves REST under ``/api/v10``, the gateway websocket at ``/``
  and a small control API under ``/_sim`` (for driving a sim that runs in another process).
  REST routing is a table matched here rather than aiohttp's router, so that every miss,
  including a wrong method on a known path, gets Discord's 404 JSON and is recorded.
* Every reply is written (``prepare`` + ``write_eof``) *before* waiters are woken, so a test
  that returns from a wait and sends the next event cannot overtake a reply on the wire.
* Gateway sessions outlive their sockets: dispatches sent while a socket is down are kept
  and replayed on RESUME, like Discord does; a session invalidated instead loses them.
* Before each INTERACTION_CREATE on a connected socket the sim sends a WebSocket ping (an
  RFC 6455 control frame, not a gateway payload) and waits for its pong. aiohttp answers a
  ping inside ``receive()``, which discord.py calls only once it has handled the frame
  before, so the pong proves the client processed everything sent earlier (READY,
  GUILD_CREATE, MESSAGE_CREATE...), and the round trip lets the continuations of HTTP
  replies written before run: e.g. a View stored under the message id that
  ``send_message`` returned, which a click right after would otherwise race. It used to be
  a gateway heartbeat request (op 1), whose answer goes through discord.py's gateway
  limiter (110 sends a minute, under Discord's 120): some 110 interactions a minute stalled
  the client for a minute. A pong passes no such limit.
* REST faults (``faults.py``) are applied in ``_handle`` around the route handlers, so each
  handler stays unaware of them; a request counts as arriving when its injected delay ends.
* Waits are event driven: each state change sets an ``asyncio.Event`` and ``wait_for``
  re-checks its predicate; nothing sleeps for a fixed time.
"""

# ruff: noqa: ASYNC109 -- ``timeout=`` on the verbs and waits is the documented test API.

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import aiohttp
import discord
import orjson
import yarl
from aiohttp import web

from . import faults, limits, openapi
from .commands import Resolver, build_command_data, check_can_invoke, find_command
from .models import (
    CHANNEL_DM,
    CHANNEL_GROUP_DM,
    CHANNEL_PUBLIC_THREAD,
    CHANNEL_TEXT,
    CONTEXT_BOT_DM,
    CONTEXT_GUILD,
    CONTEXT_PRIVATE_CHANNEL,
    DEFAULT_BOT_PERMISSIONS,
    FLAG_COMPONENTS_V2,
    FLAG_EPHEMERAL,
    FLAG_LOADING,
    FLAG_SUPPRESS_EMBEDS,
    FLAG_SUPPRESS_NOTIFICATIONS,
    GUILD_INSTALL,
    JSON,
    PERM_MANAGE_MESSAGES,
    PERM_SEND_MESSAGES,
    PERM_SEND_MESSAGES_IN_THREADS,
    PERM_USE_APPLICATION_COMMANDS,
    PERM_VIEW_CHANNEL,
    USER_APP_PERMISSIONS,
    USER_INSTALL,
    InteractionRecord,
    RequestRecord,
    SimChannel,
    SimClientDied,
    SimError,
    SimGuild,
    SimInteractionLost,
    SimMember,
    SimMessage,
    SimRole,
    SimTimeout,
    SimUsageError,
    SimUser,
    SnowflakeFactory,
    copy_json,
    iso,
)

if TYPE_CHECKING:
    from .seed import Seed

log = logging.getLogger("tests.discord_sim")

API_PREFIX = "/api/v10"
INTERACTION_TOKEN_LIFETIME = 15 * 60.0

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
UNKNOWN_WEBHOOK = 10015
UNKNOWN_INTERACTION = 10062
_CALLBACK_PATH = re.compile(r"/interactions/([0-9]+)/[^/]+/callback")
UNKNOWN_COMMAND = 10063
ALREADY_ACKNOWLEDGED = 40060
MISSING_ACCESS = 50001
CANNOT_EDIT_OTHERS = 50005
MISSING_PERMISSIONS = 50013
INVALID_WEBHOOK_TOKEN = 50027
INVALID_FORM_BODY = 50035

# What Discord sends in the Via header of every reply; discord.py honours a 429 only with it.
VIA = "1.1 google"
# Close codes: 4000 "Unknown error" is Discord's "reconnect and resume"; 1000 and 1001 from
# the client end its session for good.
CLOSE_UNKNOWN_ERROR = 4000

# Which callback types Discord accepts for each interaction type.
ALLOWED_CALLBACKS = {2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}
EDITABLE_FLAGS = FLAG_SUPPRESS_EMBEDS
CREATE_FLAGS = FLAG_SUPPRESS_EMBEDS | FLAG_SUPPRESS_NOTIFICATIONS | FLAG_COMPONENTS_V2

Reply = tuple[int, Any]
T = TypeVar("T")
ClientT = TypeVar("ClientT", bound=discord.Client)


class _Fail(Exception):
    """Raised by a REST handler to answer with an error."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply)
        self.reply = reply


def _error(status: int, code: int, message: str, detail: str | None = None) -> Reply:
    body: JSON = {"message": message, "code": code}
    if detail is not None:
        body["errors"] = {"sim": {"_errors": [{"code": "SIM_RULE", "message": detail}]}}
    return status, body


@dataclass
class _Call:
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


class _Connection:
    """One gateway websocket."""

    def __init__(self, request: web.Request, ws: web.WebSocketResponse) -> None:
        self.request = request
        self.ws = ws
        self.session: _Session | None = None
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
class _Session:
    """A gateway session (what RESUME continues); it outlives its sockets."""

    id: str
    shard: tuple[int, int] | None
    intents: int
    guild_ids: list[int]
    created: float = field(default_factory=time.monotonic)
    conn: _Connection | None = None
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


class DiscordSim:
    """A small Discord: see the package docstring for the API."""

    def __init__(
        self,
        *,
        response_deadline: float = 3.0,
        interaction_timeout: float = 5.0,
        token: str = "sim-bot-token",
        bot_name: str = "tttbot",
        recommended_shards: int = 1,
        heartbeat_interval_ms: int = 41250,
    ) -> None:
        self.response_deadline = response_deadline
        self.interaction_timeout = interaction_timeout
        self.token = token
        self.recommended_shards = recommended_shards
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self._clock_offset = 0.0
        self.snowflakes = SnowflakeFactory(self.now)
        self.bot_user = SimUser(self.snowflakes.next(), bot_name, bot=True)
        self.application_id = self.bot_user.id
        self.app_owner = SimUser(self.snowflakes.next(), "app-owner")
        self.users: dict[int, SimUser] = {self.bot_user.id: self.bot_user}
        self.guilds: dict[int, SimGuild] = {}
        # Users who installed the app to their account (it then works where they are).
        self.user_installs: set[int] = set()
        self.channels: dict[int, SimChannel] = {}
        self.roles: dict[int, SimRole] = {}
        self.interactions: list[InteractionRecord] = []
        self.unknown_routes: list[tuple[str, str]] = []
        self.violations: list[str] = []
        self.requests: list[RequestRecord] = []
        self.sessions: dict[str, _Session] = {}
        self.identifies = 0
        # Off only for load benchmarks: the OpenAPI checks cost about 2 ms a request, more
        # than the bot under test spends on one.
        self.spec_checks = True
        # The gateway URL GET /gateway/bot gives, when not the sim's own (a client told to
        # use another gateway must not follow this one).
        self.advertised_gateway_url: str | None = None
        self.host = "127.0.0.1"
        self.port = 0
        self._seed: Seed | None = None
        self._messages: dict[int, SimMessage] = {}
        self._channel_messages: dict[int, list[SimMessage]] = {}
        self._ix_by_id: dict[int, InteractionRecord] = {}
        self._ix_by_token: dict[str, InteractionRecord] = {}
        self._global_commands: list[JSON] = []
        self._guild_commands: dict[int, list[JSON]] = {}
        self._connections: set[_Connection] = set()
        # What wait_for() waits on: each predicate, and the future its value goes to.
        self._waiters: dict[asyncio.Future[Any], Callable[[], Any]] = {}
        self._checking = False
        self._clients: list[_ClientRun[Any]] = []
        self._runner: web.AppRunner | None = None
        self._routes = self._build_routes()
        self._ping_numbers = itertools.count(1)
        self._background: set[asyncio.Task[None]] = set()
        self.faults = faults.FaultPlan(
            [f"{method} {template}" for method, template, *_ in self._routes]
        )

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.host = host
        self.port = int(self._runner.addresses[0][1])
        log.info("discord sim listening on %s", self.api_base_url)

    async def stop(self) -> None:
        pending = list(self._background)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for conn in list(self._connections):
            await conn.close(1001, "sim stopping")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> DiscordSim:
        if self._runner is None:
            await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def seed(self) -> Seed:
        """The standard world made by ``seed_default`` (the ``sim`` fixture calls it)."""
        if self._seed is None:
            raise SimUsageError("this sim has no seed; call seed_default(sim) first")
        return self._seed

    @seed.setter
    def seed(self, value: Seed) -> None:
        self._seed = value

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_base_url(self) -> str:
        return f"{self.base_url}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        return f"ws://{self.host}:{self.port}/"

    def running(
        self,
        client: ClientT,
        *,
        timeout: float = 10.0,
        ready_delay: float = 0.05,
        token: str | None = None,
    ) -> _ClientRun[ClientT]:
        """``async with sim.running(client):`` logs ``client`` in against this sim, runs
        ``connect()`` as a task and waits until the client is ready with every guild cached.

        ``ready_delay`` caps discord.py's ``guild_ready_timeout`` (2 s by default): on_ready
        then fires that long after the last GUILD_CREATE instead of two seconds later.
        On exit the client is closed, the discord.py globals are restored, and an error that
        ended the client's task is raised. ``token`` overrides the token the client logs in
        with (``sim.token`` by default).
        """
        return _ClientRun(self, client, timeout=timeout, ready_delay=ready_delay, token=token)

    # ------------------------------------------------------------------ world building

    def add_user(self, name: str, *, bot: bool = False, global_name: str | None = None) -> SimUser:
        user = SimUser(self.snowflakes.next(), name, bot=bot, global_name=global_name)
        self.users[user.id] = user
        return user

    def add_guild(
        self,
        name: str,
        *,
        id: int | None = None,
        shard: tuple[int, int] | None = None,
        owner: SimUser | None = None,
        bot_permissions: int | discord.Permissions = DEFAULT_BOT_PERMISSIONS,
        with_bot: bool = True,
    ) -> SimGuild:
        """A guild the bot is a member of (``with_bot=False``: one it is not in, where only
        users who installed the app can use it). ``shard=(shard_id, shard_count)`` picks an
        id that ``(id >> 22) % shard_count`` routes to that shard. Without ``owner`` a user
        named "owner" is created; the owner has every permission."""
        if id is None:
            id = self.snowflakes.for_shard(*shard) if shard else self.snowflakes.next()
        if owner is None:
            owner = self.add_user("owner")
        guild = SimGuild(id, name, owner.id)
        self.guilds[guild.id] = guild
        self.add_member(guild, owner)
        if with_bot:
            bot_role = self.add_role(guild, self.bot_user.name, permissions=bot_permissions)
            self.add_member(guild, self.bot_user, roles=[bot_role])
        return guild

    def install_for_user(self, user: SimUser) -> None:
        """``user`` installs the app to their account: its commands that allow user installs
        then work in their DMs, group DMs and guilds the bot is not in."""
        self.user_installs.add(user.id)

    def add_role(
        self, guild: SimGuild, name: str, *, permissions: int | discord.Permissions = 0
    ) -> SimRole:
        value = permissions.value if isinstance(permissions, discord.Permissions) else permissions
        role = SimRole(self.snowflakes.next(), guild, name, int(value), position=len(guild.roles))
        guild.roles.append(role)
        self.roles[role.id] = role
        return role

    def add_member(
        self,
        guild: SimGuild,
        user: SimUser,
        *,
        permissions: int | discord.Permissions | None = None,
        roles: Iterable[SimRole] = (),
        nick: str | None = None,
    ) -> SimMember:
        """Make ``user`` a member. ``permissions`` are granted on top of @everyone's
        (ordinary member permissions, no moderation) through a personal role."""
        member = SimMember(user, guild, list(roles), nick=nick)
        if permissions is not None:
            member.roles.append(self.add_role(guild, f"perms:{user.name}", permissions=permissions))
        guild.members[user.id] = member
        return member

    def add_channel(self, guild: SimGuild, name: str, *, type: int = CHANNEL_TEXT) -> SimChannel:
        position = sum(1 for c in guild.channels if not c.is_thread)
        channel = SimChannel(self.snowflakes.next(), name, type, guild, position=position)
        guild.channels.append(channel)
        self.channels[channel.id] = channel
        return channel

    def add_thread(
        self, parent: SimChannel, name: str, *, owner: SimUser | None = None
    ) -> SimChannel:
        """A public thread (type 11) under ``parent``; it appears in GUILD_CREATE's threads."""
        if parent.guild is None:
            raise SimUsageError("threads need a guild channel as parent")
        owner_id = (owner or self.bot_user).id
        thread = SimChannel(
            self.snowflakes.next(),
            name,
            CHANNEL_PUBLIC_THREAD,
            parent.guild,
            parent=parent,
            owner_id=owner_id,
        )
        parent.guild.channels.append(thread)
        self.channels[thread.id] = thread
        return thread

    def dm_channel(self, user: SimUser) -> SimChannel:
        """The DM channel between the bot and ``user`` (created on first use)."""
        for channel in self.channels.values():
            if channel.type == CHANNEL_DM and channel.recipient is user:
                return channel
        channel = SimChannel(self.snowflakes.next(), user.name, CHANNEL_DM, recipient=user)
        self.channels[channel.id] = channel
        return channel

    def group_dm(self, name: str, *users: SimUser) -> SimChannel:
        """A group DM (type 3) of ``users``, the first its owner; the bot is not in it."""
        return self._private_channel(name, CHANNEL_GROUP_DM, users)

    def private_dm(self, first: SimUser, second: SimUser) -> SimChannel:
        """The DM between two users (type 1); the bot is not in it."""
        return self._private_channel(f"{first.name}-{second.name}", CHANNEL_DM, (first, second))

    def _private_channel(self, name: str, kind: int, users: tuple[SimUser, ...]) -> SimChannel:
        if len(users) < 2 or any(user.bot for user in users):
            raise SimUsageError("a group DM or a DM between users needs two or more users")
        channel = SimChannel(
            self.snowflakes.next(), name, kind, recipients=users, owner_id=users[0].id
        )
        self.channels[channel.id] = channel
        return channel

    def bot_reaches(self, channel: SimChannel) -> bool:
        """Whether the bot itself can see ``channel``: a channel of a guild it is a member of
        (with View Channel), or its own DM with a user. Elsewhere only interactions reach it."""
        if channel.guild is None:
            return channel.recipient is not None
        bot = self._bot_member(channel.guild)
        return bot is not None and bool(self.channel_permissions(bot, channel) & PERM_VIEW_CHANNEL)

    def context_of(self, channel: SimChannel) -> int:
        """The interaction context Discord reports for ``channel``."""
        if channel.guild is not None:
            return CONTEXT_GUILD
        return CONTEXT_BOT_DM if channel.recipient is not None else CONTEXT_PRIVATE_CHANNEL

    def _installs_for(self, user: SimUser, channel: SimChannel) -> dict[int, str]:
        """The installations of the app that reach ``user`` in ``channel``, as Discord's
        ``authorizing_integration_owners``: the guild's install (``"0"`` in the bot's DM),
        and the user's own."""
        owners: dict[int, str] = {}
        if channel.guild is not None and self._bot_member(channel.guild) is not None:
            owners[GUILD_INSTALL] = str(channel.guild.id)
        elif channel.guild is None and channel.recipient is not None:
            owners[GUILD_INSTALL] = "0"
        if user.id in self.user_installs:
            owners[USER_INSTALL] = str(user.id)
        return owners

    def advance_clock(self, seconds: float) -> None:
        """Move the sim's clock forward, e.g. past an interaction token's 15 minutes."""
        self._clock_offset += seconds

    def now(self) -> float:
        return time.time() + self._clock_offset

    # ------------------------------------------------------------------ state for tests

    def messages(self, channel: SimChannel | int) -> list[SimMessage]:
        """Every message of the channel in creation order, ephemeral and deleted included."""
        cid = channel if isinstance(channel, int) else channel.id
        return list(self._channel_messages.get(cid, []))

    def last_message(self, channel: SimChannel | int) -> SimMessage | None:
        live = [m for m in self.messages(channel) if not m.deleted]
        return live[-1] if live else None

    def message(self, message_id: int) -> SimMessage:
        return self._messages[message_id]

    def commands(self, guild: SimGuild | int | None = None) -> list[JSON]:
        if guild is None:
            return copy_json(self._global_commands)
        gid = guild if isinstance(guild, int) else guild.id
        return copy_json(self._guild_commands.get(gid, []))

    def take_violations(self) -> list[str]:
        """Return and clear the recorded violations (for tests that provoke them on purpose)."""
        taken = list(self.violations)
        self.violations.clear()
        return taken

    def live_sessions(self) -> list[_Session]:
        return [s for s in self.sessions.values() if not s.ended]

    # ------------------------------------------------------------------ waiting

    def _notify(self) -> None:
        """Something was recorded: look at every waiter's predicate, once the code that
        recorded it has run its course (the loop's next turn, as a woken task would)."""
        if not self._checking and self._waiters:
            self._checking = True
            asyncio.get_running_loop().call_soon(self._check_waiters)

    def _check_waiters(self) -> None:
        # The predicates are looked at here rather than by each waiting task: every change
        # would otherwise wake every waiter, and a load test keeps dozens waiting, which made
        # the server's work per interaction grow with the bot's latency.
        self._checking = False
        for future, predicate in list(self._waiters.items()):
            if future.done():
                continue
            try:
                self._raise_if_client_died()
                value = predicate()
            except Exception as error:  # the waiter raises it, as if it had looked itself
                future.set_exception(error)
                continue
            if value:
                future.set_result(value)

    async def wait_for(
        self,
        predicate: Callable[[], T | None],
        timeout: float | None = None,
        *,
        what: str | None = None,
    ) -> T:
        """Wait until ``predicate()`` is truthy and return its value. It is re-checked each time
        the sim records anything; fails with :class:`SimTimeout` after ``timeout`` seconds
        (default ``interaction_timeout``) and with :class:`SimClientDied` if a client run by
        :meth:`running` dies meanwhile."""
        limit = self.interaction_timeout if timeout is None else timeout
        self._raise_if_client_died()
        value = predicate()
        if value:
            return value
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._waiters[future] = predicate
        try:
            async with asyncio.timeout(limit):
                return await future
        except TimeoutError:
            self._raise_if_client_died()
            value = predicate()  # a last look, as of the deadline
            if value:
                return value
            raise SimTimeout(self._timeout_message(what or "the condition", limit)) from None
        finally:
            del self._waiters[future]

    def _timeout_message(self, what: str, limit: float) -> str:
        lines = [f"timed out after {limit} s waiting for {what}"]
        recent = [f"{r.method} {r.path} -> {r.status}" for r in self.requests[-8:]]
        lines.append(f"last REST calls from the bot: {recent or 'none'}")
        if self.unknown_routes:
            lines.append(f"unknown routes hit: {self.unknown_routes}")
        if self.violations:
            lines.append(f"violations so far: {self.violations}")
        if not any(s.conn for s in self.live_sessions()):
            lines.append("no gateway session is connected: is the client running (sim.running)?")
        return "\n  ".join(lines)

    def _raise_if_client_died(self) -> None:
        for run in self._clients:
            run.raise_if_died()

    def _violation(self, text: str) -> None:
        log.warning("Discord rule violation: %s", text)
        self.violations.append(text)
        self._notify()

    def _reject(self, context: str, problems: list[str]) -> Reply:
        for problem in problems:
            self._violation(f"{context}: {problem}")
        return _error(400, INVALID_FORM_BODY, "Invalid Form Body", "; ".join(problems))

    # ------------------------------------------------------------------ lookups

    def _user(self, ref: SimUser | int | str) -> SimUser:
        if isinstance(ref, SimUser):
            return ref
        for user in self.users.values():
            if str(user.id) == str(ref) or user.name == ref:
                return user
        raise SimUsageError(f"unknown user {ref!r}")

    def _channel(self, ref: SimChannel | int | str) -> SimChannel:
        if isinstance(ref, SimChannel):
            return ref
        for channel in self.channels.values():
            if str(channel.id) == str(ref) or channel.name == ref:
                return channel
        raise SimUsageError(f"unknown channel {ref!r}")

    def _message_ref(self, ref: SimMessage | int | str) -> SimMessage:
        if isinstance(ref, SimMessage):
            return ref
        try:
            return self._messages[int(ref)]
        except (KeyError, ValueError):
            raise SimUsageError(f"unknown message {ref!r}") from None

    def channel_permissions(self, member: SimMember | None, channel: SimChannel) -> int:
        """Permissions in a channel; the sim has no overwrites, so these are guild-wide."""
        if member is None:
            return 0
        return member.permissions

    def _bot_member(self, guild: SimGuild | None) -> SimMember | None:
        return guild.member(self.bot_user) if guild else None

    # ------------------------------------------------------------------ messages

    def _store_message(self, msg: SimMessage) -> SimMessage:
        self._messages[msg.id] = msg
        self._channel_messages.setdefault(msg.channel.id, []).append(msg)
        return msg

    def _new_message(
        self,
        channel: SimChannel,
        author: SimUser,
        body: JSON,
        files: list[JSON],
        *,
        interaction: InteractionRecord | None = None,
        extra_flags: int = 0,
    ) -> SimMessage:
        flags = int(body.get("flags") or 0) & (CREATE_FLAGS | FLAG_EPHEMERAL) | extra_flags
        if interaction is None:
            flags &= ~FLAG_EPHEMERAL
        msg = SimMessage(
            id=self.snowflakes.next(),
            channel=channel,
            author=author,
            content=str(body.get("content") or ""),
            embeds=body.get("embeds") or [],
            components=body.get("components") or [],
            flags=flags,
            allowed_mentions=body.get("allowed_mentions"),
            attachments=self._attachments(files),
            tts=bool(body.get("tts")),
        )
        reference = body.get("message_reference")
        if isinstance(reference, dict) and reference.get("message_id"):
            msg.reference_id = int(reference["message_id"])
            msg.type = 19
        if interaction is not None:
            msg.interaction = interaction
            msg.webhook_id = self.application_id
            msg.application_id = self.application_id
            msg.type = 20 if interaction.type == 2 else msg.type
            if msg.ephemeral:
                msg.interaction_user = interaction.user
        if not msg.ephemeral and not msg.loading:
            msg.pinged = limits.pinged_users(msg.mentioned_user_ids(), msg.allowed_mentions)
        return self._store_message(msg)

    def _attachments(self, files: list[JSON]) -> list[JSON]:
        out = []
        for index, file in enumerate(files):
            out.append(
                {
                    "id": str(self.snowflakes.next()),
                    "filename": file["filename"],
                    "size": file["size"],
                    "url": f"{self.base_url}/_sim/attachments/{index}/{file['filename']}",
                    "proxy_url": f"{self.base_url}/_sim/attachments/{index}/{file['filename']}",
                    "content_type": file.get("content_type"),
                }
            )
        return out

    @staticmethod
    def _created(body: JSON, files: list[JSON]) -> JSON:
        """A new message's body as Discord validates it (uploaded files count as content)."""
        return {**body, "attachments": list(body.get("attachments") or []) + files}

    @staticmethod
    def _merged(msg: SimMessage, body: JSON, files: list[JSON] | None = None) -> JSON:
        """The message as it would look after applying the PATCH ``body``."""
        state: JSON = {
            "content": msg.content,
            "embeds": msg.embeds,
            "components": msg.components,
            "flags": msg.flags,
            "attachments": msg.attachments,
        }
        for key in ("content", "embeds", "components", "attachments"):
            if key in body:
                state[key] = (
                    body[key] if body[key] is not None else ([] if key != "content" else "")
                )
        if "flags" in body and body["flags"] is not None:
            sent = int(body["flags"])
            # An edit may set the components-v2 flag (discord.js's MessageEditOptions: only
            # SuppressEmbeds and IsComponentsV2 can be set by an edit) but never clear it
            # (Discord's component reference; see limits.py).
            state["flags"] = (
                msg.flags & ~EDITABLE_FLAGS | sent & EDITABLE_FLAGS | sent & FLAG_COMPONENTS_V2
            )
            state["cleared_flags"] = msg.flags & FLAG_COMPONENTS_V2 & ~sent
        state["allowed_mentions"] = body.get("allowed_mentions")
        if files:
            state["attachments"] = list(state["attachments"]) + files
        return state

    def _apply_edit(
        self, msg: SimMessage, body: JSON, files: list[JSON], *, fill: bool = False
    ) -> None:
        """Apply a PATCH. ``fill`` completes a deferred "thinking" message, which Discord
        shows as a new message rather than as an edit; like any edit it pings nobody."""
        state = self._merged(msg, body)
        if not fill:
            msg.edits.append(msg.retire_version())
            msg.edited_at = time.time()
        msg.content = str(state["content"] or "")
        msg.embeds = state["embeds"]
        msg.components = state["components"]
        msg.flags = int(state["flags"]) & ~FLAG_LOADING
        if "attachments" in body or files:
            kept = [
                a
                for a in msg.attachments
                if any(str(a["id"]) == str(b.get("id")) for b in body.get("attachments") or [])
            ]
            msg.attachments = kept + self._attachments(files)
        if "allowed_mentions" in body:
            msg.allowed_mentions = body["allowed_mentions"]

    async def _dispatch_message_event(
        self, event: str, msg: SimMessage, data: JSON | None = None
    ) -> None:
        if msg.ephemeral or not self.bot_reaches(msg.channel):
            return
        guild = msg.channel.guild
        intent = INTENT_GUILD_MESSAGES if guild else INTENT_DIRECT_MESSAGES
        for session in self.live_sessions():
            if not session.covers(guild) or not session.intents & intent:
                continue
            payload = copy_json(data) if data is not None else msg.payload()
            can_read = (
                session.intents & INTENT_MESSAGE_CONTENT
                or msg.author is self.bot_user
                or guild is None
                or self.bot_user.id in msg.mentioned_user_ids()
            )
            if event != "MESSAGE_DELETE" and not can_read:
                # Without the privileged intent Discord blanks what other users wrote.
                payload.update(content="", embeds=[], components=[], attachments=[])
            await session.dispatch(event, payload)

    # ------------------------------------------------------------------ HTTP plumbing

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/" and request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._gateway(request)
        if path.startswith("/_sim/"):
            return await self._control(request)
        rel = path[len(API_PREFIX) :] if path.startswith(API_PREFIX + "/") else None
        window = fault = None
        if rel is not None:
            window = self.faults.window(request.method, rel, time.monotonic())
            fault = None if window else self.faults.take(request.method, rel)
        if fault is not None and fault.delay:
            await asyncio.sleep(fault.delay)
        call = await self._read_call(request, time.monotonic())
        route = self._route_name(call.method, rel)
        # Checked before the handlers see the call, reported after their own checks.
        spec_problems = self._spec_problems(call, path) if self.spec_checks else []
        headers: dict[str, str] = {}
        applied = False
        kind = fault.kind if fault else None
        if rel is not None and window is not None:
            retry_after = window.until - call.arrived
            status, body, headers = faults.rate_limit_reply(route, retry_after, window.global_)
            kind = "rate_limit"
            self._injected(None, kind, call, rel, route, status, window=True)
        elif fault is None or fault.kind in ("delay", "reset"):
            if fault is not None and fault.reset == "before":
                return self._reset(request, call, fault, rel, route, spec_problems, None)
            status, body = await self._route(call)
            applied = 200 <= status < 300
        elif fault.rate_limit is not None:
            status, body, headers = faults.rate_limit_reply(route, fault.rate_limit, fault.global_)
        else:
            assert fault.status is not None
            status, body = faults.status_reply(fault.status, fault.body)
        for problem in spec_problems:
            self._violation(problem)
        if fault is not None and fault.reset == "after":
            return self._reset(request, call, fault, rel, route, (), (status, body))
        self.requests.append(
            RequestRecord(call.method, rel or call.path, status, body, route, kind)
        )
        if fault is not None and rel is not None:
            self._injected(fault, fault.kind, call, rel, route, status, applied=applied)
        if fault is not None and fault.reply_delay:
            await asyncio.sleep(fault.reply_delay)
        response = await self._write(request, status, body, headers)
        if fault is not None and fault.rate_limit is not None and rel is not None:
            # Discord counts retry_after from the moment it answered.
            self.faults.open_window(call.method, rel, fault.rate_limit, fault.global_)
        self._notify()
        return response

    def _reset(
        self,
        request: web.Request,
        call: _Call,
        fault: faults.Fault,
        rel: str | None,
        route: str,
        spec_problems: Iterable[str],
        reply: Reply | None,
    ) -> web.StreamResponse:
        """Abort the connection instead of answering: ``reply`` is what the sim decided
        (the request was applied), None if it never looked at the request."""
        for problem in spec_problems:
            self._violation(problem)
        status, body = reply if reply is not None else (0, None)
        kind = f"reset-{fault.reset}"
        assert rel is not None
        answering = _CALLBACK_PATH.fullmatch(rel)
        if answering is not None and 200 <= status < 300:
            # Discord took the answer, but the bot never heard so: sending it again is how
            # it finds out (Discord refuses it with 40060).
            record = self._ix_by_id.get(int(answering[1]))
            if record is not None:
                record.answer_unheard = True
        self.requests.append(RequestRecord(call.method, rel, status, body, route, kind))
        self._injected(
            fault, "reset", call, rel, route, None, applied=200 <= status < 300, detail=kind
        )
        transport = request.transport
        if transport is not None:
            transport.abort()
        self._notify()
        # aiohttp cannot write this to the aborted transport and drops it quietly.
        return web.Response(status=500)

    def _injected(
        self,
        fault: faults.Fault | None,
        kind: faults.Kind,
        call: _Call,
        rel: str,
        route: str,
        status: int | None,
        *,
        applied: bool = False,
        window: bool = False,
        detail: str = "",
    ) -> None:
        log.info("fault: %s on %s %s -> %s", kind, call.method, rel, status)
        self.faults.record(
            faults.Injected(
                fault,
                kind,
                call.method,
                rel,
                route,
                status,
                applied,
                time.monotonic(),
                window=window,
                detail=detail,
            )
        )

    def _route_name(self, method: str, rel: str | None) -> str:
        """ "METHOD /template" of the route serving the request, or "METHOD /path" if none."""
        if rel is not None:
            for route_method, template, pattern, _, _ in self._routes:
                if route_method == method and pattern.fullmatch(rel):
                    return f"{method} {template}"
        return f"{method} {rel}"

    async def _read_call(self, request: web.Request, arrived: float) -> _Call:
        path = request.path
        body: Any = None
        files: list[JSON] = []
        if request.content_type.startswith("multipart/"):
            form = await request.post()
            for key, value in form.items():
                if key == "payload_json":
                    body = json.loads(str(value))
                elif isinstance(value, web.FileField):
                    data = value.file.read()
                    files.append(
                        {
                            "filename": value.filename,
                            "size": len(data),
                            "content_type": value.content_type,
                        }
                    )
        else:
            raw = await request.read()
            if raw:
                try:
                    body = orjson.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
        return _Call(request.method, path, request.query, request.headers, body, files, arrived)

    @staticmethod
    def _spec_problems(call: _Call, path: str) -> list[str]:
        """What in the request breaks Discord's OpenAPI spec (``path`` as requested). They
        are violations, but the reply is left to the hand-written checks: the spec is a
        preview that can be wrong, and a violation fails the test either way."""
        if not path.startswith(API_PREFIX + "/"):
            return [f"OpenAPI: {call.method} {path}: not under {API_PREFIX}"]
        problems = openapi.load().check(
            call.method,
            path[len(API_PREFIX) :],
            query=call.query.items(),
            body=call.body,
            content_type=call.headers.get("Content-Type", "application/json"),
        )
        return [str(problem) for problem in problems]

    @staticmethod
    async def _write(
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

    def _build_routes(
        self,
    ) -> list[tuple[str, str, re.Pattern[str], Callable[..., Awaitable[Reply]], bool]]:
        """(method, template, regex, handler, needs the bot token). Templates name routes
        as Discord's spec does; a ``{..._token}`` is any segment, other parameters digits."""
        table: list[tuple[str, str, Callable[..., Awaitable[Reply]], bool]] = [
            ("GET", "/users/@me", self._get_me, True),
            ("GET", "/oauth2/applications/@me", self._get_application, True),
            ("GET", "/applications/@me", self._get_application, True),
            ("GET", "/gateway", self._get_gateway, False),
            ("GET", "/gateway/bot", self._get_gateway_bot, True),
            ("GET", "/applications/{application_id}/commands", self._list_commands, True),
            ("PUT", "/applications/{application_id}/commands", self._put_commands, True),
            ("POST", "/applications/{application_id}/commands", self._post_command, True),
            (
                "GET",
                "/applications/{application_id}/commands/{command_id}",
                self._get_command,
                True,
            ),
            (
                "PATCH",
                "/applications/{application_id}/commands/{command_id}",
                self._patch_command,
                True,
            ),
            (
                "DELETE",
                "/applications/{application_id}/commands/{command_id}",
                self._delete_command,
                True,
            ),
            (
                "GET",
                "/applications/{application_id}/guilds/{guild_id}/commands",
                self._list_commands,
                True,
            ),
            (
                "PUT",
                "/applications/{application_id}/guilds/{guild_id}/commands",
                self._put_commands,
                True,
            ),
            (
                "POST",
                "/applications/{application_id}/guilds/{guild_id}/commands",
                self._post_command,
                True,
            ),
            (
                "GET",
                "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
                self._get_command,
                True,
            ),
            (
                "PATCH",
                "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
                self._patch_command,
                True,
            ),
            (
                "DELETE",
                "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
                self._delete_command,
                True,
            ),
            (
                "POST",
                "/interactions/{interaction_id}/{interaction_token}/callback",
                self._callback,
                False,
            ),
            ("POST", "/webhooks/{webhook_id}/{webhook_token}", self._followup, False),
            (
                "GET",
                "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
                functools.partial(self._get_webhook_message, message_id="@original"),
                False,
            ),
            (
                "PATCH",
                "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
                functools.partial(self._edit_webhook_message, message_id="@original"),
                False,
            ),
            (
                "DELETE",
                "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
                functools.partial(self._delete_webhook_message, message_id="@original"),
                False,
            ),
            (
                "GET",
                "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
                self._get_webhook_message,
                False,
            ),
            (
                "PATCH",
                "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
                self._edit_webhook_message,
                False,
            ),
            (
                "DELETE",
                "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
                self._delete_webhook_message,
                False,
            ),
            ("GET", "/channels/{channel_id}", self._get_channel, True),
            ("GET", "/channels/{channel_id}/messages", self._list_messages, True),
            ("POST", "/channels/{channel_id}/messages", self._create_message, True),
            ("GET", "/channels/{channel_id}/messages/{message_id}", self._get_message, True),
            ("PATCH", "/channels/{channel_id}/messages/{message_id}", self._edit_message, True),
            (
                "DELETE",
                "/channels/{channel_id}/messages/{message_id}",
                self._delete_message,
                True,
            ),
            ("POST", "/users/@me/channels", self._create_dm, True),
            ("GET", "/users/{user_id}", self._get_user, True),
            ("GET", "/guilds/{guild_id}", self._get_guild, True),
            ("GET", "/guilds/{guild_id}/channels", self._get_guild_channels, True),
            ("GET", "/guilds/{guild_id}/roles", self._get_guild_roles, True),
            ("GET", "/guilds/{guild_id}/members/{user_id}", self._get_member, True),
        ]
        return [(m, t, _template_regex(t), h, auth) for m, t, h, auth in table]

    async def _route(self, call: _Call) -> Reply:
        if not call.path.startswith(API_PREFIX + "/"):
            return self._unknown(call)
        rel = call.path[len(API_PREFIX) :]
        call.path = rel
        for method, _, pattern, handler, auth in self._routes:
            match = pattern.fullmatch(rel)
            if match is None or method != call.method:
                continue
            if auth and call.headers.get("Authorization") != f"Bot {self.token}":
                return _error(401, 0, "401: Unauthorized")
            try:
                return await handler(call, *match.groups())
            except _Fail as fail:
                return fail.reply
        return self._unknown(call)

    def _unknown(self, call: _Call) -> Reply:
        self.unknown_routes.append((call.method, call.path))
        log.warning("unknown route %s %s", call.method, call.path)
        return _error(404, 0, "404: Not Found")

    # ------------------------------------------------------------------ REST: identity

    async def _get_me(self, call: _Call) -> Reply:
        data = self.bot_user.payload()
        data.update(verified=True, mfa_enabled=False, flags=0, locale="en-US", email=None)
        return 200, data

    async def _get_application(self, call: _Call) -> Reply:
        return 200, {
            "id": str(self.application_id),
            "name": self.bot_user.name,
            "description": "",
            "icon": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.app_owner.payload(),
            "verify_key": "0" * 64,
            "flags": 0,
            "team": None,
            "bot": self.bot_user.payload(),
            "summary": "",
            "rpc_origins": [],
            "interactions_endpoint_url": None,
        }

    async def _get_gateway(self, call: _Call) -> Reply:
        return 200, {"url": self.gateway_url.rstrip("/")}

    async def _get_gateway_bot(self, call: _Call) -> Reply:
        return 200, {
            "url": (self.advertised_gateway_url or self.gateway_url).rstrip("/"),
            "shards": self.recommended_shards,
            "session_start_limit": {
                "total": 1000,
                "remaining": 1000,
                "reset_after": 0,
                "max_concurrency": 1,
            },
        }

    # ------------------------------------------------------------------ REST: commands

    def _command_scope(self, app_id: str, guild_id: str | None) -> list[JSON]:
        if int(app_id) != self.application_id:
            raise _Fail(_error(403, MISSING_ACCESS, "Missing Access"))
        if guild_id is None:
            return self._global_commands
        guild = self.guilds.get(int(guild_id))
        if guild is None or guild.member(self.bot_user) is None:
            raise _Fail(_error(403, MISSING_ACCESS, "Missing Access"))
        return self._guild_commands.setdefault(guild.id, [])

    def _stored_command(self, data: JSON, guild_id: str | None, existing: list[JSON]) -> JSON:
        out = copy_json(data)
        out.setdefault("type", 1)
        out.setdefault("description", "")
        perms = out.get("default_member_permissions")
        # Discord accepts an integer but always answers with a string.
        out["default_member_permissions"] = None if perms is None else str(perms)
        out.setdefault("nsfw", False)
        old = next(
            (c for c in existing if c["name"] == out["name"] and c["type"] == out["type"]), None
        )
        out["id"] = old["id"] if old else str(self.snowflakes.next())
        out["application_id"] = str(self.application_id)
        out["version"] = str(self.snowflakes.next())
        if guild_id is not None:
            out["guild_id"] = str(guild_id)
        return out

    async def _list_commands(self, call: _Call, app_id: str, guild_id: str | None = None) -> Reply:
        scope = self._command_scope(app_id, guild_id)
        return 200, copy_json(scope)

    async def _put_commands(self, call: _Call, app_id: str, guild_id: str | None = None) -> Reply:
        scope = self._command_scope(app_id, guild_id)
        problems = limits.check_commands(call.body, guild=guild_id is not None)
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        stored = [self._stored_command(c, guild_id, scope) for c in call.body]
        scope[:] = stored
        return 200, copy_json(stored)

    async def _post_command(self, call: _Call, app_id: str, guild_id: str | None = None) -> Reply:
        scope = self._command_scope(app_id, guild_id)
        body = call.body if isinstance(call.body, dict) else {}
        problems = limits.check_command(body)
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        stored = self._stored_command(body, guild_id, scope)
        replaced = [i for i, c in enumerate(scope) if c["id"] == stored["id"]]
        if replaced:
            scope[replaced[0]] = stored
            return 200, copy_json(stored)
        scope.append(stored)
        return 201, copy_json(stored)

    def _find_command(self, app_id: str, ids: tuple[str, ...]) -> tuple[list[JSON], int]:
        guild_id, command_id = (ids[0], ids[1]) if len(ids) == 2 else (None, ids[0])
        scope = self._command_scope(app_id, guild_id)
        for index, command in enumerate(scope):
            if command["id"] == command_id:
                return scope, index
        raise _Fail(_error(404, UNKNOWN_COMMAND, "Unknown application command"))

    async def _get_command(self, call: _Call, app_id: str, *ids: str) -> Reply:
        scope, index = self._find_command(app_id, ids)
        return 200, copy_json(scope[index])

    async def _patch_command(self, call: _Call, app_id: str, *ids: str) -> Reply:
        scope, index = self._find_command(app_id, ids)
        merged = {**scope[index], **(call.body or {})}
        problems = limits.check_command(merged)
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        merged["version"] = str(self.snowflakes.next())
        scope[index] = merged
        return 200, copy_json(merged)

    async def _delete_command(self, call: _Call, app_id: str, *ids: str) -> Reply:
        scope, index = self._find_command(app_id, ids)
        del scope[index]
        return 204, None

    # ------------------------------------------------------------------ REST: interactions

    def _expired(self, record: InteractionRecord) -> bool:
        return self.now() - record.created_at > INTERACTION_TOKEN_LIFETIME

    def _expired_reply(self, record: InteractionRecord, what: str) -> Reply:
        age = (self.now() - record.created_at) / 60
        self._violation(
            f"{what} for {record.describe()} {age:.1f} min after the interaction; "
            "interaction tokens expire after 15 min"
        )
        return _error(401, INVALID_WEBHOOK_TOKEN, "Invalid Webhook Token")

    def _callback_reply(
        self, record: InteractionRecord, call: _Call, cb_type: int, shown: SimMessage | None = None
    ) -> Reply:
        """The callback's answer: nothing, unless the bot asked for the interaction's callback
        resource (``with_response``), with the message ``shown`` as it now stands. Built only
        when asked for: a load test's driver would otherwise spend its CPU, which the bot under
        test competes for, on answers nobody reads."""
        if not call.flag("with_response"):
            return 204, None
        msg = record.message
        resource: JSON = {"type": cb_type}
        if shown is not None:
            resource["message"] = shown.payload()
        return 200, {
            "interaction": {
                "id": str(record.id),
                "type": record.type,
                "activity_instance_id": None,
                "response_message_id": str(msg.id) if msg else None,
                "response_message_loading": bool(msg and msg.loading),
                "response_message_ephemeral": bool(msg and msg.ephemeral),
            },
            "resource": resource,
        }

    async def _callback(self, call: _Call, interaction_id: str, token: str) -> Reply:
        record = self._ix_by_id.get(int(interaction_id))
        if record is None or record.token != token:
            self._violation(f"interaction callback for unknown interaction {interaction_id}")
            return _error(404, UNKNOWN_INTERACTION, "Unknown interaction")
        body = call.body if isinstance(call.body, dict) else {}
        cb_type = body.get("type")
        data = body.get("data") or {}
        context = f"response to {record.describe()}"
        record.callbacks += 1
        if record.answered and record.answer_unheard:
            record.answer_unheard = False  # once: the refusal told the bot
            return _error(400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged.")
        if record.answered and record.rejected != "invalid":
            self._violation(
                f"{context}: the interaction was answered twice "
                f"(first with type {record.response_type}, then with type {cb_type})"
            )
            return _error(400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged.")
        # The deadline is Discord's: what counts is when the callback reached it (after any
        # injected network delay), not how long the sim then takes to answer.
        now = call.arrived
        record.responded_at = now
        record.response_type = cb_type if isinstance(cb_type, int) else -1
        record.response_data = data
        record.rejected = None
        if record.sent_at is not None and now - record.sent_at > self.response_deadline:
            record.rejected = "late"
            self._violation(
                f"{context}: first answered {now - record.sent_at:.2f} s after the interaction "
                f"was sent; Discord allows {self.response_deadline} s"
            )
            return _error(404, UNKNOWN_INTERACTION, "Unknown interaction")
        if cb_type not in ALLOWED_CALLBACKS.get(record.type, set()) or (
            cb_type in (6, 7) and record.source_message is None
        ):
            record.rejected = "invalid"
            return self._reject(
                context,
                [f"callback type {cb_type!r} is not valid for interaction type {record.type}"],
            )
        problems: list[str]
        if cb_type == 4:
            problems = limits.check_message(self._created(data, call.files))
            if problems:
                record.rejected = "invalid"
                return self._reject(context, problems)
            record.message = self._new_message(
                record.channel, self.bot_user, data, call.files, interaction=record
            )
            await self._dispatch_message_event("MESSAGE_CREATE", record.message)
            return self._callback_reply(record, call, 4, record.message)
        if cb_type == 5:
            flags = FLAG_LOADING | int(data.get("flags") or 0) & FLAG_EPHEMERAL
            record.message = self._new_message(
                record.channel, self.bot_user, {}, [], interaction=record, extra_flags=flags
            )
            await self._dispatch_message_event("MESSAGE_CREATE", record.message)
            return self._callback_reply(record, call, 5, record.message)
        source = record.source_message
        if cb_type == 6:
            record.message = source
            return self._callback_reply(record, call, 6)
        if cb_type == 7:
            assert source is not None
            problems = limits.check_message(self._merged(source, data, call.files))
            if problems:
                record.rejected = "invalid"
                return self._reject(context, problems)
            self._apply_edit(source, data, call.files)
            record.message = source
            await self._dispatch_message_event("MESSAGE_UPDATE", source)
            return self._callback_reply(record, call, 7, source)
        if cb_type == 8:
            choices = data.get("choices")
            problems = limits.check_choices(choices)
            if problems:
                record.rejected = "invalid"
                return self._reject(context, problems)
            record.choices = list(choices or [])
            return self._callback_reply(record, call, 8)
        problems = limits.check_modal(data)
        if problems:
            record.rejected = "invalid"
            return self._reject(context, problems)
        record.modal = copy_json(data)
        return self._callback_reply(record, call, 9)

    def _webhook_record(
        self, app_id: str, token: str, what: str, *, probe: bool = False
    ) -> InteractionRecord:
        """The interaction behind a webhook token. ``probe``: a read that asks whether the
        interaction was answered (a bot whose callback connection dropped cannot know), which
        Discord answers with 404 rather than treating it as a mistake."""
        record = self._ix_by_token.get(token)
        if int(app_id) != self.application_id or record is None:
            self._violation(f"{what} to an unknown interaction webhook")
            raise _Fail(_error(404, UNKNOWN_WEBHOOK, "Unknown Webhook"))
        if self._expired(record):
            raise _Fail(self._expired_reply(record, what))
        if probe and (not record.answered or record.rejected):
            raise _Fail(_error(404, UNKNOWN_MESSAGE, "Unknown Message"))
        if not record.answered or record.rejected:
            why = " (its initial response came too late)" if record.rejected == "late" else ""
            self._violation(
                f"{what} for {record.describe()} before the interaction was acknowledged{why}"
            )
            raise _Fail(_error(404, UNKNOWN_WEBHOOK, "Unknown Webhook"))
        return record

    async def _followup(self, call: _Call, app_id: str, token: str) -> Reply:
        record = self._webhook_record(app_id, token, "followup")
        body = call.body if isinstance(call.body, dict) else {}
        problems = limits.check_message(self._created(body, call.files))
        if problems:
            return self._reject(f"followup to {record.describe()}", problems)
        original = record.message
        if (
            record.response_type == 5
            and original is not None
            and original.loading
            and not original.deleted
        ):
            # The first followup after a "thinking" defer becomes the deferred message, and
            # keeps the ephemeral choice made when deferring.
            # Of the followup's flags only the components-v2 layout carries over.
            layout = int(body.get("flags") or 0) & FLAG_COMPONENTS_V2
            self._apply_edit(original, {**body, "flags": layout}, call.files, fill=True)
            msg = original
            await self._dispatch_message_event("MESSAGE_UPDATE", msg)
        else:
            msg = self._new_message(
                record.channel, self.bot_user, body, call.files, interaction=record
            )
            await self._dispatch_message_event("MESSAGE_CREATE", msg)
        record.followups.append(msg)
        if not call.flag("wait"):
            return 204, None
        return 200, msg.payload()

    def _webhook_message(self, record: InteractionRecord, message_id: str) -> SimMessage | None:
        if message_id == "@original":
            msg = record.message if record.response_type in (4, 5, 6, 7) else None
        else:
            candidates = [record.message, *record.followups]
            msg = next((m for m in candidates if m is not None and str(m.id) == message_id), None)
        return None if msg is None or msg.deleted else msg

    async def _get_webhook_message(
        self, call: _Call, app_id: str, token: str, message_id: str
    ) -> Reply:
        record = self._webhook_record(app_id, token, f"GET message {message_id}", probe=True)
        msg = self._webhook_message(record, message_id)
        if msg is None:
            return _error(404, UNKNOWN_MESSAGE, "Unknown Message")
        return 200, msg.payload()

    async def _edit_webhook_message(
        self, call: _Call, app_id: str, token: str, message_id: str
    ) -> Reply:
        record = self._webhook_record(app_id, token, f"edit of message {message_id}")
        msg = self._webhook_message(record, message_id)
        if msg is None:
            self._violation(
                f"edit of {message_id} for {record.describe()}: there is no such message"
            )
            return _error(404, UNKNOWN_MESSAGE, "Unknown Message")
        body = call.body if isinstance(call.body, dict) else {}
        problems = limits.check_message(self._merged(msg, body, call.files))
        if problems:
            return self._reject(f"edit of {message_id} for {record.describe()}", problems)
        self._apply_edit(msg, body, call.files, fill=msg.loading)
        if message_id == "@original":
            record.original_edits += 1
        await self._dispatch_message_event("MESSAGE_UPDATE", msg)
        return 200, msg.payload()

    async def _delete_webhook_message(
        self, call: _Call, app_id: str, token: str, message_id: str
    ) -> Reply:
        record = self._webhook_record(app_id, token, f"delete of message {message_id}")
        msg = self._webhook_message(record, message_id)
        if msg is None:
            return _error(404, UNKNOWN_MESSAGE, "Unknown Message")
        await self._mark_deleted(msg)
        return 204, None

    async def _mark_deleted(self, msg: SimMessage) -> None:
        msg.deleted = True
        data: JSON = {"id": str(msg.id), "channel_id": str(msg.channel.id)}
        if msg.channel.guild is not None:
            data["guild_id"] = str(msg.channel.guild.id)
        await self._dispatch_message_event("MESSAGE_DELETE", msg, data)

    # ------------------------------------------------------------------ REST: channels & co

    def _visible_channel(self, channel_id: str) -> SimChannel:
        channel = self.channels.get(int(channel_id))
        if channel is None:
            raise _Fail(_error(404, UNKNOWN_CHANNEL, "Unknown Channel"))
        if channel.guild is not None:
            bot = self._bot_member(channel.guild)
            if bot is None or not self.channel_permissions(bot, channel) & PERM_VIEW_CHANNEL:
                raise _Fail(_error(403, MISSING_ACCESS, "Missing Access"))
        elif not self.bot_reaches(channel):
            # A group DM, or a DM between users: the bot is not a recipient.
            raise _Fail(_error(403, MISSING_ACCESS, "Missing Access"))
        return channel

    def _channel_message(self, channel: SimChannel, message_id: str) -> SimMessage | None:
        msg = self._messages.get(int(message_id))
        if msg is None or msg.channel is not channel or msg.deleted or msg.ephemeral:
            return None
        return msg

    async def _get_channel(self, call: _Call, channel_id: str) -> Reply:
        return 200, self._visible_channel(channel_id).payload()

    async def _list_messages(self, call: _Call, channel_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        limit = max(1, min(100, int(call.query.get("limit", "50"))))
        live = [m for m in self.messages(found) if not m.deleted and not m.ephemeral]
        return 200, [m.payload() for m in reversed(live[-limit:])]

    async def _create_message(self, call: _Call, channel_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        channel = found
        bot = self._bot_member(channel.guild)
        need = PERM_SEND_MESSAGES_IN_THREADS if channel.is_thread else PERM_SEND_MESSAGES
        if channel.guild is not None and not self.channel_permissions(bot, channel) & need:
            return _error(403, MISSING_PERMISSIONS, "Missing Permissions")
        body = call.body if isinstance(call.body, dict) else {}
        problems = limits.check_message(self._created(body, call.files))
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        msg = self._new_message(channel, self.bot_user, body, call.files)
        await self._dispatch_message_event("MESSAGE_CREATE", msg)
        return 200, msg.payload()

    async def _get_message(self, call: _Call, channel_id: str, message_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        msg = self._channel_message(found, message_id)
        if msg is None:
            return _error(404, UNKNOWN_MESSAGE, "Unknown Message")
        return 200, msg.payload()

    async def _edit_message(self, call: _Call, channel_id: str, message_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        msg = self._channel_message(found, message_id)
        if msg is None:
            return _error(404, UNKNOWN_MESSAGE, "Unknown Message")
        context = f"{call.method} {call.path}"
        if msg.author is not self.bot_user:
            self._violation(f"{context}: cannot edit a message authored by {msg.author.name}")
            return _error(403, CANNOT_EDIT_OTHERS, "Cannot edit a message authored by another user")
        body = call.body if isinstance(call.body, dict) else {}
        problems = limits.check_message(self._merged(msg, body, call.files))
        if problems:
            return self._reject(context, problems)
        self._apply_edit(msg, body, call.files)
        await self._dispatch_message_event("MESSAGE_UPDATE", msg)
        return 200, msg.payload()

    async def _delete_message(self, call: _Call, channel_id: str, message_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        msg = self._channel_message(found, message_id)
        if msg is None:
            return _error(404, UNKNOWN_MESSAGE, "Unknown Message")
        bot = self._bot_member(found.guild)
        if msg.author is not self.bot_user and not (
            bot is not None and self.channel_permissions(bot, found) & PERM_MANAGE_MESSAGES
        ):
            return _error(403, MISSING_PERMISSIONS, "Missing Permissions")
        await self._mark_deleted(msg)
        return 204, None

    async def _create_dm(self, call: _Call) -> Reply:
        body = call.body if isinstance(call.body, dict) else {}
        user = self.users.get(int(body.get("recipient_id", 0)))
        if user is None:
            return _error(404, UNKNOWN_USER, "Unknown User")
        return 200, self.dm_channel(user).payload()

    async def _get_user(self, call: _Call, user_id: str) -> Reply:
        user = self.users.get(int(user_id))
        if user is None:
            return _error(404, UNKNOWN_USER, "Unknown User")
        return 200, user.payload()

    def _bot_guild(self, guild_id: str) -> SimGuild:
        guild = self.guilds.get(int(guild_id))
        if guild is None:
            raise _Fail(_error(404, UNKNOWN_GUILD, "Unknown Guild"))
        if guild.member(self.bot_user) is None:
            raise _Fail(_error(403, MISSING_ACCESS, "Missing Access"))
        return guild

    async def _get_guild(self, call: _Call, guild_id: str) -> Reply:
        return 200, self._bot_guild(guild_id).payload()

    async def _get_guild_channels(self, call: _Call, guild_id: str) -> Reply:
        guild = self._bot_guild(guild_id)
        return 200, [c.payload() for c in guild.channels if not c.is_thread]

    async def _get_guild_roles(self, call: _Call, guild_id: str) -> Reply:
        return 200, [r.payload() for r in self._bot_guild(guild_id).roles]

    async def _get_member(self, call: _Call, guild_id: str, user_id: str) -> Reply:
        member = self._bot_guild(guild_id).member(int(user_id))
        if member is None:
            return _error(404, UNKNOWN_MEMBER, "Unknown Member")
        return 200, member.payload()

    # ------------------------------------------------------------------ gateway

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        # autoping off: the sim must see the pongs that answer its ordering pings.
        ws = web.WebSocketResponse(autoping=False, max_msg_size=0)
        await ws.prepare(request)
        conn = _Connection(request, ws)
        self._connections.add(conn)
        try:
            await conn.send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}})
            async for msg in ws:
                if msg.type is aiohttp.WSMsgType.PING:
                    with contextlib.suppress(ConnectionError, RuntimeError):
                        await ws.pong(msg.data)
                    continue
                if msg.type is aiohttp.WSMsgType.PONG:
                    with contextlib.suppress(ValueError):
                        conn.pong = max(conn.pong, int(msg.data.decode()))
                        self._notify()
                    continue
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    continue
                try:
                    frame = orjson.loads(msg.data)
                except ValueError:
                    await conn.close(4002, "Error while decoding payload.")
                    break
                await self._gateway_frame(conn, frame)
        finally:
            self._connections.discard(conn)
            session = conn.session
            if session is not None and session.conn is conn:
                session.conn = None
                if not conn.dropped and ws.close_code in (1000, 1001):
                    # A deliberate close ends the session; Discord refuses to resume it.
                    self._end_session(session, session.sent_seq)
            self._notify()
        return ws

    async def _gateway_frame(self, conn: _Connection, frame: JSON) -> None:
        op = frame.get("op")
        data = frame.get("d")
        if op == 1:
            await conn.send({"op": 11})
            if conn.session is not None:
                conn.session.heartbeats += 1
                self._notify()
        elif op == 2:
            await self._identify(conn, data or {})
        elif op == 6:
            await self._resume(conn, data or {})
        elif op == 8:
            await self._request_members(conn, data or {})
        elif op in (3, 4):
            pass  # presence and voice state updates change nothing the sim models
        else:
            await conn.close(4001, "Unknown opcode.")

    async def _identify(self, conn: _Connection, data: JSON) -> None:
        if data.get("token") != self.token:
            await conn.close(4004, "Authentication failed.")
            return
        if conn.session is not None:
            await conn.close(4005, "Already authenticated.")
            return
        raw_shard = data.get("shard")
        shard: tuple[int, int] | None = None
        if raw_shard is not None:
            shard_id, count = int(raw_shard[0]), int(raw_shard[1])
            if not 0 <= shard_id < count:
                await conn.close(4010, "Invalid shard.")
                return
            shard = (shard_id, count)
        for old in self.live_sessions():
            if old.conn is None and old.shard == shard:
                # A fresh IDENTIFY for a shard whose session is down abandons that session;
                # what was queued for it never arrives.
                self._end_session(old, old.sent_seq)
        session = _Session(secrets.token_hex(16), shard, int(data.get("intents") or 0), [])
        session.guild_ids = [
            g.id for g in self.guilds.values() if g.member(self.bot_user) and session.covers(g)
        ]
        self.sessions[session.id] = session
        session.conn = conn
        conn.session = session
        self.identifies += 1
        ready: JSON = {
            "v": 10,
            "user": {**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "flags": 0},
            "guilds": [{"id": str(gid), "unavailable": True} for gid in session.guild_ids],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.application_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "user_settings": {},
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "auth": {},
        }
        if shard is not None:
            ready["shard"] = list(shard)
        await session.dispatch("READY", ready)
        # GUILD_CREATE belongs to the GUILDS intent: without it the guilds stay unavailable,
        # which an interactions-only client copes with (interactions carry what it needs).
        if session.intents & INTENT_GUILDS:
            for gid in session.guild_ids:
                await session.dispatch(
                    "GUILD_CREATE", self._guild_create(self.guilds[gid], session.intents)
                )
        self._notify()

    def _guild_create(self, guild: SimGuild, intents: int) -> JSON:
        bot = guild.member(self.bot_user)
        members = list(guild.members.values())
        if not intents & INTENT_GUILD_PRESENCES:
            # Without the presences intent Discord only sends the bot's own member here;
            # the rest arrive through member chunking (GUILD_MEMBERS intent).
            members = [m for m in members if m.user is self.bot_user]
        data = guild.payload()
        data.update(
            joined_at=iso(bot.joined_at if bot else guild.created_at),
            large=False,
            unavailable=False,
            lazy=True,
            member_count=len(guild.members),
            channels=[c.payload(with_guild_id=False) for c in guild.channels if not c.is_thread],
            threads=[c.payload() for c in guild.channels if c.is_thread],
            members=[m.payload() for m in members],
            voice_states=[],
            presences=[],
            stage_instances=[],
            guild_scheduled_events=[],
            soundboard_sounds=[],
            embedded_activities=[],
        )
        return data

    async def _resume(self, conn: _Connection, data: JSON) -> None:
        if data.get("token") != self.token:
            await conn.close(4004, "Authentication failed.")
            return
        session = self.sessions.get(str(data.get("session_id")))
        seq = int(data.get("seq") or 0)
        if session is not None and not session.ended and not session.resumable:
            self._end_session(session, seq)
        if session is None or session.ended:
            await conn.send({"op": 9, "d": False})
            return
        if session.conn is not None and session.conn is not conn:
            old = session.conn
            old.session = None
            old.abort()
        session.conn = conn
        conn.session = session
        for frame in session.history:
            if frame["s"] > seq and await conn.send(frame):
                session.sent_seq = max(session.sent_seq, frame["s"])
        session.resumes += 1
        await session.dispatch("RESUMED", {})
        self._notify()

    def _end_session(self, session: _Session, delivered: int) -> None:
        """End ``session`` for good; interactions dispatched to it after sequence number
        ``delivered`` never reached the client, and are lost as on Discord."""
        session.ended = True
        for record in self.interactions:
            if (
                record.session_id == session.id
                and record.seq is not None
                and record.seq > delivered
                and not record.answered
            ):
                record.lost = True
        self._notify()

    async def _request_members(self, conn: _Connection, data: JSON) -> None:
        session = conn.session
        if session is None:
            await conn.close(4003, "Not authenticated.")
            return
        raw = data.get("guild_id")
        guild_ids = raw if isinstance(raw, list) else [raw]
        query = str(data.get("query") or "").lower()
        limit = int(data.get("limit") or 0)
        wanted = {int(u) for u in data.get("user_ids") or []}
        for gid in guild_ids:
            guild = self.guilds.get(int(str(gid)))
            if guild is None:
                continue
            members = [
                m
                for m in guild.members.values()
                if (not wanted or m.user.id in wanted) and m.user.name.lower().startswith(query)
            ]
            if limit:
                members = members[:limit]
            chunk: JSON = {
                "guild_id": str(guild.id),
                "members": [m.payload() for m in members],
                "chunk_index": 0,
                "chunk_count": 1,
                "not_found": [str(u) for u in wanted - {m.user.id for m in members}],
            }
            if data.get("nonce") is not None:
                chunk["nonce"] = data["nonce"]
            await session.dispatch("GUILD_MEMBERS_CHUNK", chunk)

    async def _barrier(self, session: _Session, timeout: float) -> None:
        """Ping the session's socket and wait for the pong: once it comes the client has
        handled every frame sent before (see the module docstring). Returns early if the
        socket goes away meanwhile: what is sent next then waits for the RESUME, in order."""
        conn = session.conn
        if conn is None:
            return
        number = next(self._ping_numbers)
        if not await conn.ping(number):
            return
        await self.wait_for(
            lambda: conn.pong >= number or session.conn is not conn,
            timeout,
            what="the client to answer a websocket ping (is its event loop blocked?)",
        )

    async def drop_connection(
        self, *, shard_id: int | None = None, wait: bool = True, timeout: float | None = None
    ) -> None:
        """Abort the bot's gateway socket(s) without a close frame, as a network failure
        would; with ``wait``, return once each session has been RESUMEd."""
        targets = [
            s
            for s in self.live_sessions()
            if s.conn is not None and (shard_id is None or s.shard_id == shard_id)
        ]
        if not targets:
            raise SimUsageError("drop_connection(): no connected gateway session to drop")
        before = {s.id: s.resumes for s in targets}
        for session in targets:
            conn = session.conn
            assert conn is not None
            session.conn = None
            conn.abort()
        self._notify()
        if wait:
            await self.wait_for(
                lambda: all(s.resumes > before[s.id] for s in targets),
                timeout,
                what="the client to RESUME after drop_connection()",
            )

    async def request_reconnect(
        self, *, shard_id: int | None = None, wait: bool = True, timeout: float | None = None
    ) -> None:
        """Send op 7 RECONNECT; with ``wait``, return once each session has been RESUMEd."""
        targets = [
            s
            for s in self.live_sessions()
            if s.conn is not None and (shard_id is None or s.shard_id == shard_id)
        ]
        if not targets:
            raise SimUsageError("request_reconnect(): no connected gateway session")
        before = {s.id: s.resumes for s in targets}
        for session in targets:
            assert session.conn is not None
            await session.conn.send({"op": 7, "d": None})
        if wait:
            await self.wait_for(
                lambda: all(s.resumes > before[s.id] for s in targets),
                timeout,
                what="the client to RESUME after a RECONNECT request",
            )

    async def close_gateway(
        self,
        *,
        resumable: bool = True,
        code: int | None = None,
        shard_id: int | None = None,
        wait: bool = True,
        timeout: float | None = None,
    ) -> None:
        """Close the bot's gateway socket(s) as Discord does.

        ``resumable=True``: a close frame with ``code`` (4000 "Unknown error" by default);
        the client RESUMEs and gets what was dispatched meanwhile. ``resumable=False``: the
        session is invalidated. Without ``code`` that is op 9 INVALID_SESSION (``d=false``)
        on the open socket; with one (e.g. 4009 "Session timed out") the socket is closed
        with it and the client's RESUME gets op 9. Either way the client IDENTIFYs afresh,
        and interactions dispatched to the old session that it had not received are lost
        (the verb raises :class:`SimInteractionLost`). With ``wait`` this returns once each
        session was resumed, or replaced by a new READY one.
        """
        targets = [
            s
            for s in self.live_sessions()
            if s.conn is not None and (shard_id is None or s.shard_id == shard_id)
        ]
        if not targets:
            raise SimUsageError("close_gateway(): no connected gateway session")
        before = {s.id: (s.resumes, s.created) for s in targets}
        for session in targets:
            conn = session.conn
            assert conn is not None
            if not resumable and code is None:
                await conn.send({"op": 9, "d": False})
                self._end_session(session, session.sent_seq)
                detail = "INVALID_SESSION d=false"
            else:
                session.resumable = resumable
                session.conn = None
                conn.dropped = True
                close_code = CLOSE_UNKNOWN_ERROR if code is None else code
                # Not awaited: the close handshake needs the client, which must not be able
                # to stall this call, and dispatches after it already queue for the RESUME.
                task = asyncio.create_task(conn.close(close_code, "closed by the sim"))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
                detail = f"close {close_code}" + ("" if resumable else ", then INVALID_SESSION")
            self.faults.record(
                faults.Injected(
                    None,
                    "gateway",
                    "GATEWAY",
                    f"shard {session.shard_id}",
                    "GATEWAY",
                    None,
                    False,
                    time.monotonic(),
                    detail=detail,
                )
            )
        self._notify()
        if not wait:
            return

        def settled() -> bool:
            for old in targets:
                resumes, created = before[old.id]
                if resumable:
                    if old.resumes <= resumes:
                        return False
                elif not any(
                    s.conn is not None and s.shard == old.shard and s.created > created
                    for s in self.live_sessions()
                ):
                    return False
            return True

        await self.wait_for(
            settled,
            timeout,
            what="the client to "
            + ("RESUME" if resumable else "IDENTIFY afresh")
            + " after close_gateway()",
        )

    async def dispatch_raw(self, event: str, data: JSON, *, guild: SimGuild | None = None) -> None:
        """Send an arbitrary dispatch to every live session covering ``guild`` (all if None),
        e.g. to test how a bot copes with an event the sim does not model."""
        for session in self.live_sessions():
            if guild is None or session.covers(guild):
                await session.dispatch(event, data)
        self._notify()

    # ------------------------------------------------------------------ verbs

    def _session_for(self, guild: SimGuild | None) -> _Session | None:
        candidates = [s for s in self.live_sessions() if s.covers(guild)]
        if guild is not None and self._bot_member(guild) is not None:
            # A guild the bot is in goes to the session that has it; one it is not in (a
            # user-installed app's) only by the shard formula, as DMs go to shard 0.
            candidates = [s for s in candidates if guild.id in s.guild_ids]
        if not candidates:
            return None
        # Prefer a connected session, then the newest (an older one may belong to a client
        # that went away without closing).
        return max(candidates, key=lambda s: (s.conn is not None, s.created))

    def _new_record(
        self, kind: int, user: SimUser, channel: SimChannel, **fields: Any
    ) -> InteractionRecord:
        return InteractionRecord(
            sim=self,
            id=self.snowflakes.next(),
            token=f"ix.{secrets.token_urlsafe(24)}",
            type=kind,
            user=user,
            channel=channel,
            guild=channel.guild,
            **fields,
        )

    def _member_for(self, user: SimUser, channel: SimChannel) -> SimMember | None:
        if channel.guild is None:
            if not channel.has_user(user):
                raise SimUsageError(f"{user.name} is not in DM channel {channel.id}")
            return None
        member = channel.guild.member(user)
        if member is None:
            raise SimUsageError(f"{user.name} is not a member of {channel.guild.name}")
        if not self.channel_permissions(member, channel) & PERM_VIEW_CHANNEL:
            raise SimUsageError(f"{user.name} cannot see #{channel.name}")
        return member

    def _interaction_payload(
        self, record: InteractionRecord, data: JSON, message: SimMessage | None = None
    ) -> JSON:
        channel, guild = record.channel, record.guild
        if record.owners is None:
            # A click or a modal is authorized by the installation behind the message it is
            # on; a message the bot posted itself, by the installations reaching this place.
            source = message.interaction if message is not None else None
            record.owners = (
                dict(source.owners)
                if source is not None and source.owners is not None
                else {str(k): v for k, v in self._installs_for(record.user, channel).items()}
            )
        if not record.owners:
            raise SimUsageError(
                f"the app is not installed where {record.user.name} is ({channel!r}): add the "
                "bot to the guild, or install_for_user()"
            )
        payload: JSON = {
            "id": str(record.id),
            "application_id": str(self.application_id),
            "type": record.type,
            "token": record.token,
            "version": 1,
            "data": data,
            "locale": record.user.locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": 10 * 1024 * 1024,
            "channel_id": str(channel.id),
            "authorizing_integration_owners": dict(record.owners),
            "context": self.context_of(channel),
        }
        if guild is not None:
            member = guild.member(record.user)
            assert member is not None
            channel_data = channel.payload()
            channel_data["permissions"] = str(self.channel_permissions(member, channel))
            bot = self._bot_member(guild)
            payload.update(
                guild_id=str(guild.id),
                guild_locale=guild.locale,
                guild={"id": str(guild.id), "locale": guild.locale, "features": []},
                member=member.payload(with_permissions=True),
                channel=channel_data,
                app_permissions=str(
                    self.channel_permissions(bot, channel) if bot else USER_APP_PERMISSIONS
                ),
            )
        else:
            payload.update(
                user=record.user.payload(),
                channel=channel.payload(),
                app_permissions=str(
                    DEFAULT_BOT_PERMISSIONS if self.bot_reaches(channel) else USER_APP_PERMISSIONS
                ),
            )
        if message is not None:
            payload["message"] = message.payload()
        record.payload = payload
        return payload

    async def _send_interaction(
        self, record: InteractionRecord, timeout: float | None
    ) -> InteractionRecord:
        limit = self.interaction_timeout if timeout is None else timeout
        while True:
            # A connected session gets the interaction after the ordering ping; one whose
            # socket is down queues it for the RESUME, as Discord does.
            session = await self.wait_for(
                lambda: self._session_for(record.guild),
                limit,
                what=f"a gateway session covering {record.guild or 'DMs'} "
                f"to send {record.describe()}",
            )
            await self._barrier(session, limit)
            if not session.ended:  # else it was invalidated during the ping: pick again
                break
        self.interactions.append(record)
        self._ix_by_id[record.id] = record
        self._ix_by_token[record.token] = record
        record.sent_at = time.monotonic()
        record.shard_id = session.shard_id
        record.session_id = session.id
        # dispatch() numbers the frame before it awaits the socket, so the number is known
        # to _end_session even if the session ends while the frame is being written.
        record.seq = session.seq + 1
        await session.dispatch("INTERACTION_CREATE", record.payload)
        self._notify()
        hint = ""
        if record.type == 3:
            hint = (
                " (discord.py drops a click silently when no View is registered under that "
                "message id or custom_id)"
            )
        await self.wait_for(
            lambda: record.answered or record.lost,
            limit,
            what=f"the bot's response to {record.describe()}{hint}",
        )
        if not record.answered:
            raise SimInteractionLost(
                f"{record.describe()} was lost: it was queued for gateway session "
                f"{session.id}, which was invalidated instead of resumed, so the bot never "
                "received it (Discord does not carry events over to a new session)"
            )
        return record

    def _command_for(self, guild: SimGuild | None, name: str) -> JSON:
        root = name.split()[0] if name.split() else ""
        commands = self._guild_commands.get(guild.id, []) if guild else []
        command = find_command(commands, root) or find_command(self._global_commands, root)
        if command is None:
            known = [c["name"] for c in commands + self._global_commands if c.get("type", 1) == 1]
            where = f" in {guild.name}" if guild else ""
            raise SimUsageError(
                f"/{root} is not a registered slash command{where}; registered: {known} "
                "(did the bot call tree.sync()?)"
            )
        return command

    def _command_payload(
        self,
        kind: int,
        user: SimUser,
        channel: SimChannel | int | str,
        command: str,
        values: Mapping[str, Any],
        focused: str | None,
    ) -> InteractionRecord:
        chan = self._channel(channel)
        if user.bot:
            raise SimUsageError(f"{user.name} is a bot; bots cannot invoke application commands")
        member = self._member_for(user, chan)
        if (
            member is not None
            and not self.channel_permissions(member, chan) & PERM_USE_APPLICATION_COMMANDS
        ):
            raise SimUsageError(f"{user.name} lacks use_application_commands in #{chan.name}")
        definition = self._command_for(chan.guild, command)
        installs = self._installs_for(user, chan)
        authorizing = check_can_invoke(
            definition, member, context=self.context_of(chan), installs=list(installs)
        )
        resolver = Resolver(
            guild=chan.guild,
            user_by_id=self.users.get,
            channel_by_id=self.channels.get,
            role_by_id=self.roles.get,
        )
        data = build_command_data(
            definition,
            command.split()[1:],
            values,
            resolver,
            channel_permissions=lambda c: self.channel_permissions(member, c),
            focused=focused,
        )
        record = self._new_record(
            kind, user, chan, name=" ".join(command.split()), options=dict(values)
        )
        record.owners = {str(kind): installs[kind] for kind in authorizing}
        self._interaction_payload(record, data)
        return record

    async def slash(
        self,
        user: SimUser,
        channel: SimChannel | int | str,
        command: str,
        /,
        *,
        options: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        tamper: Callable[[JSON], None] | None = None,
        tamper_event: Callable[[JSON], None] | None = None,
        **kwargs: Any,
    ) -> InteractionRecord:
        """Invoke ``/command`` ("group sub" for subcommands) as ``user`` in ``channel`` and
        return once the bot sent its initial response. Options come from ``kwargs`` (or
        ``options`` for names that clash with the parameters here).

        ``tamper`` edits the interaction's ``data`` before it is sent, as a hand-made payload
        would (an option value that is no id, a user missing from ``resolved``...): Discord
        itself would never send it, so the bot must still answer it sensibly.
        ``tamper_event`` edits the whole INTERACTION_CREATE payload (a field in a shape
        Discord never sends).
        """
        values = {**(options or {}), **kwargs}
        record = self._command_payload(2, user, channel, command, values, None)
        if tamper is not None:
            tamper(record.payload["data"])
        if tamper_event is not None:
            tamper_event(record.payload)
        return await self._send_interaction(record, timeout)

    async def autocomplete(
        self,
        user: SimUser,
        channel: SimChannel | int | str,
        command: str,
        /,
        *,
        focused: str,
        options: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> list[JSON]:
        """Ask the bot for autocomplete choices of option ``focused`` while the user has
        typed ``kwargs[focused]``; returns the choices (``[{"name", "value"}]``)."""
        values = {**(options or {}), **kwargs}
        record = self._command_payload(4, user, channel, command, values, focused)
        await self._send_interaction(record, timeout)
        return list(record.choices or [])

    def _clickable(
        self,
        user: SimUser,
        message: SimMessage | int | str,
        custom_id: str,
        stale: bool = False,
    ) -> tuple[SimMessage, JSON]:
        msg = self._message_ref(message)
        if msg.deleted:
            raise SimUsageError(f"message {msg.id} was deleted; nothing to click")
        if msg.ephemeral and msg.interaction_user is not user:
            raise SimUsageError(f"message {msg.id} is ephemeral and not visible to {user.name}")
        component = next(
            (c for c in msg.iter_components() if c.get("custom_id") == custom_id), None
        )
        if stale:
            # A client that has not received the latest edits still shows an older version
            # and Discord accepts its click: take the button from any version where it was
            # enabled, newest first.
            versions = [msg.components, *(v.components for v in reversed(msg.edits))]
            component = next(
                (
                    c
                    for components in versions
                    for c in _walk(components)
                    if c.get("custom_id") == custom_id and not c.get("disabled")
                ),
                component,
            )
        if component is None:
            present = [c.get("custom_id") for c in msg.iter_components() if c.get("custom_id")]
            raise SimUsageError(
                f"message {msg.id} has no component with custom_id {custom_id!r}; it has {present}"
            )
        if component.get("disabled"):
            raise SimUsageError(f"component {custom_id!r} on message {msg.id} is disabled")
        return msg, component

    async def click(
        self,
        user: SimUser,
        message: SimMessage | int | str,
        custom_id: str,
        /,
        *,
        timeout: float | None = None,
        stale: bool = False,
        forged: bool = False,
        tamper_event: Callable[[JSON], None] | None = None,
    ) -> InteractionRecord:
        """Press the button ``custom_id`` on ``message`` as ``user``.

        ``stale=True`` presses it as a client still showing an older version of the message
        would: the button may since have been disabled or removed (the bot must cope).
        ``forged=True`` sends ``custom_id`` whether or not the message ever had it, as a
        hand-made request would. ``tamper_event`` edits the whole INTERACTION_CREATE payload
        (a field in a shape Discord never sends).
        """
        if forged:
            msg = self._message_ref(message)
            component = {"type": 2, "style": 2, "label": "forged", "custom_id": custom_id}
        else:
            msg, component = self._clickable(user, message, custom_id, stale)
        if component.get("type") != 2:
            raise SimUsageError(
                f"{custom_id!r} is not a button (type {component.get('type')}); use select()"
            )
        self._member_for(user, msg.channel)
        record = self._new_record(3, user, msg.channel, custom_id=custom_id, source_message=msg)
        data: JSON = {"custom_id": custom_id, "component_type": 2}
        if "id" in component:
            data["id"] = component["id"]
        payload = self._interaction_payload(record, data, msg)
        if forged:
            # The message as the hand-made request shows it carries the forged button.
            shown = payload["message"]
            shown["components"] = [*shown["components"], {"type": 1, "components": [component]}]
        if tamper_event is not None:
            tamper_event(payload)
        return await self._send_interaction(record, timeout)

    async def select(
        self,
        user: SimUser,
        message: SimMessage | int | str,
        custom_id: str,
        values: list[str],
        /,
        *,
        timeout: float | None = None,
    ) -> InteractionRecord:
        """Choose ``values`` in the string select menu ``custom_id`` on ``message``."""
        msg, component = self._clickable(user, message, custom_id)
        if component.get("type") != 3:
            raise SimUsageError(
                f"{custom_id!r} is not a string select (type {component.get('type')})"
            )
        allowed = [o["value"] for o in component.get("options", [])]
        lo, hi = component.get("min_values", 1), component.get("max_values", 1)
        if any(v not in allowed for v in values) or not lo <= len(values) <= hi:
            raise SimUsageError(
                f"select {custom_id!r}: {values} is not a valid pick from {allowed} ({lo}..{hi})"
            )
        self._member_for(user, msg.channel)
        record = self._new_record(
            3,
            user,
            msg.channel,
            custom_id=custom_id,
            source_message=msg,
            options={"values": values},
        )
        self._interaction_payload(
            record, {"custom_id": custom_id, "component_type": 3, "values": values}, msg
        )
        return await self._send_interaction(record, timeout)

    async def submit_modal(
        self,
        user: SimUser,
        shown: InteractionRecord,
        /,
        values: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        **kwargs: str,
    ) -> InteractionRecord:
        """Submit the modal the bot answered ``shown`` with, text inputs by custom_id."""
        modal = shown.modal
        if modal is None:
            raise SimUsageError(f"{shown.describe()} was not answered with a modal")
        given = {**(values or {}), **kwargs}
        inputs = {
            c["custom_id"]: c for c in _walk(modal.get("components") or []) if c.get("type") == 4
        }
        unknown = [k for k in given if k not in inputs]
        if unknown:
            raise SimUsageError(f"modal {modal.get('custom_id')!r} has no text input(s) {unknown}")
        for cid, comp in inputs.items():
            text = given.get(cid, "")
            if comp.get("required", True) and not text:
                raise SimUsageError(f"modal text input {cid!r} is required")
            if text and not comp.get("min_length", 0) <= len(text) <= comp.get("max_length", 4000):
                raise SimUsageError(
                    f"modal text input {cid!r}: length {len(text)} is out of bounds"
                )

        def submitted(component: JSON) -> JSON:
            if component.get("type") == 1:
                return {
                    "type": 1,
                    "components": [submitted(c) for c in component.get("components", [])],
                }
            if component.get("type") == 18:
                return {"type": 18, "component": submitted(component["component"])}
            if component.get("type") == 4:
                return {
                    "type": 4,
                    "custom_id": component["custom_id"],
                    "value": given.get(component["custom_id"], ""),
                }
            return {"type": component.get("type"), "custom_id": component.get("custom_id")}

        data = {
            "custom_id": modal["custom_id"],
            "components": [submitted(c) for c in modal.get("components") or []],
        }
        record = self._new_record(
            5,
            user,
            shown.channel,
            custom_id=modal["custom_id"],
            options=dict(given),
            source_message=shown.source_message,
        )
        self._member_for(user, shown.channel)
        self._interaction_payload(record, data, shown.source_message)
        return await self._send_interaction(record, timeout)

    async def send_message(
        self, user: SimUser, channel: SimChannel | int | str, content: str
    ) -> SimMessage:
        """A user posts ``content`` in ``channel``; the bot gets MESSAGE_CREATE if subscribed."""
        chan = self._channel(channel)
        self._member_for(user, chan)
        msg = self._new_message(chan, user, {"content": content}, [])
        await self._dispatch_message_event("MESSAGE_CREATE", msg)
        self._notify()
        return msg

    # ------------------------------------------------------------------ control API

    async def _control(self, request: web.Request) -> web.StreamResponse:
        """A small JSON API for driving a sim that runs in its own process."""
        body: JSON = {}
        if request.can_read_body:
            body = await request.json()
        try:
            status, reply = await self._control_call(request.method, request.path, body)
        except SimUsageError as exc:
            status, reply = 400, {"error": type(exc).__name__, "message": str(exc)}
        except SimError as exc:
            status, reply = 409, {"error": type(exc).__name__, "message": str(exc)}
        return await self._write(request, status, reply)

    async def _control_call(self, method: str, path: str, body: JSON) -> Reply:
        if (method, path) == ("GET", "/_sim/state"):
            return 200, self.state_summary()
        if path == "/_sim/faults":
            return self._control_faults(method, body)
        if method != "POST":
            return 404, {"error": "unknown control route"}
        timeout = body.get("timeout")
        if path == "/_sim/slash":
            user = self._user(body["user"])
            ix = await self.slash(
                user,
                body["channel"],
                body["command"],
                options=self._control_options(body),
                timeout=timeout,
            )
            return 200, self.record_summary(ix)
        if path == "/_sim/click":
            ix = await self.click(
                self._user(body["user"]), body["message"], body["custom_id"], timeout=timeout
            )
            return 200, self.record_summary(ix)
        if path == "/_sim/autocomplete":
            choices = await self.autocomplete(
                self._user(body["user"]),
                body["channel"],
                body["command"],
                focused=body["focused"],
                options=self._control_options(body),
                timeout=timeout,
            )
            return 200, {"choices": choices}
        if path == "/_sim/drop":
            await self.drop_connection(timeout=timeout)
            return 200, {"resumed": True}
        if path == "/_sim/gateway/close":
            resumable = bool(body.get("resumable", True))
            await self.close_gateway(
                resumable=resumable,
                code=body.get("code"),
                shard_id=body.get("shard_id"),
                wait=bool(body.get("wait", True)),
                timeout=timeout,
            )
            return 200, {"resumable": resumable, "identifies": self.identifies}
        return 404, {"error": "unknown control route"}

    _FAULT_FIELDS = frozenset(
        {"route", "status", "body", "rate_limit", "global", "reset", "delay", "reply_delay"}
        | {"count", "skip"}
    )

    def _control_faults(self, method: str, body: JSON) -> Reply:
        if method == "GET":
            return 200, self.faults_summary()
        if method == "DELETE":
            self.faults.clear()
            return 200, self.faults_summary()
        if method != "POST":
            return 404, {"error": "unknown control route"}
        unknown = sorted(set(body) - self._FAULT_FIELDS)
        if unknown:
            raise SimUsageError(
                f"unknown fault field(s) {unknown}; known: {sorted(self._FAULT_FIELDS)}"
            )
        options = {k: v for k, v in body.items() if k != "global"}
        fault = self.faults.add(**options, global_=bool(body.get("global", False)))
        return 200, fault.summary()

    def faults_summary(self) -> JSON:
        return {
            "pending": [f.summary() for f in self.faults.pending],
            "injected": [i.summary() for i in self.faults.injected],
        }

    def _control_options(self, body: JSON) -> dict[str, Any]:
        # JSON cannot carry SimUser objects: "@name" stands for a user, "#name" for a channel.
        out: dict[str, Any] = {}
        for key, value in (body.get("options") or {}).items():
            if isinstance(value, str) and value.startswith("@"):
                value = self._user(value[1:])
            elif isinstance(value, str) and value.startswith("#"):
                value = self._channel(value[1:])
            out[key] = value
        return out

    def record_summary(self, ix: InteractionRecord) -> JSON:
        return {
            "id": str(ix.id),
            "type": ix.type,
            "response_type": ix.response_type,
            "rejected": ix.rejected,
            "ephemeral": ix.ephemeral,
            "latency": ix.latency,
            "message": ix.message.payload() if ix.message else None,
            "choices": ix.choices,
        }

    def state_summary(self) -> JSON:
        return {
            "api_base_url": self.api_base_url,
            "gateway_url": self.gateway_url,
            "application_id": str(self.application_id),
            "guilds": [
                {
                    "id": str(g.id),
                    "name": g.name,
                    "channels": [c.payload() for c in g.channels],
                    "members": [m.payload() for m in g.members.values()],
                }
                for g in self.guilds.values()
            ],
            "sessions": [
                {
                    "id": s.id,
                    "shard": s.shard,
                    "connected": s.conn is not None,
                    "resumes": s.resumes,
                }
                for s in self.live_sessions()
            ],
            "messages": {
                str(cid): [m.payload() | {"deleted": m.deleted} for m in msgs]
                for cid, msgs in self._channel_messages.items()
            },
            "commands": {
                "global": self._global_commands,
                **{str(g): c for g, c in self._guild_commands.items()},
            },
            "interactions": [self.record_summary(ix) for ix in self.interactions],
            "violations": self.violations,
            "unknown_routes": self.unknown_routes,
            "faults": self.faults_summary(),
        }


def _template_regex(template: str) -> re.Pattern[str]:
    parts = []
    for segment in template.split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            parts.append(r"([^/]+)" if segment.endswith("_token}") else r"(\d+)")
        else:
            parts.append(re.escape(segment))
    return re.compile("/".join(parts))


def _walk(components: list[JSON]) -> list[JSON]:
    out: list[JSON] = []
    for comp in components:
        out.append(comp)
        out += _walk(comp.get("components") or [])
        if isinstance(comp.get("component"), dict):
            out += _walk([comp["component"]])
    return out


class _ClientRun(Generic[ClientT]):
    """``async with sim.running(client)``: see :meth:`DiscordSim.running`."""

    def __init__(
        self,
        sim: DiscordSim,
        client: ClientT,
        *,
        timeout: float,
        ready_delay: float,
        token: str | None,
    ) -> None:
        self.sim = sim
        self.token = sim.token if token is None else token
        self.client = client
        self.timeout = timeout
        self.ready_delay = ready_delay
        self.task: asyncio.Task[None] | None = None
        self._saved: tuple[str, yarl.URL] | None = None
        self._reported = False

    def raise_if_died(self) -> None:
        task = self.task
        if task is None or not task.done() or self._reported:
            return
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._reported = True
            raise SimClientDied(f"the client's connect() task died: {exc!r}") from exc
        if not self.client.is_closed():
            self._reported = True
            raise SimClientDied("the client's connect() task returned while the client was open")

    async def __aenter__(self) -> ClientT:
        gateway_cls = discord.gateway.DiscordWebSocket
        self._saved = (discord.http.Route.BASE, gateway_cls.DEFAULT_GATEWAY)
        discord.http.Route.BASE = self.sim.api_base_url
        gateway_cls.DEFAULT_GATEWAY = yarl.URL(self.sim.gateway_url)
        state = self.client._connection
        state.guild_ready_timeout = min(state.guild_ready_timeout, self.ready_delay)
        try:
            await self.client.login(self.token)
            self.task = asyncio.create_task(self.client.connect(), name="discord-sim-client")
            self.task.add_done_callback(lambda _: self.sim._notify())
            self.sim._clients.append(self)
            await self._wait_ready()
        except BaseException:
            await self._shutdown(suppress=True)
            raise
        return self.client

    async def _wait_ready(self) -> None:
        assert self.task is not None
        ready = asyncio.ensure_future(self.client.wait_until_ready())
        try:
            done, _ = await asyncio.wait(
                {ready, self.task}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            ready.cancel()
        self.raise_if_died()
        if self.task.done():
            raise SimClientDied("the client's connect() task ended before the client was ready")
        if not done:
            raise SimTimeout(self.sim._timeout_message("the client to become ready", self.timeout))
        # discord.py may fire on_ready before it has parsed the last GUILD_CREATEs when they
        # arrive after guild_ready_timeout; a ping round trip proves they are handled.
        sessions = [s for s in self.sim.live_sessions() if s.conn is not None]
        for session in sessions:
            await self.sim._barrier(session, self.timeout)
        missing = [
            gid
            for session in sessions
            if session.intents & INTENT_GUILDS
            for gid in session.guild_ids
            if (g := self.client.get_guild(gid)) is None or g.unavailable
        ]
        if missing:
            raise SimError(f"the client is ready but has not cached guild(s) {missing}")

    async def _shutdown(self, *, suppress: bool) -> BaseException | None:
        error: BaseException | None = None
        try:
            await self.client.close()
            if self.task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(self.task), self.timeout)
                except asyncio.CancelledError:
                    pass
                except Exception as exc:
                    error = exc
        finally:
            if self._saved is not None:
                discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = (
                    self._saved
                )
                self._saved = None
            if self in self.sim._clients:
                self.sim._clients.remove(self)
        if error is not None and not suppress and not self._reported:
            raise SimClientDied(f"the client's connect() task failed: {error!r}") from error
        return error

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._shutdown(suppress=exc is not None)
