"""Every message at its largest, against Discord's limits: members' names at their longest (32
characters, each one Discord's markdown or mention escaping doubles), the longest languages,
the largest boards, a server's own emoji as marks, and the most of everything (a tournament at
its player cap, a member's data with many names, the longest ultimate game's review...). The
sim refuses whatever Discord would (tests/discord_sim/limits.py), so a test here fails on a
message too long; each also checks that what is cut says so, and that nothing a member needs
is cut."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable
from typing import Any

import discord
import pytest

from bot import i18n, render
from bot.components import CHALLENGE_ID, TOURNAMENT_ID
from bot.domain import Actor
from bot.render.parts import EMBED_DESCRIPTION_LIMIT, escape
from bot.server_settings import MAX_LISTED
from bot.storage.base import NewGame
from bot.tournaments.service import MOST_PLAYERS, NAME_LONGEST
from game import cell_name
from game.ultimate import UltimateBoard
from game.ultimate_review import BLUNDER_POINTS, UltimateMoveReview
from game.variants import ULTIMATE_SIZE
from tests.bot_harness import (
    BotHarness,
    both_front_doors,
    button_id,
    cell_id,
    final_answer,
    text_of,
)
from tests.discord_sim import DiscordSim, SimMessage, SimUser

# Discord's longest display name, username and nickname.
NAME_LENGTH = 32
# The language whose messages are longest in all (bot/locales: about a fifth longer than
# English), and the one longest in a few.
LONGEST_LANGUAGES = ("de", "fr")


def longest_name(number: int) -> str:
    """A member's name of :data:`NAME_LENGTH` characters, each of which is markdown that the
    bot escapes (doubling it when shown), made unique by ``number``."""
    return f"{number:04}{'_*~`|' * NAME_LENGTH}"[:NAME_LENGTH]


def longest_members(sim: DiscordSim, count: int) -> list[SimUser]:
    """``count`` new members of the seed's server with their username, global name and
    nickname at their longest."""
    members = []
    for number in range(count):
        name = longest_name(number)
        user = sim.add_user(name, global_name=name)
        sim.add_member(sim.seed.guild, user, nick=name)
        members.append(user)
    return members


def test_the_longest_name_is_twice_as_long_once_escaped() -> None:
    name = longest_name(7)
    assert len(name) == NAME_LENGTH
    assert len(escape(name)) == 2 * NAME_LENGTH - 4  # all but its four digits


@both_front_doors
@pytest.mark.parametrize("code", LONGEST_LANGUAGES)
async def test_a_tournament_at_its_player_cap_lists_the_players_that_fit_and_counts_the_rest(
    sim: DiscordSim, harness: BotHarness, code: str
) -> None:
    """256 players of the longest names hold some 16,000 characters: the announcement lists
    the first who joined, as many as fit its 4,000, and how many more there are (where it
    showed no one at all once the list passed that, only "…")."""
    s = sim.seed
    s.guild.locale = code
    lang = i18n.language(code)
    players = longest_members(sim, MOST_PLAYERS)
    async with harness.running() as bot:
        created = await sim.slash(
            s.owner,
            s.channel,
            "ttt tournament create",
            name="\N{FULLWIDTH LATIN CAPITAL LETTER W}" * NAME_LONGEST,
            players=MOST_PLAYERS,
        )
        announcement = created.message
        assert announcement is not None
        tournament = await bot.tournaments.here(s.guild.id, s.channel.id)
        for user in players[:-1]:  # joined without a click each: the last click shows them all
            member = Actor(id=user.id, name=longest_name(players.index(user)))
            await bot.tournaments.join(tournament.id, s.guild.id, member)
        last = players[-1]
        await sim.click(last, announcement, button_id(announcement, TOURNAMENT_ID, action="join"))
        text = text_of(announcement)
    assert lang._("Players ({count} of {most}):", count=MOST_PLAYERS, most=MOST_PLAYERS) in text
    first = f"**{escape(longest_name(0))}**"
    names_lines = [line for line in text.splitlines() if line.startswith(first)]
    assert len(names_lines) == 1, text
    names_line = names_lines[0]
    shown = list(itertools.takewhile(lambda part: part.startswith("**"), names_line.split(", ")))
    assert shown == [f"**{escape(longest_name(n))}**" for n in range(len(shown))]
    left = MOST_PLAYERS - len(shown)
    assert names_line.endswith(", " + lang.n_("and {count} more", "and {count} more", left))
    assert len(shown) >= 45  # as many as fit: each of these names is some 70 characters shown


def long_ultimate_game() -> tuple[int, ...]:
    """A seeded ultimate game of random moves that avoids ending it: 70 moves or more."""
    board = UltimateBoard()
    rng = random.Random(2)
    while True:
        going_on = [cell for cell in board.legal_moves if not board.play(cell).is_over]
        if not going_on:
            return board.moves
        board = board.play(rng.choice(going_on))


def every_move_a_blunder(moves: tuple[int, ...]) -> tuple[UltimateMoveReview, ...]:
    """A review of ``moves`` in which the search found every move a blunder (but one that was
    the only move), with a better move and the opponent's answer: the longest review a game of
    them can have."""
    reviews = []
    board = UltimateBoard()
    for cell in moves:
        after = board.play(cell)
        others = [other for other in board.legal_moves if other != cell]
        if others:
            judged = UltimateMoveReview(
                board, cell, 0, -BLUNDER_POINTS, better=others[0], reply=after.legal_moves[0]
            )
        else:  # the only move: good
            judged = UltimateMoveReview(board, cell, 0, 0)
        reviews.append(judged)
        board = after
    return tuple(reviews)


@both_front_doors
async def test_the_review_of_the_longest_ultimate_game_fits_whatever_the_names_and_marks(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ultimate review lists the moves that were not good up to a room of its own; it
    left the first lines out of that room, and those grow with the players' names and their
    server's emoji (each shown twice: who played, who resigned): in French, some 4,300
    characters, which Discord refuses in an embed's description (4,096). The moves now fill
    what the first lines leave."""
    s = sim.seed
    code = "fr"
    lang = i18n.language(code)
    x, o = longest_members(sim, 2)
    x.locale = code
    cross = sim.add_emoji(s.guild, "x" * NAME_LENGTH, animated=True)
    nought = sim.add_emoji(s.guild, "o" * NAME_LENGTH, animated=True)
    marks = {"x": f"<a:{cross.name}:{cross.id}>", "o": f"<a:{nought.name}:{nought.id}>"}
    moves = long_ultimate_game()
    assert len(moves) >= 70
    searched = every_move_a_blunder(moves)

    async def review_searched(work: Callable[..., object], *args: object) -> object:
        assert args == (moves,)  # the review's search is the only one of this test
        return searched

    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, "ttt-settings marks", options=marks)
        await start_ultimate_game(sim, x, o)
        await play_typed(sim, (x, o), moves)
        await sim.slash(x if len(moves) % 2 == 0 else o, s.channel, "ttt resign")
        monkeypatch.setattr(bot.service.engine_workers, "run", review_searched)
        asked = await sim.slash(x, s.channel, "ttt review")
        review = await final_answer(asked)
    assert review.ephemeral
    (embed,) = review.embeds
    description = embed["description"]
    assert len(description) <= EMBED_DESCRIPTION_LIMIT
    players = lang._(
        "{x} (X) vs {o} (O), {size}",
        x=f"{marks['x']} **{escape(longest_name(0))}**",
        o=f"{marks['o']} **{escape(longest_name(1))}**",
        size=render.size_label(ULTIMATE_SIZE, lang),
    )
    assert description.startswith(players + "\n")
    sentences = [line for line in description.splitlines() if re.match(r"[0-9]+\. [XO] ", line)]
    notable = [move for move in searched if move.better is not None]
    assert sentences == [render.ultimate_move_sentence(m, lang) for m in notable[: len(sentences)]]
    left = len(notable) - len(sentences)
    assert left > 0
    assert description.endswith("\n" + lang._("… and {count} more.", count=left))


