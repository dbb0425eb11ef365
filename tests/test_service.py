"""The domain service on its own, for what a normal Discord client cannot send (the end-to-end
tests cover everything it can)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import discord
import pytest

import bot.service
from bot import render
from bot.boards import Boards
from bot.clock import ManualClock
from bot.domain import OUTSIDE_SERVERS, Actor, UserError
from bot.i18n import ENGLISH, language
from bot.metrics import OPERATIONS
from bot.privacy import CONFIRMATION_LIFETIME, MembersData
from bot.service import Clicked, GameService
from bot.storage.base import (
    EVERY_GUILD,
    EndReason,
    MemberData,
    NewGame,
    ShardSlice,
    Storage,
    StoredGames,
    StoredSetting,
)
from bot.storage.sqlite import SqliteStorage
from game import Board, Mark
from game.review import MoveReview, review_game
from game.search import SearchBudget

GUILD, CHANNEL = 10, 20
ALICE = Actor(101, "alice")


def make_service(
    storage: SqliteStorage,
    clock: ManualClock,
    shards: ShardSlice = EVERY_GUILD,
    rng: random.Random | None = None,
) -> GameService:
    """A process's service on ``storage``: several on one storage are several processes."""
    return GameService(
        storage,
        clock,
        bot_user=Actor(999, "tttbot", is_bot=True),
        turn_timeout=300,
        challenge_timeout=120,
        rng=rng,
        shards=shards,
    )


@pytest.fixture
async def service() -> AsyncIterator[GameService]:
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        yield make_service(storage, clock)
    finally:
        await storage.close()


@pytest.mark.parametrize(
    ("difficulty", "first", "sentence"),
    [
        ("impossible", "me", "Pick a difficulty: random, casual, smart, or minimax."),
        ("smart", "nobody", "Pick who moves first: me, bot, or random."),
    ],
)
async def test_unknown_choices_are_refused_and_start_nothing(
    service: GameService, difficulty: str, first: str, sentence: str
) -> None:
    with pytest.raises(UserError) as refused:
        await service.start_vs_ai(GUILD, CHANNEL, ALICE, difficulty, first)
    assert str(refused.value) == sentence
    assert await service.storage.live_game_in_channel(CHANNEL) is None


async def test_a_random_first_player_is_either_side_and_whoever_moves_first_plays_x() -> None:
    """``/ttt vs-ai first:random``: a coin toss for who moves first, and the first plays X."""
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        service = make_service(storage, clock, rng=random.Random(4))
        bot_first = []
        for channel in range(CHANNEL, CHANNEL + 20):
            game = (await service.start_vs_ai(GUILD, channel, ALICE, "smart", "random")).game
            bot_first.append(game.ai_mark is Mark.X)
            human = Mark.O if game.ai_mark is Mark.X else Mark.X
            assert game.player_id(human) == ALICE.id
            assert len(game.moves) == (1 if game.ai_mark is Mark.X else 0)
    finally:
        await storage.close()
    assert 0 < sum(bot_first) < len(bot_first)


async def test_a_board_size_the_bot_does_not_offer_is_refused_and_starts_nothing(
    service: GameService,
) -> None:
    times = "\N{MULTIPLICATION SIGN}"
    sentence = f"Pick a board size: 3{times}3, 4{times}4, 5{times}5, or ultimate."
    for attempt in (
        service.start_vs_ai(GUILD, CHANNEL, ALICE, "smart", "me", 6),
        service.challenge(GUILD, CHANNEL, ALICE, None, 2),
        service.stats(GUILD, ALICE.id, 8),
        service.leaderboard(GUILD, 0),
    ):
        with pytest.raises(UserError) as refused:
            await attempt
        assert str(refused.value) == sentence
    assert await service.storage.live_game_in_channel(CHANNEL) is None
    assert await service.storage.pending_challenge_in_channel(CHANNEL) is None


