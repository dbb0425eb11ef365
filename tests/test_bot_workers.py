"""Several ``python -m bot serve`` workers on one database, any of them given any interaction
of any game (issue 40): what one worker keeps in its own memory either only saves it a round
trip, the database deciding (a copy made stale by another worker costs a retry at most), or has
been moved to the database. Two bots of the harness serve at once, and the sim is pointed at
one or the other for each interaction."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
import pytest

from bot.boards import LATE_ANSWER, UNSHOWN_GRACE
from bot.client import SWEEPER_LEASE_SWEEPS, TTTBot
from bot.clock import ManualClock
from bot.components import CHALLENGE_ID, GAME_ACTION_ID, PICK_ID, TOURNAMENT_ID
from bot.domain import Actor
from bot.endpoint import SEEN_KEPT
from bot.ladder import SEASON_SETTLES
from bot.service import DAY, Clicked, MoveResult
from bot.storage.base import GameRecord, NewGame, ReplyRoute
from bot.threads import CLAIM_SECONDS, SUSPECTS_KEPT_SECONDS
from game.variants import ULTIMATE_SIZE
from tests.bot_harness import (
    BotHarness,
    both_engines,
    button_id,
    cell_buttons,
    cell_id,
    edits_by_rest,
    final_answer,
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
from tests.discord_sim import DiscordSim, InteractionRecord
from tests.test_bot_seasons import announcements, at, beats, ranking, set_announcements
from tests.test_bot_server_settings import (
    THREAD_UNSURE,
    THREADS_ROUTE,
    game_threads,
    thread_warnings,
)
from tests.test_bot_tournaments import current, joined_and_started, round_games

pytestmark = [http_only, both_engines]

SETTINGS = "ttt-settings"
LIMIT_REACHED = "You are already in as many live games as this server allows (1): finish one first."
OVER = "This game is over."


def to(sim: DiscordSim, bot: TTTBot) -> None:
    """Send the next interactions to ``bot``'s endpoint."""
    sim.interactions_url = f"http://127.0.0.1:{bot.http_port}/interactions"


async def sent_to(
    sim: DiscordSim, bot: TTTBot, verb: Coroutine[Any, Any, InteractionRecord]
) -> asyncio.Task[InteractionRecord]:
    """``verb`` (a sim verb) sent to ``bot`` as a task of its own, so that another can be sent
    to another worker meanwhile: the verb reads the endpoint's address before it first waits."""
    to(sim, bot)
    task = asyncio.ensure_future(verb)
    await asyncio.sleep(0)
    return task


def hold(owner: object, name: str) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold every call of ``owner``'s method ``name`` until the second event is set; the first
    is set once a call waits there."""
    reached, let_go = asyncio.Event(), asyncio.Event()
    method = getattr(owner, name)

    async def when_let_go(*args: Any, **kwargs: Any) -> Any:
        reached.set()
        await let_go.wait()
        return await method(*args, **kwargs)

    setattr(owner, name, when_let_go)
    return reached, let_go


def given(bot: TTTBot, ix: InteractionRecord) -> bool:
    """Whether ``ix`` was POSTed to ``bot`` (its endpoint remembers what it was given)."""
    assert bot.endpoint is not None
    return ix.id in bot.endpoint._seen


async def test_an_interaction_sent_again_to_another_worker_is_refused_and_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The interaction answered by one worker, sent again to the other within the window:
    401 there, nothing started or answered twice. The sweeper forgets it once a request
    signed then would be refused as stale anyway."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert started.response_type == 4
        assert not started.ephemeral
        to(sim, second)
        assert not given(second, started)  # so the database refuses it, not its own memory
        assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
        # And back to the worker that answered it: refused by its own memory.
        to(sim, first)
        assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
        assert sim.messages(s.channel) == [started.message]
        assert sum(1 for request in sim.requests if request.http_response) == 1
        # Noted by the database until its signing time is SEEN_KEPT behind the sweeper's
        # clock: then the holder of the sweeper lease removes it.
        holder = first if first.holds_sweeper_lease else second
        assert holder.endpoint is not None
        clock = holder.endpoint.wall_clock
        await holder.sweep()
        assert not await holder.storage.note_interactions([(started.id, clock())])
        holder.endpoint.wall_clock = lambda: clock() + SEEN_KEPT + 2
        await holder.sweep()
        assert await holder.storage.note_interactions([(started.id, clock())])


async def test_a_copy_another_worker_moved_past_costs_a_retry_and_plays_the_stored_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """GameService's copy of a live game (its ``_kept``) in the worker that started it goes
    stale when the other worker plays a move: a click there is tried on the copy, refused by
    the copy's older ply, and played on the stored game, once. A copy of a game the other
    worker finished is refused the same way, and the click shows the game over."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        to(sim, second)
        await sim.click(s.bob, board, cell_id(board, "A1"))
        game_id = next(iter(first.service._kept))
        assert len(first.service._kept[game_id].moves) == 1  # behind: the stored game has 2
        to(sim, first)
        played = await sim.click(s.alice, board, cell_id(board, "C3"))
        assert played.response_type == 7, played.content
        stored = await first.storage.get_game(game_id)
        assert stored is not None
        assert stored.moves == (4, 0, 8)
        # Bob resigns on the second worker; alice's click on the first worker's copy (live,
        # at her turn) is refused by the stored game, which is over, and the board shows it.
        to(sim, second)
        await sim.click(s.bob, board, cell_id(board, "C1"))
        await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert not is_live(board)
        assert first.service._kept[game_id].is_active
        to(sim, first)
        late = await sim.click(s.alice, board, cell_id(board, "A3"), stale=True)
        refused(late, OVER)
        stored = await first.storage.get_game(game_id)
        assert stored is not None
        assert stored.moves == (4, 0, 8, 2)
        assert not is_live(board)


