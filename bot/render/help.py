"""How to play: ``/ttt help``'s message, with each level's one line."""

from __future__ import annotations

import discord

from bot.domain import size_name
from bot.i18n import N_, Language
from bot.render.parts import Message, size_label
from game import DEFAULT_SIZE
from game.ai import DIFFICULTIES, describe
from game.variants import GAME_SIZES


def level_description(name: str, lang: Language) -> str:
    """A level's one line (the engine's, extracted with Babel from ``game/ai.py``)."""
    return lang.gettext(describe(name))


HELP_TEXT = N_("""\
**Play a member:** `/ttt start opponent:@someone` (or leave `opponent` out: anyone can accept). \
The challenger plays ❌ and moves first.
**Play the bot:** `/ttt vs-ai difficulty:casual first:me`, at one of these levels, \
weakest first:
{levels}
**Board sizes:** add `size:4` or `size:5` to either: {sizes}; {default} if you leave it out. \
Each size has its own stats and leaderboard.
**Move:** click a cell, or `/ttt move cell:B2` (letter = column, number = row; numbers count \
the cells row by row from 1: `1`-`9` on 3\N{MULTIPLICATION SIGN}3, `1`-`16` on \
4\N{MULTIPLICATION SIGN}4, `1`-`25` on 5\N{MULTIPLICATION SIGN}5).
**Hint:** `/ttt hint` shows you alone the best move in a game against me; the game then \
counts in no stats.
**Review:** the **Review** button on a finished board, or `/ttt review [game]` (the number on \
its board; the channel's last game if you leave it out), goes through a game move by move, \
for you alone: which moves kept the result, which missed a win, which threw the game away.
**Other commands:** `/ttt board` shows the board again, `/ttt resign`, \
`/ttt stats [member] [size]`, `/ttt leaderboard [size] [season]`, and `/ttt end` for \
moderators (counts for nobody).
One game per channel; a player who doesn't move in time loses the game.""")


HELP_ULTIMATE = N_("""\
**Ultimate:** `size:ultimate` plays on nine small boards. Where you play in a small board sends \
your opponent to the small board in the same place of the big one; three in a row win a small \
board, three small boards in a row win the game. When you may play in any open board, click \
the board first, then the cell; `/ttt move` takes the cells A1 to I9.""")
HELP_PRACTICE = N_("""\
**Puzzles:** `/ttt puzzle today` is the day's puzzle, the same for everyone, answered with \
its buttons for you alone; `/ttt puzzle stats` shows your streak and this server's solvers \
of the day. **Practise this** under the review of a game you played turns your mistakes into \
drills; `/ttt drill` asks the next one due.""")


def help_message(lang: Language, default_size: int = DEFAULT_SIZE) -> Message:
    """How to play; ``default_size``: the board a game gets when none is picked (the
    server's setting)."""
    text = lang._(
        HELP_TEXT,
        levels="\n".join(
            f"- `{name}`: {level_description(name, lang)}" for name, _ in DIFFICULTIES
        ),
        sizes=lang.listing([size_label(size, lang) for size in GAME_SIZES], "or"),
        default=size_name(default_size),
    )
    text += "\n" + lang._(HELP_ULTIMATE) + "\n" + lang._(HELP_PRACTICE)
    return Message(embed=discord.Embed(title=lang._("Tic-tac-toe"), description=text))