async def test_a_process_settles_and_posts_only_its_own_shards_guilds() -> None:
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        on_shard = {
            shard: make_service(storage, clock, ShardSlice(2, frozenset({shard})))
            for shard in (0, 1)
        }
        # Guilds 0 << 22 and 1 << 22: Discord routes them to shards 0 and 1 of 2.
        games = {
            shard: (
                await on_shard[shard].start_vs_ai(shard << 22, 20 + shard, ALICE, "random", "me")
            ).game
            for shard in (0, 1)
        }
        clock.advance(3600)  # saved without a message long ago, and out of time since
        for shard, service in on_shard.items():
            boards = Boards(
                storage,
                discord.Client(intents=discord.Intents.none()),
                clock,
                service.shards,
                marks_refused=service_cannot_refuse_marks,
            )
            unshown = await boards.unshown()
            assert [game.id for game in unshown.games] == [games[shard].id]
            settled = await service.settle_overdue()
            assert [game.id for game in settled.games] == [games[shard].id]
    finally:
        await storage.close()


async def service_cannot_refuse_marks(fallback: render.MarksFallback) -> None:
    raise AssertionError(f"nothing is sent here, so nothing is refused: {fallback}")


async def test_a_game_moved_on_by_another_process_is_played_from_the_database() -> None:
    """Each process keeps the live games it touched in memory; another process (after the
    shards were redistributed) may have moved one on since. Its copy never decides a click."""
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    bob = Actor(102, "bob")
    try:
        here, elsewhere = (make_service(storage, clock) for _ in range(2))
        challenge = await here.challenge(GUILD, CHANNEL, ALICE, bob)
        await storage.set_challenge_message(challenge.id, 555)
        _, game = await here.accept(challenge.id, bob, Clicked(CHANNEL, 555))
        await storage.set_game_message(game.id, 555)
        board = Clicked(CHANNEL, 555)
        # Elsewhere, Alice plays A1 and Bob B1: this process's copy still shows an empty board.
        await elsewhere.move_on_board(game.id, ALICE, 0, board, 0)
        await elsewhere.move_on_board(game.id, bob, 1, board, 1)
        # A click on the board as it now is (ply 2) plays, though the copy says ply 0.
        played = await here.move_on_board(game.id, ALICE, 4, board, 2)
        assert played.game.moves == (0, 1, 4)
        # Elsewhere, Bob resigns: here, the copy says the game is live and Bob's turn.
        await elsewhere.resign_on_board(game.id, bob, board)
        with pytest.raises(UserError) as refused:
            await here.move_on_board(game.id, bob, 8, board, 3)
        assert str(refused.value).startswith("This game is over.")
        stored = await storage.get_game(game.id)
        assert stored is not None
        assert (stored.moves, stored.end_reason) == ((0, 1, 4), EndReason.RESIGN)
    finally:
        await storage.close()


async def test_a_hint_on_the_bots_turn_is_refused_and_marks_nothing(service: GameService) -> None:
    """The bot answers in the same save as the player's move, so Discord never shows its turn;
    a game stored that way still gets no hint."""
    now = service.clock.now()
    waiting = await service.storage.create_game(
        NewGame(
            guild_id=GUILD,
            channel_id=CHANNEL,
            x_id=ALICE.id,
            x_name=ALICE.name,
            o_id=999,
            o_name="tttbot (smart)",
            ai_difficulty="smart",
            ai_mark=Mark.O,
            moves=(4,),
            deadline=now + 300,
            created_at=now,
        )
    )
    with pytest.raises(UserError) as refused:
        await service.hint_in_channel(CHANNEL, ALICE)
    assert str(refused.value) == "It is not your turn: waiting for tttbot (smart)."
    assert await service.storage.get_game(waiting.id) == waiting


async def test_a_hint_given_by_another_process_stays_on_the_game_played_here() -> None:
    """A process's copy of a live game from before another process's hint is behind: the
    move played here is saved over the stored, assisted game, and keeps the flag."""
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        here, elsewhere = (make_service(storage, clock) for _ in range(2))
        started = await here.start_vs_ai(GUILD, CHANNEL, ALICE, "minimax")
        hint = await elsewhere.hint_in_channel(CHANNEL, ALICE)
        assert (hint.cell, hint.newly_assisted, hint.game.assisted) == (0, True, True)
        played = await here.move_on_board(started.game.id, ALICE, 4, Clicked(CHANNEL, 555), 0)
        assert played.game.assisted
        again = await here.hint_in_channel(CHANNEL, ALICE)
        assert (again.newly_assisted, again.game.version) == (False, played.game.version)
        finished = await here.resign_in_channel(CHANNEL, ALICE)
        assert finished.assisted
        assert (await storage.player_stats(GUILD, ALICE.id)).records == {}
    finally:
        await storage.close()


