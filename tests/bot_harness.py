"""Running the real bot against the Discord simulator, with a manual clock and a temp database.

The ``harness`` fixture (loaded by ``tests/conftest.py``): ``harness.running()`` starts a
:class:`bot.client.TTTBot` exactly as ``python -m bot`` would build it (same settings object,
same setup hook), pointed at the simulator; starting a second one on the same database is a
restart. Under :data:`both_front_doors` a test runs twice, over the gateway and over HTTP: then
``running()`` starts the bot as ``python -m bot serve`` would (REST login, no gateway, its
endpoint on a free port) and points the sim's HTTP mode at it. The database is a SQLite file
in the test's temporary folder; a test (or a module, through ``pytestmark``) marked
:data:`both_engines` runs twice, once on SQLite and once on a fresh PostgreSQL database of the
session's cluster (``postgres_cluster.py``), every ``running()`` of the test, restarts
included, on that same database. Either way the bot's first start finds the schema already
applied, as a restart would: the SQLite file is a copy of one migrated once a process, the
PostgreSQL database a copy of a migrated template (the migrations themselves are
``test_storage.py``'s; on SQLite they cost some 20 ms of CPU, a fifth of a bot's start). A test
that puts a file of its own at ``harness.db_path`` first (an older schema, say) keeps it. The
helpers below read board messages and find buttons through the bot's own
:class:`bot.components.IdFormat` definitions, never by spelling custom_ids by hand, on boards of
every size (classic messages for 3x3 and 4x4, components-v2 ones for 5x5: ``text_of`` reads
either).

The bot's 5x5 searches run on a node budget (:data:`TEST_SEARCH_BUDGET`), so that a seeded game
plays the same moves on any machine; ``harness.search_budget = None`` gives the bot's default,
a time budget.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.answers import DEFER_AFTER, LAST_TRY_AFTER
from bot.client import TTTBot
from bot.clock import ManualClock, SystemClock
from bot.components import CELL_ID, CHALLENGE_ID, GAME_ACTION_ID, IdFormat
from bot.config import POSTGRESQL, SQLITE, DatabaseUrl, Settings, parse_database_url
from bot.domain import Actor
from bot.service import Clicked
from bot.storage.base import GameRecord
from bot.storage.connect import open_storage
from bot.storage.postgres import PostgresStorage
from bot.storage.sqlite import SqliteStorage
from game import DEFAULT_SIZE, Board, cell_name, parse_cell
from game.search import SearchBudget
from tests.discord_sim import DiscordSim, InteractionRecord, SimChannel, SimMessage, SimUser
from tests.discord_sim.models import JSON, message_text, walk_components

MARKS = {"❌": "X", "⭕": "O"}
CALLBACK = "POST /interactions/{id}/{token}/callback"
# A few hundred positions a move: about a millisecond, and the same moves on any machine.
TEST_SEARCH_BUDGET = SearchBudget(seconds=None, nodes=300)
STORAGE_CLASSES = {SQLITE: SqliteStorage, POSTGRESQL: PostgresStorage}

GATEWAY = "gateway"
HTTP = "http"
both_front_doors = pytest.mark.parametrize("front_door", [GATEWAY, HTTP], indirect=True)
"""Runs a test that uses ``harness`` with each front door (ids ``gateway``, ``http``): the bot
over the gateway (``python -m bot``), and answering the interactions the sim POSTs to its
endpoint (``python -m bot serve``)."""
http_only = pytest.mark.parametrize("front_door", [HTTP], indirect=True)
"""Runs a test that uses ``harness`` over HTTP only (id ``http``)."""
# How long the bot has to start answering.
START_PATIENCE = 10.0

both_engines = pytest.mark.parametrize(
    "harness",
    [SQLITE, pytest.param(POSTGRESQL, marks=pytest.mark.postgres)],
    indirect=True,
)
"""Runs a test that uses ``harness`` on each database engine (ids ``sqlite``, ``postgresql``)."""


class BotHarness:
    def __init__(
        self,
        sim: DiscordSim,
        database: DatabaseUrl,
        front_door: str = GATEWAY,
        sqlite_template: Path | None = None,
    ) -> None:
        self.sim = sim
        self.front_door = front_door
        # Where the process's migrated SQLite database is made, on the first start that needs
        # it (made inside a test's event loop: the fixtures run outside any).
        self._sqlite_template = sqlite_template
        # discord.py's base URL (process-wide) before the first of this harness's serving bots,
        # put back when the last one stops, whatever order they stop in (two workers of one
        # test); and how many serve now.
        self._base_before_serving = discord.http.Route.BASE
        self._bots_serving = 0
        self.clock = ManualClock()
        self.database = database
        self.rng = random.Random(1234)
        self.search_budget: SearchBudget | None = TEST_SEARCH_BUDGET
        # How long the bot leaves an interaction unanswered before deferring it, and how long
        # after it arrived it still sends a lost first answer again.
        self.defer_after = DEFER_AFTER
        self.last_try_after = LAST_TRY_AFTER
        self.base_settings = Settings(
            token=sim.token,
            database=database,
            api_base_url=sim.api_base_url,
            gateway_url=sim.gateway_url,
            turn_timeout=300,
            challenge_timeout=120,
        )

    @property
    def engine(self) -> str:
        return self.database.scheme

    @property
    def db_path(self) -> Path:
        """The SQLite file, for the tests that reach into it from outside the bot."""
        assert self.engine == SQLITE, "a SQLite-only test: leave it out of both_engines"
        return Path(self.database.path)

    @asynccontextmanager
    async def running(
        self, *, expect_errors: bool = False, **overrides: Any
    ) -> AsyncIterator[TTTBot]:
        """Run a bot until the block ends. Errors it logs fail the test unless expected: a
        handler that crashed after answering would otherwise go unnoticed."""
        over_http = self.front_door == HTTP
        if over_http:
            overrides = {
                "public_key": self.sim.public_key,
                "http_port": 0,
                "http_host": "127.0.0.1",
                **overrides,
            }
        settings = replace(self.base_settings, **overrides)
        if settings.database.scheme == SQLITE:
            await self._start_from_template(Path(settings.database.path))
        bot = TTTBot(
            settings,
            over_http=over_http,
            clock=self.clock,
            rng=self.rng,
            sweep_interval=3600,
            defer_after=self.defer_after,
            last_try_after=self.last_try_after,
            search_budget=self.search_budget,
        )
        errors = _ErrorCollector()
        watched = [logging.getLogger(name) for name in ("bot", "discord", "asyncio")]
        for logger in watched:
            logger.addHandler(errors)
        try:
            async with self._serving(bot) if over_http else self.sim.running(bot):
                # A variant that silently ran on the other engine would prove nothing.
                assert isinstance(bot.storage, STORAGE_CLASSES[settings.database.scheme])
                # The start-up sweep runs in the background, outside in_flight: one still
                # running would run a tournament, or settle a game, beside the test's first
                # steps, which wait_idle does not wait for.
                await asyncio.wait_for(bot.first_sweep_done.wait(), START_PATIENCE)
                yield bot
                # Buttons are DynamicItems: nothing per game or per message may stay in memory.
                store = bot._connection._view_store
                assert store._synced_message_views == {}
                assert store._views == {}
                # Every click bot.fast_clicks handed on reached the cog, which took it.
                assert bot.answers.handed_on == {}
        finally:
            for logger in watched:
                logger.removeHandler(errors)
        assert self.sim.unknown_routes == []
        self.assert_pings_only_challenged_members()
        if not expect_errors:
            assert errors.messages == [], "the bot logged errors:\n" + "\n".join(errors.messages)

    async def _start_from_template(self, path: Path) -> None:
        """Put a copy of the process's migrated SQLite database at ``path``, unless a file is
        there already (a restart, or a test's own)."""
        template = self._sqlite_template
        if template is None or _is_there(path):
            return
        if not _is_there(template):
            await (await open_storage(DatabaseUrl(str(template)), SystemClock())).close()
        _copy_database(template, path)

    @asynccontextmanager
    async def _serving(self, bot: TTTBot) -> AsyncIterator[TTTBot]:
        """``python -m bot serve`` against the sim: the bot logs in through REST, and the sim
        POSTs interactions to its endpoint until the block ends (then the bot stops as on
        SIGTERM)."""
        if self._bots_serving == 0:
            self._base_before_serving = discord.http.Route.BASE
        self._bots_serving += 1
        stop = asyncio.Event()
        serving = asyncio.create_task(bot.serve_interactions(self.sim.token, stop))
        answering = asyncio.create_task(bot.until_answering())
        try:
            await asyncio.wait(
                {serving, answering}, timeout=START_PATIENCE, return_when=asyncio.FIRST_COMPLETED
            )
            if serving.done():
                serving.result()  # what ended it
                raise AssertionError("the bot stopped serving before it answered")
            assert answering.done(), f"the bot did not serve within {START_PATIENCE} s"
            self.sim.interactions_url = f"http://127.0.0.1:{bot.http_port}/interactions"
            yield bot
        finally:
            answering.cancel()
            self.sim.interactions_url = None
            self.sim.drop_idle_http_connections()
            stop.set()
            try:
                await asyncio.wait_for(serving, START_PATIENCE)
            finally:
                self._bots_serving -= 1
                if self._bots_serving == 0:
                    discord.http.Route.BASE = self._base_before_serving

    def assert_pings_only_challenged_members(self) -> None:
        """Every message the bot sent notified nobody, but for a challenge's one opponent and
        a tournament game's two players, in its thread."""
        for channel in self.sim.channels.values():
            for message in self.sim.messages(channel):
                if not message.pinged:
                    continue
                # Notifications happen when a message is created: read its first version, in
                # any language: a challenge (its Accept button) that opens with its opponent.
                first = message.edits[0] if message.edits else message
                if channel.is_thread and not first.components:
                    # A tournament round's ping: the game's two players, named first.
                    named = first.text.split(":")[0].split()
                    assert named == [f"<@{user}>" for user in message.pinged], message
                    assert len(named) == 2, message
                    continue
                actions = {
                    fields["action"]
                    for component in walk_components(first.components)
                    if (fields := CHALLENGE_ID.parse(component.get("custom_id", "")))
                }
                assert "accept" in actions, message
                assert [f"<@{user}>" for user in message.pinged] == [
                    first.text.split()[1].rstrip(",")
                ], message


@pytest.fixture
def front_door(request: pytest.FixtureRequest) -> str:
    """How interactions reach the bot: the gateway, unless :data:`both_front_doors` says."""
    door: str = getattr(request, "param", GATEWAY)
    assert door in (GATEWAY, HTTP), door
    return door


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the process's migrated SQLite database goes (made by the first bot start)."""
    return tmp_path_factory.mktemp("sqlite-template") / "migrated.sqlite3"


@pytest.fixture
def harness(
    sim: DiscordSim,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    front_door: str,
    sqlite_template: Path,
) -> BotHarness:
    """The real bot, ready to run against ``sim`` on a SQLite file in ``tmp_path``, or, under
    :data:`both_engines`, on the engine of the test's parameter; over the gateway, or under
    :data:`both_front_doors` over each front door."""
    engine = getattr(request, "param", SQLITE)
    if engine == POSTGRESQL:
        url: str = request.getfixturevalue("migrated_postgres_database")
        return BotHarness(sim, parse_database_url(url), front_door)
    assert engine == SQLITE, engine
    database = DatabaseUrl(str(tmp_path / "ttt.sqlite3"))
    return BotHarness(sim, database, front_door, sqlite_template)


def _is_there(path: Path) -> bool:
    return path.exists()


def _copy_database(source: Path, target: Path) -> None:
    # Closed cleanly, SQLite folds its write-ahead log into the file: the file is all of it.
    assert not source.with_name(source.name + "-wal").exists(), source
    shutil.copyfile(source, target)


class _ErrorCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


async def board_out_of_time(sim: DiscordSim, harness: BotHarness, bot: TTTBot) -> SimMessage:
    """alice's board against the bot, her turn's time run out and the sweeper not yet run:
    the next click there finds it out."""
    s = sim.seed
    started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
    assert started.message is not None, started.content
    # The board's message id is saved after the answer.
    assert await bot.in_flight.wait_idle(patience=5)
    harness.clock.advance(301)
    return started.message


async def accepted_unshown(sim: DiscordSim, bot: TTTBot) -> tuple[SimMessage, GameRecord]:
    """alice challenges bob, then bob's accept is saved and the challenge's message adopted as
    the game's board, past Discord: no answer shows it, as when the accept's response was lost
    as its worker was killed. Returns that message, which still shows the challenge, and the
    game."""
    s = sim.seed
    message = await recorded_post(sim, bot, "ttt start", opponent=s.bob)
    challenge = await bot.storage.pending_challenge_in_channel(s.channel.id)
    assert challenge is not None
    _, game = await bot.service.accept(
        challenge.id, Actor(s.bob.id, "bob"), Clicked(s.channel.id, message.id)
    )
    await bot.storage.set_game_message(game.id, message.id)
    return message, game


async def recorded_post(sim: DiscordSim, bot: TTTBot, command: str, **options: Any) -> SimMessage:
    """Alice's ``command`` in the seed's channel: the message it posted (a board, a
    challenge), once the bot recorded it as the game's or the challenge's (a message id is
    saved after the answer; over HTTP, once Discord said it)."""
    posted = await sim.slash(sim.seed.alice, sim.seed.channel, command, **options)
    assert posted.message is not None, posted.content
    assert await bot.in_flight.wait_idle(patience=5)
    return posted.message


async def start_member_game(
    sim: DiscordSim,
    channel: SimChannel | None = None,
    x: SimUser | None = None,
    o: SimUser | None = None,
    size: int = DEFAULT_SIZE,
) -> SimMessage:
    """``x`` (alice) challenges ``o`` (bob) to a game on a ``size`` board, and ``o`` accepts:
    returns the board message."""
    channel = channel or sim.seed.channel
    x, o = x or sim.seed.alice, o or sim.seed.bob
    options: dict[str, object] = {"opponent": o}
    if size != DEFAULT_SIZE:
        options["size"] = size
    # Either answer may be deferred (a loaded machine, a slow database): each is waited for
    # until it shows the challenge, then the board.
    challenge = await final_answer(await sim.slash(x, channel, "ttt start", options=options))
    accepted = await sim.click(o, challenge, button_id(challenge, CHALLENGE_ID, action="accept"))
    return await final_answer(accepted)


# A short window for sending lost first answers again, for the tests that lose every try:
# they need not wait out Discord's 3 s. Set harness.last_try_after to it before running.
SHORT_WINDOW = 0.3
# How long such a test waits for the answer that never comes: the window, and Discord asked.
PAST_THE_WINDOW = 1.0


@contextmanager
def first_answers_lost(sim: DiscordSim) -> Iterator[None]:
    """While the block runs, every first answer is lost before Discord takes it. Over the
    gateway its connection is reset: the bot sends it again until its window closes, asks
    Discord whether one arrived, and gives up on it. Inside the block, wait past the window
    (a ``SimTimeout`` of :data:`PAST_THE_WINDOW`, with ``harness.last_try_after =
    SHORT_WINDOW``). Over HTTP the response is lost on its way back, after the bot wrote it
    (``sim.lose_http_answers``): the bot cannot know, and sends nothing again."""
    if sim.interactions_url is not None:
        sim.lose_http_answers = True
        try:
            yield
        finally:
            sim.lose_http_answers = False
        return
    fault = sim.faults.add(CALLBACK, reset="before", count=None)
    try:
        yield
    finally:
        sim.faults.remove(fault)


def refused(ix: InteractionRecord, sentence: str) -> None:
    """The interaction got an ephemeral reply containing ``sentence``, and nothing else."""
    assert ix.response_type == 4, (ix.response_type, ix.content)
    assert ix.ephemeral, ix.content
    assert sentence in (ix.content or ""), ix.content
    assert ix.message is not None
    assert ix.message.interaction_user is not None


async def refused_showing_the_game(ix: InteractionRecord, sentence: str) -> None:
    """A click on a board behind its game: the board clicked redrawn in place with the game as
    stored (an update), and ``sentence`` in a follow-up for the member alone."""
    assert ix.response_type in (6, 7), (ix.response_type, ix.content)
    (told,) = await ix.wait_followups()
    assert told.ephemeral, told.content
    assert sentence in (told.content or ""), told.content


def told_privately(ix: InteractionRecord) -> str | None:
    """What the member of a click was told alone: its ephemeral first answer, or the follow-up
    after its board was redrawn; None while neither (a click that played has none)."""
    if ix.response_type == 4 and ix.ephemeral:
        return ix.content
    return ix.followups[0].content if ix.followups else None


async def final_answer(ix: InteractionRecord) -> SimMessage:
    """The message that answers ``ix`` once it is complete, deferred first or not (on a busy
    machine an answer can take longer than the deferral deadline): its first response, the
    deferred message once filled or edited, else its last follow-up."""
    if ix.response_type in (5, 6):
        await ix.sim.wait_for(
            lambda: ix.done or bool(ix.followups), what=f"{ix.describe()} answered"
        )
        if ix.followups:
            return ix.followups[-1]
    assert ix.message is not None, ix
    return ix.message


def drop_resolved_users(data: JSON) -> None:
    """A ``tamper`` for :meth:`DiscordSim.slash`: user options naming nobody Discord resolved."""
    data["resolved"].pop("users", None)
    data["resolved"].pop("members", None)


def cell_buttons(message: SimMessage) -> list[JSON]:
    """A board message's cell buttons, in cell order."""
    buttons = [b for b in message.buttons() if CELL_ID.parse(b["custom_id"]) is not None]
    assert len(buttons) in (9, 16, 25), f"not a board message: {message.buttons()}"
    return buttons


def size_of(message: SimMessage) -> int:
    """The side of the board a board message shows."""
    return math.isqrt(len(cell_buttons(message)))


def cell_id(message: SimMessage, cell: str | int) -> str:
    """The custom_id of a cell button on a board message."""
    index = parse_cell(cell, size_of(message)) if isinstance(cell, str) else cell
    custom_id: str = cell_buttons(message)[index]["custom_id"]
    fields = CELL_ID.parse(custom_id)
    assert fields is not None, custom_id
    assert fields["cell"] == str(index), custom_id
    return custom_id


def button_id(message: SimMessage, form: IdFormat, **fields: str) -> str:
    """The custom_id of the one button of ``form`` whose fields include ``fields``, such as
    ``button_id(message, CHALLENGE_ID, action="accept")``."""
    found = []
    for button in message.buttons():
        parsed = form.parse(button["custom_id"])
        if parsed is not None and all(parsed[key] == value for key, value in fields.items()):
            found.append(button["custom_id"])
    assert len(found) == 1, f"no single {form.template} button with {fields}: {message.buttons()}"
    return str(found[0])


def shown_board(message: SimMessage) -> str:
    """The position the cell buttons show, in ``Board.from_string`` form."""
    cells = []
    for button in cell_buttons(message):
        emoji = (button.get("emoji") or {}).get("name")
        cells.append(MARKS.get(emoji or "", "."))
    size = size_of(message)
    return "/".join("".join(cells[row * size : (row + 1) * size]) for row in range(size))


def board_of(message: SimMessage) -> Board:
    return Board.from_string(shown_board(message))


def text_of(message: SimMessage | InteractionRecord) -> str:
    """Content, text displays and embed text together, for asserting on what a person reads."""
    parts = [message_text(message.content or "", message.components)]
    for embed in message.embeds or []:
        parts.append(embed.get("title", ""))
        parts.append(embed.get("description", ""))
        for field in embed.get("fields", []):
            parts.append(f"{field['name']}: {field['value']}")
        parts.append((embed.get("footer") or {}).get("text", ""))
    return "\n".join(parts)


def edits_by_rest(sim: DiscordSim, message: SimMessage) -> int:
    """PATCHes of ``message`` outside any interaction: the sweeper's edits."""
    path = f"/channels/{message.channel.id}/messages/{message.id}"
    return sum(1 for r in sim.requests if r.method == "PATCH" and r.path.endswith(path))


def is_live(message: SimMessage) -> bool:
    """Whether the board shows a game still being played (its Resign button)."""
    return any(
        (fields := GAME_ACTION_ID.parse(button["custom_id"])) is not None
        and fields["action"] == "resign"
        for button in message.buttons()
    )


def free_cells(message: SimMessage) -> list[str]:
    return [
        cell_name(index, size_of(message))
        for index, button in enumerate(cell_buttons(message))
        if not button.get("disabled")
    ]
