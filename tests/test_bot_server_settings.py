"""A server's settings through the local Discord server, on SQLite and PostgreSQL: each one
shown, changed, applied and reset by an admin (the server's owner), refused to members who
cannot manage the server even when the server shows them the command, and bad input refused
with a sentence and no change."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
from typing import Any

import pytest

from bot.components import CHALLENGE_ID, GAME_ACTION_ID
from bot.errors import DATABASE_DOWN
from bot.server_settings import SETTINGS_MAYBE_SAVED
from bot.storage.base import DatabaseUnavailableError, GameRecord, NewGame, StoredSetting
from bot.storage.connect import open_storage
from game import Mark
from tests.bot_harness import (
    GATEWAY,
    BotHarness,
    both_engines,
    both_front_doors,
    button_id,
    cell_buttons,
    cell_id,
    final_answer,
    refused,
    size_of,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord, SimChannel, SimMessage, SimUser
from tests.discord_sim.models import (
    CHANNEL_CATEGORY,
    DEFAULT_BOT_PERMISSIONS,
    PERM_CREATE_PUBLIC_THREADS,
    PERM_MANAGE_THREADS,
    SimRole,
    SimUsageError,
)

PERM_THREADS = PERM_CREATE_PUBLIC_THREADS

pytestmark = [both_engines, both_front_doors]

SETTINGS = "ttt-settings"


def shown(record: InteractionRecord) -> str:
    """The settings message an admin got: private, and what it says."""
    assert record.response_type == 4, record.content
    assert record.ephemeral, record.content
    return text_of(record)


async def test_an_admin_sees_the_defaults_changes_timeouts_and_resets_them(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        defaults = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} show"))
        assert "Where games can be started: Every channel" in defaults
        assert "Who can play: Everyone" in defaults
        assert "Time for a move: 5 minutes (the bot's default)" in defaults
        assert "Time to answer a challenge: 2 minutes (the bot's default)" in defaults
        assert "Live games a member can be in at once: No limit" in defaults
        assert "changed by" not in defaults
        harness.clock.advance(60)
        saved = shown(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} timeouts", turn="90s", challenge="1h")
        )
        assert saved.startswith("Saved. The settings now:")
        changed_at = int(harness.clock.now())
        assert (
            f"Time for a move: 1 minute and 30 seconds\n-# changed by <@{s.owner.id}> "
            f"<t:{changed_at}:R>"
        ) in saved
        assert "Time to answer a challenge: 1 hour\n" in saved
        again = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} show"))
        assert "Time for a move: 1 minute and 30 seconds" in again
        reset = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} reset", setting="timeouts"))
        assert "Time for a move: 5 minutes (the bot's default)" in reset
        assert f"-# changed by <@{s.owner.id}>" in reset  # a reset is a change, and says whose
    async with harness.running():  # kept over a restart
        after = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} show"))
    assert "Time for a move: 5 minutes (the bot's default)" in after


async def test_a_server_without_timeouts_of_its_own_has_the_processs(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The defaults shown, and applied, are the process's settings (TTT_TURN_TIMEOUT,
    TTT_CHALLENGE_TIMEOUT), not the bot's built-in ones."""
    s = sim.seed
    async with harness.running(turn_timeout=1200, challenge_timeout=30) as bot:
        defaults = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} show"))
        assert "Time for a move: 20 minutes (the bot's default)" in defaults
        assert "Time to answer a challenge: 30 seconds (the bot's default)" in defaults
        challenge = await sim.slash(s.alice, s.channel, "ttt start")
        assert challenge.message is not None
        assert await bot.in_flight.wait_idle(patience=5)
        harness.clock.advance(31)
        await bot.sweep()
        assert "expired" in text_of(challenge.message)


def as_defaults(text: str) -> str:
    """A settings message without its header and its "changed by" lines: what is set."""
    lines = text.removeprefix("Saved. The settings now:").strip().splitlines()
    return "\n".join(line for line in lines if not line.startswith("-# changed by"))


async def test_each_setting_and_then_everything_is_reset_to_its_default(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Every choice of /ttt-settings reset puts back its own setting and no other, and
    "everything" every one."""
    s = sim.seed
    role = sim.add_role(s.guild, "players")
    emoji = sim.add_emoji(s.guild, "cross")
    changes: dict[str, tuple[str, dict[str, Any]]] = {
        "channels": ("channels add", {"channel": s.channel}),
        "players": ("players add", {"role": role}),
        "moderators": ("moderators", {"role": role}),
        "timeouts": ("timeouts", {"turn": "90s", "challenge": "1h"}),
        "language": ("language", {"language": "de"}),
        "limits": ("limits", {"games": 2, "cooldown": "2m"}),
        "board-size": ("board-size", {"size": 4}),
        "marks": ("marks", {"x": emoji.text, "o": "🍩"}),
        "threads": ("threads", {"enabled": True}),
    }

    async def change_all() -> str:
        text = ""
        for command, options in changes.values():
            text = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} {command}", **options))
        return as_defaults(text)

    async with harness.running() as bot:
        defaults = as_defaults(shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} show")))
        changed = await change_all()
        pairs = zip(defaults.splitlines(), changed.splitlines(), strict=True)
        by_line = {default: value for default, value in pairs if default != value}
        assert len(by_line) == 11, by_line  # timeouts and limits are two lines each
        for setting in changes:
            reset = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} reset", setting=setting))
            lines = set(as_defaults(reset).splitlines())
            back = {default for default in by_line if default in lines}
            assert len(back) == (2 if setting in ("timeouts", "limits") else 1), (setting, back)
            by_line = {default: value for default, value in by_line.items() if default not in back}
            assert set(by_line.values()) <= lines, setting  # the others are kept
        assert by_line == {}
        assert await change_all() == changed
        reset = shown(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} reset", setting="everything")
        )
        assert as_defaults(reset) == defaults
        stored = await bot.storage.guild_settings(s.guild.id)
        assert {setting.value for setting in stored} == {None}


async def test_members_who_cannot_manage_the_server_neither_see_nor_use_the_settings(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        # Discord hides the command from them (default_member_permissions)...
        with pytest.raises(SimUsageError, match="default_member_permissions"):
            await sim.slash(s.moderator, s.channel, f"{SETTINGS} show")
        # ...unless the server's admins show it to everyone: the bot checks again.
        s.guild.shown_to_everyone.add(SETTINGS)
        # Not even to read them: who changed what, and when, is the admins' business.
        refused(
            await sim.slash(s.moderator, s.channel, f"{SETTINGS} show"),
            "Only members who can manage the server can see its settings.",
        )
        refused(
            await sim.slash(s.moderator, s.channel, f"{SETTINGS} timeouts", turn="10s"),
            "Only members who can manage the server can change its settings.",
        )
        refused(
            await sim.slash(s.alice, s.channel, f"{SETTINGS} reset", setting="everything"),
            "Only members who can manage the server can change its settings.",
        )
        assert await bot.storage.guild_settings(s.guild.id) == []


async def test_games_start_only_in_the_listed_channels_and_categories_threads_with_theirs(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    category = sim.add_channel(s.guild, "Games", type=CHANNEL_CATEGORY)
    in_category = sim.add_channel(s.guild, "arena", category=category)
    arena_thread = sim.add_thread(in_category, "arena-thread")
    async with harness.running():
        await sim.slash(s.owner, s.channel, f"{SETTINGS} channels add", channel=s.channel)
        listed = shown(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} channels add", channel=category)
        )
        assert f"Where games can be started: <#{s.channel.id}> and <#{category.id}>" in listed
        elsewhere = "Games aren't played in this channel: this server plays them in"
        refused(await sim.slash(s.alice, s.other_channel, "ttt start"), elsewhere)
        refused(
            await sim.slash(s.alice, s.other_channel, "ttt vs-ai", difficulty="random"),
            f"{elsewhere} <#{s.channel.id}> or <#{category.id}>.",
        )
        assert (await sim.slash(s.alice, s.channel, "ttt start")).message is not None
        # A thread follows its channel; a channel its category, and so its threads.
        for channel in (s.thread, in_category, arena_thread):
            started = await sim.slash(s.bob, channel, "ttt vs-ai", difficulty="random")
            assert started.message is not None, (channel.name, started.content)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} channels remove", channel=category)
        refused(await sim.slash(s.carol, in_category, "ttt start"), elsewhere)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} channels everywhere")
        assert (await sim.slash(s.carol, s.other_channel, "ttt start")).message is not None


async def test_games_are_for_members_with_a_players_role_and_end_with_a_moderator_role(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    players = sim.add_role(s.guild, "players")
    referees = sim.add_role(s.guild, "referees")
    for user in (s.alice, s.carol):
        s.guild.member(user).roles.append(players)  # type: ignore[union-attr]
    s.guild.member(s.bob).roles.append(referees)  # type: ignore[union-attr]
    async with harness.running():
        await sim.slash(s.owner, s.channel, f"{SETTINGS} players add", role=players)
        for_players = f"Games in this server are for members with <@&{players.id}>"
        refused(await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random"), for_players)
        refused(
            await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob),
            f"bob can't play here: games in this server are for members with <@&{players.id}>.",
        )
        open_challenge = await sim.slash(s.alice, s.channel, "ttt start")
        assert open_challenge.message is not None
        accept = button_id(open_challenge.message, CHALLENGE_ID, action="accept")
        refused(await sim.click(s.bob, open_challenge.message, accept), for_players)
        board = await sim.click(s.carol, open_challenge.message, accept)
        assert board.message is not None
        # Ending games: those who manage messages, and the moderator role once it is set.
        refused(
            await sim.slash(s.bob, s.channel, "ttt end"),
            "Only members who can manage messages can do that.",
        )
        await sim.slash(s.owner, s.channel, f"{SETTINGS} moderators", role=referees)
        ended = await sim.slash(s.bob, s.channel, "ttt end")
        assert ended.message is not None
        assert "A moderator ended this game" in text_of(ended.message)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} players everyone")
        assert (await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random")).message


async def test_with_a_moderator_role_those_who_manage_messages_still_end_games(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The moderator role is one more way to end games, not the only one; a member with
    neither is told both."""
    s = sim.seed
    referees = sim.add_role(s.guild, "referees")
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} moderators", role=referees)
        await start_member_game(sim)
        refused(
            await sim.slash(s.alice, s.channel, "ttt end"),
            f"Only members who can manage messages, or with <@&{referees.id}>, can end games.",
        )
        assert await bot.storage.live_game_in_channel(s.channel.id) is not None
        ended = await sim.slash(s.moderator, s.channel, "ttt end")  # Manage Messages, no role
        assert ended.message is not None
        assert "A moderator ended this game" in text_of(ended.message)


