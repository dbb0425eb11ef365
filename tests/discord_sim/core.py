"""What every part of the sim shares: its settings and state, its clock, what tests read, waits
and violations, and lookups.

Waits are event driven: each state change calls ``_notify``, which re-checks every waiter's
predicate on the loop's next turn; nothing sleeps for a fixed time.
"""

# ruff: noqa: ASYNC109 -- ``timeout=`` on ``wait_for`` is the documented test API.

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import ssl
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import aiohttp
import nacl.signing
from aiohttp import web

from . import faults, limits
from .models import (
    ALL_PERMISSIONS,
    JSON,
    InteractionRecord,
    RequestRecord,
    SimChannel,
    SimEmoji,
    SimGuild,
    SimMember,
    SimMessage,
    SimRole,
    SimTimeout,
    SimUsageError,
    SimUser,
    SnowflakeFactory,
    copy_json,
    walk_components,
)
from .wire import (
    API_PREFIX,
    INVALID_FORM_BODY,
    REQUEST_TOO_LARGE,
    Connection,
    Reply,
    RestRoute,
    Session,
    error_reply,
)

if TYPE_CHECKING:
    from .client_run import ClientRun
    from .seed import Seed

log = logging.getLogger("tests.discord_sim")

T = TypeVar("T")


# How a problem with a custom emoji in a message's components starts (Discord answers it with
# its own error shape).
UNUSABLE_EMOJI = "custom emoji"


