"""Every reply tells the truth under races, faults and tampered input: the real bot end to end
against the local Discord server, with what a hurried user or a hand-made payload sends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot import client
from bot.components import CELL_ID, CHALLENGE_ID, LEGACY_CELL_ID
from bot.config import POSTGRESQL
from bot.domain import Actor
from bot.errors import DATABASE_DOWN
from bot.storage.base import DatabaseUnavailableError, GameRecord
from game import cell_name
from tests.bot_harness import (
    CALLBACK,
    HTTP,
    PAST_THE_WINDOW,
    SHORT_WINDOW,
    BotHarness,
    accepted_unshown,
    board_of,
    board_out_of_time,
    both_engines,
    both_front_doors,
    button_id,
    cell_buttons,
    cell_id,
    drop_resolved_users,
    final_answer,
    first_answers_lost,
    free_cells,
    http_only,
    is_live,
    recorded_post,
    refused,
    refused_showing_the_game,
    shown_board,
    start_member_game,
    text_of,
    told_privately,
)
from tests.discord_sim import DiscordSim, SimChannel, SimTimeout, SimUser
from tests.discord_sim.models import JSON, InteractionRecord, SimMessage
from tests.test_bot_workers import hold

BUSY = (
    "There is already a game in this channel",
    "There is already an open challenge in this channel",
)


async def stop_while_a_click_is_held(
    sim: DiscordSim, harness: BotHarness, running: contextlib.AsyncExitStack
) -> tuple[asyncio.Future[None], asyncio.Event, asyncio.Future[InteractionRecord], SimMessage]:
    """A bot started in ``running``, a game against it, a click on B2 whose move the service
    holds until the event returned is set, and the bot stopping (as on SIGTERM) meanwhile."""
    s = sim.seed
    bot = await running.enter_async_context(harness.running())
    board = await final_answer(
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
    )
    reached, let_go = hold(bot.service, "move_on_board")
    click = asyncio.ensure_future(sim.click(s.alice, board, cell_id(board, "B2")))
    await reached.wait()
    return asyncio.ensure_future(running.aclose()), let_go, click, board


@both_front_doors
async def test_a_bot_stopping_finishes_the_click_it_is_handling(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Stopped (SIGTERM) while a click is being handled: the bot waits for it, which is
    deferred and then shown, the move and the bot's answer on the board (docs/operating.md:
    over HTTP too, those in flight answered)."""
    harness.defer_after = 0.3
    async with contextlib.AsyncExitStack() as running:
        stopping, let_go, click, board = await stop_while_a_click_is_held(sim, harness, running)
        # The click's first answer is its deferral, sent while the bot stops; the stop still
        # waits for the click (waited for, not slept past: on a loaded machine the deferral
        # may come later than a fixed sleep).
        try:
            await asyncio.wait_for(asyncio.shield(click), 5)
            assert not stopping.done()
        finally:
            let_go.set()
        await asyncio.wait_for(stopping, 15)
    clicked = await click
    assert clicked.response_type == 6  # deferred, then edited
    shown = sim.message(board.id)
    assert "B2" not in free_cells(shown)
    assert len(free_cells(shown)) == 7  # the bot answered too


