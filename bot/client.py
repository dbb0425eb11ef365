"""The bot: a ``commands.Bot`` whose ``setup_hook`` opens storage, builds the service and the
boards, loads the cog, registers the buttons, installs the hot path, syncs commands when they
changed, and starts the sweeper that settles timeouts."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
import uuid
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands
from discord.ext import commands

from bot import events, invite, logs, render, threads
from bot.answers import (
    ANSWER_FAILURES,
    DEFER_AFTER,
    LAST_TRY_AFTER,
    Answer,
    Answers,
    AnswerState,
)
from bot.boards import Boards, reaches_channel
from bot.clock import Clock, SystemClock
from bot.components import DYNAMIC_ITEMS
from bot.config import Settings, require_public_key, require_serving
from bot.cycles import release_interaction
from bot.domain import Actor, UserError
from bot.endpoint import PATH, InteractionsEndpoint
from bot.errors import Reporter
from bot.fast_clicks import FastClicks
from bot.health import HealthServer
from bot.i18n import ENGLISH, CommandTranslator, language
from bot.ladder import Ladder, SeasonEnd
from bot.metrics import InteractionKind, Metrics, Outcome, measure_storage
from bot.practice import PracticeService
from bot.privacy import MembersData
from bot.service import GameService, RolesUnknownError, Swept
from bot.stalls import watch_stalls
from bot.storage.base import (
    EVERY_GUILD,
    DatabaseUnavailableError,
    GameRecord,
    ShardSlice,
    Storage,
    StorageError,
)
from bot.storage.connect import open_storage
from bot.tournaments.rounds import TournamentRounds
from bot.tournaments.service import TournamentService
from game.search import SearchBudget

log = logging.getLogger(__name__)
interactions_log = logging.getLogger(logs.INTERACTIONS)

EXTENSIONS: Sequence[str] = ("bot.extension",)

# The commands as Discord gets them, translations included, by their untranslated form: the
# catalogues are read once a process, so the same definitions translate the same while it runs,
# and translating them (every string into each of Discord's locales) is some 40 ms a start.
_translated_commands: dict[str, list[dict[str, Any]]] = {}

# How long shutdown waits for interaction handlers in flight (Discord's own patience for a
# deferred interaction is far longer; a restart should not take longer than this).
SHUTDOWN_GRACE = 10.0
# How long a custom emoji mark is taken to exist after Discord last said so: a game start asks
# at most this often per emoji, and a deleted one gives way to the bot's mark within it.
EMOJI_RECHECK = 60.0
# Discord's error codes for a channel it does not have (or no longer), and for a member id
# that is not (or no longer) one of the server's.
UNKNOWN_CHANNEL = 10003
UNKNOWN_MEMBER = 10007
# How often the heartbeat file is touched while connected (bot/healthcheck.py allows 4 misses).
HEARTBEAT_INTERVAL = 15.0
# How long /readyz waits for the database's answer.
DATABASE_PATIENCE = 1.0
# How often the live games are counted for /metrics (see TTTBot.scrape).
LIVE_GAMES_INTERVAL = 5.0
# Under `serve` one worker sweeps at a time: the one holding this lease in the database. It
# lasts a few sweeps, so a holder that misses one keeps it, and one killed is replaced soon.
SWEEPER_LEASE = "sweeper"
SWEEPER_LEASE_SWEEPS = 3


def point_at(settings: Settings) -> None:
    """Send REST and gateway traffic where the settings say (a proxy, a local server)."""
    if settings.api_base_url:
        discord.http.Route.BASE = settings.api_base_url.rstrip("/")
    if settings.gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.gateway_url)


class InFlight:
    """Counts interaction handlers still running, so that shutdown can wait for them."""

    def __init__(self) -> None:
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.asynccontextmanager
    async def __call__(self) -> AsyncIterator[None]:
        self._running += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._running -= 1
            if self._running == 0:
                self._idle.set()

    async def wait_idle(self, patience: float) -> bool:
        try:
            await asyncio.wait_for(self._idle.wait(), patience)
        except TimeoutError:
            log.warning("closing with %d interaction handlers still running", self._running)
            return False
        return True


# Option types whose value is a snowflake discord.py looks up in the interaction's resolved data.
_RESOLVED_OPTIONS = {
    discord.AppCommandOptionType.user.value: "users",
    discord.AppCommandOptionType.channel.value: "channels",
    discord.AppCommandOptionType.role.value: "roles",
}
# Option types whose value is a JSON scalar, and the Python types Discord's values have.
_SCALAR_OPTIONS: Mapping[int, tuple[type, ...]] = {
    discord.AppCommandOptionType.string.value: (str,),
    discord.AppCommandOptionType.integer.value: (int,),
    discord.AppCommandOptionType.number.value: (int, float),
    discord.AppCommandOptionType.boolean.value: (bool,),
}
_GROUPS = (
    discord.AppCommandOptionType.subcommand.value,
    discord.AppCommandOptionType.subcommand_group.value,
)


def refused_option(data: Mapping[str, Any]) -> UserError | None:
    """Why an option's value is one Discord would never send, if one is: an id that is no id,
    or one missing from the resolved data (discord.py would fail on it outside any handler,
    or hand the command a bare ``Object`` for a member); a value of another type than its
    option's (a word for a number: the handler would fail on it)."""
    resolved = data.get("resolved") or {}
    options = list(data.get("options") or [])
    while options:
        option = options.pop()
        kind = option.get("type", 0)
        if kind in _GROUPS:
            options.extend(option.get("options") or [])
            continue
        if option.get("focused"):  # autocomplete sends what was typed so far, as text
            continue
        name, value = str(option.get("name", "?")), option.get("value")
        lookup = _RESOLVED_OPTIONS.get(kind)
        if lookup is not None:
            text = str(value)
            entry = (resolved.get(lookup) or {}).get(text) if text.isascii() else None
            # discord.py reads a channel's permissions, which Discord always sends, without
            # looking: a channel without them would fail in discord.py, outside any handler.
            if (
                not text.isdigit()
                or not isinstance(entry, dict)
                or (lookup == "channels" and "permissions" not in entry)
            ):
                return UserError(
                    "The {} option doesn't name anyone here: pick from the list.", name
                )
        types = _SCALAR_OPTIONS.get(kind)
        # bool is an int to Python, never to Discord.
        if types is not None and (
            not isinstance(value, types) or (isinstance(value, bool) and bool not in types)
        ):
            return UserError("The {} option doesn't take that value: pick or type it again.", name)
    return None


