"""Each language as its speakers meet it, end to end: a server and its members all on one
Discord language play a challenge to its end, a rematch lost on time, a game against the bot,
a challenge that expires, ask for help, stats and a review, and are refused; every text of
every message the channel saw (each version of it, private ones included, button labels
too) is then read for English words. English itself is read the same way, and must show
them: the check can fail."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from bot.client import TTTBot
from bot.components import CHALLENGE_ID, GAME_ACTION_ID
from tests.bot_harness import (
    BotHarness,
    both_front_doors,
    button_id,
    cell_id,
    is_live,
    recorded_post,
    start_member_game,
)
from tests.discord_sim import DiscordSim, SimMessage
from tests.discord_sim.models import JSON, walk_components

# Words that only English among the bot's languages uses, that its sentences cannot do without
# ("a", "in", "was", "will" are words of some other language here, and stay out).
ENGLISH_WORDS = frozenset(
    {
        *("the", "you", "your", "and", "with", "this", "that", "is", "are", "not"),
        *("can't", "isn't", "don't", "didn't", "won't", "nobody", "anyone", "against"),
        *("game", "board", "move", "turn", "wins", "won", "draw", "player", "players"),
        *("challenge", "accept", "decline", "rematch", "review", "resign", "time", "cell"),
    }
)
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
# What is the same in every language: code (`/ttt`), mentions and custom emoji, the names of
# the members and the bot's levels (`minimax`).
VERBATIM = re.compile(r"`[^`]*`|<[^>]*>")
NAMES = frozenset({"alice", "bob", "carol", "tttbot", "random", "casual", "smart", "minimax"})
LOCALES = ["de", "es-ES", "es-419", "fr", "ja", "pt-BR"]
# Past a turn's clock (five minutes) and a challenge's (two).
PAST_EVERY_DEADLINE = 301


def english_in(text: str) -> set[str]:
    """The English words of ``text``, code, mentions and names left out."""
    words = {word.lower() for word in WORD.findall(VERBATIM.sub(" ", text))}
    return (words - NAMES) & ENGLISH_WORDS


def texts_of(content: str, embeds: list[JSON], components: list[JSON]) -> Iterator[str]:
    """Everything a person reads on one version of a message: its content, embeds, text
    displays, buttons' labels and selects' placeholders and options."""
    yield content
    for embed in embeds:
        yield embed.get("title", "")
        yield embed.get("description", "")
        for field in embed.get("fields", []):
            yield field.get("name", "")
            yield field.get("value", "")
        yield (embed.get("footer") or {}).get("text", "")
    for component in walk_components(components):
        for key in ("content", "label", "placeholder"):
            if isinstance(component.get(key), str):
                yield component[key]
        for option in component.get("options") or []:
            yield option.get("label", "")
            yield option.get("description", "")


def everything_read(message: SimMessage) -> Iterator[str]:
    """Every version of ``message``, the current one last."""
    for version in message.edits:
        yield from texts_of(version.content, version.embeds, version.components)
    yield from texts_of(message.content, message.embeds or [], message.components)


async def play_every_flow(sim: DiscordSim, harness: BotHarness, bot: TTTBot) -> list[str]:
    """A channel's life in one language; what the members were told outside its messages
    (autocomplete choices). Each step asserts it happened, so that a step that silently did
    nothing cannot pass for a translated one."""
    s = sim.seed
    told: list[str] = []
    await sim.slash(s.alice, s.channel, "ttt help")
    # A challenge accepted and won (column A), then reviewed by its loser.
    board = await start_member_game(sim)
    for player, cell in [
        (s.alice, "A1"),
        (s.bob, "B1"),
        (s.alice, "A2"),
        (s.bob, "B2"),
        (s.alice, "A3"),
    ]:
        clicked = await sim.click(player, board, cell_id(board, cell))
        assert clicked.message is not None, clicked.content
        board = clicked.message
    assert not is_live(board)
    await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="review"))
    # Refusals: a move with no game, a rematch by someone who did not play.
    no_game = await sim.slash(s.alice, s.channel, "ttt move", cell="B2")
    assert no_game.ephemeral
    stranger = await sim.click(s.carol, board, button_id(board, GAME_ACTION_ID, action="rematch"))
    assert stranger.ephemeral
    # The rematch, lost on time.
    rematch = await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="rematch"))
    assert rematch.message is not None, rematch.content
    assert await bot.in_flight.wait_idle(patience=5)
    watching = await sim.click(s.carol, rematch.message, cell_id(rematch.message, "B2"))
    assert watching.ephemeral
    for cell in ("Z9", "E5"):  # no cell; a cell of a larger board
        refused = await sim.slash(s.bob, s.channel, "ttt move", cell=cell)
        assert refused.ephemeral
    harness.clock.advance(PAST_EVERY_DEADLINE)
    await bot.sweep()
    assert not is_live(sim.message(rematch.message.id))
    # A challenge nobody accepts.
    challenge = await recorded_post(sim, bot, "ttt start")
    assert button_id(challenge, CHALLENGE_ID, action="accept")
    harness.clock.advance(PAST_EVERY_DEADLINE)
    await bot.sweep()
    assert sim.message(challenge.id).buttons() == []
    # The bot, a hint, stats and the leaderboard.
    vs_ai = await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="minimax")
    assert vs_ai.message is not None, vs_ai.content
    assert not vs_ai.ephemeral
    await sim.slash(s.carol, s.channel, "ttt hint")
    choices = await sim.autocomplete(s.carol, s.channel, "ttt move", focused="cell", cell="")
    told += [choice["name"] for choice in choices]
    await sim.slash(s.carol, s.channel, "ttt resign")
    await sim.slash(s.alice, s.channel, "ttt stats")
    await sim.slash(s.alice, s.channel, "ttt leaderboard")
    assert await bot.in_flight.wait_idle(patience=5)
    return told


def speak(sim: DiscordSim, locale: str) -> None:
    """The server and each of its members on ``locale``."""
    s = sim.seed
    s.guild.locale = locale
    for user in (s.owner, s.alice, s.bob, s.carol, s.moderator):
        user.locale = locale


def english_read(sim: DiscordSim, told: list[str]) -> dict[str, set[str]]:
    """Each text that shows English words, with them."""
    found = {}
    for message in sim.messages(sim.seed.channel):
        for text in [*everything_read(message), *told]:
            if english := english_in(text):
                found[text] = english
    return found


@both_front_doors
@pytest.mark.parametrize("locale", LOCALES)
async def test_every_flow_reads_in_the_channels_language_without_english(
    sim: DiscordSim, harness: BotHarness, locale: str
) -> None:
    speak(sim, locale)
    async with harness.running() as bot:
        told = await play_every_flow(sim, harness, bot)
    assert english_read(sim, told) == {}


@both_front_doors
async def test_the_same_flows_in_english_are_found_english(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The check above reads English where there is some: every step of it."""
    speak(sim, "en-GB")
    async with harness.running() as bot:
        told = await play_every_flow(sim, harness, bot)
    found = english_read(sim, told)
    assert len(found) > 20
    words = set().union(*found.values())
    assert {"you", "the", "wins", "challenge", "time"} <= words
