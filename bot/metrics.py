"""What the bot counts for Prometheus, served on ``/metrics`` (:mod:`bot.health`).

One :class:`Metrics` per process, with a registry of its own (so that two bots in one process,
as in the tests, count apart). Names follow Prometheus' conventions: the ``tttbot_`` prefix,
base units (seconds), ``_total`` on counters (``prometheus_client`` adds it). No label carries
an id or any other value without bound: interactions are labelled by kind and outcome,
database operations by the storage method, games by board size and level, gateway latency by
the shard ids this process runs.

Everything is observed where it happens, once: first answers in :mod:`bot.answers`, outcomes
when an interaction's handling ends (:mod:`bot.client`, :mod:`bot.fast_clicks`), database
operations and game starts and ends around the storage (:func:`measure_storage`), Discord's
429s and 5xx by a trace on the HTTP sessions (:meth:`Metrics.http_trace`), stalls by the stall
watcher. Shards and gateway latency are read when ``/metrics`` is scraped; live games are
counted in the background (:meth:`bot.client.TTTBot.scrape` says why).

A scrape's text is made in a worker thread, and shared by the scrapes of the next second
(:meth:`Metrics.scraped`): some 800 series take prometheus_client 15-20 ms of CPU to write.

Under gunicorn (:mod:`bot.gunicorn_conf`) the workers share one port, and a scrape reaches
whichever worker accepts it: there prometheus_client's multiprocess mode is on
(``PROMETHEUS_MULTIPROC_DIR``, which it reads when first imported), each worker's values are
kept in files of that directory, and whichever worker is scraped reports them all: counters
and histograms summed over every worker that ran since gunicorn started (so nothing goes
backwards when one is replaced), each gauge combined as its own ``multiprocess_mode`` says,
and the process' memory, CPU and files as gauges with a ``pid`` label, one series a live
worker (prometheus_client's process collector reads its own process only).
"""

from __future__ import annotations

import asyncio
import enum
import functools
import inspect
import math
import time
from collections.abc import Awaitable, Callable, Iterable
from types import SimpleNamespace
from typing import Any, TypeVar

import aiohttp
from discord.utils import DISCORD_EPOCH
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
    values,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from bot.metrics_files import LockedMultiProcessCollector
from bot.storage.base import (
    ChallengeRecord,
    Forgotten,
    GameRecord,
    GameSetup,
    GameStatus,
    GuildErased,
    Storage,
)
from game.ultimate import ULTIMATE
from game.variants import is_ultimate

T = TypeVar("T")

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Discord's own deadline for a first answer is 3 s: the buckets are finest below it.
ANSWER_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 10.0)
DATABASE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
# The stall watcher sees stalls from 10 ms (bot/stalls.py).
STALL_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

VS_MEMBERS = "members"  # the level label of a game between members
# A scrape within this many seconds of the one whose text was made last gets that text.
EXPOSITION_REUSE = 1.0
# In multiprocess mode, how often each worker writes its process' memory, CPU and files.
PROCESS_SAMPLE_INTERVAL = 5.0

# The process collector's series, as a multiprocess worker writes them: gauges, one series a
# worker (``pid``), gone with it. CPU seconds stay ``_total``: a worker's series only grows, so
# ``rate()`` reads it as the counter it is in one process.
PROCESS_GAUGES = {
    "process_cpu_seconds_total": "Total user and system CPU time spent in seconds.",
    "process_resident_memory_bytes": "Resident memory size in bytes.",
    "process_virtual_memory_bytes": "Virtual memory size in bytes.",
    "process_start_time_seconds": "Start time of the process since unix epoch in seconds.",
    "process_open_fds": "Number of open file descriptors.",
    "process_max_fds": "Maximum number of open file descriptors.",
}

# No ``_created`` series beside each counter and histogram (the Unix time each was made):
# no panel reads them, and they were an eighth of what each scrape writes.
disable_created_metrics()  # type: ignore[no-untyped-call]


class InteractionKind(enum.StrEnum):
    """What an interaction was, as its label says."""

    COMMAND = "command"
    COMPONENT = "component"  # a button
    AUTOCOMPLETE = "autocomplete"
    OTHER = "other"  # a modal, or a type Discord adds later