class TTTCommandTree(app_commands.CommandTree["TTTBot"]):
    async def interaction_check(self, interaction: discord.Interaction[TTTBot]) -> bool:
        data: Mapping[str, Any] = interaction.data or {}
        refusal = refused_option(data)
        if refusal is None:
            return True
        log.info("refused /%s from user %s: %s", data.get("name"), interaction.user.id, refusal)
        if interaction.type is discord.InteractionType.autocomplete:
            # Released by _call, once it has counted the answer (by its response's state).
            await interaction.response.autocomplete([])
        else:
            await self.client.refuse(interaction, refusal)
            release_interaction(interaction)  # discord.py answers nothing more for a refusal
        return False

    async def _call(self, interaction: discord.Interaction[TTTBot]) -> None:
        # discord.py answers autocomplete itself, after the cog's callback returns: whether it
        # did is known only here. (Private API, like fast_clicks': tests/test_bot_health.py
        # counts autocompletes through it.)
        if interaction.type is not discord.InteractionType.autocomplete:
            await super()._call(interaction)
            return
        try:
            await super()._call(interaction)
        except app_commands.AppCommandError as error:
            # No command, or no focused option, to offer choices for: a command Discord still
            # lists that this process does not know, or a hand-made payload. on_error would
            # answer with a message, which Discord refuses for an autocomplete.
            data: Mapping[str, Any] = interaction.data or {}
            log.info(
                "offered nothing to an autocomplete of /%s from user %s: %s",
                data.get("name"),
                interaction.user.id,
                error,
            )
            interaction.command_failed = True
            await interaction.response.autocomplete([])
        finally:
            self.client.autocompleted(interaction)
            release_interaction(interaction)  # discord.py has answered it, or never will

    async def on_error(
        self, interaction: discord.Interaction[TTTBot], error: app_commands.AppCommandError
    ) -> None:
        # discord.py calls this after the command's own handlers. A cog's commands are answered
        # by its cog_app_command_error; this answers the rest (a command Discord still lists
        # but this process does not know, a signature that no longer matches).
        try:
            if not isinstance(getattr(interaction.command, "binding", None), commands.Cog):
                await self.client.refuse(interaction, error)
        finally:
            release_interaction(interaction)


# The bot never joins voice: discord.py's warnings about missing voice libraries are noise.
discord.VoiceClient.warn_nacl = False
discord.VoiceClient.warn_dave = False