@both_front_doors
async def test_a_handler_that_never_ends_holds_the_stop_back_only_for_the_grace(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 8: at SIGTERM the handlers in flight get a bounded grace (10 s; 0.6 s
    here), not as long as they take: a handler stuck for good is left, with a warning, and
    the bot still stops. The grace outlasts the deferral, as the real ones do."""
    harness.defer_after = 0.2
    monkeypatch.setattr(client, "SHUTDOWN_GRACE", 0.6)
    async with contextlib.AsyncExitStack() as running:
        stopping, let_go, click, _ = await stop_while_a_click_is_held(sim, harness, running)
        stopped, _ = await asyncio.wait({stopping}, timeout=8)
        if not stopped:  # the grace is not bounded: fail, rather than wait for good
            let_go.set()
            await stopping
        assert stopped, "the bot waited for its stuck handler past the grace"
    assert "closing with 1 interaction handlers still running" in caplog.text
    click.cancel()
    await asyncio.gather(click, return_exceptions=True)


@both_front_doors
@both_engines
async def test_start_and_vs_ai_at_once_leave_one_challenge_or_one_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        for attempt in range(5):
            channel = sim.add_channel(s.guild, f"race-{attempt}")
            challenge, game = await asyncio.gather(
                sim.slash(s.alice, channel, "ttt start", opponent=s.bob),
                sim.slash(s.carol, channel, "ttt vs-ai", difficulty="smart"),
            )
            public = [ix for ix in (challenge, game) if not ix.ephemeral]
            refused = [ix for ix in (challenge, game) if ix.ephemeral]
            assert len(public) == 1, (challenge.content, game.content)
            assert len(refused) == 1
            assert (refused[0].content or "").startswith(BUSY), refused[0].content
            storage = bot.service.storage
            live = await storage.live_game_in_channel(channel.id)
            pending = await storage.pending_challenge_in_channel(channel.id)
            assert (live is None) != (pending is None)


# -- payloads a normal client would not send ------------------------------------------------------


def option_value(name: str, value: object) -> Callable[[JSON], None]:
    """A tamper that sets option ``name`` (inside the subcommand) to ``value``."""

    def tamper(data: JSON) -> None:
        for option in data["options"][0]["options"]:
            if option["name"] == name:
                option["value"] = value

    return tamper


@both_front_doors
@pytest.mark.parametrize(
    "tamper",
    [option_value("opponent", "not-an-id"), option_value("opponent", "12"), drop_resolved_users],
    ids=["not-an-id", "unknown-id", "missing-from-resolved"],
)
async def test_an_opponent_that_names_nobody_is_refused(
    sim: DiscordSim, harness: BotHarness, tamper: Callable[[JSON], None]
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        ix = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob, tamper=tamper)
        refused(ix, "The opponent option doesn't name anyone here: pick from the list.")
        assert await bot.service.storage.pending_challenge_in_channel(s.channel.id) is None


@both_front_doors
async def test_an_autocomplete_with_a_forged_option_is_refused_and_counted_so(
    sim: DiscordSim, harness: BotHarness
) -> None:
    # Discord only sends a number for /ttt leaderboard's size: a word there is hand-made.
    s = sim.seed
    async with harness.running() as bot:
        offered = await sim.autocomplete(
            s.carol,
            s.channel,
            "ttt leaderboard",
            focused="season",
            season="",
            size=4,
            tamper=option_value("size", "four"),
        )
        assert offered == []
        # Counted once discord.py's answer has gone, which over the gateway is after the sim
        # has it.
        outcomes = {"answered": 0.0, "refused": 0.0, "failed": 0.0}
        for _ in range(200):
            outcomes = {
                outcome: bot.metrics.registry.get_sample_value(
                    "tttbot_interactions_total", {"kind": "autocomplete", "outcome": outcome}
                )
                or 0.0
                for outcome in outcomes
            }
            if any(outcomes.values()):
                break
            await asyncio.sleep(0.01)
        assert outcomes == {"answered": 0.0, "refused": 1.0, "failed": 0.0}


def _top_name(name: str) -> Callable[[JSON], None]:
    return lambda data: data.update(name=name)


def _sub_name(name: str) -> Callable[[JSON], None]:
    return lambda data: data["options"][0].update(name=name)


def _unfocused(data: JSON) -> None:
    for option in data["options"][0]["options"]:
        option.pop("focused", None)


@both_front_doors
@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(_top_name("tic"), id="a command this process does not know"),
        pytest.param(_sub_name("leaderboards"), id="a subcommand it does not know"),
        pytest.param(_unfocused, id="no option focused"),
    ],
)
async def test_an_autocomplete_no_command_takes_gets_no_choices(
    sim: DiscordSim,
    harness: BotHarness,
    tamper: Callable[[JSON], None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """discord.py raises before any autocomplete callback when it finds no command, or no
    focused option, to offer choices for (a command Discord still lists that this process
    does not know, or a hand-made payload), and the tree's error handler answered as it
    answers a command: with a message, which Discord refuses for an autocomplete (the sim
    fails the test at teardown for it). It is offered nothing, and counted refused."""
    s = sim.seed
    async with harness.running() as bot:
        offered = await sim.autocomplete(
            s.carol, s.channel, "ttt leaderboard", focused="season", season="", tamper=tamper
        )
        assert offered == []
        assert await bot.in_flight.wait_idle(patience=5)
        # Counted once discord.py's answer has gone, which over the gateway is after the sim
        # has it.
        refusals = 0.0
        for _ in range(200):
            refusals = (
                bot.metrics.registry.get_sample_value(
                    "tttbot_interactions_total", {"kind": "autocomplete", "outcome": "refused"}
                )
                or 0.0
            )
            if refusals:
                break
            await asyncio.sleep(0.01)
        assert refusals == 1.0
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


@both_front_doors
@pytest.mark.parametrize(
    ("command", "option", "read"),
    [
        ("ttt move", "cell", "live_game_in_channel"),
        ("ttt leaderboard", "season", "last_rated_game_before"),
    ],
)
async def test_an_autocomplete_while_the_database_is_down_is_offered_nothing(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    command: str,
    option: str,
    read: str,
) -> None:
    """An outage while an autocomplete read the database raised in its callback: discord.py
    logged it at ERROR with a traceback, as for a bug, and the picker got no answer. It is
    offered nothing, and the outage is one WARNING line."""
    s = sim.seed

    async def down(*args: object) -> None:
        raise DatabaseUnavailableError("connection refused", nothing_written=True)

    async with harness.running() as bot:
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        monkeypatch.setattr(bot.storage, read, down)
        offered = await sim.autocomplete(
            s.alice, s.channel, command, focused=option, options={option: ""}
        )
        assert offered == []
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.levelname == "WARNING"
    assert warning.exc_info is None
    assert "connection refused" in warning.getMessage()


@both_front_doors
async def test_an_unknown_first_player_is_refused(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running() as bot:
        ix = await sim.slash(
            s.alice,
            s.channel,
            "ttt vs-ai",
            difficulty="smart",
            first="bot",
            tamper=option_value("first", "nobody"),
        )
        refused(ix, "That isn't one of the choices: pick from the list.")
        assert await bot.service.storage.live_game_in_channel(s.channel.id) is None


@both_front_doors
@pytest.mark.parametrize(
    "value", ["abc", "12", 12.5, True], ids=["a-word", "a-numeral", "a-fraction", "a-flag"]
)
async def test_a_game_number_that_is_no_whole_number_is_refused(
    sim: DiscordSim, harness: BotHarness, value: object, caplog: pytest.LogCaptureFixture
) -> None:
    """``/ttt review game:`` takes a whole number; Discord sends nothing else for it."""
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(
            s.alice, s.channel, "ttt review", game=1, tamper=option_value("game", value)
        )
        refused(ix, "The game option doesn't take that value: pick or type it again.")
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@both_engines
@both_front_doors
async def test_a_game_number_past_the_database_s_integers_is_no_such_game(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Twenty digits (a hand-made payload: Discord stops at 2**53) overflow a 64-bit id: the
    member is told there is no such game, and nothing is logged as an error."""
    s = sim.seed
    number = 2**64 - 1  # twenty digits, the most the JSON encoder writes
    async with harness.running():
        ix = await sim.slash(
            s.alice, s.channel, "ttt review", game=1, tamper=option_value("game", number)
        )
        refused(ix, f"There is no game #{number}")
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def stored_member_game(sim: DiscordSim, bot: client.TTTBot) -> tuple[SimMessage, GameRecord]:
    """A game between alice and bob in the seed's channel, its board's id recorded: its board
    and its record as stored."""
    board = await start_member_game(sim)
    assert await bot.in_flight.wait_idle(patience=5)  # its message id recorded
    game = await bot.service.storage.live_game_in_channel(sim.seed.channel.id)
    assert game is not None
    return board, game


@both_front_doors
async def test_a_cell_off_the_board_on_a_hand_made_button_changes_nothing(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board, game = await stored_member_game(sim, bot)
        forged = CELL_ID.build(game=game.id, ply=0, cell=40)
        ix = await sim.click(s.alice, board, forged, forged=True)
        refused(ix, "That button does nothing: use the buttons on the newest board.")
        assert await bot.in_flight.wait_idle(patience=5)
        stored = await bot.service.storage.get_game(game.id)
        assert stored == game
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


def _member_id(value: str) -> Callable[[JSON], None]:
    return lambda event: event["member"]["user"].update(id=value)


# Fields of an INTERACTION_CREATE in a shape Discord never sends: discord.py cannot read them.
MALFORMED: dict[str, Callable[[JSON], None]] = {
    "a member id that is no number": _member_id("not-a-snowflake"),
    "app permissions that are no number": lambda event: event.update(app_permissions="junk"),
    "message components null": lambda event: event["message"].update(components=None),
    "no authorizing installations": lambda event: event.update(authorizing_integration_owners=None),
    # discord.py reads it, with no user: every handler failed on it, with tracebacks at ERROR.
    "neither member nor user": lambda event: event.pop("member"),
    # discord.py reads it and routes it nowhere: nothing answered it, nothing said so, and
    # over HTTP the request was held 3 s and answered 503. Nothing can answer a type unknown.
    "a type Discord may add later": lambda event: event.update(type=99),
}


@both_front_doors
@pytest.mark.parametrize(
    ("kind", "tamper"),
    [
        pytest.param(kind, tamper, id=f"{kind}, {what}")
        for kind in ("a click", "a command")
        for what, tamper in MALFORMED.items()
        if kind == "a click" or what != "message components null"  # a click's field
    ],
)
async def test_an_event_that_cannot_be_read_is_dropped_and_the_bot_plays_on(
    sim: DiscordSim,
    harness: BotHarness,
    kind: str,
    tamper: Callable[[JSON], None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One malformed INTERACTION_CREATE must not stop the process: it is logged once, as a
    warning with its type and id (never its token), and dropped; the same process then
    plays a game. A click goes through the hot path first, a command straight to
    discord.py. Over HTTP the request is answered 400 at once, not held for 3 s: Discord
    shows the member that it failed, as it would then."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        # Over the gateway the wait runs out; over HTTP the 400 ends it.
        timeout = 3 if harness.front_door == HTTP else 1
        if kind == "a click":
            unreadable = sim.click(
                s.alice, board, cell_id(board, "B2"), tamper_event=tamper, timeout=timeout
            )
        else:
            unreadable = sim.slash(
                s.alice, s.channel, "ttt board", tamper_event=tamper, timeout=timeout
            )
        with (
            caplog.at_level(logging.WARNING, logger="bot.events"),
            pytest.raises(SimTimeout) as no_answer,
        ):
            await unreadable
        if harness.front_door == HTTP:
            assert "with HTTP 400 b'the interaction could not be read" in str(no_answer.value)
        (dropped,) = [r for r in caplog.records if r.name == "bot.events"]
        unread = sim.interactions[-1]
        assert dropped.levelno == logging.WARNING
        assert dropped.getMessage().startswith(
            f"dropped a INTERACTION_CREATE event (id {unread.id}) that could not be read: "
        )
        assert all(unread.token not in record.getMessage() for record in caplog.records)
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.moves == ()  # the dropped click played nothing
        # The same process plays on: a move, and a whole new game in another channel.
        moved = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert moved.response_type == 7
        other = await start_member_game(sim, channel=s.other_channel)
        assert (await sim.click(s.alice, other, cell_id(other, "A1"))).response_type == 7


@both_front_doors
async def test_a_cell_with_a_line_break_is_quoted_whole(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        ix = await sim.slash(s.alice, s.channel, "ttt move", cell="B2\n@everyone")
        refused(ix, "is not a cell")
        assert "everyone" in (ix.content or "")  # the whole input is quoted...
        assert "\n" not in (ix.content or "")  # ...on one line
        assert ix.message is not None
        assert ix.message.pinged == []


@both_front_doors
@pytest.mark.parametrize("custom_id", ["ttt:bogus:1", "hello", "ttt:cell:1:999"])
async def test_a_button_that_matches_no_template_gets_an_answer(
    sim: DiscordSim, harness: BotHarness, custom_id: str
) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        ix = await sim.click(s.alice, board, custom_id, forged=True)
        refused(ix, "That button does nothing: use the buttons on the newest board.")
        assert shown_board(sim.message(board.id)) == ".../.../..."


@both_front_doors
@pytest.mark.parametrize("component_type", [3, 4, 99])
async def test_a_button_sent_as_another_kind_of_component_gets_an_answer(
    sim: DiscordSim, harness: BotHarness, component_type: int
) -> None:
    """A click on one of the board's own buttons, sent as a select menu, a text input or a
    component type Discord has not made (a hand-made payload): discord.py routes a click only
    to a component of the type sent, so nothing answered it, and the member saw "This
    interaction failed" (over HTTP, after 3 s and a WARNING). It is refused with a sentence."""
    s = sim.seed

    def sent_as(event: JSON) -> None:
        event["data"]["component_type"] = component_type

    async with harness.running() as bot:
        board = await start_member_game(sim)
        ix = await sim.click(s.alice, board, cell_id(board, "B2"), tamper_event=sent_as)
        refused(ix, "That button does nothing: use the buttons on the newest board.")
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.moves == ()


@both_front_doors
@both_engines
@pytest.mark.parametrize("from_a_board", [False, True], ids=["from a command", "from a board"])
async def test_a_form_the_bot_never_opened_gets_a_sentence_and_changes_nothing(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture, from_a_board: bool
) -> None:
    """A modal submit (the bot opens no form: a stale client's, a hand-made request) was
    dropped by discord.py with no answer: the member saw "This interaction failed" (over HTTP
    after the request was held 3 s and answered 503). It gets a private sentence at once,
    counted as a refusal, and changes nothing."""
    s = sim.seed
    async with harness.running() as bot:
        board, game = await stored_member_game(sim, bot)
        ix = await sim.submit_unopened_modal(
            s.alice, s.channel, "ttt:form", message=board if from_a_board else None
        )
        refused(ix, "That form isn't one I opened, so nothing was done.")
        assert ix.latency is not None
        assert ix.latency < 3  # Discord's deadline (refused() checked it came undeferred)
        assert await bot.in_flight.wait_idle(patience=5)
        assert await bot.service.storage.live_game_in_channel(s.channel.id) == game
        assert shown_board(sim.message(board.id)) == ".../.../..."
        counted = bot.metrics.registry.get_sample_value(
            "tttbot_interactions_total", {"kind": "other", "outcome": "refused"}
        )
        assert counted == 1.0
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@both_front_doors
async def test_a_challenge_id_out_of_range_is_a_clean_answer(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        challenge = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert challenge.message is not None
        forged = CHALLENGE_ID.build(challenge=10**20 - 1, action="accept")
        ix = await sim.click(s.bob, challenge.message, forged, forged=True)
        refused(ix, "That challenge no longer exists.")


@both_front_doors
async def test_a_cell_button_forged_onto_another_channel_s_message_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        assert await bot.in_flight.wait_idle(patience=5)  # the board's message id is saved
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        elsewhere = await sim.slash(s.carol, s.other_channel, "ttt vs-ai", difficulty="random")
        assert elsewhere.message is not None
        forged = CELL_ID.build(game=game.id, ply=0, cell=0)
        ix = await sim.click(s.alice, elsewhere.message, forged, forged=True)
        refused(ix, "That button doesn't belong to this message")
        # ...nor onto another message in the game's own channel.
        challenge = await sim.slash(s.carol, s.thread, "ttt start")
        assert challenge.message is not None
        here = await sim.click(s.alice, challenge.message, forged, forged=True)
        refused(here, "That button doesn't belong to this message")
        assert await bot.service.storage.get_game(game.id) == game
        assert shown_board(sim.message(board.id)) == ".../.../..."


# -- a click means the position the player saw ----------------------------------------------------

CHANGED = "The board changed while you were moving: look again and retry."


@both_front_doors
@both_engines
async def test_a_burst_of_clicks_on_an_outdated_board_plays_one_move(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        board = started.message
        assert board is not None
        a1, c3 = cell_id(board, "A1"), cell_id(board, "C3")
        await sim.click(s.alice, board, a1)
        # The second click of the burst, made before the board showed the bot's answer.
        refused(await sim.click(s.alice, board, c3, stale=True), CHANGED)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert len(game.moves) == 2  # alice's A1 and the bot's answer, nothing more
        assert game.moves[0] == 0


@both_front_doors
async def test_a_board_left_behind_its_game_is_redrawn_by_the_next_click_on_it(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A move saved whose board was never redrawn (the process stopped dead between saving it
    and answering: here, the move is made in the service, past Discord) left every later click
    on that board refused, the board never changing. The first such click now redraws the
    board as the game is stored, and tells its member why; the next click plays."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        assert await bot.in_flight.wait_idle(patience=5)  # the board's id is saved after
        await bot.service.move_in_channel(s.channel.id, Actor(s.alice.id, "alice"), "A1")
        assert shown_board(board) == ".../.../..."  # never redrawn
        clicked = await sim.click(s.bob, board, cell_id(board, "B2"))
        await refused_showing_the_game(clicked, CHANGED)
        assert shown_board(board) == "X../.../..."
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.moves == (0,)  # bob's click on the old board played nothing
        await sim.click(s.bob, board, cell_id(board, "B2"))
        assert shown_board(board) == "X../.O./..."


@both_front_doors
async def test_a_challenge_accepted_whose_answer_never_left_shows_the_game_at_the_next_click(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """An accept saved and its message adopted as the board, whose answer never showed (over
    HTTP, a response lost on its way as its worker was killed: the soak on PostgreSQL found
    one): the challenge's message kept its Accept button, and every click on it was refused
    while the game it started went on unseen. The next click on it now shows the game
    there, and tells its member why."""
    s = sim.seed
    async with harness.running() as bot:
        message, _ = await accepted_unshown(sim, bot)
        accept = button_id(message, CHALLENGE_ID, action="accept")
        clicked = await sim.click(s.bob, message, accept)
        await refused_showing_the_game(clicked, "This challenge is closed: it was accepted.")
        assert shown_board(message) == ".../.../..."
        played = await sim.click(s.alice, message, cell_id(message, "B2"))
        assert played.response_type == 7
        assert shown_board(message) == ".../.X./..."


@both_front_doors
@both_engines
async def test_clicks_at_one_ply_racing_the_redraw_apply_one(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        board = started.message
        assert board is not None
        first, second = await asyncio.gather(
            sim.click(s.alice, board, cell_id(board, "A1")),
            sim.click(s.alice, board, cell_id(board, "C3")),
        )
        # One played; the other refused, privately: at once if its save lost the race, or
        # with the board redrawn as stored if it read the game after the other's move.
        told = await sim.wait_for(
            lambda: [text for ix in (first, second) if (text := told_privately(ix))]
        )
        assert told == [CHANGED]
        assert sorted(ix.response_type or 0 for ix in (first, second)) in ([4, 7], [7, 7])
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert len(game.moves) == 2


@both_front_doors
@both_engines
async def test_boards_drawn_before_cells_named_their_ply_still_play(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        legacy = LEGACY_CELL_ID.build(game=game.id, cell=4)
        ix = await sim.click(s.alice, board, legacy, forged=True)
        assert ix.response_type == 7, ix.content
        assert ix.message is not None
        assert shown_board(ix.message) == ".../.X./..."
        assert all(CELL_ID.parse(b["custom_id"]) for b in cell_buttons(ix.message))


# -- answers later than Discord's 3 s ------------------------------------------------------------


@asynccontextmanager
async def database_locked_by_another_process(
    harness: BotHarness, seconds: float
) -> AsyncIterator[None]:
    """Another process holds the database's write lock for ``seconds`` from when the block
    starts (a backup, a second bot, a migration): on SQLite the file's, on PostgreSQL an
    exclusive lock on every table the bot writes (reads go on, as with SQLite's)."""
    locked = (
        _postgres_tables_locked(harness.database.url, seconds)
        if harness.engine == POSTGRESQL
        else _sqlite_file_locked(harness.db_path, seconds)
    )
    async with locked:
        yield


@asynccontextmanager
async def _sqlite_file_locked(path: Path, seconds: float) -> AsyncIterator[None]:
    locked = threading.Event()
    failed: list[BaseException] = []

    def hold() -> None:
        try:
            with closing(sqlite3.connect(path, isolation_level=None)) as db:
                db.execute("BEGIN IMMEDIATE")
                locked.set()
                time.sleep(seconds)
                db.execute("ROLLBACK")
        except BaseException as error:
            failed.append(error)
            raise

    holder = threading.Thread(target=hold)
    holder.start()
    # Waited for off the event loop: the bot shares it and may be mid-transaction.
    assert await asyncio.to_thread(locked.wait, 10), f"could not take the lock: {failed}"
    try:
        yield
    finally:
        await asyncio.to_thread(holder.join)


BOT_TABLES = "games, challenges, channel_occupants, player_stats, ratings, settings"
# The bot's deferral deadline in the tests of slow answers (long enough that their set-up's
# plain answers, on a busy machine, still come at once), and how long they hold the database
# or an answer: well past it.
SHORT_DEFER = 0.5
LOCKED_FOR = 1.0


@asynccontextmanager
async def _postgres_tables_locked(url: str, seconds: float) -> AsyncIterator[None]:
    db = await asyncpg.connect(url)
    try:
        transaction = db.transaction()
        await transaction.start()
        # Taken between interactions, when the bot holds no lock: it never waits.
        await db.execute(f"LOCK TABLE {BOT_TABLES} IN EXCLUSIVE MODE")

        async def release() -> None:
            await asyncio.sleep(seconds)
            await transaction.rollback()

        # Released on time whatever the block waits for, as the SQLite holder's thread is.
        releasing = asyncio.create_task(release())
        try:
            yield
        finally:
            await releasing
    finally:
        await db.close()


@both_front_doors
@both_engines
async def test_a_click_while_the_database_is_locked_is_deferred_then_shown(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.defer_after = SHORT_DEFER
    async with harness.running():
        board = await start_member_game(sim)
        async with database_locked_by_another_process(harness, LOCKED_FOR):
            ix = await sim.click(s.alice, board, cell_id(board, "B2"), timeout=10)
            assert ix.response_type == 6  # deferred in time...
            await ix.wait_done(timeout=10)  # ...and finished with an edit of the board
        assert shown_board(sim.message(board.id)) == ".../.X./..."


@both_front_doors
@both_engines
async def test_a_command_while_the_database_is_locked_is_deferred_then_shown(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.defer_after = SHORT_DEFER
    async with harness.running():
        async with database_locked_by_another_process(harness, LOCKED_FOR):
            ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart", timeout=10)
            assert ix.response_type == 5  # "thinking..." in time...
            await ix.wait_done(timeout=10)  # ...then the board in its place
        assert ix.message is not None
        assert "to move" in text_of(ix.message)
        moved = await sim.click(s.alice, ix.message, cell_id(ix.message, "A1"))
        assert moved.response_type == 7  # the deferred answer became the live board


@both_front_doors
async def test_a_database_locked_past_its_patience_is_a_sentence_and_a_warning(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Another process holds SQLite's write lock longer than the bot waits for it: the member
    is told the database did not answer and nothing was done (the lock was never had), the
    log says so in one WARNING line, and the game starts once asked again."""
    s = sim.seed
    monkeypatch.setattr("bot.storage.sqlite.BUSY_TIMEOUT_SECONDS", 0.2)
    async with harness.running() as bot:
        async with database_locked_by_another_process(harness, 1.5):
            failed = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        assert await bot.storage.live_game_in_channel(s.channel.id) is None
        again = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
    refused(failed, DATABASE_DOWN)
    assert failed.content == DATABASE_DOWN
    assert again.message is not None
    assert "to move" in text_of(again.message)
    (record,) = [r for r in caplog.records if "the database failed handling" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert "(nothing written)" in record.getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@both_front_doors
async def test_a_slow_answer_that_is_a_mistake_stays_private(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = sim.seed
    harness.defer_after = SHORT_DEFER
    async with harness.running() as bot:
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        storage = bot.service.storage
        real = storage.live_game_in_channel

        async def slow(channel_id: int) -> GameRecord | None:
            await asyncio.sleep(LOCKED_FOR)  # past the deferral deadline
            return await real(channel_id)

        monkeypatch.setattr(storage, "live_game_in_channel", slow)
        ix = await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="smart", timeout=10)
        assert ix.response_type == 5
        (sentence,) = await ix.wait_followups(timeout=10)
        assert sentence.ephemeral
        assert "There is already a game in this channel" in (sentence.content or "")
        # The public "thinking..." the deferral showed is gone.
        assert ix.message is not None
        assert ix.message.deleted


# -- state saved without its message heals itself -------------------------------------------------


@both_front_doors
@both_engines
async def test_two_boards_asked_for_at_once_leave_one_live_board(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Each /ttt board posts the board again and retires the one before it: two at once both
    read the same board as the one before theirs, and the first of their two posts stayed
    live beside the second (clickable, a second board of one game)."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        # The accept's board is adopted after its answer: adopted after the two posts, it
        # would retire one of them and be the live board itself.
        assert await bot.in_flight.wait_idle(patience=5)
        asked = await asyncio.gather(
            sim.slash(s.alice, s.channel, "ttt board"), sim.slash(s.bob, s.channel, "ttt board")
        )
        assert await bot.in_flight.wait_idle(patience=5)
        posted = [ix.message for ix in asked]
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id in [message.id for message in posted if message is not None]
        await sim.wait_for(
            lambda: [m.id for m in sim.messages(s.channel) if is_live(m)] == [game.message_id],
            what="one live board",
        )
        assert not is_live(board)


@both_front_doors
@both_engines
async def test_board_shows_an_open_challenge_again_at_the_bottom(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        first = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert first.message is not None
        again = await sim.slash(s.carol, s.channel, "ttt board")
        assert again.message is not None
        assert "challenges you to tic-tac-toe" in (again.message.content or "")
        old = sim.message(first.message.id)
        await sim.wait_for(lambda: old.buttons() == [])  # the older message points below
        assert "moved to a newer message below" in (old.content or "")
        accepted = await sim.click(
            s.bob, again.message, button_id(again.message, CHALLENGE_ID, action="accept")
        )
        assert accepted.response_type == 7
        assert accepted.message is not None
        assert "❌ **alice** vs ⭕ **bob**" in text_of(accepted.message)


async def recorded_after_the_next(
    sim: DiscordSim,
    bot: client.TTTBot,
    name: str,
    first_action: Callable[[], Awaitable[InteractionRecord]],
) -> tuple[InteractionRecord, InteractionRecord]:
    """``first_action``'s message recorded (storage's ``name``) only after a ``/ttt board``
    at once posted and recorded a newer one: both answers, once the bot is idle again."""
    s = sim.seed
    recording = getattr(bot.storage, name)
    first_reached, let_first_go, newer_recorded = (asyncio.Event() for _ in range(3))

    async def first_held(*args: Any, **kwargs: Any) -> Any:
        if not first_reached.is_set():
            first_reached.set()
            await let_first_go.wait()
            return await recording(*args, **kwargs)
        try:
            return await recording(*args, **kwargs)
        finally:
            newer_recorded.set()

    setattr(bot.storage, name, first_held)
    try:
        first = await first_action()
        await first_reached.wait()
        again = await sim.slash(s.carol, s.channel, "ttt board")
        await newer_recorded.wait()
        let_first_go.set()
        assert await bot.in_flight.wait_idle(patience=5)
    finally:
        setattr(bot.storage, name, recording)
    return first, again


async def the_newer_board_is_live(
    sim: DiscordSim, bot: client.TTTBot, older: SimMessage, again: InteractionRecord
) -> None:
    """``again``'s board is the game's, the one it took over from (``older``) retired, and
    alice's move on it is played."""
    s = sim.seed
    assert again.message is not None
    game = await bot.storage.live_game_in_channel(s.channel.id)
    assert game is not None
    assert game.message_id == again.message.id
    old = sim.message(older.id)
    await sim.wait_for(lambda: not is_live(old), what="the older board retired")
    newer = sim.message(again.message.id)
    assert is_live(newer)
    moved = await sim.click(s.alice, newer, cell_id(newer, "B2"))
    assert moved.response_type == 7


@both_front_doors
@both_engines
async def test_a_board_recorded_after_a_newer_one_is_the_one_retired(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """``/ttt vs-ai``'s board recorded only after ``/ttt board`` posted and recorded a newer
    one (over HTTP its id comes a round trip after the answer): the newer board stays live,
    the older loses its buttons."""
    s = sim.seed
    async with harness.running() as bot:
        first, again = await recorded_after_the_next(
            sim,
            bot,
            "set_game_message",
            lambda: sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"),
        )
        assert first.message is not None
        await the_newer_board_is_live(sim, bot, first.message, again)


@both_front_doors
@both_engines
async def test_a_click_on_the_older_board_while_its_retirement_is_in_flight_leaves_one_live(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """``/ttt board`` posts a newer board and retires the older one, an edit held on its
    way; a click on the older board meanwhile (it still shows its buttons) makes it the game's
    board again and retires the newer. Whichever edit lands last, one board takes clicks: the
    game's, as stored."""
    s = sim.seed
    async with harness.running() as bot:
        older = await recorded_post(sim, bot, "ttt vs-ai", difficulty="random")
        edit, retiring, release = bot.boards.edit, asyncio.Event(), asyncio.Event()

        async def held(
            channel_id: int, message_id: int, message: Any, *, reaches: bool | None = None
        ) -> bool:
            if message_id == older.id and not retiring.is_set():
                retiring.set()
                await release.wait()
            return await edit(channel_id, message_id, message, reaches=reaches)

        bot.boards.edit = held  # type: ignore[method-assign]
        again = await sim.slash(s.alice, s.channel, "ttt board")
        newer = again.message
        assert newer is not None
        await asyncio.wait_for(retiring.wait(), 5)
        clicked = await sim.click(s.alice, sim.message(older.id), cell_id(older, "B2"))
        assert clicked.response_type == 7
        await sim.wait_for(lambda: not is_live(sim.message(newer.id)), what="the newer retired")
        release.set()
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        boards = [sim.message(older.id), sim.message(newer.id)]
        await sim.wait_for(
            lambda: [is_live(board) for board in boards].count(True) == 1,
            what="one board taking clicks",
        )
        (live,) = [board for board in boards if is_live(board)]
        assert live.id == game.message_id
        free = cell_name(board_of(live).empty_cells[0])
        moved = await sim.click(s.alice, live, cell_id(live, free))
        assert moved.response_type == 7, moved.content


@both_front_doors
@both_engines
async def test_an_accepted_challenge_recorded_as_the_board_after_a_newer_one_is_retired(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Bob's accept turns the challenge into the board, which is recorded only after a
    ``/ttt board`` sent after the accept posted and recorded a newer one: the newer board
    stays live (a click on an older board that came after the newer was posted still adopts
    the older: ``test_storage.py``'s ``test_a_board_recorded_after_a_newer_one_leaves_it``)."""
    s = sim.seed
    async with harness.running() as bot:
        message = await recorded_post(sim, bot, "ttt start", opponent=s.bob)
        accept = button_id(message, CHALLENGE_ID, action="accept")
        first, again = await recorded_after_the_next(
            sim, bot, "set_game_message", lambda: sim.click(s.bob, message, accept)
        )
        assert first.response_type == 7
        await the_newer_board_is_live(sim, bot, message, again)


@both_front_doors
@both_engines
async def test_a_move_whose_board_lost_to_one_posted_since_shows_on_that_one(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Alice's move is held before it is saved while a ``/ttt board`` sent after her click
    posts the board as it was and records it: her clicked board is retired as the older,
    and the newer one, drawn before her move, shows it."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        assert await bot.in_flight.wait_idle(patience=5)
        moving, let_go = hold(bot.service, "move_on_board")
        recording, recorded = bot.storage.set_game_message, asyncio.Event()

        async def noted(game_id: int, message_id: int, **kwargs: Any) -> int | None:
            try:
                return await recording(game_id, message_id, **kwargs)
            finally:
                recorded.set()

        bot.storage.set_game_message = noted  # type: ignore[method-assign]
        click = asyncio.ensure_future(sim.click(s.alice, board, cell_id(board, "B2")))
        await moving.wait()
        again = await sim.slash(s.carol, s.channel, "ttt board")
        assert again.message is not None
        assert shown_board(again.message) == ".../.../..."
        await recorded.wait()
        let_go.set()
        assert (await click).response_type == 7
        assert await bot.in_flight.wait_idle(patience=5)
        bot.storage.set_game_message = recording  # type: ignore[method-assign]
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id == again.message.id
        await sim.wait_for(lambda: not is_live(sim.message(board.id)), what="the older retired")
        newer = sim.message(again.message.id)
        await sim.wait_for(lambda: shown_board(newer) == ".../.X./...", what="the move shown")
        assert is_live(newer)


@both_front_doors
@both_engines
async def test_a_board_posted_before_a_move_and_recorded_after_it_shows_the_move(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A ``/ttt board`` draws the game, then posts it and records it; alice's click on the
    board before it is played, answered and saved in between (held here at the record). The
    newer board retires hers, as the game's, and must show her move: it had been drawn before
    it, live, with alice to move, and every click on it refused as behind the game."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        assert await bot.in_flight.wait_idle(patience=5)
        recording, reached, let_go = bot.storage.set_game_message, asyncio.Event(), asyncio.Event()

        async def held(game_id: int, message_id: int, **kwargs: Any) -> int | None:
            reached.set()
            await let_go.wait()
            return await recording(game_id, message_id, **kwargs)

        bot.storage.set_game_message = held  # type: ignore[method-assign]
        try:
            again = asyncio.ensure_future(sim.slash(s.carol, s.channel, "ttt board"))
            await asyncio.wait_for(reached.wait(), 5)
            moved = await sim.click(s.alice, board, cell_id(board, "B2"))
            assert moved.response_type == 7, moved.content
            assert shown_board(board) == ".../.X./..."
            let_go.set()
            newer = (await again).message
            assert newer is not None
            assert await bot.in_flight.wait_idle(patience=5)
        finally:
            bot.storage.set_game_message = recording  # type: ignore[method-assign]
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id == newer.id
        await sim.wait_for(lambda: not is_live(sim.message(board.id)), what="the older retired")
        shown = sim.message(newer.id)
        await sim.wait_for(lambda: shown_board(shown) == ".../.X./...", what="the move shown")
        answered = await sim.click(s.bob, shown, cell_id(shown, "A1"))
        assert answered.response_type == 7, answered.content
        assert shown_board(shown) == "O../.X./..."


@both_front_doors
@both_engines
async def test_a_challenge_message_recorded_after_a_newer_one_is_the_one_retired(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """``/ttt start``'s message recorded only after ``/ttt board`` posted and recorded a newer
    one (over HTTP its id comes a round trip after the answer; any database write may be
    slow): the newer message keeps the challenge, the older loses its buttons."""
    s = sim.seed
    async with harness.running() as bot:
        first, again = await recorded_after_the_next(
            sim,
            bot,
            "set_challenge_message",
            lambda: sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob),
        )
        assert first.message is not None
        assert again.message is not None
        pending = await bot.storage.pending_challenge_in_channel(s.channel.id)
        assert pending is not None
        assert pending.message_id == again.message.id
        old = sim.message(first.message.id)
        await sim.wait_for(lambda: old.buttons() == [], what="the older message retired")
        assert "moved to a newer message below" in (old.content or "")
        newer = sim.message(again.message.id)
        assert "moved to a newer message below" not in (newer.content or "")
        accepted = await sim.click(s.bob, newer, button_id(newer, CHALLENGE_ID, action="accept"))
        assert accepted.response_type == 7


@both_front_doors
@both_engines
async def test_a_challenge_whose_answer_never_arrived_is_shown_again(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The challenge is saved, and every try of the answer that shows it is lost: the
    channel must not stay blocked with nothing to click."""
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.slash(
                s.alice, s.channel, "ttt start", opponent=s.bob, timeout=PAST_THE_WINDOW
            )
        assert await bot.in_flight.wait_idle(patience=5)
        pending = await bot.service.storage.pending_challenge_in_channel(s.channel.id)
        assert pending is not None
        assert pending.message_id is None
        # The challenger asking again shows it, instead of "there is already a challenge".
        again = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert again.message is not None
        assert not again.ephemeral
        assert "challenges you to tic-tac-toe" in (again.message.content or "")
        assert await bot.in_flight.wait_idle(patience=5)  # it records the message after
        shown = await bot.service.storage.get_challenge(pending.id)
        assert shown is not None
        assert shown.message_id == again.message.id


@both_front_doors
@both_engines
async def test_the_sweeper_posts_what_was_saved_without_its_message(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        unanswered: list[tuple[SimUser, SimChannel, str, dict[str, object]]] = [
            (s.alice, s.channel, "ttt start", {"opponent": s.bob}),
            (s.carol, s.other_channel, "ttt vs-ai", {"difficulty": "smart"}),
        ]
        with first_answers_lost(sim):
            for user, channel, command, options in unanswered:
                with pytest.raises(SimTimeout):
                    await sim.slash(
                        user, channel, command, options=options, timeout=PAST_THE_WINDOW
                    )
            assert await bot.in_flight.wait_idle(patience=5)
        await bot.sweep()
        assert sim.last_message(s.channel) is None  # too early: the handler may still answer
        harness.clock.advance(31)
        await bot.sweep()
        challenge = sim.last_message(s.channel)
        board = sim.last_message(s.other_channel)
        assert challenge is not None
        assert board is not None
        assert "challenges you to tic-tac-toe" in (challenge.content or "")
        assert "carol" in text_of(board)
        accepted = await sim.click(
            s.bob, challenge, button_id(challenge, CHALLENGE_ID, action="accept")
        )
        assert accepted.response_type == 7
        played = await sim.click(s.carol, board, cell_id(board, "B2"))
        assert played.response_type == 7


@both_engines
async def test_an_answer_lost_after_it_was_applied_is_not_shown_twice(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Discord applied the answer but the connection dropped before the bot heard so."""
    s = sim.seed
    async with harness.running() as bot:
        sim.faults.add(CALLBACK, reset="after")
        ix = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert ix.message is not None
        assert await bot.in_flight.wait_idle(patience=10)
        challenge = await bot.service.storage.pending_challenge_in_channel(s.channel.id)
        assert challenge is not None
        assert challenge.message_id == ix.message.id  # learnt from Discord, not posted again
        harness.clock.advance(31)
        await bot.sweep()
        assert sim.messages(s.channel) == [ix.message]


async def test_a_refusal_after_an_answer_that_dropped_once_applied_is_not_a_second_answer(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A late move: the board is updated to show the timeout (Discord applies it, but the
    connection drops before the bot hears so), then the player is told why. That sentence
    must come as a follow-up: a second first answer is refused as answering twice."""
    s = sim.seed
    async with harness.running() as bot:
        board = await board_out_of_time(sim, harness, bot)
        sim.faults.add(CALLBACK, reset="after")
        late = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert late.response_type == 7
        assert "ran out of time" in text_of(board)
        (why,) = await late.wait_followups(1)
        assert why.ephemeral
        assert "Too late: alice's time ran out" in (why.content or "")
        assert await bot.in_flight.wait_idle(patience=5)
    assert sim.take_violations() == []


async def test_a_refusal_after_an_answer_lost_until_the_deadline_answers_nothing_more(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The same, every try of the update lost before Discord applied it: sent again until
    Discord's deadline, then Discord, asked, has no answer, and the bot gives none rather than
    risk a second (the lost one might yet land). The board still shows the timeout, edited
    through the channel."""
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        board = await board_out_of_time(sim, harness, bot)
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.click(s.alice, board, cell_id(board, "B2"), timeout=PAST_THE_WINDOW)
        assert await bot.in_flight.wait_idle(patience=5)
        assert "ran out of time" in text_of(sim.message(board.id))
    # The slash command's answer, then the click's, sent again and again, each lost.
    callbacks = [call.fault for call in sim.requests if call.path.endswith("/callback")]
    assert callbacks[0] is None
    assert len(callbacks) > 2
    assert set(callbacks[1:]) == {"reset-before"}
    assert sim.take_violations() == []


@both_engines
async def test_a_move_whose_answer_was_lost_still_shows_on_the_board(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        board = await start_member_game(sim)
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.click(s.alice, board, cell_id(board, "B2"), timeout=PAST_THE_WINDOW)
        # Saved, and the board is edited through the channel instead.
        await sim.wait_for(lambda: shown_board(sim.message(board.id)) == ".../.X./...")
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.moves == (4,)
        assert game.message_id == board.id
        moved = await sim.click(s.bob, sim.message(board.id), cell_id(board, "A1"))
        assert moved.response_type == 7


@http_only
async def test_over_http_a_move_whose_response_was_lost_shows_at_the_next_click(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Over HTTP the bot cannot know that a response it wrote whole was lost on its way: the
    move is saved, the board still shows the turn before it, and the next click on it (here
    the opponent's, whose turn it now is) redraws it as stored and says why."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        assert await bot.in_flight.wait_idle(patience=5)  # the board's id is saved after
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.click(s.alice, board, cell_id(board, "B2"))
        assert shown_board(board) == ".../.../..."
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.moves == (4,)
        clicked = await sim.click(s.bob, board, cell_id(board, "A1"))
        await refused_showing_the_game(clicked, CHANGED)
        assert shown_board(board) == ".../.X./..."
        await sim.click(s.bob, board, cell_id(board, "A1"))
        assert shown_board(board) == "O../.X./..."


@both_front_doors
@both_engines
async def test_a_resign_whose_answer_was_lost_is_shown_and_counted(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        board = await start_member_game(sim)
        # The board's id is saved after the answer: the resign shows on that message.
        assert await bot.in_flight.wait_idle(patience=5)
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.slash(s.bob, s.channel, "ttt resign", timeout=PAST_THE_WINDOW)
        await sim.wait_for(lambda: "resigned" in text_of(sim.message(board.id)))
        stats = text_of(await sim.slash(s.bob, s.channel, "ttt stats"))
    assert "Against members: 0 W · 1 L · 0 D" in stats


async def test_a_click_answered_too_late_still_shows_on_the_board(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The answer reaches Discord after its 3 s (the network held it): Discord refuses it,
    and the move, already saved, is shown by editing the board through the channel."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        sim.faults.add(CALLBACK, delay=4.0)
        ix = await sim.click(s.alice, board, cell_id(board, "B2"), timeout=8)
        assert ix.rejected == "late"  # Discord refused the answer: "Unknown interaction"
        sim.faults.clear()
        await sim.wait_for(lambda: shown_board(sim.message(board.id)) == ".../.X./...", timeout=10)
        assert await bot.in_flight.wait_idle(patience=10)
        late = sim.take_violations()
        assert late, "the sim should have seen the late answer"
        assert all("Discord allows 3.0 s" in violation for violation in late), late


async def test_a_click_rate_limited_past_the_deadline_is_not_answered_late(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Discord asks the bot to wait before answering (a 429 on the answer) longer than its
    window for answering lasts: the bot sends nothing more through the interaction (a
    deferral would meet the same limit), and shows the move, already saved, by editing the
    board through the channel."""
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        board = await start_member_game(sim)
        sim.faults.add(CALLBACK, rate_limit=PAST_THE_WINDOW)
        with pytest.raises(SimTimeout):
            await sim.click(s.alice, board, cell_id(board, "B2"), timeout=PAST_THE_WINDOW)
        await sim.wait_for(lambda: shown_board(sim.message(board.id)) == ".../.X./...", timeout=5)
        assert await bot.in_flight.wait_idle(patience=5)
    limited = [call for call in sim.requests if call.path.endswith("/callback")][-1:]
    assert [call.status for call in limited] == [429]  # tried once, not again in the limit
    assert sim.take_violations() == []


@pytest.mark.parametrize(
    "fault",
    [{"status": 500, "count": 3}, {"status": 503, "count": 1}, {"rate_limit": 0.3}],
    ids=["three-500s", "a-503", "429-retry-after-0.3-s"],
)
async def test_an_answer_discord_could_not_take_yet_is_sent_again_in_time(
    sim: DiscordSim, harness: BotHarness, fault: dict[str, Any]
) -> None:
    """Discord failed (a 5xx), or asked the bot to wait a moment (a 429 whose wait ends
    before the deadline): the answer is sent again, in time, and the move played once."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        sim.faults.add(CALLBACK, **fault)
        ix = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert ix.response_type == 7
        assert ix.rejected is None
        assert ix.message is not None
        assert shown_board(ix.message) == ".../.X./..."
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.moves == (4,)
    assert sim.take_violations() == []
