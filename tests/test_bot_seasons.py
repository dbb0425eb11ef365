"""Leaderboard seasons through the local Discord server, on SQLite and PostgreSQL, with the
manual clock: the current season's table against all time's, a past season picked by name,
each season's end announced once (across sweeps, processes' restarts and a bot that was down
when it ended), nothing announced without the channel setting, seasons turned off, and the
season picker's autocomplete given anything."""

from __future__ import annotations

import datetime
import functools
import logging
import re

import pytest

from bot import i18n
from bot.clock import ManualClock
from bot.components import GAME_ACTION_ID
from bot.domain import size_name
from bot.ladder import SEASON_SETTLES
from bot.storage.base import DatabaseUnavailableError, GameRecord
from tests.bot_harness import (
    BotHarness,
    both_engines,
    both_front_doors,
    button_id,
    refused,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord, SimChannel, SimUser
from tests.discord_sim.models import JSON

pytestmark = both_engines

SETTINGS = "ttt-settings"
OVER = "is over"
THREE = size_name(3)


def at(year: int, month: int, day: int, hour: int = 12) -> float:
    """A moment in UTC, in epoch seconds."""
    return datetime.datetime(year, month, day, hour, tzinfo=datetime.UTC).timestamp()


async def beats(sim: DiscordSim, winner: SimUser, loser: SimUser) -> None:
    """``winner`` challenges ``loser``, who accepts and resigns: a rated game, won."""
    board = await start_member_game(sim, x=winner, o=loser)
    resigned = await sim.click(loser, board, button_id(board, GAME_ACTION_ID, action="resign"))
    assert resigned.response_type == 7, resigned.content


def ranking(table: InteractionRecord) -> list[tuple[int, str, str]]:
    """The members a leaderboard lists, best first: id, rating and record."""
    return [
        (int(user), rating, record)
        for user, rating, record in re.findall(
            r"<@([0-9]+)>: \*\*([0-9]+)\*\* ± [0-9]+\*? \((.*)\)", text_of(table)
        )
    ]


def announcements(sim: DiscordSim) -> list[str]:
    """What every season's end announcement said, in every channel, oldest first."""
    return [
        text_of(message)
        for channel in sim.channels.values()
        for message in sim.messages(channel)
        if OVER in text_of(message)
    ]


@both_front_doors
async def test_the_current_season_a_past_one_by_name_and_all_time(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.clock = ManualClock(at(2026, 10, 15))
    async with harness.running():
        await beats(sim, s.bob, s.alice)  # October's only game
        harness.clock.advance(at(2026, 11, 10) - at(2026, 10, 15))
        await beats(sim, s.alice, s.bob)
        await beats(sim, s.alice, s.bob)
        current = await sim.slash(s.carol, s.channel, "ttt leaderboard")
        all_time = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="all-time")
        october = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="2026-10")
        offered = await sim.autocomplete(
            s.carol, s.channel, "ttt leaderboard", focused="season", season=""
        )
        typed = await sim.autocomplete(
            s.carol, s.channel, "ttt leaderboard", focused="season", season="2026-1"
        )
        one = await sim.autocomplete(
            s.carol, s.channel, "ttt leaderboard", focused="season", season="2026-10"
        )
        other_size = await sim.autocomplete(
            s.carol, s.channel, "ttt leaderboard", focused="season", season="", size=4
        )
        not_a_season = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="2026-13")
        to_come = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="2027-01")

    # The current season by default: November's games alone, from fresh ratings.
    assert f"Tic-tac-toe leaderboard ({THREE}), season 2026-11" in text_of(current)
    assert f"This season ends <t:{int(at(2026, 12, 1, 0))}:R>." in text_of(current)
    assert [(user, record) for user, _, record in ranking(current)] == [
        (s.alice.id, "2 W · 0 L · 0 D"),
        (s.bob.id, "0 W · 2 L · 0 D"),
    ]
    # All time: every game, and the ratings as stored, which differ.
    assert f"Tic-tac-toe leaderboard ({THREE}), all time" in text_of(all_time)
    assert [(user, record) for user, _, record in ranking(all_time)] == [
        (s.alice.id, "2 W · 1 L · 0 D"),
        (s.bob.id, "1 W · 2 L · 0 D"),
    ]
    assert ranking(all_time) != ranking(current)
    # October by name: bob's one win, rated from a fresh start (1311 after one win), over.
    assert f"Tic-tac-toe leaderboard ({THREE}), season 2026-10" in text_of(october)
    assert "This season ends" not in text_of(october)
    assert ranking(october) == [
        (s.bob.id, "1311", "1 W · 0 L · 0 D"),
        (s.alice.id, "1089", "0 W · 1 L · 0 D"),
    ]
    # Offered: all time, then the seasons with rated games on the size, latest first.
    assert [choice["value"] for choice in offered] == ["all-time", "2026-11", "2026-10"]
    assert offered[0]["name"] == "All time"
    assert [choice["value"] for choice in typed] == ["all-time", "2026-11", "2026-10"]
    assert [choice["value"] for choice in one] == ["all-time", "2026-10"]
    assert [choice["value"] for choice in other_size] == ["all-time"]
    refused(not_a_season, "2026-13 is not a season: pick one from the list")
    refused(to_come, "Season 2027-01 has not started yet.")