async def test_a_servers_timeouts_settle_its_games_and_challenges(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        before = await sim.slash(s.alice, s.other_channel, "ttt vs-ai", difficulty="random")
        await sim.slash(s.owner, s.channel, f"{SETTINGS} timeouts", turn="30s", challenge="15s")
        game = await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random")
        challenge = await sim.slash(s.carol, s.thread, "ttt start")
        assert game.message is not None
        assert challenge.message is not None
        assert before.message is not None
        assert await bot.in_flight.wait_idle(patience=5)
        harness.clock.advance(31)
        await bot.sweep()
        assert "bob** ran out of time" in text_of(game.message)
        assert "expired" in text_of(challenge.message)
        # A game keeps the clock it started with: 5 minutes.
        assert "ran out of time" not in text_of(before.message)
        harness.clock.advance(300)
        await bot.sweep()
        assert "alice** ran out of time" in text_of(before.message)


async def test_the_servers_language_for_boards_whatever_its_discord_locale(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    s.guild.locale = "fr"
    async with harness.running():
        french = await sim.slash(s.alice, s.channel, "ttt start")
        assert french.message is not None
        assert "Accepter" in str(french.message.buttons())
        await sim.click(
            s.alice, french.message, button_id(french.message, CHALLENGE_ID, action="withdraw")
        )
        languages = shown(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} language", language="de")
        )
        assert "Language of boards and challenges: Deutsch" in languages
        board = await start_member_game(sim, s.other_channel)
        assert "ist am Zug" in text_of(board)
        stats = await sim.slash(s.alice, s.channel, "ttt stats")
        assert "Gegen Mitglieder" in text_of(stats)
        # A member's own replies stay in their own language.
        refused(await sim.slash(s.carol, s.other_channel, "ttt resign"), "You are not playing")
        await sim.slash(s.owner, s.channel, f"{SETTINGS} language", language="server")
        again = await sim.slash(s.carol, s.channel, "ttt start")
        assert again.message is not None
        assert "Accepter" in str(again.message.buttons())


async def test_a_rematch_after_the_settings_changed_is_in_the_new_ones(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A rematch is a new game: it takes the language, marks and turn time the admins chose
    since its game started, rather than carry the old ones on."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim, s.channel)
        assert (await sim.slash(s.carol, s.other_channel, "ttt vs-ai", difficulty="random")).message
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        await sim.slash(s.carol, s.other_channel, "ttt resign")
        assert await bot.in_flight.wait_idle(patience=5)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} language", language="de")
        await sim.slash(s.owner, s.channel, f"{SETTINGS} marks", x="🐱", o="🐶")
        await sim.slash(s.owner, s.channel, f"{SETTINGS} timeouts", turn="30s")
        # /ttt resign answers with the board, the one its Rematch is on.
        for player, old in ((s.alice, board), (s.carol, sim.messages(s.other_channel)[-1])):
            again = await sim.click(player, old, button_id(old, GAME_ACTION_ID, action="rematch"))
            assert again.message is not None, again.content
            assert "ist am Zug" in text_of(again.message), text_of(again.message)
            assert "🐱" in text_of(again.message), text_of(again.message)
            game = await bot.storage.live_game_in_channel(again.message.channel.id)
            assert game is not None
            assert game.turn_timeout == 30


async def test_an_accepted_challenge_is_in_the_language_chosen_since(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """An accepted challenge is a game starting then: it takes the language the admins chose
    after the challenge was made, as it takes their marks and turn time."""
    s = sim.seed
    async with harness.running():
        challenge = await sim.slash(s.alice, s.channel, "ttt start")
        assert challenge.message is not None, challenge.content
        assert "Accept" in str(challenge.message.buttons())
        await sim.slash(s.owner, s.channel, f"{SETTINGS} language", language="de")
        accept = button_id(challenge.message, CHALLENGE_ID, action="accept")
        board = await sim.click(s.bob, challenge.message, accept)
        assert board.message is not None, board.content
        assert "ist am Zug" in text_of(board.message), text_of(board.message)


async def test_a_rematch_is_no_challenge_for_the_cooldown(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The cooldown is between challenges (they ping): a Rematch neither waits for it nor
    starts it."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", cooldown="1h")
        board = await start_member_game(sim, s.channel)
        await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert await bot.in_flight.wait_idle(patience=5)
        harness.clock.advance(600)
        again = await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="rematch"))
        assert again.message is not None, again.content
        # An hour after the challenge, not after the rematch.
        harness.clock.advance(3001)
        assert (await sim.slash(s.alice, s.other_channel, "ttt start")).message is not None