async def test_a_rematch_goes_by_the_stored_game_whose_player_another_process_forgot() -> None:
    """A finished game changes too: a player forgotten (by any process) leaves a placeholder
    in it. A rematch reads the stored game, so it never brings a forgotten member back from a
    copy in memory."""
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        here = make_service(storage, clock)
        bob = Actor(102, "bob")
        challenge = await here.challenge(GUILD, CHANNEL, ALICE, bob)
        _, game = await here.accept(challenge.id, bob, Clicked(CHANNEL, 555))
        finished = await here.resign_on_board(game.id, ALICE, Clicked(CHANNEL, 555))
        assert not finished.is_active
        await storage.forget_member(ALICE.id, clock.now())  # another process's forget-me
        with pytest.raises(UserError, match="deleted their data"):
            await here.rematch(finished.id, bob, Clicked(CHANNEL, 555))
        assert await storage.live_games_of(GUILD, bob.id) == 0
    finally:
        await storage.close()


async def test_a_rematch_of_a_game_another_process_finished_reads_the_stored_game() -> None:
    """A process's copy of a live game may be behind one another process finished: a rematch
    then goes by the stored game, not by the copy that says it is still going."""
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        here, elsewhere = (make_service(storage, clock) for _ in range(2))
        started = await here.start_vs_ai(GUILD, CHANNEL, ALICE, "minimax")
        await elsewhere.resign_in_channel(CHANNEL, ALICE)
        again = await here.rematch(started.game.id, ALICE, Clicked(CHANNEL, 555))
        assert again.game.rematch_of == started.game.id
    finally:
        await storage.close()


def _counted(
    operation: Callable[..., Awaitable[Any]], name: str, made: list[str]
) -> Callable[..., Awaitable[Any]]:
    async def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(name)
        return await operation(*args, **kwargs)

    return counted


def storage_operations(storage: Storage) -> list[str]:
    """The names of the operations ``storage`` makes from now on, in order (each one a round
    trip to PostgreSQL, a turn of SQLite's thread)."""
    made: list[str] = []
    for name in OPERATIONS:
        setattr(storage, name, _counted(getattr(storage, name), name, made))
    return made


async def test_a_rematch_reads_its_game_and_its_servers_settings_in_one_operation(
    service: GameService,
) -> None:
    """A Rematch click reads the stored game and its server's settings in one operation, then
    inserts the new game: two round trips, against the bot or between members, whatever the
    server's settings (a limit on live games is counted inside the insert)."""
    await service.start_vs_ai(GUILD, CHANNEL, ALICE, "minimax")
    against_bot = await service.resign_in_channel(CHANNEL, ALICE)
    bob = Actor(102, "bob")
    challenge = await service.challenge(GUILD, CHANNEL + 1, ALICE, bob)
    _, game = await service.accept(challenge.id, bob, Clicked(CHANNEL + 1, 555))
    between_members = await service.resign_on_board(game.id, ALICE, Clicked(CHANNEL + 1, 555))
    made = storage_operations(service.storage)
    again = await service.rematch(against_bot.id, ALICE, Clicked(CHANNEL, 555))
    assert again.ai_cell is not None  # the bot's first move, made without the database
    assert made == ["game_with_guild_settings", "create_game"]
    made.clear()
    await service.rematch(between_members.id, bob, Clicked(CHANNEL + 1, 555))
    assert made == ["game_with_guild_settings", "create_game"]
    # The settings read with the game are the server's: its limit on live games holds.
    limit = StoredSetting("max_games", "1", ALICE.id, service.clock.now())
    await service.storage.change_guild_setting(GUILD, limit)
    await service.resign_in_channel(CHANNEL, ALICE)
    made.clear()
    with pytest.raises(UserError, match="as many live games"):
        await service.rematch(again.game.id, ALICE, Clicked(CHANNEL, 555))
    assert made == ["game_with_guild_settings", "create_game"]
    assert await service.storage.live_games_of(GUILD, ALICE.id) == 1