async def test_a_small_board_picked_on_a_stale_copy_is_refused_by_the_stored_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A pick stores nothing, so no compare-and-set would refuse one made on a stale copy:
    it is made on the stored game. Bob resigns an ultimate game on the second worker, and
    alice's pick on the board still showing the small boards, sent to the first worker
    (whose copy is live), shows the game over rather than a live board again."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        challenge = await sim.slash(
            s.alice, s.channel, "ttt start", opponent=s.bob, size=ULTIMATE_SIZE
        )
        message = challenge.message
        assert message is not None
        await sim.click(s.bob, message, button_id(message, CHALLENGE_ID, action="accept"))
        assert await first.in_flight.wait_idle(patience=5)  # the board's id is saved after
        pick = button_id(message, PICK_ID, board="4")
        # Alice clicks while Discord still shows the live board; her click reaches the first
        # worker after bob's resignation was stored and shown through the second.
        shown_then = message.payload()
        game_id = next(iter(first.service._kept))
        to(sim, second)
        await sim.click(s.bob, message, button_id(message, GAME_ACTION_ID, action="resign"))
        assert await second.in_flight.wait_idle(patience=5)
        assert not is_live(message)
        assert first.service._kept[game_id].is_active
        to(sim, first)
        late = await sim.click(
            s.alice,
            message,
            pick,
            stale=True,
            tamper_event=lambda payload: payload.update(message=shown_then),
        )
        # Refused by the stored game: the board it clicked on is brought up to date (the game
        # over), not put back as it was, and no small board is offered.
        assert late.response_type == 7
        assert not is_live(message)
        assert "resigned" in text_of(message), text_of(message)
        assert not [b for b in message.buttons() if PICK_ID.parse(b["custom_id"])]


async def test_one_member_starting_on_two_workers_at_once_gets_one_game_within_a_limit_of_one(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The limit on live games is decided by the game's insert, across workers (a lock on the
    members in PostgreSQL, the write lock in SQLite); a worker's own member locks only spare a
    thread. Two /ttt vs-ai of alice's at the same instant, one to each worker, in two channels:
    one game, the other start refused with the limit's sentence; twice over."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=1)
        for _ in range(2):
            starts = [
                await sent_to(
                    sim, bot, sim.slash(s.alice, channel, "ttt vs-ai", difficulty="random")
                )
                for bot, channel in ((first, s.channel), (second, s.other_channel))
            ]
            answers = await asyncio.gather(*starts)
            assert given(first, answers[0])
            assert given(second, answers[1])
            kept = await only_one_started(answers)
            assert await first.storage.live_games_of(s.guild.id, s.alice.id) == 1
            to(sim, first)
            await sim.slash(s.alice, kept.channel, "ttt resign")


