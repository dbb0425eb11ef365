"""Members' data through the real discord.py client and the simulator: ``/ttt my-data``,
``/ttt forget-me`` with its confirmation, and the server-data erase's button, on SQLite and
PostgreSQL. After a member is forgotten, every other member's stats and ratings must still be
exactly what the stored games add up to (the soak's oracle recomputes them)."""

from __future__ import annotations

from pathlib import Path

from bot.components import ERASE_ID, FORGET_ID, GAME_ACTION_ID
from bot.config import SQLITE
from bot.i18n import ENGLISH, language
from bot.privacy import CONFIRMATION_LIFETIME
from tests.bot_harness import (
    BotHarness,
    both_engines,
    both_front_doors,
    button_id,
    cell_id,
    is_live,
    refused,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord, SimChannel, SimMessage, SimUser
from tests.soak.oracle import Tables, count_problems

pytestmark = [both_engines, both_front_doors]

ENGLISH_LANG = language(ENGLISH)


async def play(sim: DiscordSim, board: SimMessage, moves: list[tuple[SimUser, str]]) -> SimMessage:
    for user, cell in moves:
        clicked = await sim.click(user, board, cell_id(board, cell))
        assert clicked.message is not None, clicked.content
        board = clicked.message
    return board


async def x_wins(
    sim: DiscordSim, harness: BotHarness, channel: SimChannel, x: SimUser, o: SimUser, size: int = 3
) -> SimMessage:
    """``x`` challenges ``o`` and wins down column A."""
    board = await start_member_game(sim, channel, x, o, size)
    moves = [(x, "A1"), (o, "B1"), (x, "A2"), (o, "B2"), (x, "A3")]
    if size > 3:
        moves += [(o, "B3"), (x, "A4")]
    final = await play(sim, board, moves)
    assert not is_live(final)
    harness.clock.advance(1)  # the oracle replays ratings in the order games finished
    return final


def read_tables(harness: BotHarness) -> Tables:
    """The bot's tables, read directly from whichever engine it runs on."""
    return Tables.read(Path(harness.db_path) if harness.engine == SQLITE else harness.database.url)


async def ask_to_forget(sim: DiscordSim, user: SimUser) -> SimMessage:
    asked = await sim.slash(user, sim.seed.channel, "ttt forget-me")
    assert asked.ephemeral, asked.content
    assert asked.message is not None
    return asked.message


async def confirm(sim: DiscordSim, user: SimUser, question: SimMessage) -> InteractionRecord:
    return await sim.click(user, question, button_id(question, FORGET_ID, action="confirm"))


# -- /ttt my-data ----------------------------------------------------------------------------


async def test_my_data_with_nothing_stored_says_so_privately(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        shown = await sim.slash(s.carol, s.channel, "ttt my-data")
        asked = await sim.slash(s.carol, s.channel, "ttt forget-me")
    assert shown.ephemeral
    assert "Nothing: I keep no data about you." in text_of(shown)
    refused(asked, "I keep nothing about you: there is nothing to delete.")


async def test_my_data_shows_records_ratings_games_challenges_and_names(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        await x_wins(sim, harness, s.other_channel, s.alice, s.bob, size=4)
        vs_ai = await sim.slash(s.alice, s.thread, "ttt vs-ai", difficulty="random")
        assert vs_ai.message is not None
        await sim.click(
            s.alice, vs_ai.message, button_id(vs_ai.message, GAME_ACTION_ID, action="resign")
        )
        shown = await sim.slash(s.alice, s.channel, "ttt my-data")
        in_dm = await sim.slash(s.alice, sim.dm_channel(s.alice), "ttt my-data")
    assert shown.ephemeral
    text = text_of(shown)
    assert f"**This server ({s.guild.id})**" in text
    assert "- 3\N{MULTIPLICATION SIGN}3: 2 games stored" in text
    assert "  - Against members: 1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in text
    assert "  - Against the bot (random): 0 W · 1 L · 0 D" in text
    assert "- 4\N{MULTIPLICATION SIGN}4: 1 game stored" in text
    assert "2 challenges stored." in text
    assert "Names stored with your games, challenges and tournaments: **alice**" in text
    assert "bob" not in text  # nothing of the other players'
    # From a DM the server is named by its id, not as "this server".
    assert f"**Server {s.guild.id}**" in text_of(in_dm)


async def test_an_admin_who_only_changed_settings_sees_them_and_can_forget_them(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Who last changed each of a server's settings is kept by id: an admin who changed one
    and never played is named there and nowhere else. They were told nothing was stored and
    could not be forgotten; now /ttt my-data counts those settings, and /ttt forget-me asks,
    puts the placeholder in their place, and says so."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, "ttt-settings timeouts", turn="1m")
        await sim.slash(s.owner, s.channel, "ttt-settings limits", games=1)
        shown = await sim.slash(s.owner, s.channel, "ttt my-data")
        asked = await sim.slash(s.owner, s.channel, "ttt forget-me")
        assert asked.message is not None, asked.content
        question = text_of(asked.message)  # before the answer replaces it
        done = await confirm(sim, s.owner, asked.message)
        assert await bot.in_flight.wait_idle(patience=5)
        after = await sim.slash(s.owner, s.channel, "ttt my-data")
        settings = text_of(await sim.slash(s.owner, s.channel, "ttt-settings show"))
        stored = await bot.storage.guild_settings(s.guild.id)
    assert "2 server settings you changed last." in text_of(shown), text_of(shown)
    assert "Names stored" not in text_of(shown)  # no name is kept with a setting
    assert (
        "In 2 server settings you changed last, *a deleted member* is shown as who changed them."
        in question
    )
    assert done.message is not None, done.content
    told = text_of(done.message)
    assert "*a deleted member* is now shown as who last changed 2 server settings." in told, told
    assert "nothing left to delete" not in told
    assert "Nothing: I keep no data about you." in text_of(after)
    assert len(stored) == 2
    assert all(setting.changed_by < 0 for setting in stored)
    # The changes stay, shown as made by the placeholder, not as a broken mention.
    assert "Time for a move: 1 minute" in settings
    assert "changed by *a deleted member*" in settings
    assert str(s.owner.id) not in settings
    assert "<@-" not in settings


# -- /ttt forget-me --------------------------------------------------------------------------


async def test_forget_me_asks_first_and_cancel_deletes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        question = await ask_to_forget(sim, s.alice)
        text = text_of(question)
        cancelled = await sim.click(
            s.alice, question, button_id(question, FORGET_ID, action="cancel")
        )
        after = await sim.slash(s.alice, s.channel, "ttt my-data")
    assert "This cannot be undone." in text
    assert "*a deleted member* in 1 game and 1 challenge" in text
    assert cancelled.response_type == 7  # the question itself, answered
    assert cancelled.message is not None
    assert text_of(cancelled.message).strip() == "Cancelled: nothing was deleted."
    assert cancelled.message.buttons() == []
    assert "1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in text_of(after)


async def test_only_the_member_who_asked_can_answer_and_only_for_a_while(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        question = await ask_to_forget(sim, s.alice)
        confirm_id = button_id(question, FORGET_ID, action="confirm")
        # A hand-made click by bob, carrying alice's button.
        by_bob = await sim.click(s.bob, question, confirm_id, forged=True)
        harness.clock.advance(CONFIRMATION_LIFETIME + 1)
        too_late = await confirm(sim, s.alice, question)
        after = await sim.slash(s.alice, s.channel, "ttt my-data")
    refused(by_bob, "Only the member who asked can answer this")
    refused(too_late, "This confirmation has expired, so nothing was deleted: ask again.")
    assert "1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in text_of(after)


async def test_forget_me_replaces_the_member_everywhere_and_ends_what_they_had_live(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        won = await x_wins(sim, harness, s.channel, s.alice, s.bob)
        live = await start_member_game(sim, s.thread, s.carol, s.alice)
        pending = await sim.slash(s.bob, s.other_channel, "ttt start", opponent=s.alice)
        assert pending.message is not None
        bob_before = text_of(await sim.slash(s.bob, s.channel, "ttt stats"))
        # The boards' and the challenge's message ids are saved after their answers.
        assert await bot.in_flight.wait_idle(patience=5)
        question = await ask_to_forget(sim, s.alice)
        confirm_id = button_id(question, FORGET_ID, action="confirm")
        done = await sim.click(s.alice, question, confirm_id)
        assert await bot.in_flight.wait_idle(patience=5)
        again = await sim.click(s.alice, question, confirm_id, stale=True)
        mine = await sim.slash(s.alice, s.channel, "ttt my-data")
        bob_after = text_of(await sim.slash(s.bob, s.channel, "ttt stats"))
        leaderboard = text_of(await sim.slash(s.carol, s.channel, "ttt leaderboard"))
        rematch = await sim.click(s.bob, won, button_id(won, GAME_ACTION_ID, action="rematch"))
        review = await sim.click(s.bob, won, button_id(won, GAME_ACTION_ID, action="review"))
        tables = read_tables(harness)
    assert done.response_type == 7
    assert done.message is not None
    assert done.message.buttons() == []
    assert (
        "Done: your stats and ratings are deleted, and 2 games and 3 challenges now show "
        "*a deleted member* instead of you." in text_of(done.message)
    )
    assert "1 live game ended, counting for nobody." in text_of(done.message)
    # A client still showing the question: the second click does nothing more, and says so.
    refused(again, "This question was already answered: nothing more was done.")
    assert "Nothing: I keep no data about you." in text_of(mine)
    # The live game's board shows its end, without her name; the challenge to her is closed.
    board = sim.message(live.id)
    assert not is_live(board)
    assert "❌ **carol** vs ⭕ *a deleted member*" in text_of(board)
    assert "🛑 This game was ended: it counts for nobody." in text_of(board)
    assert "A player deleted their data, so this game ended." in text_of(board)
    challenge = sim.message(pending.message.id)
    assert text_of(challenge).strip() == "*a deleted member* declined **bob**'s challenge."
    assert challenge.buttons() == []
    # Bob keeps his loss and his rating; she is on no leaderboard.
    assert bob_after == bob_before
    assert "0 W · 1 L · 0 D (rating 1089 ± 339, provisional)" in bob_after
    assert f"<@{s.bob.id}>" in leaderboard
    assert f"<@{s.alice.id}>" not in leaderboard
    refused(rematch, "The other player of this game deleted their data")
    assert "❌ *a deleted member* (X) vs ⭕ **bob** (O)" in text_of(review)
    # Nothing in the database names her any more, and everyone's counts still add up.
    for game in tables.games:
        assert s.alice.id not in (game["x_id"], game["o_id"])
        assert "alice" not in (game["x_name"], game["o_name"])
    for row in tables.challenges:
        assert s.alice.id not in (row["challenger_id"], row["opponent_id"])
    assert count_problems(tables) == []


async def test_a_turn_that_ran_out_is_settled_before_the_member_is_forgotten(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim, s.channel, s.alice, s.bob)
        assert await bot.in_flight.wait_idle(patience=5)  # the board's id is saved after
        harness.clock.advance(301)  # alice, to move, ran out of time; nothing swept it yet
        question = await ask_to_forget(sim, s.alice)
        done = await confirm(sim, s.alice, question)
        bob = text_of(await sim.slash(s.bob, s.channel, "ttt stats"))
        tables = read_tables(harness)
    assert done.message is not None
    assert "1 live game ended" in text_of(done.message)
    # Bob gets the win he was owed, against the placeholder.
    assert "1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in bob
    shown = text_of(sim.message(board.id))
    assert "⏰ ❌ *a deleted member* ran out of time: ⭕ **bob** wins." in shown
    assert count_problems(tables) == []


async def test_every_other_members_stats_and_ratings_still_add_up_after_members_are_forgotten(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Games chained through two members' ratings, then both forgotten in turn, with games
    after each: the others' records and ratings are still the stored games, replayed."""
    s = sim.seed
    async with harness.running():
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        await x_wins(sim, harness, s.channel, s.carol, s.alice)
        await x_wins(sim, harness, s.channel, s.bob, s.carol)
        await x_wins(sim, harness, s.other_channel, s.alice, s.carol, size=4)
        await x_wins(sim, harness, s.thread, s.bob, s.alice)
        carol_before = text_of(await sim.slash(s.carol, s.channel, "ttt stats"))
        await confirm(sim, s.alice, await ask_to_forget(sim, s.alice))
        carol_after = text_of(await sim.slash(s.carol, s.channel, "ttt stats"))
        await x_wins(sim, harness, s.channel, s.carol, s.bob)
        await confirm(sim, s.bob, await ask_to_forget(sim, s.bob))
        await x_wins(sim, harness, s.channel, s.moderator, s.carol)
        tables = read_tables(harness)
    assert carol_after == carol_before
    placeholders = {
        side for game in tables.games for side in (game["x_id"], game["o_id"]) if side < 0
    }
    assert len(placeholders) == 2  # one of their own each
    assert {s.alice.id, s.bob.id}.isdisjoint(
        {row["user_id"] for row in (*tables.stats, *tables.ratings)}
    )
    assert {row["user_id"] for row in tables.ratings} == {s.carol.id, s.moderator.id}
    assert count_problems(tables) == []


# -- a server's data (the question is asked by the lead's /ttt-settings erase-data) -------------


async def test_a_servers_data_is_erased_by_a_member_who_can_manage_it(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        live = await start_member_game(sim, s.thread, s.carol, s.bob)
        pending = await sim.slash(s.alice, s.other_channel, "ttt start")
        assert pending.message is not None
        # A 5x5 board is a components-v2 message, and must stay one.
        large = await sim.slash(
            s.bob, sim.add_channel(s.guild, "large"), "ttt vs-ai", difficulty="random", size=5
        )
        assert large.message is not None
        await sim.slash(s.owner, s.channel, "ttt-settings timeouts", turn="1m")
        # The boards' and the challenge's message ids are saved after their answers.
        assert await bot.in_flight.wait_idle(patience=5)
        # The command is the admins' (the service checks again if the server shows it to all).
        s.guild.shown_to_everyone.add("ttt-settings")
        refused(
            await sim.slash(s.moderator, s.channel, "ttt-settings erase-data"),
            "Only members who can manage this server can delete its data.",
        )
        asked = await sim.slash(s.owner, s.channel, "ttt-settings erase-data")
        assert asked.ephemeral
        question = asked.message
        assert question is not None
        assert "This cannot be undone." in text_of(question)
        erase = button_id(question, ERASE_ID, action="confirm")
        by_member = await sim.click(s.alice, question, erase, forged=True)
        kept = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
        done = await sim.click(s.owner, question, erase)
        assert await bot.in_flight.wait_idle(patience=5)
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
        mine = text_of(await sim.slash(s.bob, s.channel, "ttt my-data"))
        settings = text_of(await sim.slash(s.owner, s.channel, "ttt-settings show"))
        again = await sim.slash(s.carol, s.thread, "ttt vs-ai", difficulty="random")
    refused(by_member, "Only members who can manage this server can delete its data.")
    assert "1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in kept
    assert done.response_type == 7
    assert done.message is not None
    assert done.message.buttons() == []
    assert (
        "Done: deleted 3 games, 3 challenges and 5 rows of records, ratings and settings"
        in text_of(done.message)
    )
    assert "Time for a move: 5 minutes (the bot's default)" in settings
    assert "changed by" not in settings
    assert "No finished games yet in this server" in stats
    assert "Nothing: I keep no data about you." in mine
    assert text_of(sim.message(live.id)).strip() == (
        "🗑️ This game was deleted with the server's data."
    )
    assert sim.message(live.id).buttons() == []
    assert sim.message(pending.message.id).buttons() == []
    assert "deleted with the server's data" in text_of(sim.message(large.message.id))
    assert sim.message(large.message.id).buttons() == []
    assert again.message is not None  # the thread is free again


async def test_a_game_where_the_bot_is_not_ends_through_the_latest_token_or_the_next_answer(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Forgotten from a server, a member's games in group DMs (where the bot can only edit
    through an interaction's token) show their end there: through the token while it is
    valid; past its 15 minutes, with the next interaction there."""
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob, s.carol)
    other_group = sim.group_dm("others", s.alice, s.carol)
    sim.install_for_user(s.alice)
    async with harness.running(turn_timeout=7200) as bot:
        fresh = await start_member_game(sim, group)
        stale = await start_member_game(sim, other_group, s.alice, s.carol)
        assert await bot.in_flight.wait_idle(patience=5)  # the tokens are saved after answers
        harness.clock.advance(16 * 60)  # both tokens run out...
        sim.advance_clock(16 * 60)
        fresh = await play(sim, fresh, [(s.alice, "A1")])  # ...and the first is renewed
        # The renewed token is saved after the click's answer: a forget-me before that would
        # find the expired one, and leave the game to the next interaction there.
        assert await bot.in_flight.wait_idle(patience=5)
        await confirm(sim, s.alice, await ask_to_forget(sim, s.alice))
        assert await bot.in_flight.wait_idle(patience=5)
        through_token = text_of(sim.message(fresh.id))
        untouched = text_of(sim.message(stale.id))
        sim.install_for_user(s.carol)
        next_answer = await sim.slash(s.carol, other_group, "ttt stats")
    assert "❌ *a deleted member* vs ⭕ **bob**" in through_token
    assert "🛑 This game was ended: it counts for nobody." in through_token
    assert "**alice**" in untouched  # no token could reach it...
    shown = [text_of(message) for message in next_answer.followups]
    assert any(  # ...so the next interaction there shows it
        "❌ *a deleted member* vs ⭕ **carol**" in text and "🛑" in text for text in shown
    ), shown