class RecordedThreads:
    """A channel's threads as the service sees them: what it opened, and what it discarded
    (with whether it knew nothing was stored)."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.discarded: list[tuple[int, bool]] = []

    async def open(self, name: str) -> int:
        self.opened.append(name)
        return 5000 + len(self.opened)

    async def discard(self, thread_id: int, *, stored_nothing: bool) -> None:
        self.discarded.append((thread_id, stored_nothing))


async def test_a_thread_opened_for_a_game_that_did_not_start_is_discarded(
    service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server playing games in threads, limiting live games to one: the thread of a game
    the database refuses is discarded as holding nothing; one whose insert failed in an
    unknown way is discarded to be looked at again; a game that starts keeps its thread; and
    no thread is opened for a start the limit already refuses."""
    settings = {"threads": "true", "max_games": "1"}
    for key, value in settings.items():
        await service.storage.change_guild_setting(
            GUILD, StoredSetting(key, value, ALICE.id, service.clock.now())
        )
    threads = RecordedThreads()
    place = bot.service.Place(CHANNEL, threads=threads)
    real_create = service.storage.create_game

    async def refused_elsewhere(game: NewGame, *, live_limit: int | None = None) -> Any:
        # Another process's game for alice goes in first: this one is past the limit.
        await real_create(dataclasses.replace(game, channel_id=CHANNEL + 50))
        return await real_create(game, live_limit=live_limit)

    async def broken(game: NewGame, *, live_limit: int | None = None) -> Any:
        raise OSError("the database went away")

    monkeypatch.setattr(service.storage, "create_game", refused_elsewhere)
    with pytest.raises(UserError, match="as many live games"):
        await service.start_vs_ai(GUILD, CHANNEL, ALICE, "random", place=place)
    assert threads.discarded == [(5001, True)]
    await service.resign_in_channel(CHANNEL + 50, ALICE)
    monkeypatch.setattr(service.storage, "create_game", broken)
    with pytest.raises(OSError, match="went away"):
        await service.start_vs_ai(GUILD, CHANNEL, ALICE, "random", place=place)
    assert threads.discarded == [(5001, True), (5002, False)]
    monkeypatch.undo()
    started = await service.start_vs_ai(GUILD, CHANNEL, ALICE, "random", place=place)
    assert started.game.channel_id == 5003
    assert started.game.own_thread
    assert len(threads.discarded) == 2
    with pytest.raises(UserError, match="as many live games"):
        await service.start_vs_ai(GUILD, CHANNEL, ALICE, "random", place=place)
    assert threads.opened == ["alice vs tttbot (random)"] * 3


async def test_a_kept_finished_game_is_not_played_on(service: GameService) -> None:
    """A click on the board of a game that is over, kept for its rematch, is answered as the
    stored game says: over, shown with its result, and nothing saved."""
    started = await service.start_vs_ai(GUILD, CHANNEL, ALICE, "smart")
    finished = await service.resign_on_board(started.game.id, ALICE, Clicked(CHANNEL, 555))
    for click in (
        service.move_on_board(finished.id, ALICE, 4, Clicked(CHANNEL, 555), None),
        service.resign_on_board(finished.id, ALICE, Clicked(CHANNEL, 555)),
    ):
        with pytest.raises(UserError) as refused:
            await click
        assert str(refused.value).startswith("This game is over.")
        assert refused.value.changed == finished
    assert await service.storage.get_game(finished.id) == finished


async def test_a_bot_first_game_in_a_busy_channel_is_refused_by_the_database(
    service: GameService,
) -> None:
    """On the boards the bot does not search, its opening move is made before the channel is
    checked: the database refuses the second game, with the same sentence, and keeps the
    first."""
    first = await service.start_vs_ai(GUILD, CHANNEL, ALICE, "smart")
    for size in (3, 4):
        with pytest.raises(UserError) as refused:
            await service.start_vs_ai(GUILD, CHANNEL, ALICE, "minimax", first="bot", size=size)
        assert str(refused.value) == (
            "There is already a game in this channel: finish it first, or play in another channel."
        )
    assert await service.storage.live_game_in_channel(CHANNEL) == first.game