async def test_a_cooldown_between_challenges_and_a_limit_of_live_games(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=1, cooldown="2m")
        first = await sim.slash(s.alice, s.channel, "ttt start")
        assert first.message is not None
        await sim.click(
            s.alice, first.message, button_id(first.message, CHALLENGE_ID, action="withdraw")
        )
        harness.clock.advance(60)
        wait_until = math.ceil(harness.clock.now() + 60)
        refused(
            await sim.slash(s.alice, s.channel, "ttt start"),
            "This server asks members to wait between challenges: you can challenge again "
            f"<t:{wait_until}:R>.",
        )
        harness.clock.advance(61)
        second = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert second.message is not None
        # One live game each: bob plays the bot, and can then accept nothing more.
        assert (await sim.slash(s.bob, s.other_channel, "ttt vs-ai", difficulty="random")).message
        accept = button_id(second.message, CHALLENGE_ID, action="accept")
        refused(
            await sim.click(s.bob, second.message, accept),
            "You are already in as many live games as this server allows (1): finish one first.",
        )
        refused(
            await sim.slash(s.bob, s.thread, "ttt vs-ai", difficulty="random"),
            "You are already in as many live games as this server allows (1)",
        )
        await sim.slash(s.bob, s.other_channel, "ttt resign")
        assert (await sim.click(s.bob, second.message, accept)).message is not None
        reset = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} reset", setting="limits"))
        assert "Live games a member can be in at once: No limit" in reset
        assert (await sim.slash(s.bob, s.thread, "ttt vs-ai", difficulty="random")).message


LIMIT_REACHED = "You are already in as many live games as this server allows (1): finish one first."


def game_threads(sim: DiscordSim, channel: SimChannel) -> list[SimChannel]:
    """The threads off ``channel`` that the bot opened for games (all but the seed's)."""
    assert channel.guild is not None
    return [
        c
        for c in channel.guild.channels
        if c.is_thread and c.parent is channel and c is not sim.seed.thread
    ]


async def only_one_started(
    answers: list[InteractionRecord], refusal: str = LIMIT_REACHED
) -> SimMessage:
    """The one public answer among ``answers`` (a game or challenge started); every other one
    is ``refusal``, for its member alone. Each is read once complete: on a busy machine the
    starts that wait for one another may be deferred first."""
    shown = [await final_answer(answer) for answer in answers]
    started = [message for message in shown if not message.ephemeral]
    assert len(started) == 1, [message.content for message in shown]
    for message in shown:
        if message is not started[0]:
            assert refusal in (message.content or ""), message.content
    return started[0]


async def test_simultaneous_starts_in_five_channels_keep_the_live_games_limit(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The limit is decided where the game is stored: five /ttt vs-ai from one member at the
    same instant, in five channels, start one game; the four others hear why."""
    s = sim.seed
    arenas = [sim.add_channel(s.guild, f"arena-{number}") for number in range(5)]
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=1)
        for _ in range(2):
            answers = await asyncio.gather(
                *(sim.slash(s.alice, arena, "ttt vs-ai", difficulty="random") for arena in arenas)
            )
            started = await only_one_started(answers)
            assert await bot.storage.live_games_of(s.guild.id, s.alice.id) == 1
            await sim.slash(s.alice, started.channel, "ttt resign")


async def test_simultaneous_challenges_in_five_channels_keep_the_cooldown(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The cooldown is decided where the challenge is stored: five /ttt start from one member
    at the same instant, in five channels, open one challenge; the four others hear when they
    may challenge again."""
    s = sim.seed
    arenas = [sim.add_channel(s.guild, f"arena-{number}") for number in range(5)]
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", cooldown="2m")
        answers = await asyncio.gather(
            *(sim.slash(s.alice, arena, "ttt start") for arena in arenas)
        )
        await only_one_started(answers, WAIT_BETWEEN)
        pending = [await bot.storage.pending_challenge_in_channel(arena.id) for arena in arenas]
        assert len([challenge for challenge in pending if challenge is not None]) == 1


WAIT_BETWEEN = "This server asks members to wait between challenges: you can challenge again"


async def test_simultaneous_starts_with_threads_open_one_thread_for_the_one_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """With games in threads, the four starts the limit refuses open no thread: none is left
    empty in the channel."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=1)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        answers = await asyncio.gather(
            *(sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random") for _ in range(5))
        )
        await only_one_started(answers)
        assert await bot.in_flight.wait_idle(patience=5)
        assert await bot.storage.live_games_of(s.guild.id, s.alice.id) == 1
        (thread,) = game_threads(sim, s.channel)
        (board,) = sim.messages(thread)
        assert cell_buttons(board)


async def test_five_challenges_accepted_at_once_start_one_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """One member accepting five challenges at the same instant starts one game; the other
    challenges stay open."""
    s = sim.seed
    arenas = [sim.add_channel(s.guild, f"arena-{number}") for number in range(5)]
    challengers = [sim.add_user(f"challenger-{number}") for number in range(5)]
    for challenger in challengers:
        sim.add_member(s.guild, challenger)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=1)
        challenges = [
            await sim.slash(challenger, arena, "ttt start", opponent=s.bob)
            for challenger, arena in zip(challengers, arenas, strict=True)
        ]
        messages = [await final_answer(challenge) for challenge in challenges]
        answers = await asyncio.gather(
            *(
                sim.click(s.bob, message, button_id(message, CHALLENGE_ID, action="accept"))
                for message in messages
            )
        )
        await only_one_started(answers)
        assert await bot.storage.live_games_of(s.guild.id, s.bob.id) == 1
        pending = [await bot.storage.pending_challenge_in_channel(arena.id) for arena in arenas]
        assert sum(challenge is None for challenge in pending) == 1


async def test_the_default_board_size(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running() as bot:
        saved = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} board-size", size=4))
        assert "Board size when none is picked: 4\N{MULTIPLICATION SIGN}4 (4 in a row)" in saved
        game = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert game.message is not None
        assert size_of(game.message) == 4
        picked = await sim.slash(s.bob, s.other_channel, "ttt vs-ai", difficulty="random", size=3)
        assert picked.message is not None
        assert size_of(picked.message) == 3
        board = await start_member_game(sim, s.thread, s.carol, s.owner)
        assert size_of(board) == 4
        help_text = text_of(await sim.slash(s.carol, s.channel, "ttt help"))
        assert "4\N{MULTIPLICATION SIGN}4 if you leave it out" in help_text
        # What a size left out means elsewhere too: the server's board, not 3x3.
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
        assert "Tic-tac-toe stats: alice (4\N{MULTIPLICATION SIGN}4)" in stats
        table = text_of(await sim.slash(s.alice, s.channel, "ttt leaderboard"))
        assert "leaderboard (4\N{MULTIPLICATION SIGN}4)" in table
        picked_table = text_of(await sim.slash(s.alice, s.channel, "ttt leaderboard", size=3))
        assert "leaderboard (3\N{MULTIPLICATION SIGN}3)" in picked_table
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Cup")
        assert created.message is not None
        assert "4\N{MULTIPLICATION SIGN}4" in text_of(created)
        tournament_id = await bot.storage.latest_tournament_in_channel(s.channel.id)
        assert tournament_id is not None
        tournament = await bot.tournaments.get(tournament_id)
        assert tournament is not None
        assert tournament.state.rules.size == 4


async def test_bad_settings_get_a_sentence_and_change_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    elsewhere = sim.add_guild("Elsewhere", owner=s.owner)
    foreign_channel = sim.add_channel(elsewhere, "foreign")
    foreign_role = sim.add_role(elsewhere, "foreign-role")
    async with harness.running() as bot:
        for options, sentence in (
            ({"turn": "soon"}, "soon is not a duration: write it like 90s, 5m, 2h or 1d."),
            ({"turn": "5s"}, "A timeout must be between 10 seconds and 7 days, not 5s."),
            ({"challenge": "8d"}, "A timeout must be between 10 seconds and 7 days, not 8d."),
            ({}, "Give a turn timeout, a challenge timeout, or both."),
        ):
            refused(
                await sim.slash(s.owner, s.channel, f"{SETTINGS} timeouts", options=options),
                sentence,
            )
        refused(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", cooldown="2d"),
            "A cooldown can be a day at most, not 2d.",
        )

        forged = {**foreign_channel.payload(), "permissions": str(2**40 - 1)}
        for entry, sentence in (
            (forged, "That channel isn't one of this server's: pick one from the list."),
            # Discord always sends a resolved channel's permissions, and discord.py needs them.
            (
                foreign_channel.payload(),
                "The channel option doesn't name anyone here: pick from the list.",
            ),
        ):
            refused(
                await sim.slash(
                    s.owner,
                    s.channel,
                    f"{SETTINGS} channels add",
                    channel=s.channel,
                    tamper=functools.partial(
                        _swap_resolved, kind="channels", old_id=s.channel.id, new=entry
                    ),
                ),
                sentence,
            )
        everyone = s.guild.everyone

        def other_role(data: dict[str, object]) -> None:
            _swap_resolved(data, "roles", everyone.id, foreign_role.payload())

        refused(
            await sim.slash(
                s.owner, s.channel, f"{SETTINGS} players add", role=everyone, tamper=other_role
            ),
            "That role isn't one of this server's: pick one from the list.",
        )
        refused(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} players add", role=everyone),
            "Everyone has @everyone",
        )

        refused(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} channels remove", channel=s.channel),
            f"<#{s.channel.id}> is not in the list of channels for games.",
        )
        assert await bot.storage.guild_settings(s.guild.id) == []


async def test_lists_refuse_what_they_hold_or_lack_and_their_26th_entry(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The refusals of the lists, limits and moderator role, each a sentence changing nothing;
    a role removed from the players leaves the others, and the last one removed lets everyone
    play."""
    s = sim.seed
    roles = [sim.add_role(s.guild, f"role-{number}") for number in range(26)]
    arenas = [sim.add_channel(s.guild, f"arena-{number}") for number in range(26)]
    players, others = roles[:2]
    async with harness.running() as bot:
        for role in roles[:25]:
            await sim.slash(s.owner, s.channel, f"{SETTINGS} players add", role=role)
        for arena in arenas[:25]:
            await sim.slash(s.owner, s.channel, f"{SETTINGS} channels add", channel=arena)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=2)
        stored = await bot.storage.guild_settings(s.guild.id)
        for command, options, sentence in (
            ("players add", {"role": roles[25]}, "Up to 25 roles can be listed: remove one first."),
            (
                "channels add",
                {"channel": arenas[25]},
                "Up to 25 channels and categories can be listed: remove one first, or use a "
                "category.",
            ),
            (
                "channels add",
                {"channel": arenas[0]},
                f"Games can already be started in <#{arenas[0].id}>.",
            ),
            ("players add", {"role": players}, f"Members with <@&{players.id}> can already play."),
            (
                "moderators",
                {"role": s.guild.everyone},
                "Pick a role other than @everyone: ending games is for moderators.",
            ),
            ("limits", {}, "Give a number of games, a cooldown, or both."),
            (
                "limits",
                {"cooldown": "soon"},
                "soon is not a duration: write it like 30s, 5m or 1h (0 for none).",
            ),
        ):
            refused(
                await sim.slash(s.owner, s.channel, f"{SETTINGS} {command}", options=options),
                sentence,
            )
        assert await bot.storage.guild_settings(s.guild.id) == stored
        for role in roles[2:25]:
            await sim.slash(s.owner, s.channel, f"{SETTINGS} players remove", role=role)
        refused(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} players remove", role=roles[2]),
            f"<@&{roles[2].id}> is not one of the roles that may play.",
        )
        two = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} players remove", role=others))
        assert f"Who can play: <@&{players.id}>\n" in two
        last = shown(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} players remove", role=players)
        )
        assert "Who can play: Everyone\n" in last
        started = await sim.slash(s.alice, arenas[0], "ttt vs-ai", difficulty="random")
        assert started.message is not None  # a member with no role plays again