async def start_ultimate_game(sim: DiscordSim, x: SimUser, o: SimUser) -> SimMessage:
    """``x`` challenges ``o`` to ultimate in the seed's channel, and ``o`` accepts."""
    challenge = await sim.slash(x, sim.seed.channel, "ttt start", opponent=o, size=ULTIMATE_SIZE)
    message = challenge.message
    assert message is not None
    await sim.click(o, message, button_id(message, CHALLENGE_ID, action="accept"))
    return message


async def play_typed(
    sim: DiscordSim, players: tuple[SimUser, SimUser], moves: tuple[int, ...]
) -> None:
    """``moves`` played by ``/ttt move``, X first."""
    for number, cell in enumerate(moves):
        played = await sim.slash(
            players[number % 2], sim.seed.channel, "ttt move", cell=cell_name(cell, ULTIMATE_SIZE)
        )
        assert not played.ephemeral, played.content


@both_front_doors
@pytest.mark.parametrize("code", LONGEST_LANGUAGES)
async def test_my_data_names_the_first_of_many_names_and_counts_the_rest(
    sim: DiscordSim, harness: BotHarness, code: str
) -> None:
    """A member who played under 80 names of the longest (renamed often): ``/ttt my-data``
    lists the first of them and how many more, and its other lines after them (where the line
    of names, some 5,600 characters, was left out whole, the lines after it with it)."""
    s = sim.seed
    lang = i18n.language(code)
    s.alice.locale = code
    names = [longest_name(number) for number in range(80)]
    async with harness.running() as bot:
        for number, name in enumerate(names):
            await bot.storage.create_game(
                NewGame(
                    guild_id=s.guild.id,
                    channel_id=10_000 + number,  # a game a channel
                    x_id=s.alice.id,
                    o_id=s.bob.id,
                    x_name=name,
                    o_name="bob",
                    deadline=harness.clock.now() + 300,
                    created_at=harness.clock.now(),
                )
            )
        asked = await sim.slash(s.alice, s.channel, "ttt my-data")
    assert asked.ephemeral
    (embed,) = asked.embeds
    description = embed["description"]
    assert lang.n_("{count} challenge stored.", "{count} challenges stored.", 0) in description
    (listed,) = [line for line in description.splitlines() if escape(names[0]) in line]
    shown = [f"**{escape(name)}**" for name in names]
    kept = list(itertools.takewhile(lambda name: name in listed, shown))
    assert len(kept) >= 10
    left = lang.n_("and {count} more name", "and {count} more names", len(shown) - len(kept))
    assert listed.endswith(", ".join([*kept, left]))