async def test_a_game_record_s_position_follows_its_moves(service: GameService) -> None:
    """The position a record works out once is its own: a record made from it with other
    moves has the position of those, and records compare by what is stored only."""
    started = await service.start_vs_ai(GUILD, CHANNEL, ALICE, "smart")
    game = started.game
    assert str(game.board) == ".../.../..."
    moved = dataclasses.replace(game, moves=(4, 0))
    assert str(moved.board) == "O../.X./..."
    assert str(game.board) == ".../.../..."
    assert dataclasses.replace(moved, moves=()) == game
    with pytest.raises(ValueError, match="is not the position of moves"):
        game.knowing(moved.board)
    played = await service.move_on_board(game.id, ALICE, 4, Clicked(CHANNEL, 555), 0)
    assert played.game.board == Board.from_moves(played.game.moves)


async def test_a_5x5_review_is_searched_once_however_often_it_is_asked_for(
    service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two spectators asking together, then one asking again: one search, one review. Each
    is about a second of search on 5x5; a repeated Review click must not cost another."""
    started = await service.start_vs_ai(GUILD, CHANNEL, ALICE, "smart", size=5)
    await service.move_in_channel(CHANNEL, ALICE, "C3")
    await service.resign_in_channel(CHANNEL, ALICE)
    searched: list[tuple[int, ...]] = []
    searching, release = threading.Event(), threading.Event()

    def counted(moves: tuple[int, ...], size: int) -> tuple[MoveReview, ...]:
        searched.append(moves)
        searching.set()
        assert release.wait(10)
        return review_game(moves, size, budget=SearchBudget(seconds=None, nodes=500))

    monkeypatch.setattr(bot.service, "review_game", counted)
    together = asyncio.gather(service.review(CHANNEL), service.review(CHANNEL))
    assert await asyncio.to_thread(searching.wait, 10)
    # Time for the second asker to join the search under way (slower, it finds it done: one
    # search either way).
    await asyncio.sleep(0.05)
    release.set()
    first, second = await together
    again = await service.review(CHANNEL, started.game.id)
    assert len(searched) == 1
    assert first.moves == second.moves == again.moves
    assert len(first.moves) == 2  # alice's C3 and the bot's answer


# -- members' data (bot.privacy) -----------------------------------------------------------


@pytest.mark.parametrize("asked_after", [CONFIRMATION_LIFETIME + 1, -3600])
async def test_a_confirmation_too_old_or_dated_ahead_deletes_nothing(
    service: GameService, asked_after: float
) -> None:
    """An old question found in a client later, or a hand-made button dated ahead."""
    members = MembersData(service.storage, service.clock, service)
    started = await service.start_vs_ai(GUILD, CHANNEL, ALICE, "random")
    asked = int(service.clock.now() - asked_after)
    for attempt in (
        members.forget(ALICE.id, asked),
        members.erase_guild(GUILD, asked),
    ):
        with pytest.raises(UserError, match="This confirmation has expired"):
            await attempt
    assert await service.storage.get_game(started.game.id) == started.game
    assert not (await members.of_member(ALICE.id)).is_empty


async def test_outside_servers_there_is_no_server_data_to_erase(service: GameService) -> None:
    members = MembersData(service.storage, service.clock, service)
    with pytest.raises(UserError, match="That only works in a server"):
        await members.erase_guild(OUTSIDE_SERVERS, int(service.clock.now()))


def test_a_long_my_data_fits_in_one_embed_and_says_what_was_cut() -> None:
    many = MemberData(
        user_id=ALICE.id,
        games=tuple(StoredGames(10**17 + guild, 3, 1) for guild in range(300)),
        challenges=2,
        names=("alice",),
    )
    message = render.member_data_message(many, None, ("random",), language(ENGLISH))
    assert message.embed is not None
    description = message.embed.description or ""
    assert len(description) <= 4096
    assert description.endswith("more lines.")
    assert f"**Server {10**17}**" in description