async def test_a_change_made_by_another_process_applies_at_once(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        other_process = await open_storage(harness.database, harness.clock)
        try:
            change = StoredSetting("channels", f"[{s.other_channel.id}]", s.owner.id, 0.0)
            await other_process.change_guild_setting(s.guild.id, change)
        finally:
            await other_process.close()
        refused(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"),
            f"this server plays them in <#{s.other_channel.id}>.",
        )


def _swap_resolved(data: dict[str, object], kind: str, old_id: int, new: dict[str, object]) -> None:
    """Make a command's option name another object than the one picked, as only a hand-made
    payload could: its value and its resolved entry."""
    resolved = data["resolved"]
    assert isinstance(resolved, dict)
    entries = resolved[kind]
    del entries[str(old_id)]
    entries[str(new["id"])] = new
    stack = list(data.get("options") or [])  # type: ignore[call-overload]
    while stack:
        option = stack.pop()
        if option.get("value") == str(old_id):
            option["value"] = str(new["id"])
        stack.extend(option.get("options") or [])


async def test_custom_marks_on_the_buttons_and_in_the_grid_at_every_size(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    cross = sim.add_emoji(s.guild, "cross")
    async with harness.running():
        saved = shown(
            await sim.slash(s.owner, s.channel, f"{SETTINGS} marks", x=f" {cross.text} ", o="🍩")
        )
        assert f"Marks for X and O: {cross.text} 🍩\n-# changed by <@{s.owner.id}>" in saved
        for size, channel in ((3, s.channel), (5, s.other_channel)):
            started = await sim.slash(s.alice, channel, "ttt vs-ai", difficulty="random", size=size)
            # Over HTTP a board with a server's emoji is deferred, then shown (see bot.answers).
            start = await final_answer(started)
            moved = await sim.click(s.alice, start, cell_id(start, "A1"))
            board = await final_answer(moved)
            emojis = [button.get("emoji") for button in cell_buttons(board)]
            assert emojis[0] == {"id": str(cross.id), "name": "cross", "animated": False}
            assert {"name": "🍩"} in emojis  # the bot's answer
            text = text_of(board)
            assert f"{cross.text} **alice**" in text
            assert "🍩" in text
            assert "❌" not in text
            assert "⭕" not in text
        reset = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} reset", setting="marks"))
        assert "Marks for X and O: ❌ ⭕ (the bot's default)" in reset


async def test_a_deleted_custom_mark_gives_way_to_the_bots_own(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    s = sim.seed
    cross = sim.add_emoji(s.guild, "cross")
    async with harness.running():
        await sim.slash(s.owner, s.channel, f"{SETTINGS} marks", x=cross.text)
        first = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert cross.text in text_of(await final_answer(first))
        await sim.slash(s.alice, s.channel, "ttt resign")
        sim.delete_emoji(cross)
        harness.clock.advance(61)  # past what the bot remembers of Discord's last answer
        with caplog.at_level(logging.WARNING, logger="bot.service"):
            second = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert "❌ **alice**" in text_of(await final_answer(second))
    assert any(
        record.levelno == logging.WARNING and "is no longer one of its emoji" in record.message
        for record in caplog.records
    )


async def test_a_custom_mark_deleted_mid_game_gives_way_to_the_bots_own_for_good(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Three games with a server's own emoji for X; the emoji deleted (within the minute the
    bot trusts Discord's last word on it). Each game's next board is refused by Discord once
    (a move, a moderator's end, a timeout settled by the sweeper), then shown with the bot's
    own marks, which the game keeps for good; a game started meanwhile takes them at once."""
    s = sim.seed
    cross = sim.add_emoji(s.guild, "cross")
    arena = sim.add_channel(s.guild, "arena")
    late = sim.add_channel(s.guild, "late")
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} marks", x=cross.text)
        started = [
            await sim.slash(player, channel, "ttt vs-ai", difficulty="random")
            for player, channel in (
                (s.alice, s.channel),
                (s.bob, s.other_channel),
                (s.carol, arena),
            )
        ]
        # Over HTTP a board with a server's emoji is deferred, then shown (see bot.answers).
        moving, ending, idle = [await final_answer(ix) for ix in started]
        for board in (moving, ending, idle):
            assert cross.text in text_of(board)
        edited = 7 if harness.front_door == GATEWAY else 6
        # The boards Discord refuses are those whose buttons show the emoji: a mark played.
        for player, board in ((s.bob, ending), (s.carol, idle)):
            clicked = await sim.click(player, board, cell_id(board, "A1"))
            assert clicked.response_type == edited
            await final_answer(clicked)
        sim.delete_emoji(cross)
        moved = await sim.click(s.alice, moving, cell_id(moving, "A1"))
        ended = await sim.slash(s.moderator, s.other_channel, "ttt end")
        assert await bot.in_flight.wait_idle(patience=5)
        await final_answer(moved)
        await final_answer(ended)
        harness.clock.advance(harness.base_settings.turn_timeout + 1)
        await bot.sweep()
        fresh = await sim.slash(s.alice, late, "ttt vs-ai", difficulty="random")
        # Games 1 to 3 gave up the emoji, and game 4 never took it.
        stored = [await bot.storage.get_game(game_id) for game_id in range(1, 5)]
    assert moved.response_type == edited, (moved.response_type, moved.content)
    assert moved.message is not None
    assert cell_buttons(moved.message)[0].get("emoji") == {"name": "❌"}
    assert "❌ **alice**" in text_of(moved.message)
    assert ended.message is not None
    assert "❌ **bob**" in text_of(ended.message)
    assert "carol** ran out of time" in text_of(idle)
    assert "❌ **carol**" in text_of(idle)
    assert fresh.message is not None
    assert "❌ **alice**" in text_of(fresh.message)
    for game in stored:
        assert game is not None
        assert (game.mark_x, game.mark_o) == (None, None)
    # One refused board a game, and none for the game started after the first refusal.
    refusals = sim.take_violations()
    assert len(refusals) == 3, refusals
    assert all(f"custom emoji {cross.id}" in refusal for refusal in refusals)


async def test_bad_marks_get_a_sentence_and_change_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    elsewhere = sim.add_guild("Elsewhere", owner=s.owner)
    foreign = sim.add_emoji(elsewhere, "foreign")
    async with harness.running() as bot:
        for options, sentence in (
            ({"x": "abc"}, "abc is not one emoji: give one emoji, or one of this server's own."),
            ({"x": "❌⭕"}, "❌⭕ is not one emoji"),
            # Quoted as typed: a zero-width space keeps Discord from drawing it as an emoji.
            ({"o": "<:fake:12>"}, "<\u200b:fake:12> is not one emoji"),
            ({"x": foreign.text}, "That emoji isn't one of this server's"),
            ({"o": "⬜"}, "⬜ already means something on the board: pick another emoji."),
            ({"x": "⭕"}, "X and O need different marks: ⭕ would be both."),
            ({}, "Give a mark for X, for O, or both."),
        ):
            refused(
                await sim.slash(s.owner, s.channel, f"{SETTINGS} marks", options=options),
                sentence,
            )
        assert await bot.storage.guild_settings(s.guild.id) == []


async def test_games_in_threads_of_their_own_archived_once_over(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        saved = shown(await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True))
        assert "Games in threads: On: each game gets a thread of its own" in saved
        # Two games against the bot at once in one channel, each in its own thread.
        first = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        second = await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random", size=5)
        assert await bot.in_flight.wait_idle(patience=5)
        threads = [c for c in s.guild.channels if c.is_thread and c.parent is s.channel]
        alices, bobs = (c for c in threads if c is not s.thread)
        assert alices.name == f"alice vs {sim.bot_user.name} (random)"
        assert bobs.name == f"bob vs {sim.bot_user.name} (random)"
        for pointer, thread, player in ((first, alices, "alice"), (second, bobs, "bob")):
            assert pointer.message is not None
            assert not pointer.ephemeral
            assert f"the game is on in <#{thread.id}>." in text_of(pointer.message)
            assert pointer.message.buttons() == []
            (board,) = sim.messages(thread)
            assert f"**{player}**" in text_of(board)
            assert cell_buttons(board)  # the board is played in the thread
        # Over: the thread is archived; a Rematch there reopens it, in the same thread.
        (board,) = sim.messages(alices)
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert await bot.in_flight.wait_idle(patience=5)
        assert alices.archived
        again = await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="rematch"))
        assert again.message is not None
        assert again.message.channel is alices
        assert not alices.archived
        # An accepted challenge too: its message points at the game's thread.
        challenge = await sim.slash(s.carol, s.other_channel, "ttt start", opponent=s.owner)
        assert challenge.message is not None
        accept = button_id(challenge.message, CHALLENGE_ID, action="accept")
        accepted = await sim.click(s.owner, challenge.message, accept)
        assert accepted.message is not None
        assert await bot.in_flight.wait_idle(patience=5)  # the board is posted after the answer
        (game_thread,) = (c for c in s.guild.channels if c.parent is s.other_channel)
        assert game_thread.name == "carol vs owner"
        assert f"the game is on in <#{game_thread.id}>." in text_of(accepted.message)
        assert accepted.message.buttons() == []
        (board,) = sim.messages(game_thread)
        assert "❌ **carol** vs ⭕ **owner**" in text_of(board)
        # In a thread already, a game is played where it is asked for.
        in_thread = await sim.slash(s.carol, s.thread, "ttt vs-ai", difficulty="random")
        assert in_thread.message is not None
        assert cell_buttons(in_thread.message)
        # A game that runs out of time is over too: its thread is archived by the sweeper.
        assert not bobs.archived
        harness.clock.advance(301)
        await bot.sweep()
        assert "ran out of time" in text_of(sim.messages(bobs)[0])
        assert bobs.archived
        assert game_thread.archived
        assert not s.thread.archived  # not the bot's to close


async def test_without_thread_permissions_the_bot_says_so_and_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    bare = sim.add_guild(
        "No threads", owner=s.owner, bot_permissions=DEFAULT_BOT_PERMISSIONS & ~PERM_THREADS
    )
    bare.everyone.permissions &= ~PERM_THREADS  # the bot has @everyone's too
    sim.add_member(bare, s.alice)
    locked = sim.add_channel(bare, "no-threads")
    async with harness.running() as bot:
        await sim.slash(s.owner, locked, f"{SETTINGS} threads", enabled=True)
        refused(
            await sim.slash(s.alice, locked, "ttt vs-ai", difficulty="random"),
            "This server plays each game in a thread of its own, but I can't open threads "
            "here: I need Create Public Threads and Send Messages in Threads in this channel",
        )
        assert await bot.storage.live_games_of(bare.id, s.alice.id) == 0
        assert [c for c in bare.channels if c.parent is locked] == []
        off = shown(await sim.slash(s.owner, locked, f"{SETTINGS} threads", enabled=False))
        assert "Games in threads: Off" in off
        started = await sim.slash(s.alice, locked, "ttt vs-ai", difficulty="random")
        assert started.message is not None
        assert cell_buttons(started.message)


THREADS_ROUTE = "POST /channels/{channel_id}/threads"
THREAD_FORBIDDEN = (
    "Discord refused to open a thread for this game: I am missing a permission in this "
    "channel (Create Public Threads, and Send Messages in Threads to play there). An admin can "
    "grant it, or turn games in threads off with `/ttt-settings threads`. Nothing has started."
)
THREADS_FULL = (
    "This server has as many active threads as Discord allows (1,000), so I can't open one "
    "for this game. Archiving some threads makes room, or an admin can turn games in threads "
    "off with `/ttt-settings threads`. Nothing has started."
)
THREAD_UNSURE = (
    "The connection to Discord dropped while I was opening this game's thread, so I can't tell "
    "whether it was made. Nothing has started: try again, and I will use that thread if it was."
)


def thread_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What the bot logged about games' threads at WARNING or above: none with a traceback."""
    found = [r for r in caplog.records if r.name == "bot.threads" and r.levelno >= logging.WARNING]
    assert all(record.exc_info is None for record in found)
    assert all(record.levelno == logging.WARNING for record in found)
    return found


async def test_a_thread_discord_refuses_gets_a_sentence_saying_what_to_do(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """A permission Discord finds missing (403, 50013) and a server with as many active
    threads as Discord allows (400, 160006): each a sentence of its own, a warning without a
    traceback, and nothing started."""
    s = sim.seed
    caplog.set_level(logging.INFO)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        sim.faults.add(
            THREADS_ROUTE, status=403, body={"message": "Missing Permissions", "code": 50013}
        )
        refused(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"), THREAD_FORBIDDEN
        )
        (forbidden,) = thread_warnings(caplog)
        assert "a permission is missing" in forbidden.getMessage()
        # The seed's side-thread is active: a server allowed one has no room for another.
        s.guild.max_active_threads = 1
        refused(await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"), THREADS_FULL)
        challenge = await sim.slash(s.carol, s.channel, "ttt start", opponent=s.bob)
        assert challenge.message is not None
        accept = button_id(challenge.message, CHALLENGE_ID, action="accept")
        refused(await sim.click(s.bob, challenge.message, accept), THREADS_FULL)
        assert len(thread_warnings(caplog)) == 3
        assert "as many active threads" in thread_warnings(caplog)[-1].getMessage()
        assert game_threads(sim, s.channel) == []
        assert await bot.storage.live_games_of(s.guild.id, s.alice.id) == 0
        assert await bot.storage.pending_challenge_in_channel(s.channel.id) is not None
        # Once a thread is archived there is room again.
        s.thread.archived = True
        accepted = await sim.click(s.bob, challenge.message, accept)
        assert await bot.in_flight.wait_idle(patience=5)
        (thread,) = game_threads(sim, s.channel)
        assert f"<#{thread.id}>" in text_of(accepted)


async def test_a_thread_made_while_the_connection_dropped_is_found_and_used(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The connection drops after Discord made the thread: the bot finds the empty thread in
    the server's list at once and plays there; when it cannot read the list either, it says
    it cannot tell, and the next thread off that channel looks first: the same game's empty
    thread is used, another one is archived. No empty thread stays open."""
    s = sim.seed
    listing = f"GET /guilds/{s.guild.id}/threads/active"
    caplog.set_level(logging.INFO)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        sim.faults.add(THREADS_ROUTE, reset="after")
        found = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        (alices,) = game_threads(sim, s.channel)
        assert f"the game is on in <#{alices.id}>." in text_of(found)
        (board,) = sim.messages(alices)
        assert cell_buttons(board)
        # The list cannot be read either (aiohttp sends a GET again once by itself).
        sim.faults.add(THREADS_ROUTE, reset="after")
        sim.faults.add(listing, reset="before", count=2)
        refused(await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random"), THREAD_UNSURE)
        assert await bot.storage.live_games_of(s.guild.id, s.bob.id) == 0
        (bobs,) = (thread for thread in game_threads(sim, s.channel) if thread is not alices)
        assert sim.messages(bobs) == []
        # Bob tries again: his empty thread is the one, and no other is opened.
        opened = len([request for request in sim.requests if request.route == THREADS_ROUTE])
        again = await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        assert (
            len([request for request in sim.requests if request.route == THREADS_ROUTE]) == opened
        )
        assert f"the game is on in <#{bobs.id}>." in text_of(again)
        assert cell_buttons(sim.messages(bobs)[0])
        # Carol's thread is left empty the same way; alice's next game, of another name,
        # gets a new thread, and carol's empty one is archived on the way.
        sim.faults.add(THREADS_ROUTE, reset="after")
        sim.faults.add(listing, reset="before", count=2)
        refused(await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="smart"), THREAD_UNSURE)
        (carols,) = (t for t in game_threads(sim, s.channel) if t not in (alices, bobs))
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        assert await bot.in_flight.wait_idle(patience=5)
        assert carols.archived
        assert sim.messages(carols) == []
        for thread in game_threads(sim, s.channel):
            assert thread is carols or cell_buttons(sim.messages(thread)[0])
        assert len(game_threads(sim, s.channel)) == 4
        assert len(thread_warnings(caplog)) == 3


def threads_asked_for(sim: DiscordSim) -> int:
    return len([request for request in sim.requests if request.route == THREADS_ROUTE])


async def thread_lost_to_a_dropped_connection(sim: DiscordSim) -> SimChannel:
    """Bob's /ttt vs-ai: the connection drops after Discord made his thread, and the list of
    threads cannot be read either, so it is left empty, a suspect by its name."""
    s = sim.seed
    sim.faults.add(THREADS_ROUTE, reset="after")
    sim.faults.add(f"GET /guilds/{s.guild.id}/threads/active", reset="before", count=2)
    refused(await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random"), THREAD_UNSURE)
    (bobs,) = game_threads(sim, s.channel)
    assert sim.messages(bobs) == []
    return bobs


async def test_a_lost_thread_is_logged_without_the_players_names(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A thread's name is its players' names, which the bot's logs must not hold (the
    database keeps its digest only): the WARNING about a thread lost to a dropped connection,
    and the one when it cannot be noted to look at again, say where, and name nobody."""
    s = sim.seed
    caplog.set_level(logging.INFO)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        await thread_lost_to_a_dropped_connection(sim)
        database_down_for(monkeypatch, bot.storage, "suspect_thread")
        sim.faults.add(THREADS_ROUTE, reset="after")
        # Bob's lost thread is looked for first, then carol's: neither list can be read.
        sim.faults.add(f"GET /guilds/{s.guild.id}/threads/active", reset="before", count=4)
        await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="random")
        monkeypatch.undo()
        assert await bot.in_flight.wait_idle(patience=5)
    warnings = [record.getMessage() for record in thread_warnings(caplog)]
    assert any("could not note thread" in warning for warning in warnings), warnings
    assert any(f"off channel {s.channel.id}" in warning for warning in warnings), warnings
    logged = [r.getMessage() for r in caplog.records if r.name.startswith(("bot", "discord"))]
    for name in (s.bob.name, s.carol.name):
        assert not [line for line in logged if name in line], name


def database_down_for(
    monkeypatch: pytest.MonkeyPatch, storage: object, operation: str, *about: int
) -> None:
    """``storage.operation`` fails as a database that went away does when its arguments name
    one of ``about`` (or always, ``about`` empty); otherwise it works."""
    works = getattr(storage, operation)

    async def down(*args: Any, **kwargs: Any) -> Any:
        if not about or set(about) & set(args):
            raise DatabaseUnavailableError("the database went away", nothing_written=True)
        return await works(*args, **kwargs)

    monkeypatch.setattr(storage, operation, down)


@pytest.mark.parametrize("failing", ["live_game_in_channel", "claim_thread"])
async def test_threads_to_look_at_outlive_the_database_failing_midway_through_the_search(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """bot.threads' search takes the channel's suspects out of the database before it looks
    at them: the database failing later in the search (whether a thread holds a game, a
    thread's claim) notes again those not looked at. The member gets the usual answer to a
    database that failed, nothing is started, and bob's empty thread is found the next time."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        bobs = await thread_lost_to_a_dropped_connection(sim)
        asked = threads_asked_for(sim)
        database_down_for(monkeypatch, bot.storage, failing, bobs.id)
        refused(await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random"), DATABASE_DOWN)
        monkeypatch.undo()
        assert await bot.in_flight.wait_idle(patience=5)
        assert await bot.storage.live_games_of(s.guild.id, s.bob.id) == 0
        assert await bot.storage.has_thread_suspects(s.channel.id)
        assert game_threads(sim, s.channel) == [bobs]
        assert not bobs.archived
        # Bob tries again: his empty thread is the one, and no other is opened.
        again = await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        assert f"the game is on in <#{bobs.id}>." in text_of(again)
        assert cell_buttons(sim.messages(bobs)[0])
        assert threads_asked_for(sim) == asked
        assert not await bot.storage.has_thread_suspects(s.channel.id)


async def test_a_thread_taken_by_a_search_the_database_then_failed_is_removed(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's and carol's threads are both left empty by dropped connections. Carol's next
    start takes hers (claimed, of her game's name), then the database fails on bob's: hers,
    which no game will fill, is removed at once, and bob's, not looked at, is noted again and
    removed by the next start off the channel."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        bobs = await thread_lost_to_a_dropped_connection(sim)
        sim.faults.add(THREADS_ROUTE, reset="after")
        # Carol's start reads the list twice (bob's thread, then her own): neither works.
        sim.faults.add(f"GET /guilds/{s.guild.id}/threads/active", reset="before", count=4)
        refused(await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="smart"), THREAD_UNSURE)
        (carols,) = (thread for thread in game_threads(sim, s.channel) if thread is not bobs)
        # Discord lists the newest first (the sim too): carol's is looked at, and taken, first.
        database_down_for(monkeypatch, bot.storage, "live_game_in_channel", bobs.id)
        refused(await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="smart"), DATABASE_DOWN)
        monkeypatch.undo()
        assert await bot.in_flight.wait_idle(patience=5)
        assert carols.archived
        assert not bobs.archived
        assert await bot.storage.live_games_of(s.guild.id, s.carol.id) == 0
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        assert bobs.archived
        (alices,) = (t for t in game_threads(sim, s.channel) if t not in (bobs, carols))
        assert f"the game is on in <#{alices.id}>." in text_of(started)
        for thread in (bobs, carols):
            assert sim.messages(thread) == []
        assert not await bot.storage.has_thread_suspects(s.channel.id)


async def test_threads_to_look_at_outlive_the_claims_unread(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claims on the channel's threads cannot be read once the suspects are taken: the
    search gives up and notes them again, the start goes on in a new thread, and the next
    thread off the channel (carol's) finds bob's empty one and removes it."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        bobs = await thread_lost_to_a_dropped_connection(sim)
        database_down_for(monkeypatch, bot.storage, "claimed_threads")
        started = await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random")
        monkeypatch.undo()
        assert await bot.in_flight.wait_idle(patience=5)
        (new,) = (thread for thread in game_threads(sim, s.channel) if thread is not bobs)
        assert f"the game is on in <#{new.id}>." in text_of(started)
        assert await bot.storage.has_thread_suspects(s.channel.id)
        await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        assert bobs.archived
        assert sim.messages(bobs) == []
        assert not await bot.storage.has_thread_suspects(s.channel.id)


async def test_threads_that_cannot_be_noted_again_are_a_warning(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The database fails midway through the search, and again when the suspects not looked
    at are noted again: one WARNING says so, no traceback, and the member's answer is the
    database's first failure's."""
    s = sim.seed
    caplog.set_level(logging.INFO)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        bobs = await thread_lost_to_a_dropped_connection(sim)
        warned = len(thread_warnings(caplog))
        database_down_for(monkeypatch, bot.storage, "claim_thread", bobs.id)
        database_down_for(monkeypatch, bot.storage, "suspect_thread")
        refused(await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="random"), DATABASE_DOWN)
        monkeypatch.undo()
        assert await bot.in_flight.wait_idle(patience=5)
        (warning,) = thread_warnings(caplog)[warned:]
        assert warning.getMessage().startswith(
            f"could not note the threads off channel {s.channel.id} to look at again (1 of them)"
        )
        assert await bot.storage.live_games_of(s.guild.id, s.bob.id) == 0


async def test_a_thread_whose_game_may_have_been_stored_is_looked_at_before_the_next(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database fails on a game's insert after its thread was opened: the member gets the
    apology, and the thread, which may hold a game for all the bot can tell, stays until the
    next thread off that channel: holding none, it is taken for that game (of its name)."""
    s = sim.seed
    async with harness.running(expect_errors=True) as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)

        async def broken(game: NewGame, *, live_limit: int | None = None) -> GameRecord:
            raise OSError("the database went away")

        monkeypatch.setattr(bot.storage, "create_game", broken)
        failed = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert "Sorry, something went wrong on my side" in (failed.content or "")
        (thread,) = game_threads(sim, s.channel)
        assert sim.messages(thread) == []
        assert not thread.archived
        monkeypatch.undo()
        again = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        assert game_threads(sim, s.channel) == [thread]
        assert f"the game is on in <#{thread.id}>." in text_of(again)
        (board,) = sim.messages(thread)
        assert cell_buttons(board)


async def test_a_thread_whose_game_the_database_refused_is_removed(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game started elsewhere (another process) between the thread's opening and the
    game's insert takes the member to the limit: the database refuses the game, and its
    thread, empty, is archived; where the bot may manage threads it is deleted."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=1)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} threads", enabled=True)
        create = bot.storage.create_game
        elsewhere = NewGame(
            guild_id=s.guild.id,
            channel_id=s.other_channel.id,
            x_id=s.alice.id,
            o_id=sim.bot_user.id,
            x_name="alice",
            o_name="tttbot (random)",
            ai_difficulty="random",
            ai_mark=Mark.O,
            deadline=harness.clock.now() + 300,
            created_at=harness.clock.now(),
        )

        async def another_process_first(
            game: NewGame, *, live_limit: int | None = None
        ) -> GameRecord:
            await create(elsewhere)
            return await create(game, live_limit=live_limit)

        for manages_threads in (False, True):
            if manages_threads:
                s.guild.everyone.permissions |= PERM_MANAGE_THREADS
            monkeypatch.setattr(bot.storage, "create_game", another_process_first)
            refused(
                await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random"),
                LIMIT_REACHED,
            )
            monkeypatch.undo()
            assert await bot.in_flight.wait_idle(patience=5)
            assert await bot.storage.live_games_of(s.guild.id, s.alice.id) == 1
            await sim.slash(s.alice, s.other_channel, "ttt resign")
        # Both games' threads were opened; the first is archived, empty; the second deleted.
        opened = [r for r in sim.requests if r.route == THREADS_ROUTE and r.status == 201]
        deleted = [r for r in sim.requests if r.route == "DELETE /channels/{channel_id}"]
        first, second = (int(request.body["id"]) for request in opened)
        (archived,) = game_threads(sim, s.channel)
        assert archived.id == first
        assert archived.archived
        assert sim.messages(archived) == []
        assert [(r.path, r.status) for r in deleted] == [(f"/channels/{second}", 200)]


async def test_durations_are_offered_and_read_back_in_words_as_they_are_typed(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    command = f"{SETTINGS} timeouts"
    async with harness.running():
        empty = await sim.autocomplete(s.owner, s.channel, command, focused="turn", turn="")
        typed = await sim.autocomplete(s.owner, s.channel, command, focused="turn", turn="90")
        five = await sim.autocomplete(
            s.owner, s.channel, command, focused="challenge", challenge="5"
        )
        junk = await sim.autocomplete(s.owner, s.channel, command, focused="turn", turn="soon")
        none = await sim.autocomplete(
            s.owner, s.channel, f"{SETTINGS} limits", focused="cooldown", cooldown=""
        )
    assert [choice["value"] for choice in empty][:4] == ["30s", "1m", "2m", "5m"]
    assert {"name": "7d: 7 days", "value": "7d"} in empty
    assert typed == [{"name": "90: 1 minute and 30 seconds", "value": "90"}]
    assert five == [
        {"name": "5: 5 seconds", "value": "5"},
        {"name": "5m: 5 minutes", "value": "5m"},
    ]
    assert junk == []
    assert none[0] == {"name": "0: None", "value": "0"}


async def test_an_admin_types_durations_in_their_own_language(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    s.owner.locale = "fr"
    command = f"{SETTINGS} timeouts"
    async with harness.running():
        day = await sim.autocomplete(s.owner, s.channel, command, focused="turn", turn="1j")
        saved = await sim.slash(s.owner, s.channel, command, turn="1h30", challenge="10 min")
    # French puts a no-break space between a number and its unit (Babel, from CLDR).
    assert day == [{"name": "1j: 1\N{NO-BREAK SPACE}jour", "value": "1j"}]
    text = shown(saved).replace("\N{NO-BREAK SPACE}", " ")
    assert "1 heure et 30 minutes" in text, text
    assert "10 minutes" in text, text


async def test_limits_whose_second_setting_the_database_failed_do_not_say_nothing_was_done(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two settings changed by one command are stored one after the other: a database
    failing at the second, the first saved, must not answer that nothing was done."""
    s = sim.seed
    async with harness.running() as bot:
        real = bot.storage.change_guild_setting

        async def second_fails(guild_id: int, setting: StoredSetting) -> None:
            if setting.key == "cooldown":
                raise DatabaseUnavailableError("connection refused", nothing_written=True)
            await real(guild_id, setting)

        monkeypatch.setattr(bot.storage, "change_guild_setting", second_fails)
        failed = await sim.slash(s.owner, s.channel, f"{SETTINGS} limits", games=2, cooldown="2m")
        monkeypatch.undo()
        shown = await sim.slash(s.owner, s.channel, f"{SETTINGS} show")
    refused(failed, SETTINGS_MAYBE_SAVED.split(":")[0])
    assert "Live games a member can be in at once: 2 games" in text_of(shown), text_of(shown)


def members_asked(sim: DiscordSim) -> int:
    """How many members the bot asked Discord about (``GET /guilds/{g}/members/{u}``)."""
    return sum(1 for call in sim.requests if call.route == MEMBER_ROUTE)


MEMBER_ROUTE = "GET /guilds/{guild_id}/members/{user_id}"


def players_role(sim: DiscordSim, *members: SimUser) -> SimRole:
    """A new role of the seed's server, "players", given to ``members``."""
    role = sim.add_role(sim.seed.guild, "players")
    for user in members:
        member = sim.seed.guild.member(user)
        assert member is not None
        member.roles.append(role)
    return role


async def test_a_rematch_needs_a_players_role_of_the_opponent_too(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The member clicking Rematch shows their roles; their opponent's are asked of Discord,
    and only where the server has player roles. An opponent without one (their game started
    before the roles were set, or they lost it) or who left the server is named and not
    pulled into a new game."""
    s = sim.seed
    players = sim.add_role(s.guild, "players")
    async with harness.running() as bot:
        board = await start_member_game(sim)
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        again = await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="rematch"))
        assert again.message is not None, again.content
        assert members_asked(sim) == 0  # no roles set: nobody asked about
        board = again.message
        await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert await bot.in_flight.wait_idle(patience=5)
        await sim.slash(s.owner, s.channel, f"{SETTINGS} players add", role=players)
        s.guild.member(s.alice).roles.append(players)  # type: ignore[union-attr]
        rematch = button_id(board, GAME_ACTION_ID, action="rematch")
        lacking = (
            f"bob can't play here: games in this server are for members with <@&{players.id}>."
        )
        refused(await sim.click(s.alice, board, rematch), lacking)
        # The member clicking shows their own roles: bob is told he needs one.
        refused(
            await sim.click(s.bob, board, rematch),
            f"Games in this server are for members with <@&{players.id}>: ask a moderator",
        )
        assert await bot.storage.live_game_in_channel(s.channel.id) is None
        # Bob was given the role, and left the server.
        s.guild.member(s.bob).roles.append(players)  # type: ignore[union-attr]
        sim.remove_member(s.guild, s.bob)
        refused(await sim.click(s.alice, board, rematch), lacking)
        assert await bot.storage.live_game_in_channel(s.channel.id) is None
        # Back, still without it; then with it.
        sim.add_member(s.guild, s.bob)
        refused(await sim.click(s.alice, board, rematch), lacking)
        s.guild.member(s.bob).roles.append(players)  # type: ignore[union-attr]
        asked = members_asked(sim)
        started = await sim.click(s.alice, board, rematch)
        assert started.message is not None, started.content
        assert members_asked(sim) == asked + 1
        assert "bob" in text_of(started.message)


async def test_a_rematch_whose_opponent_discord_cannot_say_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Discord failing to say what roles the opponent has is no licence to play: the member is
    told so, and nothing starts."""
    s = sim.seed
    players = players_role(sim, s.alice, s.bob)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} players add", role=players)
        board = await start_member_game(sim)
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert await bot.in_flight.wait_idle(patience=5)
        sim.faults.add(MEMBER_ROUTE, status=403)
        refused(
            await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="rematch")),
            "Discord didn't say whether alice may play here, so nothing was done: try again "
            "in a moment.",
        )
        assert await bot.storage.live_game_in_channel(s.channel.id) is None


async def test_an_accept_needs_the_challengers_players_role_still(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The challenger may have lost the role, or left the server, since challenging: the
    accept names them and starts nothing, and the challenge stays open."""
    s = sim.seed
    players = players_role(sim, s.alice, s.carol)
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, f"{SETTINGS} players add", role=players)
        challenge = await sim.slash(s.alice, s.channel, "ttt start")
        assert challenge.message is not None, challenge.content
        accept = button_id(challenge.message, CHALLENGE_ID, action="accept")
        s.guild.member(s.alice).roles.remove(players)  # type: ignore[union-attr]
        lacking = (
            f"alice can't play here: games in this server are for members with <@&{players.id}>."
        )
        refused(await sim.click(s.carol, challenge.message, accept), lacking)
        sim.remove_member(s.guild, s.alice)
        refused(await sim.click(s.carol, challenge.message, accept), lacking)
        assert await bot.storage.live_game_in_channel(s.channel.id) is None
        sim.add_member(s.guild, s.alice, roles=[players])
        board = await sim.click(s.carol, challenge.message, accept)
        assert board.message is not None, board.content
        assert await bot.storage.live_game_in_channel(s.channel.id) is not None


async def test_a_challenge_whose_channel_left_the_list_is_not_accepted_a_rematch_stays(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """An accepted challenge is a game starting now, so the list of channels holds it as it
    holds /ttt start; a rematch stays where its game was, whatever the list says."""
    s = sim.seed
    arena = sim.add_channel(s.guild, "arena")
    async with harness.running() as bot:
        for channel in (s.channel, s.other_channel, arena):
            await sim.slash(s.owner, s.channel, f"{SETTINGS} channels add", channel=channel)
        board = await start_member_game(sim, arena)
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        challenge = await sim.slash(s.carol, s.other_channel, "ttt start")
        assert challenge.message is not None, challenge.content
        for channel in (s.other_channel, arena):
            await sim.slash(s.owner, s.channel, f"{SETTINGS} channels remove", channel=channel)
        accept = button_id(challenge.message, CHALLENGE_ID, action="accept")
        refused(
            await sim.click(s.bob, challenge.message, accept),
            f"Games aren't played in this channel: this server plays them in <#{s.channel.id}>.",
        )
        assert await bot.storage.live_game_in_channel(s.other_channel.id) is None
        assert await bot.storage.pending_challenge_in_channel(s.other_channel.id) is not None
        again = await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="rematch"))
        assert again.message is not None, again.content
        assert await bot.storage.live_game_in_channel(arena.id) is not None
        # A game going on off the list is played to its end: only starts are held.
        played = await sim.slash(s.bob, arena, "ttt move", cell="B2")
        assert played.message is not None, played.content
        assert not played.ephemeral, played.content