async def test_with_threads_two_workers_may_each_open_one_and_the_refused_one_is_removed(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Where games are played in threads, a worker's member locks keep it from opening a
    thread for a start that its own other start will make refused; across workers, both may
    open one: the game that the limit refuses removes its own, so one thread is left, with
    the one game."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=1)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        starts = [
            await sent_to(sim, bot, sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"))
            for bot in (first, second)
        ]
        await only_one_started(list(await asyncio.gather(*starts)))
        for bot in (first, second):
            assert await bot.in_flight.wait_idle(patience=5)
        assert await first.storage.live_games_of(s.guild.id, s.alice.id) == 1
        (thread,) = [
            c
            for c in s.guild.channels
            if c.is_thread and c.parent is s.channel and c is not s.thread and not c.archived
        ]
        (board,) = sim.messages(thread)
        assert is_live(board)


async def only_one_started(answers: list[InteractionRecord]) -> InteractionRecord:
    """The one start among ``answers`` that started a game; every other one was refused
    with the limit's sentence. Each read once complete: a start may be deferred first."""
    shown = [await final_answer(answer) for answer in answers]
    started = [
        answer for answer, message in zip(answers, shown, strict=True) if not message.ephemeral
    ]
    assert len(started) == 1, [message.content for message in shown]
    for message in shown:
        if message.ephemeral:
            assert LIMIT_REACHED in (message.content or ""), message.content
    return started[0]


async def test_an_emoji_check_another_worker_knows_is_stale_costs_one_refused_board(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """What Discord said of a server's custom emoji is trusted by each worker for
    EMOJI_RECHECK (TTTBot._emoji_checks). The emoji deleted, the first worker learns it from
    a refused board; the second still trusts its own check, and starts a game with the emoji:
    that game's first board showing a mark is refused once, then shown with the bot's own
    marks, which it keeps. Discord's refusal corrects the stale check, at one refused board,
    as for a game already running when the emoji went."""
    s = sim.seed
    cross = sim.add_emoji(s.guild, "cross")
    arena = sim.add_channel(s.guild, "arena")
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} marks", x=cross.text)
        one = await final_answer(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        )
        to(sim, second)
        two = await final_answer(
            await sim.slash(s.bob, s.other_channel, "ttt vs-ai", difficulty="random")
        )
        for board in (one, two):
            assert cross.text in text_of(board)
        sim.delete_emoji(cross)
        to(sim, first)
        moved = await final_answer(await sim.click(s.alice, one, cell_id(one, "A1")))
        assert cell_buttons(moved)[0].get("emoji") == {"name": "❌"}
        to(sim, second)
        three = await final_answer(
            await sim.slash(s.carol, arena, "ttt vs-ai", difficulty="random")
        )
        assert cross.text in text_of(three)  # the second worker's check, not yet corrected
        played = await final_answer(await sim.click(s.carol, three, cell_id(three, "A1")))
        assert cell_buttons(played)[0].get("emoji") == {"name": "❌"}
        assert "❌ **carol**" in text_of(played)
        for bot in (first, second):
            assert await bot.in_flight.wait_idle(patience=5)
        games = [await first.storage.live_game_in_channel(c.id) for c in (s.channel, arena)]
    for game in games:
        assert game is not None
        assert (game.mark_x, game.mark_o) == (None, None)
    refusals = sim.take_violations()
    assert len(refusals) == 2, refusals  # alice's board, and carol's on the stale check
    assert all(f"custom emoji {cross.id}" in refusal for refusal in refusals)


async def test_a_refused_thread_is_tried_again_by_the_other_worker_no_sooner(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """TournamentRounds._refused spaces one worker's tries at a tournament's threads that
    Discord refuses; the other worker, which does not know of the refusal, is held back by
    the table's claim in the database (CLAIM_SECONDS) and tries no sooner: one thread request
    in the minute whichever worker runs the tournament, then one more once it ran out, and
    the table's game starts once Discord lets it."""
    s = sim.seed
    threads = "POST /channels/{channel_id}/threads"
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        refusal = sim.faults.add(threads, status=403, count=None)
        tournament = await joined_and_started(sim, first, [s.alice, s.bob])
        asked = [r for r in sim.requests if r.route == threads]
        assert len(asked) == 1  # by the first worker, at the start
        # The second worker runs it (as a command of the organiser's there would).
        harness.clock.advance(30)
        await second.tournament_rounds.run(tournament.id)
        assert len([r for r in sim.requests if r.route == threads]) == 1
        harness.clock.advance(31)
        await second.tournament_rounds.run(tournament.id)
        assert len([r for r in sim.requests if r.route == threads]) == 2
        assert await round_games(first, await current(first, sim)) == []
        sim.faults.remove(refusal)
        harness.clock.advance(61)
        await first.tournament_rounds.run(tournament.id)
        for bot in (first, second):
            assert await bot.in_flight.wait_idle(patience=5)
        (game,) = await round_games(first, await current(first, sim))
        assert {game.x_id, game.o_id} == {s.alice.id, s.bob.id}


async def test_each_worker_searches_a_review_itself_and_finds_the_same(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """GameService._reviews keeps a process's searched reviews, by the moves they judge: no
    database state, and the search is budgeted in nodes with a fixed seed, so a worker that
    did not search a game's review finds the same one, at the cost of the search."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        started = await final_answer(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random", size=5)
        )
        await final_answer(await sim.click(s.alice, started, cell_id(started, "C3")))
        await sim.slash(s.alice, s.channel, "ttt resign")
        reviews = []
        for bot in (first, second):
            to(sim, bot)
            reviews.append(
                text_of(await final_answer(await sim.slash(s.bob, s.channel, "ttt review")))
            )
            assert len(bot.service._reviews) == 1
    assert reviews[0] == reviews[1]
    assert "C3" in reviews[0]


async def test_a_worker_stopping_waits_for_its_own_handlers_and_no_other_workers(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The in-flight count (TTTBot.in_flight) is one process's own, as it must be: a stopping
    worker waits for the handlers it runs, which no other worker could finish for it. A game
    started by the first worker; the second's click on it held in its handler while the
    first stops: the first stops at once, and the click, let go, is played by the second."""
    s = sim.seed
    harness.defer_after = 0.3
    async with contextlib.AsyncExitStack() as first_running:
        first = await first_running.enter_async_context(harness.running())
        async with harness.running() as second:
            to(sim, first)
            board = await final_answer(
                await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
            )
            held = asyncio.Event()
            move = second.service.move_on_board

            async def when_let_go(
                game_id: int, user: Actor, cell: int, clicked: Clicked, ply: int | None
            ) -> MoveResult:
                await held.wait()
                return await move(game_id, user, cell, clicked, ply)

            second.service.move_on_board = when_let_go  # type: ignore[method-assign]
            click = await sent_to(sim, second, sim.click(s.alice, board, cell_id(board, "B2")))
            await sim.wait_for(lambda: not second.in_flight._idle.is_set())
            await asyncio.wait_for(first_running.aclose(), 10)
            assert not second.in_flight._idle.is_set()
            held.set()
            clicked = await click
            await clicked.wait_done(timeout=5)
            assert await second.in_flight.wait_idle(patience=5)
            game = await second.storage.live_game_in_channel(s.channel.id)
    assert game is not None
    assert game.moves[0] == 4  # B2, alice's


async def test_a_thread_lost_to_a_dropped_connection_on_one_worker_is_found_by_the_other(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """bot.threads' suspects are the database's: the connection drops on the first worker
    after Discord made bob's thread, and the list of threads cannot be read there either, so
    bob hears that the bot cannot tell. His next start, given to the second worker, looks
    first and plays in that empty thread, opening none. Carol's thread lost the same way on
    the first worker is archived by the second on alice's start (of another name), which gets
    a thread of its own."""
    s = sim.seed
    listing = f"GET /guilds/{s.guild.id}/threads/active"
    caplog.set_level(logging.INFO)
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        # aiohttp sends a GET again once by itself: the list fails twice.
        sim.faults.add(THREADS_ROUTE, reset="after")
        sim.faults.add(listing, reset="before", count=2)
        refused(await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random"), THREAD_UNSURE)
        (bobs,) = game_threads(sim, s.channel)
        assert sim.messages(bobs) == []
        assert await second.storage.has_thread_suspects(s.channel.id)

        to(sim, second)
        opened = len([request for request in sim.requests if request.route == THREADS_ROUTE])
        again = await final_answer(
            await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random")
        )
        assert await second.in_flight.wait_idle(patience=5)
        assert (
            len([request for request in sim.requests if request.route == THREADS_ROUTE]) == opened
        )
        assert f"the game is on in <#{bobs.id}>." in text_of(again)
        assert cell_buttons(sim.messages(bobs)[0])
        assert not await first.storage.has_thread_suspects(s.channel.id)

        to(sim, first)
        sim.faults.add(THREADS_ROUTE, reset="after")
        sim.faults.add(listing, reset="before", count=2)
        refused(await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="smart"), THREAD_UNSURE)
        (carols,) = (thread for thread in game_threads(sim, s.channel) if thread is not bobs)
        to(sim, second)
        await final_answer(await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart"))
        assert await second.in_flight.wait_idle(patience=5)
        assert carols.archived
        assert sim.messages(carols) == []
        (alices,) = (t for t in game_threads(sim, s.channel) if t not in (bobs, carols))
        assert cell_buttons(sim.messages(alices)[0])
        assert not await first.storage.has_thread_suspects(s.channel.id)
        # The two lost threads' warnings, both from the first worker.
        assert len(thread_warnings(caplog)) == 2


async def test_a_thread_one_worker_just_opened_is_spared_by_the_others_search(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """bot.threads' claims are the database's: the first worker opened alice's thread and is
    storing its game (held there) when the second, given alice's next start, loses the
    connection after Discord made a second thread of the same name and looks for it. The
    first worker's thread, empty, named alike and holding no game yet, is claimed: the second
    takes its own, and each game is played in its own thread, neither removed."""
    s = sim.seed
    harness.defer_after = 0.3
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        held = asyncio.Event()
        create = first.storage.create_game

        async def when_let_go(game: NewGame, *, live_limit: int | None = None) -> GameRecord:
            await held.wait()
            return await create(game, live_limit=live_limit)

        first.storage.create_game = when_let_go  # type: ignore[method-assign]
        storing = await sent_to(
            sim, first, sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        )
        await sim.wait_for(lambda: len(game_threads(sim, s.channel)) == 1)
        (firsts,) = game_threads(sim, s.channel)
        await sim.wait_for(lambda: not first.in_flight._idle.is_set())
        clock = harness.clock.now
        await wait_until_claimed(second, s.channel.id, firsts.id, clock)

        to(sim, second)
        sim.faults.add(THREADS_ROUTE, reset="after")
        found = await final_answer(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        )
        (seconds,) = (thread for thread in game_threads(sim, s.channel) if thread is not firsts)
        assert seconds.name == firsts.name
        assert f"the game is on in <#{seconds.id}>." in text_of(found)
        assert not firsts.archived
        assert sim.messages(firsts) == []

        held.set()
        started = await final_answer(await storing)
        assert f"the game is on in <#{firsts.id}>." in text_of(started)
        assert await first.in_flight.wait_idle(patience=5)
        for thread in (firsts, seconds):
            assert not thread.archived
            assert cell_buttons(sim.messages(thread)[0])
            assert await first.storage.live_game_in_channel(thread.id) is not None


async def test_a_thread_the_others_search_claimed_first_is_left_to_it_and_another_opened(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The moment between Discord's answer to the first worker and that worker's claim: the
    second worker's search for a lost thread of the same name claims the fresh thread first,
    and takes it or archives it (as any empty thread of the bot's of that name it looks at).
    The first finds its claim refused, and opens another thread for its game: one game a
    thread, none removed under a game."""
    s = sim.seed
    harness.defer_after = 0.3
    caplog.set_level(logging.INFO)
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        held = asyncio.Event()
        claim = first.storage.claim_thread

        async def when_let_go(
            channel_id: int, thread_id: int, now: float, claimed_before: float
        ) -> bool:
            await held.wait()
            return await claim(channel_id, thread_id, now, claimed_before)

        first.storage.claim_thread = when_let_go  # type: ignore[method-assign]
        opening = await sent_to(
            sim, first, sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        )
        await sim.wait_for(lambda: len(game_threads(sim, s.channel)) == 1)
        (firsts,) = game_threads(sim, s.channel)

        to(sim, second)
        sim.faults.add(THREADS_ROUTE, reset="after")
        found = await final_answer(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        )
        assert await second.in_flight.wait_idle(patience=5)
        (seconds,) = (thread for thread in game_threads(sim, s.channel) if thread is not firsts)
        # Of the two empty threads of the name, the one listed first is taken (Discord's list
        # is in no promised order), the other archived.
        (taken,) = (t for t in (firsts, seconds) if f"<#{t.id}>" in text_of(found))
        (left,) = (t for t in (firsts, seconds) if t is not taken)
        assert left.archived
        assert sim.messages(left) == []

        held.set()
        started = await final_answer(await opening)
        assert await first.in_flight.wait_idle(patience=5)
        (thirds,) = (t for t in game_threads(sim, s.channel) if t not in (firsts, seconds))
        assert f"the game is on in <#{thirds.id}>." in text_of(started)
        for thread in (taken, thirds):
            assert not thread.archived
            assert cell_buttons(sim.messages(thread)[0])
            assert await first.storage.live_game_in_channel(thread.id) is not None
        assert [record.getMessage() for record in thread_warnings(caplog)][-1] == (
            f"thread {firsts.id} off channel {s.channel.id} was claimed by another worker's "
            "search before its game's: opening another"
        )


async def test_a_start_whose_two_threads_other_searches_claimed_first_is_told_to_try_again(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """ChannelThreads.open's last resort: other workers' searches for lost threads of that
    name claim the thread it opened before its own claim, and again the one it opens next
    (each search claiming in the moment between Discord's answer and the opener's claim). The
    member is told to try again; nothing started, and nothing of this start's is left: no
    game, no thread to look at again, and the two threads, the searches' now, neither taken
    nor removed by this worker. Trying again opens a thread of its own."""
    s = sim.seed
    caplog.set_level(logging.INFO)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        claim = bot.storage.claim_thread
        claimed_first: list[int] = []

        async def another_search_first(
            channel_id: int, thread_id: int, now: float, claimed_before: float
        ) -> bool:
            # Another worker's search's claim, made a moment before this worker's own.
            assert await claim(channel_id, thread_id, now, claimed_before)
            claimed_first.append(thread_id)
            return await claim(channel_id, thread_id, now, claimed_before)

        monkeypatch.setattr(bot.storage, "claim_thread", another_search_first)
        refused(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"), THREAD_UNSURE
        )
        monkeypatch.undo()
        assert await bot.in_flight.wait_idle(patience=5)
        threads = game_threads(sim, s.channel)
        assert [thread.id for thread in threads] == claimed_first
        assert len(threads) == 2
        for thread in threads:
            assert not thread.archived
            assert sim.messages(thread) == []
        assert not [
            r
            for r in sim.requests
            if r.route in ("DELETE /channels/{channel_id}", "PATCH /channels/{channel_id}")
        ]
        assert await bot.storage.live_games_of(s.guild.id, s.alice.id) == 0
        assert await bot.storage.live_game_in_channel(s.channel.id) is None
        assert not await bot.storage.has_thread_suspects(s.channel.id)
        assert [record.getMessage() for record in thread_warnings(caplog)] == [
            f"thread {thread.id} off channel {s.channel.id} was claimed by another worker's "
            "search before its game's: opening another"
            for thread in threads
        ]
        again = await final_answer(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        )
        assert await bot.in_flight.wait_idle(patience=5)
        (own,) = (thread for thread in game_threads(sim, s.channel) if thread not in threads)
        assert f"the game is on in <#{own.id}>." in text_of(again)
        assert cell_buttons(sim.messages(own)[0])


async def test_the_sweeper_forgets_claims_that_ran_out_and_suspects_no_longer_listed(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The holder of the sweeper lease removes the threads' claims once they ran out and the
    suspects once Discord would have archived their threads (idle for as long as a game's
    thread stays active), and nothing sooner."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        await final_answer(await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"))
        (thread,) = game_threads(sim, s.channel)
        await first.storage.suspect_thread(
            s.channel.id, harness.clock.now(), name="lost in a dropped connection"
        )
        await sweep_once(first, second)
        assert await second.storage.claimed_threads(s.channel.id, 0) == frozenset({thread.id})
        harness.clock.advance(CLAIM_SECONDS + 1)
        await sweep_once(first, second)
        assert await second.storage.claimed_threads(s.channel.id, 0) == frozenset()
        assert await second.storage.has_thread_suspects(s.channel.id)
        harness.clock.advance(SUSPECTS_KEPT_SECONDS - CLAIM_SECONDS - 2)
        await sweep_once(first, second)
        assert await second.storage.has_thread_suspects(s.channel.id)
        harness.clock.advance(2)
        await sweep_once(first, second)
        assert not await second.storage.has_thread_suspects(s.channel.id)


async def sweep_once(*workers: TTTBot) -> None:
    """A sweep by whichever of ``workers`` holds the sweeper lease, or takes it (it runs out
    when the clock jumps)."""
    for worker in workers:
        await worker.sweep()
    assert any(worker.holds_sweeper_lease for worker in workers)


async def wait_until_claimed(
    bot: TTTBot, channel_id: int, thread_id: int, now: Callable[[], float]
) -> None:
    """Until ``thread_id``'s claim (made just after Discord opened it) is in the database."""
    for _ in range(200):
        if thread_id in await bot.storage.claimed_threads(channel_id, now() - CLAIM_SECONDS):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"thread {thread_id} never claimed")


async def test_a_sweep_that_lost_its_lease_midway_posts_no_board_the_next_holder_posted(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """A game saved without its message is posted by the sweeper. The holder of the lease is
    held (stopped, slow) just before it posts one, past its lease's end: the other worker
    takes the lease and posts it. The first, resumed, posts it too, finds the game shown by
    the other's board and deletes its own: one board stays, the one the game names. It sweeps
    no more after that."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        holder, other = (first, second) if first.holds_sweeper_lease else (second, first)
        now = harness.clock.now()
        game = await holder.storage.create_game(
            NewGame(
                guild_id=s.guild.id,
                channel_id=s.channel.id,
                x_id=s.alice.id,
                x_name=s.alice.name,
                o_id=s.bob.id,
                o_name=s.bob.name,
                deadline=now + 30 * DAY,  # not timed out by the jumps below
                created_at=now,
            )
        )
        harness.clock.advance(UNSHOWN_GRACE + 1)
        posting, held = hold(holder.boards, "_post")
        sweeping = asyncio.ensure_future(holder.sweep())
        await posting.wait()
        harness.clock.advance(SWEEPER_LEASE_SWEEPS * holder.sweep_interval + 1)
        await other.sweep()
        assert other.holds_sweeper_lease
        (shown,) = sim.messages(s.channel)
        held.set()
        await sweeping
        shown_again = [message for message in sim.messages(s.channel) if message is not shown]
        assert [message.deleted for message in shown_again] == [True]
        stored = await other.storage.get_game(game.id)
        assert stored is not None
        assert stored.message_id == shown.id
        assert cell_buttons(sim.message(shown.id))
        # Resumed, the first worker sweeps no more: the lease is the other's.
        harness.clock.advance(holder.sweep_interval)
        await other.sweep()
        assert other.holds_sweeper_lease
        with caplog.at_level(logging.INFO, logger="bot.client"):
            swept = await holder.sweep()
        assert not holder.holds_sweeper_lease
        assert (swept.games, swept.challenges) == ([], [])
    # The WARNING docs/operating.md tells the operator to expect.
    assert [
        (record.levelno, record.getMessage())
        for record in caplog.records
        if record.name == "bot.client" and "sweeper lease" in record.getMessage()
    ] == [(logging.WARNING, f"worker {holder.sweeper_id} lost the sweeper lease to another worker")]


async def test_a_game_settled_unseen_is_shown_once_when_two_workers_answer_there_at_once(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """In a group DM the bot is not in, a turn ran out when no token was left to edit the
    board: the next interaction there shows the result. Two come at once, one to each
    worker, both reading the channel's unseen game before either clears it: one shows it."""
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    # A turn longer than a token lives: when it runs out, no token can edit the board.
    async with (
        harness.running(turn_timeout=1200) as first,
        harness.running(turn_timeout=1200) as second,
    ):
        to(sim, first)
        board = await start_member_game(sim, group)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        assert await first.in_flight.wait_idle(patience=5)
        harness.clock.advance(1201)
        sim.advance_clock(1201)
        await sweep_once(first, second)
        assert is_live(board)  # nothing could show it
        both_read = asyncio.Barrier(2)
        for worker in (first, second):
            read = worker.storage.reply_route

            async def once_both_read(channel_id: int, read: Any = read) -> ReplyRoute | None:
                route: ReplyRoute | None = await read(channel_id)
                if route is not None and route.unseen_game_id is not None:
                    await asyncio.wait_for(both_read.wait(), 5)
                return route

            worker.storage.reply_route = once_both_read  # type: ignore[method-assign]
        asked = [
            await sent_to(sim, worker, sim.slash(s.alice, group, "ttt stats"))
            for worker in (first, second)
        ]
        answered = await asyncio.gather(*asked)
        assert await first.in_flight.wait_idle(patience=5)
        assert await second.in_flight.wait_idle(patience=5)
        shown = [
            text_of(message)
            for ix in answered
            for message in ix.followups
            if "⭕ **bob** ran out of time: ❌ **alice** wins." in text_of(message)
        ]
        assert len(shown) == 1


async def test_a_click_the_sweeper_times_out_on_another_worker_meanwhile_plays_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Bob's move is read in time on one worker and held before it is saved while the holder
    of the sweeper lease times his turn out: the save is refused by the game's version, the
    click is tried on the stored game, over, and shows it. The game ends once, by timeout,
    and the board shows that, edited once by the sweeper."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        holder, other = (first, second) if first.holds_sweeper_lease else (second, first)
        to(sim, other)
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        assert await other.in_flight.wait_idle(patience=5)
        saving, held = hold(other.storage, "save_game")
        clicking = await sent_to(sim, other, sim.click(s.bob, board, cell_id(board, "A1")))
        await saving.wait()
        harness.clock.advance(301)
        (timed_out,) = (await holder.sweep()).games
        held.set()
        late = await clicking
        assert await other.in_flight.wait_idle(patience=5)
        assert await holder.in_flight.wait_idle(patience=5)
        assert "This game is over" in (told_privately(late) or "")
        stored = await holder.storage.get_game(timed_out.id)
        assert stored == timed_out
        assert stored.moves == (4,)
        assert "⭕ **bob** ran out of time: ❌ **alice** wins." in text_of(sim.message(board.id))
        assert not is_live(sim.message(board.id))
        assert edits_by_rest(sim, board) == 1


async def test_a_challenge_accepted_as_the_other_worker_expires_it_starts_no_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Bob's accept is read in time on one worker and held before it closes the challenge
    while the holder of the sweeper lease expires it: the close is refused (the challenge is
    no longer pending), no game starts, and the message shows the challenge expired."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        holder, other = (first, second) if first.holds_sweeper_lease else (second, first)
        to(sim, other)
        message = await recorded_post(sim, other, "ttt start", opponent=s.bob)
        closing, held = hold(other.storage, "close_challenge")
        accept = button_id(message, CHALLENGE_ID, action="accept")
        accepting = await sent_to(sim, other, sim.click(s.bob, message, accept))
        await closing.wait()
        harness.clock.advance(121)
        (expired,) = (await holder.sweep()).challenges
        held.set()
        late = await accepting
        assert await other.in_flight.wait_idle(patience=5)
        assert await holder.in_flight.wait_idle(patience=5)
        refused(late, "This challenge was answered a moment ago.")
        assert await holder.storage.live_game_in_channel(s.channel.id) is None
        assert "expired" in (sim.message(message.id).content or "")
        assert sim.message(message.id).buttons() == []
        assert edits_by_rest(sim, message) == 1
        assert [shown for shown in sim.messages(s.channel) if not shown.ephemeral] == [message]
        stored = await holder.storage.get_challenge(expired.id)
        assert stored == expired


async def test_a_seasons_end_is_announced_with_a_game_whose_save_was_under_way_at_the_end(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Carol beats alice in November's last second on one worker, whose save is still under
    way (held) when the month ends and the holder of the sweeper lease sweeps: November's
    announcement waits until the games of its end are in, and names the same podium as
    November's table."""
    s = sim.seed
    news = sim.add_channel(s.guild, "news")
    harness.clock = ManualClock(at(2026, 11, 30, 23) + 3600 - 60)
    async with harness.running() as first, harness.running() as second:
        holder, other = (first, second) if first.holds_sweeper_lease else (second, first)
        to(sim, other)
        await set_announcements(sim, news)
        await beats(sim, s.alice, s.bob)
        board = await start_member_game(sim, x=s.carol, o=s.alice)
        harness.clock.advance(59)  # 23:59:59
        saving, held = hold(other.storage, "save_game")
        resign = button_id(board, GAME_ACTION_ID, action="resign")
        resigning = await sent_to(sim, other, sim.click(s.alice, board, resign))
        await saving.wait()
        harness.clock.advance(2)  # December
        await holder.sweep()
        held.set()
        await final_answer(await resigning)
        assert await other.in_flight.wait_idle(patience=5)
        for _ in range(2):
            harness.clock.advance(SEASON_SETTLES)
            await holder.sweep()
        (november,) = announcements(sim)
        table = await sim.slash(s.bob, s.channel, "ttt leaderboard", season="2026-11")
    announced = [int(user) for user in re.findall(r"<@([0-9]+)>", november)]
    assert announced == [user for user, _, _ in ranking(table)][:3]
    assert s.carol.id in announced


async def test_a_tournament_board_posted_late_gives_way_to_the_one_the_sweeper_posted(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A round's game is stored on one worker, whose posts are then held past the moment the
    sweeper posts what was saved without its message: the holder of the lease pings the
    players (the first worker's ping may be lost for good) and posts its board in the game's
    thread, and the first worker's board, posted late, is deleted. One board stays, the one
    the game names; the first worker's ping, late, is a second one."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        holder, other = (first, second) if first.holds_sweeper_lease else (second, first)
        to(sim, other)
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Late")
        assert created.message is not None
        join = button_id(created.message, TOURNAMENT_ID, action="join")
        for player in (s.alice, s.bob):
            await sim.click(player, created.message, join)
        posting, held = hold(other.boards, "_post")
        starting = await sent_to(sim, other, sim.slash(s.owner, s.channel, "ttt tournament start"))
        await posting.wait()
        (game,) = await round_games(holder, await current(holder, sim))
        assert game.message_id is None
        harness.clock.advance(UNSHOWN_GRACE + 1)
        await holder.sweep()
        ping, shown = sim.messages(game.channel_id)
        assert f"<@{s.alice.id}> <@{s.bob.id}>" in (ping.content or ""), ping.content
        held.set()
        await final_answer(await starting)
        assert await other.in_flight.wait_idle(patience=5)
        boards = [message for message in sim.messages(game.channel_id) if is_live(message)]
        assert [message.deleted for message in boards] == [False, True]
        assert boards[0] is shown
        stored = await holder.storage.get_game(game.id)
        assert stored is not None
        assert stored.message_id == shown.id


async def test_a_move_answered_late_shows_the_move_another_worker_saved_since(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Alice's move is saved on one worker, whose answer is then held; bob clicks the board
    meanwhile, behind, on the other worker, which redraws it with alice's move, and plays
    his. Alice's answer, late, shows the game as stored (bob's move in, her turn), not the
    board of her move alone over it, which would tell her to wait for bob."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, second)
        board = await start_member_game(sim)
        assert await second.in_flight.wait_idle(patience=5)  # the board's id is saved after
        saved, held = asyncio.Event(), asyncio.Event()
        save = first.storage.save_game

        async def saved_then_held(game: GameRecord) -> GameRecord | None:
            stored = await save(game)
            saved.set()
            await held.wait()
            return stored

        first.storage.save_game = saved_then_held  # type: ignore[method-assign]
        alices = await sent_to(sim, first, sim.click(s.alice, board, cell_id(board, "B2")))
        await saved.wait()
        to(sim, second)
        behind = await sim.click(s.bob, board, cell_id(board, "A1"))
        await refused_showing_the_game(behind, "The board changed while you were moving")
        assert shown_board(sim.message(board.id)) == ".../.X./..."
        bobs = await sim.click(s.bob, board, cell_id(sim.message(board.id), "A1"))
        assert bobs.response_type == 7, bobs.content
        assert shown_board(sim.message(board.id)) == "O../.X./..."
        harness.clock.advance(LATE_ANSWER)
        held.set()
        late = await alices
        assert late.response_type == 7, late.content
        assert await first.in_flight.wait_idle(patience=5)
        assert shown_board(sim.message(board.id)) == "O../.X./..."
        assert "❌ **alice** to move" in text_of(sim.message(board.id))


async def test_two_members_joining_a_tournament_at_once_on_two_workers_are_both_shown(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Alice's join is saved on one worker, whose answer is held while bob's join is saved
    and answered on the other: alice's answer, after bob's, showed alice alone over it; the
    message is then edited again to the tournament as stored, both players in."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Rush")
        announcement = created.message
        assert announcement is not None
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        assert await first.in_flight.wait_idle(patience=5)  # its message noted
        saved, held = asyncio.Event(), asyncio.Event()
        save = first.storage.save_tournament

        async def saved_then_held(*args: Any, **kwargs: Any) -> Any:
            stored = await save(*args, **kwargs)
            saved.set()
            await held.wait()
            return stored

        first.storage.save_tournament = saved_then_held  # type: ignore[method-assign]
        alices = await sent_to(sim, first, sim.click(s.alice, announcement, join))
        await saved.wait()
        to(sim, second)
        bobs = await sim.click(s.bob, announcement, join)
        assert bobs.response_type == 7, bobs.content
        assert "Players (2 of 32)" in text_of(sim.message(announcement.id))
        held.set()
        await final_answer(await alices)
        assert await first.in_flight.wait_idle(patience=5)
        assert "Players (2 of 32)" in text_of(sim.message(announcement.id))