def size_sent(size: object, data: JSON) -> None:
    """A hand-made payload's ``size`` option: ``size``, whatever the choices offer."""
    (leaderboard,) = data["options"]
    for option in leaderboard["options"]:
        if option["name"] == "size":
            option["value"] = size


@both_front_doors
async def test_the_season_picker_answers_whatever_it_is_sent(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The season option's autocomplete reads the size picked beside it. A size none of the
    choices offers (a hand-made payload: Discord sends a choice's value only) raised in the
    callback, which discord.py logged as an ERROR with a traceback, and the picker got no
    answer. It is offered nothing; whatever is typed is only matched against the seasons."""
    s = sim.seed
    harness.clock = ManualClock(at(2026, 11, 10))
    leaderboard = "ttt leaderboard"
    async with harness.running():
        await beats(sim, s.alice, s.bob)
        for size in (7, 0, -1, 2**53):
            offered = await sim.autocomplete(
                s.carol,
                s.channel,
                leaderboard,
                focused="season",
                season="",
                size=3,
                tamper=functools.partial(size_sent, size),
            )
            assert offered == [], size
        for typed, seasons in [
            (" 2026-1", ["2026-11"]),
            ("2026-10", []),
            ("9999-12", []),
            ("%", []),
            ("'; DROP TABLE x", []),
            ("\u202e11-6202", []),
            ("\x00", []),
        ]:
            offered = await sim.autocomplete(
                s.carol, s.channel, leaderboard, focused="season", season=typed
            )
            assert [choice["value"] for choice in offered] == ["all-time", *seasons], typed
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def set_announcements(sim: DiscordSim, channel: SimChannel) -> None:
    s = sim.seed
    saved = await sim.slash(s.owner, s.channel, f"{SETTINGS} announcements", channel=channel)
    assert f"Where a season's top three are announced: <#{channel.id}>" in text_of(saved)


@both_front_doors
async def test_a_seasons_end_is_announced_once_across_sweeps_and_restarts(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    news = sim.add_channel(s.guild, "news")
    harness.clock = ManualClock(at(2026, 11, 10))
    async with harness.running() as bot:
        await set_announcements(sim, news)
        await beats(sim, s.alice, s.bob)
        await beats(sim, s.carol, s.bob)
        await beats(sim, s.alice, s.carol)
        await bot.sweep()
        assert announcements(sim) == []  # November is still going
        harness.clock.advance(at(2026, 12, 1, 0) + 5 - harness.clock.now())
        await bot.sweep()
        assert announcements(sim) == []  # its last games' saves may still be under way
        harness.clock.advance(SEASON_SETTLES)
        await bot.sweep()
        await bot.sweep()
        await beats(sim, s.bob, s.carol)  # December's, announced when it ends
    assert len(announcements(sim)) == 1
    [november] = [message for message in sim.messages(news) if OVER in text_of(message)]
    text = text_of(november)
    assert "Tic-tac-toe season 2026-11 is over" in text
    assert text.index(f"🥇 <@{s.alice.id}>") < text.index(f"🥈 <@{s.carol.id}>")
    assert text.index(f"🥈 <@{s.carol.id}>") < text.index(f"🥉 <@{s.bob.id}>")
    assert not november.pinged  # the mentions name the members, and notify nobody

    async with harness.running() as bot:  # a restart: its first sweep finds November seen to
        await bot.sweep()
        assert len(announcements(sim)) == 1
    # December ends while the bot is down: announced once when it is back.
    harness.clock.advance(at(2027, 1, 2) - harness.clock.now())
    async with harness.running() as bot:
        await sim.wait_for(lambda: len(announcements(sim)) == 2, what="December announced")
        await bot.sweep()
        # The ended seasons' tables stay readable.
        november_table = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="2026-11")
    assert len(announcements(sim)) == 2
    assert "Tic-tac-toe season 2026-12 is over" in announcements(sim)[1]
    assert f"🥇 <@{s.bob.id}>" in announcements(sim)[1]
    assert [user for user, _, _ in ranking(november_table)] == [s.alice.id, s.carol.id, s.bob.id]


async def test_a_season_whose_podium_the_database_failed_to_read_is_announced_at_the_next_sweep(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A season's end is claimed for its announcement: a database failing while its podium
    is read must not leave it claimed and never announced."""
    s = sim.seed
    harness.clock = ManualClock(at(2026, 11, 20))
    async with harness.running() as bot:
        await set_announcements(sim, s.other_channel)
        await beats(sim, s.carol, s.alice)
        harness.clock.advance(at(2026, 12, 1, 0) + SEASON_SETTLES + 5 - harness.clock.now())
        reading = bot.storage.season_games

        async def down(guild_id: int, size: int, start: float, end: float) -> list[GameRecord]:
            raise DatabaseUnavailableError("connection refused", nothing_written=True)

        bot.storage.season_games = down  # type: ignore[method-assign]
        try:
            with pytest.raises(DatabaseUnavailableError):  # the sweeper logs it, as a WARNING
                await bot.sweep()
        finally:
            bot.storage.season_games = reading  # type: ignore[method-assign]
        assert announcements(sim) == []
        await bot.sweep()
        await bot.sweep()
    assert len(announcements(sim)) == 1
    assert "Tic-tac-toe season 2026-11 is over" in announcements(sim)[0]


async def test_a_post_lost_on_its_way_is_announced_again_and_a_closed_channel_is_not(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A season's claim comes before its post: a post whose connection Discord dropped gives
    the claim up, and the next sweep announces it; a channel closed to the bot (403) is not
    tried again."""
    s = sim.seed
    news = sim.add_channel(s.guild, "news")
    posts = "POST /channels/{channel_id}/messages"
    harness.clock = ManualClock(at(2026, 10, 20))
    async with harness.running() as bot:
        await set_announcements(sim, news)
        await beats(sim, s.bob, s.carol)
        harness.clock.advance(at(2026, 11, 1, 0) + SEASON_SETTLES + 5 - harness.clock.now())
        sim.faults.add(posts, reset="before")
        await bot.sweep()
        assert announcements(sim) == []
        await bot.sweep()
        assert len(announcements(sim)) == 1
        await beats(sim, s.carol, s.bob)  # November's
        harness.clock.advance(at(2026, 12, 1, 0) + SEASON_SETTLES + 5 - harness.clock.now())
        refusal = sim.faults.add(posts, status=403, count=None)
        await bot.sweep()
        sim.faults.remove(refusal)
        await bot.sweep()
    assert len(announcements(sim)) == 1


@both_front_doors
async def test_nothing_is_announced_without_the_channel_setting(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    news = sim.add_channel(s.guild, "news")
    harness.clock = ManualClock(at(2026, 11, 10))
    async with harness.running() as bot:
        shown = await sim.slash(s.owner, s.channel, f"{SETTINGS} show")
        await beats(sim, s.alice, s.bob)
        harness.clock.advance(at(2026, 12, 1, 0) + 5 - harness.clock.now())
        await bot.sweep()
        assert announcements(sim) == []
        # A channel set after the season ended does not announce it either.
        await set_announcements(sim, news)
        await bot.sweep()
    assert "Where a season's top three are announced: Nowhere" in text_of(shown)
    assert "Leaderboard seasons: Monthly: calendar months, UTC (the bot's default)" in text_of(
        shown
    )
    assert announcements(sim) == []


@both_front_doors
async def test_with_seasons_off_the_leaderboard_is_all_time_and_nothing_is_announced(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    news = sim.add_channel(s.guild, "news")
    harness.clock = ManualClock(at(2026, 10, 15))
    async with harness.running() as bot:
        await set_announcements(sim, news)
        saved = await sim.slash(s.owner, s.channel, f"{SETTINGS} seasons", length="off")
        await beats(sim, s.bob, s.alice)
        harness.clock.advance(at(2026, 11, 10) - harness.clock.now())
        await beats(sim, s.alice, s.bob)
        await beats(sim, s.alice, s.bob)
        await bot.sweep()  # October ended, with seasons off
        table = await sim.slash(s.carol, s.channel, "ttt leaderboard")
        offered = await sim.autocomplete(
            s.carol, s.channel, "ttt leaderboard", focused="season", season=""
        )
        past = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="2026-10")
    assert "Leaderboard seasons: Off: the leaderboard is all time" in text_of(saved)
    assert f"changed by <@{s.owner.id}>" in text_of(saved)
    assert f"Tic-tac-toe leaderboard ({THREE}), all time" in text_of(table)
    assert [(user, record) for user, _, record in ranking(table)] == [
        (s.alice.id, "2 W · 1 L · 0 D"),
        (s.bob.id, "1 W · 2 L · 0 D"),
    ]
    assert [choice["value"] for choice in offered] == ["all-time"]
    refused(past, "Seasons are off in this server: its leaderboard is all time.")
    assert announcements(sim) == []


async def test_a_game_live_when_its_season_ends_counts_in_the_season_it_ends_in(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A game started on a month's last evening and won the next morning is the new season's:
    the old one's table, as it stood when it ended, never changes afterwards."""
    s = sim.seed
    harness.clock = ManualClock(at(2026, 12, 1, 0) - 120)
    async with harness.running():
        board = await start_member_game(sim, x=s.alice, o=s.bob)
        harness.clock.advance(180)  # within the turn's 5 minutes
        resigned = await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert resigned.response_type == 7, resigned.content
        november = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="2026-11")
        december = await sim.slash(s.carol, s.channel, "ttt leaderboard")
    assert ranking(november) == []
    assert [(user, record) for user, _, record in ranking(december)] == [
        (s.alice.id, "1 W · 0 L · 0 D"),
        (s.bob.id, "0 W · 1 L · 0 D"),
    ]


@both_front_doors
async def test_a_seasons_end_is_announced_in_the_language_its_boards_were_shown_in(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """No interaction tells the sweeper the server's Discord language: the announcement was
    English in a German server whose admins never picked one. It is in the language of the
    season's last game there (the server's, when it started), unless the admins chose one."""
    s = sim.seed
    s.guild.locale = "de"
    german, french = i18n.language("de"), i18n.language("fr")
    news = sim.add_channel(s.guild, "news")
    harness.clock = ManualClock(at(2026, 11, 10))
    async with harness.running() as bot:
        await set_announcements(sim, news)
        await beats(sim, s.alice, s.bob)
        harness.clock.advance(at(2026, 12, 1, 0) + SEASON_SETTLES + 5 - harness.clock.now())
        await bot.sweep()
        # December's games are German too, then the admins choose French before it ends.
        await beats(sim, s.bob, s.alice)
        chosen = await sim.slash(s.owner, s.channel, f"{SETTINGS} language", language="fr")
        assert chosen.ephemeral
        harness.clock.advance(at(2027, 1, 1, 0) + SEASON_SETTLES + 5 - harness.clock.now())
        await bot.sweep()
    november, december = [text_of(message) for message in sim.messages(news)]
    assert german._("Tic-tac-toe season {season} is over", season="2026-11") in november
    assert french._("Tic-tac-toe season {season} is over", season="2026-12") in december


async def test_a_turn_run_out_while_the_bot_was_down_counts_in_the_season_it_ran_out_in(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A turn that ran out on a month's last evening, the bot down until the next month: the
    game ended when its clock ran out, so it counts in that month's table and podium. It was
    stamped with the moment the sweeper settled it, days later: the old season's table and
    its announcement left it out, and the new season started with it."""
    s = sim.seed
    news = sim.add_channel(s.guild, "news")
    harness.clock = ManualClock(at(2026, 11, 30, 20))
    async with harness.running() as bot:
        await set_announcements(sim, news)
        await beats(sim, s.carol, s.bob)
        await start_member_game(sim, x=s.alice, o=s.bob)  # alice's turn runs out at 20:05
        assert await bot.in_flight.wait_idle(patience=5)
    harness.clock.advance(at(2026, 12, 2) - harness.clock.now())
    async with harness.running() as bot:
        await sim.wait_for(lambda: len(announcements(sim)) == 1, what="November announced")
        november = await sim.slash(s.carol, s.channel, "ttt leaderboard", season="2026-11")
        december = await sim.slash(s.carol, s.channel, "ttt leaderboard")
    assert sorted((user, record) for user, _, record in ranking(november)) == sorted(
        [
            (s.carol.id, "1 W · 0 L · 0 D"),
            (s.bob.id, "1 W · 1 L · 0 D"),
            (s.alice.id, "0 W · 1 L · 0 D"),
        ]
    )
    assert ranking(december) == []
    assert f"<@{s.alice.id}>" in announcements(sim)[0]