class Outcome(enum.StrEnum):
    """How an interaction ended."""

    ANSWERED = "answered"  # its first answer showed what it asked for
    DEFERRED = "deferred"  # deferred first (slow), then answered
    REFUSED = "refused"  # a mistake of the user's, answered with a sentence
    FAILED = "failed"  # a fault of the bot's (an apology), or no answer got through


def kind_of(interaction_type: int) -> InteractionKind:
    """The label of an interaction of Discord's type ``interaction_type``."""
    return _KINDS.get(interaction_type, InteractionKind.OTHER)


_KINDS = {2: InteractionKind.COMMAND, 3: InteractionKind.COMPONENT, 4: InteractionKind.AUTOCOMPLETE}


def level_of(game: GameSetup) -> str:
    """A game's level label: the bot's difficulty, or members."""
    return game.ai_difficulty or VS_MEMBERS


def multiprocess_mode() -> bool:
    """Whether prometheus_client keeps this process's values in ``PROMETHEUS_MULTIPROC_DIR``:
    decided when it was first imported, by that variable (see the module)."""
    return values.ValueClass is not values.MutexValue


class Metrics:
    """This process's metrics (see the module); a scrape's text is reused for ``reuse``
    seconds."""

    def __init__(self, reuse: float = EXPOSITION_REUSE) -> None:
        self.reuse = reuse
        self._scraped: asyncio.Future[bytes] | None = None
        self._scraped_at = -math.inf
        self.registry = registry = CollectorRegistry()
        self.multiprocess = multiprocess_mode()
        # What a scrape reports: this registry, or in multiprocess mode every worker's files.
        self._exposed = registry
        self._process = ProcessCollector(registry=None)  # CPU seconds, memory, open files
        self._process_gauges: dict[str, Gauge] = {}
        if self.multiprocess:
            self._exposed = CollectorRegistry()
            LockedMultiProcessCollector(self._exposed)
            self._process_gauges = {
                name: Gauge(name, text, registry=registry, multiprocess_mode="liveall")
                for name, text in PROCESS_GAUGES.items()
            }
        else:
            registry.register(self._process)
        self.interactions = Counter(
            "tttbot_interactions",
            "Interactions handled, by kind and by how they ended.",
            ["kind", "outcome"],
            registry=registry,
        )
        self.answer_latency = Histogram(
            "tttbot_answer_latency_seconds",
            "From the interaction's creation (its snowflake's time) to its first answer "
            "taken by Discord.",
            ["kind"],
            buckets=ANSWER_BUCKETS,
            registry=registry,
        )
        self.database = Histogram(
            "tttbot_database_operation_seconds",
            "Storage operations, by operation, failed ones included.",
            ["operation"],
            buckets=DATABASE_BUCKETS,
            registry=registry,
        )
        self.games_started = Counter(
            "tttbot_games_started",
            "Games started, by board size and level (members, or the bot's difficulty).",
            ["size", "level"],
            registry=registry,
        )
        self.games_finished = Counter(
            "tttbot_games_finished",
            "Games that ended (a line, a draw, a resignation, a timeout, ended by a "
            "moderator or by a member's or a server's data being erased), by board size and "
            "level.",
            ["size", "level"],
            registry=registry,
        )
        # Each gauge's multiprocess_mode says how the workers' values combine (one process
        # ignores it): the live games, counted by every worker in the one database, are the
        # latest count of a live worker; shards are summed over the live workers, and a
        # shard's latency is its one process's (under gunicorn no worker runs a shard).
        self.live_games = Gauge(
            "tttbot_live_games",
            "Games being played, in the whole database (every process sees the same count).",
            registry=registry,
            multiprocess_mode="livemostrecent",
        )
        self.shards = Gauge(
            "tttbot_shards",
            "Gateway shards this process runs.",
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.shards_connected = Gauge(
            "tttbot_shards_connected",
            "Gateway shards of this process whose connection is open.",
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.gateway_latency = Gauge(
            "tttbot_gateway_latency_seconds",
            "Time between a gateway heartbeat and its acknowledgement, by shard.",
            ["shard"],
            registry=registry,
            multiprocess_mode="livemax",
        )
        self.stalls = Histogram(
            "tttbot_event_loop_stall_seconds",
            "Times the event loop answered nothing for 10 ms or more, by how long.",
            buckets=STALL_BUCKETS,
            registry=registry,
        )
        self.rate_limited = Counter(
            "tttbot_discord_rate_limits",
            "Responses from Discord with status 429 (Too Many Requests).",
            registry=registry,
        )
        self.server_errors = Counter(
            "tttbot_discord_server_errors",
            "Responses from Discord with a 5xx status.",
            registry=registry,
        )
        # Every label value a dashboard looks for exists from the start, at zero; the children
        # are looked up once here, not on every interaction (labels() takes a lock).
        self._latency = {kind: self.answer_latency.labels(kind.value) for kind in InteractionKind}
        self._handled = {
            (kind, outcome): self.interactions.labels(kind.value, outcome.value)
            for kind in InteractionKind
            for outcome in Outcome
        }

    def exposition(self) -> bytes:
        """Every metric in Prometheus' text format: this process's, or in multiprocess mode
        every worker's."""
        self.sample_process()
        return generate_latest(self._exposed)

    def sample_process(self) -> None:
        """In multiprocess mode, this process's memory, CPU and files written for whichever
        worker is scraped next (:meth:`sample_process_forever` keeps them current); in one
        process the collector reads them at each scrape, and this does nothing."""
        if not self.multiprocess:
            return
        for family in self._process.collect():
            for sample in family.samples:
                gauge = self._process_gauges.get(sample.name)
                if gauge is not None:
                    gauge.set(sample.value)

    async def sample_process_forever(self) -> None:
        """:meth:`sample_process` every :data:`PROCESS_SAMPLE_INTERVAL` seconds: a worker is
        scraped only now and then, and the others must still report theirs."""
        while True:
            self.sample_process()
            await asyncio.sleep(PROCESS_SAMPLE_INTERVAL)

    async def scraped(self) -> bytes:
        """:meth:`exposition` as a scrape gets it: made in a worker thread (on the event loop
        its 15-20 ms would hold up interactions, and count as a stall), once for every scrape
        of the next :attr:`reuse` seconds, or under way, so that frequent scrapes cost the
        bot next to nothing. prometheus_client's metrics may be read from another thread."""
        loop = asyncio.get_running_loop()
        made = self._scraped
        if made is None or (made.done() and loop.time() - self._scraped_at >= self.reuse):
            self._scraped_at = loop.time()
            made = self._scraped = asyncio.ensure_future(asyncio.to_thread(self.exposition))
        # Shielded: a scraper that hangs up must not cancel what the others wait for.
        return await asyncio.shield(made)

    # -- interactions -------------------------------------------------------------------------

    def answered(self, kind: InteractionKind, interaction_id: int) -> float:
        """A first answer was taken: observe how long after the interaction's creation, and
        return it (seconds)."""
        latency = max(time.time() - snowflake_time(interaction_id), 0.0)
        self._latency[kind].observe(latency)
        return latency

    def interaction(self, kind: InteractionKind, outcome: Outcome) -> None:
        self._handled[kind, outcome].inc()

    # -- games --------------------------------------------------------------------------------

    def games_began(self, games: Iterable[GameSetup]) -> None:
        for game in games:
            self.games_started.labels(_size(game), level_of(game)).inc()

    def games_ended(self, games: Iterable[GameSetup]) -> None:
        for game in games:
            self.games_finished.labels(_size(game), level_of(game)).inc()

    # -- Discord's responses --------------------------------------------------------------------

    def http_trace(self) -> aiohttp.TraceConfig:
        """A trace for discord.py's HTTP session that counts its 429s and 5xx (each try of a
        request counts: discord.py retries both). The first answers' own session counts in
        its code instead (:mod:`bot.answers`): a trace costs every request some work."""
        trace = aiohttp.TraceConfig()
        trace.on_request_end.append(self._on_response)
        return trace

    async def _on_response(
        self,
        session: aiohttp.ClientSession,
        context: SimpleNamespace,
        params: aiohttp.TraceRequestEndParams,
    ) -> None:
        self.discord_answered(params.response.status)

    def discord_answered(self, status: int) -> None:
        """Discord answered a request with ``status``."""
        if status == 429:
            self.rate_limited.inc()
        elif status >= 500:
            self.server_errors.inc()

    # -- the event loop -----------------------------------------------------------------------

    def stalled(self, seconds: float) -> None:
        self.stalls.observe(seconds)


def _size(game: GameSetup) -> str:
    """A game's board as its metrics' label: ``3x3``, ``4x4``, ``5x5`` or ``ultimate``."""
    return ULTIMATE if is_ultimate(game.size) else f"{game.size}x{game.size}"


def snowflake_time(snowflake: int) -> float:
    """The Unix time a Discord snowflake was made at (discord.py's own makes a datetime: this
    is on every interaction's path)."""
    return ((snowflake >> 22) + DISCORD_EPOCH) / 1000


# -- the storage, measured ---------------------------------------------------------------------

# Every operation of the storage contract: each is timed under its own name.
OPERATIONS = tuple(
    name
    for name, member in vars(Storage).items()
    if inspect.iscoroutinefunction(member) and name != "close"
)


def measure_storage(storage: Storage, metrics: Metrics) -> None:
    """Time every operation of ``storage`` (in place, whatever its engine), and count the
    games its operations start and end (:data:`_GAMES_CHANGED`)."""
    for name in OPERATIONS:
        changed = _GAMES_CHANGED.get(name)
        setattr(storage, name, _measured(getattr(storage, name), name, changed, metrics))


# Read from an operation's result: the games it started, and those it ended.
GamesChanged = Callable[[Any], tuple[Iterable[GameSetup], Iterable[GameSetup]]]


def _measured(
    operation: Callable[..., Awaitable[T]],
    name: str,
    changed: GamesChanged | None,
    metrics: Metrics,
) -> Callable[..., Awaitable[T]]:
    # The operation's histogram is made when it first runs, not here: 57 of them made at
    # every start were a fifth of a bot's start-up CPU (the tests start a thousand bots), and
    # an operation that never runs in a process then shows no series rather than zeros.
    histogram: Any = None

    @functools.wraps(operation)
    async def measured(*args: Any, **kwargs: Any) -> T:
        nonlocal histogram
        started = time.perf_counter()
        try:
            result = await operation(*args, **kwargs)
        finally:
            if histogram is None:
                histogram = metrics.database.labels(name)
            histogram.observe(time.perf_counter() - started)
        if changed is not None:
            began, ended = changed(result)
            metrics.games_began(began)
            metrics.games_ended(ended)
        return result

    return measured


def _began(game: GameRecord | None) -> tuple[Iterable[GameSetup], Iterable[GameSetup]]:
    # None: nothing was stored (a tournament's table had its game already).
    return (() if game is None else (game,)), ()


def _closed(
    closed: tuple[ChallengeRecord, GameRecord | None] | None,
) -> tuple[Iterable[GameSetup], Iterable[GameSetup]]:
    # An accepted challenge starts its game in the same transaction.
    return _began(closed[1] if closed is not None else None)


def _saved(saved: GameRecord | None) -> tuple[Iterable[GameSetup], Iterable[GameSetup]]:
    # A finished game is never saved again: a save that stores a finished game ends it.
    finished = saved is not None and saved.status is GameStatus.FINISHED
    return (), ((saved,) if finished and saved is not None else ())


def _forgotten(forgotten: Forgotten) -> tuple[Iterable[GameSetup], Iterable[GameSetup]]:
    return (), forgotten.ended


def _erased(erased: GuildErased) -> tuple[Iterable[GameSetup], Iterable[GameSetup]]:
    return (), erased.live_games


# The operations that start or end games: a game starts by create_game, by close_challenge
# accepting a challenge, or by start_tournament_game pairing a round's table; it ends by a
# save_game that finishes it, by forget_member or by erase_guild.
_GAMES_CHANGED: dict[str, GamesChanged] = {
    "create_game": _began,
    "close_challenge": _closed,
    "start_tournament_game": _began,
    "save_game": _saved,
    "forget_member": _forgotten,
    "erase_guild": _erased,
}