class _NoGuildsIntentWarning(logging.Filter):
    """Drops discord.py's "Guilds intent seems to be disabled" warning, which the bot causes
    on purpose (it asks for no intent: see ``TTTBot.__init__``) and nobody can act on."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Guilds intent seems to be disabled")


_NO_GUILDS_INTENT_WARNING = _NoGuildsIntentWarning()


class _FailuresAreWarnings(logging.Filter):
    """Makes discord.py's ERROR lines with a traceback about ``failures`` of the network or of
    Discord one-line WARNINGs naming the failure: they are no bug of the bot's, and discord.py
    carries on after them. A traceback is for bugs (an alert on ERROR would page for these);
    any other exception keeps its ERROR and traceback."""

    def __init__(self, failures: tuple[type[BaseException], ...]) -> None:
        super().__init__()
        self._failures = failures

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if record.levelno >= logging.ERROR and isinstance(error, self._failures):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            detail = str(error) or type(error).__name__
            record.msg, record.args = f"{record.getMessage()}: {detail}", None
            record.exc_info = record.exc_text = None
        return True


# discord.py sends autocomplete choices itself and logs a failure to send them at ERROR: when
# the network or Discord failed (a dropped connection, a late answer), that is a WARNING, as
# every other failed answer is (``bot.answers``).
_ANSWER_FAILURES_ARE_WARNINGS = _FailuresAreWarnings(ANSWER_FAILURES)
# A shard whose reconnection failed (the gateway unreachable for a moment, or answering 502)
# logs "Attempting a reconnect for shard ID ... in ...s" at ERROR and tries again: a routine
# event of a bot's life, a WARNING. These are the failures discord.py's shard retries.
_GATEWAY_FAILURES = (
    OSError,
    TimeoutError,
    aiohttp.ClientError,
    discord.HTTPException,
    discord.GatewayNotFound,
    discord.ConnectionClosed,
)
_GATEWAY_RETRIES_ARE_WARNINGS = _FailuresAreWarnings(_GATEWAY_FAILURES)


class TTTBot(commands.AutoShardedBot):
    """One process of the bot: every gateway shard when ``SHARD_IDS`` is unset (as many as
    Discord recommends, or ``SHARD_COUNT``), else those it names, with other processes
    running the rest on the same database."""

    storage: Storage
    service: GameService
    members_data: MembersData
    practice: PracticeService
    ladder: Ladder
    boards: Boards
    reporter: Reporter
    tournaments: TournamentService
    tournament_rounds: TournamentRounds

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        force_sync: bool = False,
        over_http: bool = False,
        sweep_interval: float = 5.0,
        defer_after: float = DEFER_AFTER,
        last_try_after: float = LAST_TRY_AFTER,
        search_budget: SearchBudget | None = None,
        **options: Any,
    ) -> None:
        # Everything the bot acts on arrives as an interaction, which carries its guild, channel,
        # member and permissions, so no gateway intent is needed at all (discord.py 2.7 handles
        # interactions from uncached guilds), let alone a privileged one.
        intents = discord.Intents.none()
        # Under serve no shard runs: SHARD_COUNT and SHARD_IDS mean nothing there (an env file
        # kept from a sharded gateway deployment), not even in the logs' shard field.
        shard_count = None if over_http else settings.shard_count
        if settings.shard_ids is not None and not over_http:
            options["shard_ids"] = list(settings.shard_ids)
        # discord.py warns at every start that this may cause state issues; it cannot here.
        logging.getLogger("discord.state").addFilter(_NO_GUILDS_INTENT_WARNING)
        logging.getLogger("discord.app_commands.tree").addFilter(_ANSWER_FAILURES_ARE_WARNINGS)
        logging.getLogger("discord.shard").addFilter(_GATEWAY_RETRIES_ARE_WARNINGS)
        self.metrics = Metrics()
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            help_command=None,
            allowed_mentions=discord.AllowedMentions.none(),
            tree_cls=TTTCommandTree,
            shard_count=shard_count,
            http_trace=self.metrics.http_trace(),
            **options,
        )
        self.settings = settings
        self.clock = clock or SystemClock()
        self.rng = rng
        self.force_sync = force_sync
        self.sweep_interval = sweep_interval
        self.search_budget = search_budget
        self.in_flight = InFlight()
        self.answers = Answers(
            self.metrics,
            self.marks_refused,
            defer_after=defer_after,
            last_try_after=last_try_after,
        )
        self.fast_clicks = FastClicks(self.answers, self.in_flight, self.interaction_done)
        self._sweeper: asyncio.Task[None] | None = None
        self._closing: asyncio.Task[None] | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._stall_watch: asyncio.Task[None] | None = None
        self._live_games_count: asyncio.Task[None] | None = None
        self._process_sample: asyncio.Task[None] | None = None
        self._ping: asyncio.Task[str | None] | None = None
        self._health: HealthServer | None = None
        # Under `python -m bot serve` (over_http): the endpoint Discord POSTs interactions to,
        # and set once it takes them (the gateway mode's is_ready()).
        self.over_http = over_http
        # Who this worker is to the sweeper lease: unique to this process, whatever its host.
        self.sweeper_id = uuid.uuid4().hex
        self.holds_sweeper_lease = False
        self.endpoint: InteractionsEndpoint | None = None
        # discord.py's INTERACTION_CREATE parser, guarded (from setup_hook on).
        self._read_interaction: events.Reader | None = None
        self._serving = asyncio.Event()
        # Set as setup_hook begins (the database opened, migrated): a stop asked for from then
        # on waits for the set-up to end.
        self._setting_up = False
        # Each gateway keep-alive's time of last send when the bot first saw it, and each
        # shard's last gateway latency known to be real (see gateway_latency).
        self._first_sends: weakref.WeakKeyDictionary[discord.gateway.KeepAliveHandler, float] = (
            weakref.WeakKeyDictionary()
        )
        self._gateway_latencies: dict[int, float] = {}
        self._wake = asyncio.Event()
        # Set when the start-up sweep has ended, however it ended: from then on nothing but
        # a member, a wake_sweeper() or the next interval moves a game or a tournament on
        # (the tests wait for it, so that their steps do not race the sweep's).
        self.first_sweep_done = asyncio.Event()
        # Custom emoji marks Discord was asked about: whether they exist, and when it said.
        self._emoji_checks: dict[tuple[int, int], tuple[bool, float]] = {}

    @contextlib.asynccontextmanager
    async def handling(self, interaction: discord.Interaction[Any]) -> AsyncIterator[Answer]:
        """Every command's and button's handler: counted for shutdown, answered within
        Discord's deadline, its failure reported; in a channel the bot is not in, followed by
        a game that ended there unseen."""
        answer = self.answers.begin(interaction)
        fields = logs.fields_of(interaction, self.shard_count)
        with logs.about(fields):
            async with self.in_flight(), answer.in_time():
                try:
                    yield answer
                except Exception as error:
                    await self._show_unseen(answer)
                    await self.reporter.report(answer, error)
                else:
                    await self._after_answer(answer)
            self.interaction_done(answer.state)

    async def refuse(self, interaction: discord.Interaction[Any], error: Exception) -> None:
        """Answer an interaction no handler takes (a check or an option's value failed, a
        command this process does not know, a click no button routes, a form the bot never
        opened) with what went wrong, and count it."""
        answer = self.answers.begin(interaction)
        with logs.about(logs.fields_of(interaction, self.shard_count)):
            await self.reporter.report(answer, error)
            self.interaction_done(answer.state)

    def interaction_done(self, state: AnswerState) -> None:
        """Count how an interaction's handling ended, and log it (``bot.interactions``)."""
        self._ended(state.interaction_id, state.label, state.outcome(), state.latency)

    def autocompleted(self, interaction: discord.Interaction[Any]) -> None:
        """Count and log an autocomplete, which discord.py answers itself."""
        latency = None
        if not interaction.response.is_done():
            outcome = Outcome.FAILED
        else:
            latency = self.metrics.answered(InteractionKind.AUTOCOMPLETE, interaction.id)
            # Refused by the tree's check: answered with no choices.
            outcome = Outcome.REFUSED if interaction.command_failed else Outcome.ANSWERED
        with logs.about(logs.fields_of(interaction, self.shard_count)):
            self._ended(interaction.id, InteractionKind.AUTOCOMPLETE, outcome, latency)

    def _ended(
        self,
        interaction_id: int,
        kind: InteractionKind,
        outcome: Outcome,
        latency: float | None,
    ) -> None:
        """An interaction's handling ended: its count, and its one ``bot.interactions`` line."""
        self.metrics.interaction(kind, outcome)
        latency_ms = None if latency is None else round(latency * 1e3, 1)
        interactions_log.info(
            "interaction %s (%s): %s, first answer after %s ms",
            interaction_id,
            kind.value,
            outcome.value,
            latency_ms,
            extra={"outcome": outcome.value, "latency_ms": latency_ms},
        )

    async def _show_unseen(self, answer: Answer) -> None:
        if not reaches_channel(answer.interaction):
            await self.boards.show_unseen(answer)

    async def _after_answer(self, answer: Answer) -> None:
        """What follows a handler that answered: a game that ended unseen in the channel, or
        the channel's route dropped. The interaction has its answer, so a failure here is
        this step's alone: logged, never raised on to discord.py, which would answer the
        interaction a second time (and say nothing was done, of what was)."""
        try:
            await self._show_unseen(answer)
            await self._reached_again(answer)
        except StorageError as error:
            log.warning("interaction answered, but what follows it failed: %s", error)
        except Exception:
            log.exception("interaction answered, but what follows it failed")

    async def _reached_again(self, answer: Answer) -> None:
        """After a command answered in a server channel the bot reaches: the channel's
        route, if it kept one while it could not post there, goes."""
        interaction = answer.interaction
        if (
            interaction.guild_id is not None
            and interaction.type is discord.InteractionType.application_command
            and reaches_channel(interaction)
        ):
            await self.boards.reached_again(answer)

    async def on_app_command_completion(
        self, interaction: discord.Interaction[TTTBot], command: object
    ) -> None:
        # Dispatched once a command has returned without an error: it is answered.
        release_interaction(interaction)

    async def login(self, token: str) -> None:
        # Pointed here rather than in __init__: these are process-wide, and login is the
        # first moment discord.py uses them.
        point_at(self.settings)
        await super().login(token)

    async def login_unless_stopped(self, token: str, stop: asyncio.Event) -> bool:
        """:meth:`login` (which sets up: setup_hook), unless ``stop`` is set first; whether
        the bot logged in. While Discord is still being asked who the bot is (a login that
        Discord's outage makes slow, retried for half a minute by discord.py), a stop ends it
        at once: nothing is open yet. Once set-up has begun (the database opened and
        migrated), it is left to finish, then the bot stops."""
        logging_in = asyncio.create_task(self.login(token), name="ttt-login")
        stopping = asyncio.create_task(stop.wait(), name="ttt-stop")
        try:
            await asyncio.wait({logging_in, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not logging_in.done() and not self._setting_up:
            logging_in.cancel()
            await asyncio.gather(logging_in, return_exceptions=True)
            log.info("stopping before the bot logged in")
            return False
        await logging_in  # its failure goes to the caller, as a plain login's would
        return not stop.is_set()

    async def setup_hook(self) -> None:
        self._setting_up = True
        if self.over_http:
            invite.check_public_key(self.application, self.settings.public_key)
        invite.log_if_in_no_server(self.application)
        invite.log_front_door(self.application, self.over_http)
        self.storage = await open_storage(self.settings.database, self.clock)
        measure_storage(self.storage, self.metrics)
        assert self.user is not None
        self.service = GameService(
            self.storage,
            self.clock,
            bot_user=Actor(self.user.id, self.user.name, is_bot=True),
            turn_timeout=self.settings.turn_timeout,
            challenge_timeout=self.settings.challenge_timeout,
            rng=self.rng,
            shards=self.own_shards,
            search_budget=self.search_budget,
            custom_emoji_exists=self.custom_emoji_exists,
            member_roles=self.member_roles,
            channel_deleted=self.channel_deleted,
            keep_finished_days=self.settings.keep_finished_games_days,
        )
        self.members_data = MembersData(self.storage, self.clock, self.service)
        self.practice = PracticeService(self.storage, self.clock)
        self.ladder = Ladder(
            self.storage, self.clock, self.service.server_settings, self.own_shards
        )
        self.boards = Boards(
            self.storage,
            self,
            self.clock,
            self.own_shards,
            self.marks_refused,
            before_late_board=self.ping_before_late_board,
        )
        self.reporter = Reporter(self.boards, self.in_flight)
        self.tournaments = TournamentService(self.storage, self.clock, self.service.server_settings)
        self.tournament_rounds = TournamentRounds(
            self,
            self.storage,
            self.tournaments,
            self.service,
            self.boards,
            self.clock,
            self.own_shards,
        )
        await self.tree.set_translator(CommandTranslator())
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        for extension in EXTENSIONS:
            await self.load_extension(extension)
        assert self.application_id is not None  # set at login, before this hook
        self.answers.open(self.http.user_agent, self.application_id)
        parsers = self._connection.parsers
        self.fast_clicks.install(
            parsers,
            service=self.service,
            boards=self.boards,
            shard_count=lambda: self.shard_count,
        )
        self._read_interaction = events.guard(parsers)["INTERACTION_CREATE"]
        if self.force_sync or self.syncs_commands:
            await self.sync_commands(force=self.force_sync)
        else:
            log.info("commands are synced by the process that runs shard 0, not this one")
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="ttt-sweeper")
        self._stall_watch = asyncio.create_task(self._watch_stalls(), name="ttt-stall-watch")
        if self.settings.heartbeat_file:
            self._heartbeat = asyncio.create_task(
                self._beat_forever(Path(self.settings.heartbeat_file)), name="ttt-heartbeat"
            )
        if self.settings.http_port is not None or self.over_http:
            self._live_games_count = asyncio.create_task(
                self._count_live_games_forever(), name="ttt-live-games"
            )
        if self.metrics.multiprocess:
            self._process_sample = asyncio.create_task(
                self.metrics.sample_process_forever(), name="ttt-process-sample"
            )

    async def serve(self, token: str, stop: asyncio.Event) -> None:
        """Log in and answer interactions until ``stop`` is set (SIGTERM) or the gateway ends,
        then shut down in order: first no new interactions (the gateway goes), then those in
        flight are finished, then the HTTP session and the storage close."""
        async with self:  # its exit runs close()
            if self.settings.http_port is not None:
                # Before login: /livez answers, and /readyz says why not ready, from the start.
                self._health = HealthServer(
                    self.settings.http_host,
                    self.settings.http_port,
                    readiness=self.readiness,
                    scrape=self.scrape,
                    idle_timeout=self.settings.http_idle_timeout,
                )
                await self._health.start()
            if not await self.login_unless_stopped(token, stop):
                return
            gateway = asyncio.create_task(self.connect(), name="ttt-gateway")
            stopping = asyncio.create_task(stop.wait(), name="ttt-stop")
            try:
                await asyncio.wait({gateway, stopping}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
            if gateway.done():
                gateway.result()  # what ended it (a rejected token, a refused intent...)
                return
            log.info("stopping: no new interactions; finishing those in flight")
            # Cancelling connect() stops launching shards; closing each shard stops reading
            # its events at once and tells Discord its session is over. discord.py's own
            # close() would close them only alongside the HTTP session the handlers in flight
            # still need. A shard that is reconnecting swallows the cancellation (discord.py's
            # reidentify and reconnect return on CancelledError): cancel until connect() ends.
            while not gateway.done():
                gateway.cancel()
                await asyncio.wait({gateway}, timeout=0.1)
            await asyncio.gather(
                *(shard.disconnect() for shard in self.shards.values()), return_exceptions=True
            )
            # Interactions read just before the gateway closed are still being scheduled by
            # discord.py (a task each): let them start, and count as in flight, before close()
            # looks.
            await asyncio.sleep(0.1)

    async def serve_interactions(self, token: str, stop: asyncio.Event) -> None:
        """``python -m bot serve``: log in through REST (no gateway), set up as
        :meth:`serve` does, and answer the interactions Discord POSTs to ``/interactions`` on
        the HTTP port until ``stop`` is set; then no new ones, and shut down in order."""
        require_serving(self.settings)
        async with self:  # its exit runs close()
            self._health = self.http_front()
            await self._health.start()
            if await self.login_unless_stopped(token, stop):
                self.open_endpoint()
                log.info("answering interactions at %s", self._health.url(PATH))
                await stop.wait()
            # Also when stopped while starting: a request held for the start gets its 503 now.
            await self.stop_answering()

    def http_front(self) -> HealthServer:
        """The HTTP port's server under ``python -m bot serve`` (not listening yet):
        ``POST /interactions`` (the endpoint, closed until :meth:`start_answering`) beside
        ``/livez``, ``/readyz`` and ``/metrics``. :meth:`serve_interactions` listens on
        ``TTT_HTTP_PORT`` with it; under gunicorn (:mod:`bot.gunicorn_app`) each worker
        serves its runner on the sockets gunicorn shares."""
        assert self.over_http, "TTTBot(over_http=True) serves interactions"
        require_public_key(self.settings)
        assert self.settings.public_key is not None
        self.endpoint = InteractionsEndpoint(
            self.settings.public_key,
            self.answers,
            self._posted_interaction,
            self._note_interactions,
        )
        return HealthServer(
            self.settings.http_host,
            self.settings.http_port or 0,
            readiness=self.readiness,
            scrape=self.scrape,
            interactions=self.endpoint.handle,
            idle_timeout=self.settings.http_idle_timeout,
        )

    async def start_answering(self, token: str) -> None:
        """Log in through REST, which runs setup_hook (storage, cogs, commands, the sweeper),
        then open the endpoint: from here interactions are answered and ``/readyz`` may say
        ready. Inside ``async with bot``."""
        await self.login(token)
        self.open_endpoint()

    def open_endpoint(self) -> None:
        """Take interactions from now on (logged in and set up): ``/readyz`` may say ready."""
        assert self.endpoint is not None, "http_front() makes the endpoint"
        self.endpoint.open()
        self._serving.set()

    async def stop_answering(self) -> None:
        """No new interactions; those already parsed start, and count as in flight, before
        close() waits for them."""
        log.info("stopping: no new interactions; finishing those in flight")
        if self.endpoint is not None:
            self.endpoint.close()
        # Interactions parsed just before are being scheduled (a task each): let them
        # start, and count as in flight, before close() looks.
        await asyncio.sleep(0.1)

    async def _note_interactions(self, notes: Sequence[tuple[int, float]]) -> frozenset[int]:
        """Those of these interactions no worker noted before (see bot.endpoint): the storage
        exists by then, the endpoint taking interactions only once the bot is set up."""
        return await self.storage.note_interactions(notes)

    def _posted_interaction(self, data: Any) -> bool:
        """An interaction POSTed to the endpoint goes where the gateway's go: discord.py's
        parser of INTERACTION_CREATE (bot.fast_clicks in front), through bot.events' guard;
        False if it could not be read."""
        assert self._read_interaction is not None  # set up before the endpoint opens
        return self._read_interaction(data)

    @property
    def http_port(self) -> int | None:
        """The port the HTTP server listens on, once it does."""
        return self._health.port if self._health is not None else None

    async def until_answering(self) -> None:
        """Wait until interactions reach this process: the gateway ready, or the endpoint
        open."""
        if self.over_http:
            await self._serving.wait()
        else:
            await self.wait_until_ready()

    async def close(self) -> None:
        # Safe to call twice and to cancel (asyncio.run cancels what is left at exit): one
        # shutdown runs to its end, so the storage is always closed and its thread stops.
        if self._closing is None:
            self._closing = asyncio.create_task(self._close_in_order(), name="ttt-close")
        await asyncio.shield(self._closing)

    async def _close_in_order(self) -> None:
        try:
            # Let handlers finish their follow-up work (storing the new board's id, retiring
            # the old board) before the HTTP session goes away.
            await self.in_flight.wait_idle(patience=SHUTDOWN_GRACE)
            for task in (
                self._sweeper,
                self._heartbeat,
                self._stall_watch,
                self._live_games_count,
                self._process_sample,
                self._ping,
            ):
                if task is not None:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
            if self.holds_sweeper_lease:
                # Another worker sweeps from its next sweep on, not when the lease runs out.
                await self.storage.release_lease(SWEEPER_LEASE, self.sweeper_id)
                self.holds_sweeper_lease = False
                log.info("worker %s gave the sweeper lease up", self.sweeper_id)
            if self.settings.heartbeat_file:
                heartbeat = Path(self.settings.heartbeat_file)
                await asyncio.to_thread(heartbeat.unlink, missing_ok=True)
            await super().close()
            await self.answers.close()
            if self._health is not None:
                await self._health.close()
        finally:
            service = getattr(self, "service", None)
            if service is not None:
                service.engine_workers.close()
            storage = getattr(self, "storage", None)
            if storage is not None:
                await storage.close()

    @property
    def own_shards(self) -> ShardSlice:
        """The guilds whose background work is this process's: every guild, unless
        ``SHARD_IDS`` gives it only some of the shards. Under ``serve``, every guild whatever
        the shard settings say: any worker is given any guild's interactions, and the sweeper
        lease, not a shard, says which worker sweeps."""
        ids, count = self.settings.shard_ids, self.settings.shard_count
        if self.over_http or ids is None or count is None:
            return EVERY_GUILD
        return ShardSlice(count, frozenset(ids))

    @property
    def syncs_commands(self) -> bool:
        """Whether this process registers the commands (when their definitions changed):
        only one of the processes sharing the shards should, and shard 0 always runs. Every
        ``serve`` worker does: it runs no shard (the stored hash spares a second sync)."""
        return self.over_http or self.settings.shard_ids is None or 0 in self.settings.shard_ids

    def is_connected(self) -> bool:
        """Whether every shard this process runs has its gateway connection open (a shard
        still launching, or failing to, counts as not connected)."""
        if self.shard_count is None:
            return False
        expected = self.shard_ids or range(self.shard_count)
        shards = [self.get_shard(shard_id) for shard_id in expected]
        return all(shard is not None and not shard.is_closed() for shard in shards)

    async def readiness(self) -> str | None:
        """Why this process is not ready to answer interactions (``/readyz``), or None."""
        if self.over_http:
            if self.endpoint is None or not self.endpoint.answering:
                return "not answering interactions: starting, or stopping"
        elif not self.is_ready():
            return "not connected to Discord yet"
        elif not self.is_connected():
            return "a gateway shard of this process is not connected"
        # One ping at a time: while one is unanswered (a hung server), every check waits on it
        # rather than adding another, and for DATABASE_PATIENCE at most. Not wait_for: on
        # timeout it cancels the query and waits until the cancellation is through, which on
        # a hung server is when the server answers again.
        ping = self._ping
        if ping is None or ping.done():
            ping = self._ping = asyncio.create_task(self._ping_database(), name="ttt-ping")
        done, _ = await asyncio.wait({ping}, timeout=DATABASE_PATIENCE)
        if not done:
            return f"the database did not answer within {DATABASE_PATIENCE:g} s"
        return ping.result()

    async def _ping_database(self) -> str | None:
        try:
            await self.storage.ping()
        except Exception as error:
            return f"the database did not answer: {type(error).__name__}: {error}"
        return None

    async def scrape(self) -> bytes:
        """``/metrics``: what is read rather than counted brought up to date, then all of it.
        Nothing here waits on the database: the live games are counted every
        :data:`LIVE_GAMES_INTERVAL` seconds in the background (a count at each scrape held
        every scrape behind the database's queue, and a hung database hung the scrape)."""
        metrics = self.metrics
        expected = list(self.shard_ids or range(self.shard_count or 0))  # under serve, none
        metrics.shards.set(len(expected))
        shards = [self.get_shard(shard_id) for shard_id in expected]
        metrics.shards_connected.set(
            sum(1 for shard in shards if shard is not None and not shard.is_closed())
        )
        for shard_id in expected:
            latency = self.gateway_latency(shard_id)
            if latency is not None:
                metrics.gateway_latency.labels(str(shard_id)).set(latency)
        return await metrics.scraped()

    async def _count_live_games_forever(self) -> None:
        failing = False
        while not self.is_closed():
            try:
                self.metrics.live_games.set(await self.storage.live_games())
            except Exception as error:  # the gauge keeps the last count
                if not failing:
                    log.info("could not count live games for /metrics: %s", error)
                failing = True
            else:
                failing = False
            await asyncio.sleep(LIVE_GAMES_INTERVAL)

    def gateway_latency(self, shard_id: int) -> float | None:
        """The shard's gateway latency, as last measured on a heartbeat its connection's
        keep-alive sent and Discord acknowledged; None before there was one.

        discord.py also counts the heartbeat it sends when a connection opens, from the
        moment it made the keep-alive to the moment it reads the acknowledgement. Before a
        fresh IDENTIFY it pauses 5 s without reading, so after such a reconnection its latency
        read 5 s until the next heartbeat, 41 s later. That first heartbeat goes without the
        keep-alive's ``_last_send`` (private, as ``_keep_alive`` is) moving: a latency counts
        once that moved and was acknowledged since."""
        try:
            keep_alive = self._get_websocket(shard_id=shard_id)._keep_alive
        except KeyError:  # not launched yet
            keep_alive = None
        if keep_alive is not None:
            first_send = self._first_sends.setdefault(keep_alive, keep_alive._last_send)
            sent_since = keep_alive._last_send != first_send
            if sent_since and keep_alive._last_ack >= keep_alive._last_send:
                self._gateway_latencies[shard_id] = keep_alive.latency
        return self._gateway_latencies.get(shard_id)

    async def on_shard_connect(self, shard_id: int) -> None:
        # Dispatched on READY (and shard_resumed on RESUMED), before the new keep-alive's
        # first heartbeat of its own: its last send is still when it was made.
        self.gateway_latency(shard_id)

    async def on_shard_resumed(self, shard_id: int) -> None:
        self.gateway_latency(shard_id)

    async def launch_shard(
        self, gateway: yarl.URL, shard_id: int, *, initial: bool = False
    ) -> None:
        # Without SHARD_COUNT, discord.py connects to the URL GET /gateway/bot gives, whatever
        # DISCORD_GATEWAY_URL says (and reconnects to DISCORD_GATEWAY_URL): the setting wins.
        if self.settings.gateway_url:
            gateway = yarl.URL(self.settings.gateway_url)
        await super().launch_shard(gateway, shard_id, initial=initial)

    # -- commands ---------------------------------------------------------------------------

    async def sync_commands(self, *, force: bool = False) -> bool:
        """Register the commands with Discord if their definitions changed since the last sync
        (their hash is kept in the database), or when ``force`` asks. True if it synced."""
        guild = discord.Object(self.settings.guild_id) if self.settings.guild_id else None
        if guild is not None:
            self.tree.copy_global_to(guild=guild)
        # As Discord will get them, translations included: a changed catalogue re-syncs.
        commands = self.tree.get_commands(guild=guild)
        translator = self.tree.translator
        untranslated = json.dumps(
            [type(translator).__qualname__, [command.to_dict(self.tree) for command in commands]],
            sort_keys=True,
        )
        definitions = _translated_commands.get(untranslated)
        if definitions is None:
            definitions = [
                await command.get_translated_payload(self.tree, translator)
                if translator is not None
                else command.to_dict(self.tree)
                for command in commands
            ]
            _translated_commands[untranslated] = definitions
        digest = hashlib.sha256(json.dumps(definitions, sort_keys=True).encode()).hexdigest()
        scope = f"guild {guild.id}" if guild else "global"
        key = f"commands_hash:{self.application_id}:{scope}"
        if not force and await self.storage.get_setting(key) == digest:
            log.info("%s commands unchanged since the last sync: not syncing", scope)
            return False
        if self.application_id is None:
            raise app_commands.MissingApplicationID
        # What tree.sync() sends, without translating every string again (it would).
        try:
            if guild is None:
                synced = await self.http.bulk_upsert_global_commands(
                    self.application_id, payload=definitions
                )
            else:
                synced = await self.http.bulk_upsert_guild_commands(
                    self.application_id, guild.id, payload=definitions
                )
        except discord.Forbidden as error:
            if guild is None:
                raise
            raise await invite.commands_refused(self, guild.id, error) from None
        except discord.HTTPException as error:
            if error.status == 400 and error.code == 50035:
                raise app_commands.CommandSyncFailure(error, commands) from None
            raise
        await self.storage.set_setting(key, digest)
        log.info("synced %d %s commands", len(synced), scope)
        return True

    async def custom_emoji_exists(self, guild_id: int, emoji_id: int) -> bool:
        """Whether ``guild_id`` still has the custom emoji ``emoji_id``, as Discord said within
        the last :data:`EMOJI_RECHECK` seconds. When Discord cannot say (an outage), yes: a
        server's choice is not dropped for a network error."""
        now = self.clock.now()
        known = self._emoji_checks.get((guild_id, emoji_id))
        if known is not None and now - known[1] < EMOJI_RECHECK:
            return known[0]
        try:
            await self.http.get_custom_emoji(guild_id, emoji_id)
        except discord.NotFound:
            exists = False
        except discord.HTTPException as error:
            log.info("could not ask for emoji %s of guild %s: %s", emoji_id, guild_id, error)
            return True
        else:
            exists = True
        self._emoji_checks[(guild_id, emoji_id)] = (exists, now)
        return exists

    async def member_roles(self, guild_id: int, user_id: int) -> frozenset[int] | None:
        """The roles ``user_id`` has in ``guild_id``, as Discord says now; None if they are no
        longer a member. Asked without the members intent, which this route does not need;
        never cached, since a role taken away must hold at once."""
        try:
            data = await self.http.get_member(guild_id, user_id)
        except discord.NotFound as error:
            if error.code == UNKNOWN_MEMBER:
                return None
            log.info("could not ask for member %s of guild %s: %s", user_id, guild_id, error)
            raise RolesUnknownError from error
        except discord.HTTPException as error:
            log.info("could not ask for member %s of guild %s: %s", user_id, guild_id, error)
            raise RolesUnknownError from error
        return frozenset(int(role) for role in data.get("roles") or ())

    async def channel_deleted(self, channel_id: int) -> bool | None:
        """Whether Discord no longer has channel ``channel_id`` (deleted, or a thread deleted
        with its channel); None when it could not say (an outage). Asked only of a channel
        the bot is in (none where it reaches a channel through interactions' tokens alone:
        there Discord may answer "Unknown Channel" for one the bot merely cannot see)."""
        if await self.storage.reply_route(channel_id) is not None:
            return False
        try:
            await self.http.get_channel(channel_id)
        except discord.NotFound as error:
            if error.code == UNKNOWN_CHANNEL:
                return True
            # Another "not found" is no answer about the channel: the game ends by its
            # clock, as it did before the question was asked (rather than asked for ever).
            log.info("channel %s: %s; taken to be there", channel_id, error)
            return False
        except discord.DiscordServerError as error:
            log.info("could not ask about channel %s: %s", channel_id, error)
            return None
        except discord.HTTPException as error:
            # A refusal (403: there, closed to the bot), which asking again would not change.
            log.info("channel %s: %s; taken to be there", channel_id, error)
            return False
        except ANSWER_FAILURES as error:  # the connection, not Discord's answer
            log.info("could not ask about channel %s: %s", channel_id, error)
            return None
        return False

    async def ping_before_late_board(self, game: GameRecord) -> render.Message | None:
        """What the sweeper posts before a board it shows late: a tournament round's ping."""
        return await self.tournament_rounds.ping_before_late_board(game)

    async def marks_refused(self, fallback: render.MarksFallback) -> None:
        """Discord refused a game's board for its server's custom emoji (deleted since the
        game started): the game plays on with the bot's own marks, stored so that every
        process draws them, and the next game to start asks Discord about the emoji again
        rather than trusting what it said within :data:`EMOJI_RECHECK`."""
        log.warning(
            "guild %s: Discord refused custom emoji %s, a mark of game %s: it plays on with "
            "the bot's own",
            fallback.guild_id,
            list(fallback.emoji_ids),
            fallback.game_id,
        )
        for emoji_id in fallback.emoji_ids:
            self._emoji_checks.pop((fallback.guild_id, emoji_id), None)
        try:
            await self.service.use_default_marks(fallback.game_id)
        except Exception as error:  # the board still goes out with the bot's own marks
            log.warning(
                "could not store the bot's own marks for game %s: %s", fallback.game_id, error
            )

    # -- timeouts -----------------------------------------------------------------------------

    def wake_sweeper(self) -> None:
        """Settle timeouts now rather than at the next interval (tests move a manual clock)."""
        self._wake.set()

    async def sweep(self) -> Swept:
        """Settle what ran out of time and show it on the messages concerned; post what was
        saved without its message. Announce the seasons that ended. Then remove the finished
        games older than the operator keeps them, and the games' threads' claims and suspects
        that no longer matter. Under ``serve``, only while this worker holds the
        sweeper lease (another worker's sweep is left alone), and forget the interactions
        noted long enough ago that a replay of them is refused as stale anyway. Every worker,
        lease or not, wipes from disk what its own deletions left there, if a reader kept it."""
        # Before the lease: what this worker's deletions left in the SQLite log is this
        # worker's to wipe (the holder's sweep knows nothing of it).
        await self.storage.wipe_deleted()
        if self.over_http and not await self._hold_sweeper_lease():
            return Swept(games=[], challenges=[])
        settled = await self.service.settle_overdue()
        await self.boards.show_swept(settled)
        # Before old games are removed: a tournament copies its games' results first.
        await self.tournament_rounds.sweep()
        async for end in self.ladder.ended_seasons():
            await self.announce_season(end)
        await self.service.prune_old_games()
        await threads.forget_old(self.storage, self.clock.now())
        if self.endpoint is not None:
            await self.storage.prune_interactions(self.endpoint.forget_before())
        return settled

    async def _hold_sweeper_lease(self) -> bool:
        """Take the sweeper lease if it is free or ran out, or renew this worker's own."""
        now = self.clock.now()
        until = now + SWEEPER_LEASE_SWEEPS * self.sweep_interval
        held = await self.storage.take_lease(SWEEPER_LEASE, self.sweeper_id, now, until)
        if held and not self.holds_sweeper_lease:
            log.info("worker %s took the sweeper lease: it sweeps now", self.sweeper_id)
        elif self.holds_sweeper_lease and not held:
            log.warning("worker %s lost the sweeper lease to another worker", self.sweeper_id)
        self.holds_sweeper_lease = held
        return held

    async def announce_season(self, end: SeasonEnd) -> None:
        """Post a season's top three in its server's announcements channel. A channel that is
        gone or closed to the bot is not tried again (the season's table stays readable);
        anything else leaves the season for the next sweep."""
        message = render.season_end_message(end, language(end.language or ENGLISH))
        channel = self.get_partial_messageable(end.channel_id)
        try:
            sent = await channel.send(**message.send_kwargs())
        except (discord.Forbidden, discord.NotFound) as error:
            log.warning(
                "guild %s: could not announce season %s in channel %s, not trying again: %s",
                end.guild_id,
                end.season.name,
                end.channel_id,
                error,
            )
        except ANSWER_FAILURES as error:
            log.warning(
                "guild %s: could not announce season %s in channel %s, trying again later: %s",
                end.guild_id,
                end.season.name,
                end.channel_id,
                error,
            )
            await self.ladder.release(end)
        else:
            log.info(
                "guild %s: announced the end of season %s in message %s",
                end.guild_id,
                end.season.name,
                sent.id,
            )

    async def _beat_forever(self, path: Path) -> None:
        """Touch ``path`` every few seconds while the gateway is up (under ``serve``, while
        the endpoint takes interactions): ``python -m bot.healthcheck`` (Docker's
        HEALTHCHECK) reads its age."""
        while not self.is_closed():
            await self.until_answering()
            if self.over_http or self.is_connected():
                try:
                    await asyncio.to_thread(path.touch)
                except OSError as error:
                    log.warning("could not write the heartbeat file %s: %s", path, error)
            await asyncio.sleep(HEARTBEAT_INTERVAL)

    async def _watch_stalls(self) -> None:
        # From the first connection on: start-up (imports, migrations, the solver's table)
        # blocks the loop by design, with nothing yet to answer.
        await self.until_answering()
        await watch_stalls(self.metrics.stalled)

    async def _sweep_forever(self) -> None:
        # The first sweep runs at start-up: it settles what ran out while the bot was down.
        while not self.is_closed():
            self._wake.clear()
            try:
                await self.sweep()
            except DatabaseUnavailableError as error:
                # An outage, not a bug: one line a sweep, no traceback (/readyz says it too).
                log.warning(
                    "sweeping timeouts failed, the database is unavailable (%s); trying again"
                    " in %g s",
                    error,
                    self.sweep_interval,
                )
            except Exception:
                log.exception("sweeping timeouts failed; trying again later")
            self.first_sweep_done.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.sweep_interval)