@both_front_doors
@pytest.mark.parametrize("code", LONGEST_LANGUAGES)
async def test_the_settings_and_a_5x5_game_at_their_largest_are_within_discords_limits(
    sim: DiscordSim, harness: BotHarness, code: str
) -> None:
    """Every setting set by the member of the longest name, 25 channels and 25 roles listed
    (the most a server may list), animated emoji of the longest names as marks, in the longest
    languages: the settings summary; then a 5x5 challenge between two members of the longest
    names, its board after each of their moves and its end by a resignation, all taken by the
    sim, which refuses what Discord would."""
    s = sim.seed
    s.guild.locale = code
    admin = longest_members(sim, 3)[2]
    x, o = longest_members(sim, 2)
    sim.add_member(s.guild, admin, permissions=discord.Permissions(manage_guild=True))
    cross = sim.add_emoji(s.guild, "x" * NAME_LENGTH, animated=True)
    nought = sim.add_emoji(s.guild, "o" * NAME_LENGTH, animated=True)
    channels = [s.channel, *(sim.add_channel(s.guild, f"c{n}") for n in range(MAX_LISTED - 1))]
    roles = [sim.add_role(s.guild, f"r{n}") for n in range(MAX_LISTED)]
    for user in (x, o):
        sim.add_member(s.guild, user, roles=roles[:1])
    changes: list[tuple[str, dict[str, Any]]] = [
        *(("channels add", {"channel": channel}) for channel in channels),
        *(("players add", {"role": role}) for role in roles),
        ("moderators", {"role": roles[0]}),
        ("timeouts", {"turn": "6d23h59m59s", "challenge": "6d23h59m59s"}),
        ("language", {"language": code}),
        ("limits", {"games": 99, "cooldown": "23h59m59s"}),
        ("board-size", {"size": 5}),
        ("marks", {"x": f"<a:{cross.name}:{cross.id}>", "o": f"<a:{nought.name}:{nought.id}>"}),
        ("threads", {"enabled": False}),
        ("seasons", {"length": "monthly"}),
        ("announcements", {"channel": channels[-1]}),
    ]
    async with harness.running() as bot:
        for command, options in changes:
            changed = await sim.slash(admin, s.channel, f"ttt-settings {command}", options=options)
            assert changed.response_type == 4, changed.content
        summary = await sim.slash(admin, s.channel, "ttt-settings show")
        (embed,) = summary.embeds
        assert len(embed["fields"]) == 13
        assert all(f"<#{channel.id}>" in text_of(summary) for channel in channels)
        assert all(f"<@&{role.id}>" in text_of(summary) for role in roles)
        challenge = await sim.slash(x, s.channel, "ttt start", opponent=o)
        board = challenge.message
        assert board is not None
        accepted = await sim.click(o, board, button_id(board, CHALLENGE_ID, action="accept"))
        # Over HTTP, a board of a server's emoji is deferred and drawn through the webhook.
        assert accepted.response_type in (6, 7), accepted.content
        assert await bot.in_flight.wait_idle(patience=5)
        for player, cell in zip(itertools.cycle((x, o)), ("A1", "B1", "A2", "B2"), strict=False):
            await sim.click(player, board, cell_id(board, cell))
            assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.size == 5
        await sim.slash(x, s.channel, "ttt resign")
    assert f"**{escape(longest_name(0))}**" in text_of(board)
    assert not board.buttons() or all(b.get("disabled") for b in board.buttons()[:25])