class SimCore:
    """What every part of :class:`DiscordSim` shares: its settings and state, the clock,
    what tests read, waits and violations, and lookups. Each mixin builds on it (or on the
    mixins it uses), so that what one part calls of another is typed."""

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
        self.emojis: dict[int, SimEmoji] = {}  # the custom emoji of every guild, while they exist
        self.interactions: list[InteractionRecord] = []
        self.unknown_routes: list[tuple[str, str]] = []
        self.violations: list[str] = []
        self.requests: list[RequestRecord] = []
        self.sessions: dict[str, Session] = {}
        self.identifies = 0
        # Off only for load benchmarks: the OpenAPI checks cost about 2 ms a request, more
        # than the bot under test spends on one.
        self.spec_checks = True
        # The gateway URL GET /gateway/bot gives, when not the sim's own (a client told to
        # use another gateway must not follow this one).
        self.advertised_gateway_url: str | None = None
        self.host = "127.0.0.1"
        self.port = 0
        # HTTP mode: where interactions are POSTed, signed with this key pair's private half,
        # instead of being sent over the gateway (none: the gateway), and how they are spread
        # over several (spread_over). See verbs.py.
        self._endpoints: list[str] = []
        self._spread_at_random: random.Random | None = None
        self._next_endpoint = 0
        # While set, each response the endpoint writes is lost on its way (a proxy between
        # Discord and the bot broke the connection after the bot wrote it): for Discord, the
        # interaction got no answer. HTTP mode's counterpart of a callback reset before
        # Discord took it.
        self.lose_http_answers = False
        self.signing_key = nacl.signing.SigningKey.generate()
        self._http_client: aiohttp.ClientSession | None = None
        # What an https endpoint's certificate is checked against: True, the system's
        # authorities (Discord checks it against the public ones); a test's own CA, as a context.
        self.interactions_ssl: ssl.SSLContext | bool = True
        # False: each interaction on a connection of its own, closed after its response. Workers
        # sharing one port (gunicorn) then share the interactions, each connection going to
        # whichever worker accepts it first; kept alive, a connection stays with the worker that
        # accepted it, and one worker (the first up after a restart) may get nearly all of them.
        self.interactions_keep_alive = True
        self._seed: Seed | None = None
        self._messages: dict[int, SimMessage] = {}
        self._channel_messages: dict[int, list[SimMessage]] = {}
        self._ix_by_id: dict[int, InteractionRecord] = {}
        self._ix_by_token: dict[str, InteractionRecord] = {}
        self._global_commands: list[JSON] = []
        self._guild_commands: dict[int, list[JSON]] = {}
        self._connections: set[Connection] = set()
        # What wait_for() waits on: each predicate, and the future its value goes to.
        self._waiters: dict[asyncio.Future[Any], Callable[[], Any]] = {}
        self._checking = False
        self._clients: list[ClientRun[Any]] = []
        self._runner: web.AppRunner | None = None
        # DiscordSim's table (server.py); the fault plan needs its route names.
        self._routes = self._build_routes()
        self._ping_numbers = itertools.count(1)
        self._background: set[asyncio.Task[None]] = set()
        self.faults = faults.FaultPlan(
            [f"{method} {template}" for method, template, *_ in self._routes]
        )

    def _build_routes(self) -> list[RestRoute]:
        """The REST route table, made once: see ``DiscordSim._build_routes``."""
        raise NotImplementedError

    async def _http_answer(self, record: InteractionRecord, body: Any, arrived: float) -> None:
        """An HTTP response's JSON ``body``, read at ``arrived``, as the callback of ``record``
        (with its checks): see ``DiscordSim._http_answer``."""
        raise NotImplementedError

    @property
    def public_key(self) -> str:
        """The application's public key in hex, as the developer portal shows it: what the bot
        checks the signature of each POSTed interaction with (``DISCORD_PUBLIC_KEY``)."""
        return self.signing_key.verify_key.encode().hex()

    # ------------------------------------------------------------------ addresses and clock

    @property
    def interactions_url(self) -> str | None:
        """HTTP mode's endpoint (the first, when spread over several), or None: the gateway.
        Setting it sends every interaction there; setting None goes back to the gateway."""
        return self._endpoints[0] if self._endpoints else None

    @interactions_url.setter
    def interactions_url(self, url: str | None) -> None:
        self.spread_over([] if url is None else [url])

    def spread_over(
        self,
        urls: Sequence[str],
        *,
        order: Literal["round robin", "random"] = "round robin",
        seed: int = 0,
    ) -> None:
        """HTTP mode over several workers, as a load balancer in front of them would: each
        interaction POSTed to the next of ``urls`` in turn, or to one picked at random
        (from ``seed``: the same seed, the same workers in the same order)."""
        if order not in ("round robin", "random"):
            raise SimUsageError(f"order is 'round robin' or 'random', not {order!r}")
        self._endpoints = list(urls)
        self._next_endpoint = 0
        self._spread_at_random = random.Random(seed) if order == "random" else None

    def next_endpoint(self) -> str:
        """The endpoint the next interaction goes to."""
        if not self._endpoints:
            raise SimUsageError("set sim.interactions_url (the bot's endpoint) first")
        if self._spread_at_random is not None:
            return self._spread_at_random.choice(self._endpoints)
        url = self._endpoints[self._next_endpoint % len(self._endpoints)]
        self._next_endpoint += 1
        return url

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_base_url(self) -> str:
        return f"{self.base_url}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        return f"ws://{self.host}:{self.port}/"

    def advance_clock(self, seconds: float) -> None:
        """Move the sim's clock forward, e.g. past an interaction token's 15 minutes."""
        self._clock_offset += seconds

    def now(self) -> float:
        return time.time() + self._clock_offset

    # ------------------------------------------------------------------ state for tests

    @property
    def seed(self) -> Seed:
        """The standard world made by ``seed_default`` (the ``sim`` fixture calls it)."""
        if self._seed is None:
            raise SimUsageError("this sim has no seed; call seed_default(sim) first")
        return self._seed

    @seed.setter
    def seed(self, value: Seed) -> None:
        self._seed = value

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

    def live_sessions(self) -> list[Session]:
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

    def _check_sent(self, data: JSON) -> list[str]:
        """What Discord would refuse in a message the bot sends: its limits
        (:func:`limits.check_message`), and any custom emoji in its components that no
        server the bot is in has (Discord answers 400, 50035 "Invalid emoji")."""
        problems = limits.check_message(data)
        for component in walk_components(list(data.get("components") or [])):
            emoji = component.get("emoji") or {}
            emoji_id = emoji.get("id")
            if emoji_id is None:
                continue
            known = self.emojis.get(int(emoji_id)) if str(emoji_id).isdigit() else None
            if known is None or known.guild.member(self.bot_user) is None:
                problems.append(f"{UNUSABLE_EMOJI} {emoji_id} is not one the bot can use")
        return problems

    def _violation(self, text: str) -> None:
        log.warning("Discord rule violation: %s", text)
        self.violations.append(text)
        self._notify()

    def _reject(self, context: str, problems: list[str]) -> Reply:
        for problem in problems:
            self._violation(f"{context}: {problem}")
        if any(problem.startswith(UNUSABLE_EMOJI) for problem in problems):
            # As Discord says it: the field's path, and the rule's code and message.
            invalid = {
                "_errors": [{"code": "BUTTON_COMPONENT_INVALID_EMOJI", "message": "Invalid emoji"}]
            }
            errors = {"components": {"0": {"components": {"0": {"emoji": {"id": invalid}}}}}}
            return 400, {
                "message": "Invalid Form Body",
                "code": INVALID_FORM_BODY,
                "errors": errors,
            }
        if any(problem.startswith(limits.TOO_LARGE) for problem in problems):
            return error_reply(413, REQUEST_TOO_LARGE, "Request entity too large")
        return error_reply(400, INVALID_FORM_BODY, "Invalid Form Body", "; ".join(problems))

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
        """Permissions in a channel: the member's guild-wide ones less what the channel (a
        thread: its parent channel) denies them (``sim.deny``); an owner or an administrator
        keeps everything."""
        if member is None:
            return 0
        allowed = member.permissions
        if allowed == ALL_PERMISSIONS:
            return allowed
        places = (channel, channel.parent) if channel.is_thread else (channel,)
        for place in places:
            if place is not None:
                allowed &= ~place.denied.get(member.id, 0)
        return allowed

    def _bot_member(self, guild: SimGuild | None) -> SimMember | None:
        return guild.member(self.bot_user) if guild else None
