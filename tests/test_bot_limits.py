"""Every message at its largest, against Discord's limits: members' names at their longest (32
characters, each one Discord's markdown or mention escaping doubles), the longest languages,
the largest boards, a server's own emoji as marks, and the most of everything (a tournament at
its player cap, a member's data with many names, the longest ultimate game's review...). The
sim refuses whatever Discord would (tests/discord_sim/limits.py), so a test here fails on a
message too long; each also checks that what is cut says so, and that nothing a member needs
is cut."""

from __future__ import annotations

import itertools

import pytest

from bot import i18n
from bot.components import TOURNAMENT_ID
from bot.domain import Actor
from bot.render.parts import escape
from bot.tournaments.service import MOST_PLAYERS, NAME_LONGEST
from tests.bot_harness import BotHarness, both_front_doors, button_id, text_of
from tests.discord_sim import DiscordSim, SimUser

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
