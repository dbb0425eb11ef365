"""Everything the bot shows, in one place: boards, challenges, stats, the leaderboard, help.

Each function returns a :class:`Reply`; handlers only choose how to send it. Names are escaped
(markdown and mentions) and every reply says exactly whom it may ping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import discord

from bot.components import CellButton, ChallengeButton, GameButton
from bot.storage.base import (
    VS_MEMBER,
    ChallengeRecord,
    ChallengeStatus,
    EndReason,
    GameRecord,
    PlayerStats,
    Rating,
)
from game import Board, Mark, cell_name

MARK_EMOJI = {Mark.X: "❌", Mark.O: "⭕"}
WINNING_EMOJI = {Mark.X: "❎", Mark.O: "🅾️"}
EMPTY_EMOJI = "⬜"
CORNER_EMOJI = "⬛"
COLUMN_EMOJI = ["🇦", "🇧", "🇨", "🇩", "🇪", "🇫", "🇬", "🇭", "🇮"]
ROW_EMOJI = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣"]

LIVE_COLOUR = discord.Colour.blurple()
OVER_COLOUR = discord.Colour.dark_grey()
WIN_COLOUR = discord.Colour.green()

NO_PINGS = discord.AllowedMentions.none()

# Every board names its game, so that a click can be checked against the board it is on.
BOARD_FOOTER = "Game #{} · click a cell or use /ttt move"
_BOARD_FOOTER = re.compile(re.escape(BOARD_FOOTER).replace(r"\{\}", "([0-9]+)"))


@dataclass
class Reply:
    content: str | None = None
    embed: discord.Embed | None = None
    view: discord.ui.View | None = None
    allowed_mentions: discord.AllowedMentions = field(default_factory=discord.AllowedMentions.none)

    def send_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``send_message``/``followup.send``/``channel.send``."""
        kwargs: dict[str, Any] = {"allowed_mentions": self.allowed_mentions}
        if self.content is not None:
            kwargs["content"] = self.content
        if self.embed is not None:
            kwargs["embed"] = self.embed
        if self.view is not None:
            kwargs["view"] = self.view
        return kwargs

    def edit_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for an edit: replaces content, embed and components alike."""
        return {
            "content": self.content,
            "embeds": [self.embed] if self.embed is not None else [],
            "view": self.view,
            "allowed_mentions": self.allowed_mentions,
        }


def escape(name: str) -> str:
    """A member's name made safe to show: no markdown, no mentions."""
    return discord.utils.escape_markdown(discord.utils.escape_mentions(name))


def player(game: GameRecord, mark: Mark) -> str:
    return f"{MARK_EMOJI[mark]} **{escape(game.player_name(mark))}**"


def timestamp(epoch: float, style: str = "R") -> str:
    return f"<t:{int(epoch)}:{style}>"


# -- the board --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shown:
    """A game as one render draws it: its position and winning cells are worked out once."""

    game: GameRecord
    board: Board
    winning: frozenset[int]  # the cells to highlight: the line that won, if one did

    @classmethod
    def of(cls, game: GameRecord) -> _Shown:
        board = game.board
        line = board.winning_line if game.end_reason is EndReason.LINE else None
        return cls(game, board, frozenset(line or ()))


def _grid(shown: _Shown) -> str:
    board = shown.board
    size = board.size
    lines = [" ".join([CORNER_EMOJI, *COLUMN_EMOJI[:size]])]
    for row in range(size):
        cells = []
        for column in range(size):
            cell = row * size + column
            mark = board[cell]
            if mark is None:
                cells.append(EMPTY_EMOJI)
            elif cell in shown.winning:
                cells.append(WINNING_EMOJI[mark])
            else:
                cells.append(MARK_EMOJI[mark])
        lines.append(" ".join([ROW_EMOJI[row], *cells]))
    return "\n".join(lines)


def _status_line(shown: _Shown) -> str:
    game, board = shown.game, shown.board
    if game.is_active:
        turn = board.turn
        deadline = f", time runs out {timestamp(game.deadline)}" if game.deadline else ""
        return f"{player(game, turn)} to move{deadline}."
    winner = game.winner
    loser = winner.other if winner else None
    match game.end_reason:
        case EndReason.LINE if winner and board.winning_line:
            line = " ".join(cell_name(cell, board.size) for cell in board.winning_line)
            return f"🏆 {player(game, winner)} wins with {line}!"
        case EndReason.DRAW:
            return "🤝 It's a draw."
        case EndReason.RESIGN if winner and loser:
            return f"🏳️ {player(game, loser)} resigned: {player(game, winner)} wins."
        case EndReason.TIMEOUT if winner and loser:
            return f"⏰ {player(game, loser)} ran out of time: {player(game, winner)} wins."
        case EndReason.ENDED:
            return "🛑 A moderator ended this game: it counts for nobody."
    return "The game is over."


def _board_embed(shown: _Shown, note: str | None) -> discord.Embed:
    game = shown.game
    colour = LIVE_COLOUR if game.is_active else (WIN_COLOUR if game.winner else OVER_COLOUR)
    description = [
        f"{player(game, Mark.X)} vs {player(game, Mark.O)}",
        "",
        _grid(shown),
        "",
        _status_line(shown),
    ]
    if note:
        description.append(note)
    embed = discord.Embed(title="Tic-tac-toe", description="\n".join(description), colour=colour)
    embed.set_footer(text=BOARD_FOOTER.format(game.id))
    return embed


def board_game_id(embeds: list[discord.Embed]) -> int | None:
    """The game a board message shows, read back from its footer; None if it is no board."""
    for embed in embeds:
        match = _BOARD_FOOTER.fullmatch(embed.footer.text or "")
        if match is not None:
            return int(match[1])
    return None


def _board_view(shown: _Shown) -> discord.ui.View:
    game, board = shown.game, shown.board
    size = board.size
    view = discord.ui.View(timeout=None)
    for cell in range(size * size):
        mark = board[cell]
        view.add_item(
            CellButton.make(
                game.id,
                board.move_count,
                cell,
                row=cell // size,
                label=cell_name(cell, size) if mark is None else None,
                emoji=MARK_EMOJI[mark] if mark else None,
                style=discord.ButtonStyle.success
                if cell in shown.winning
                else discord.ButtonStyle.secondary,
                disabled=mark is not None or not game.is_active,
            )
        )
    view.add_item(GameButton(game.id, "resign" if game.is_active else "rematch"))
    return view


def board_reply(game: GameRecord, note: str | None = None) -> Reply:
    """The game's board message: the embed, and the cell buttons with Resign or Rematch."""
    shown = _Shown.of(game)
    return Reply(embed=_board_embed(shown, note), view=_board_view(shown))


def retired_board_reply(game: GameRecord) -> Reply:
    """An older board message, once a newer one carries the game: no buttons, a pointer."""
    embed = _board_embed(_Shown.of(game), note="*This board moved to a newer message below.*")
    return Reply(embed=embed, view=discord.ui.View(timeout=None))


def move_note(game: GameRecord, cell: int | None, ai_cell: int | None) -> str | None:
    parts = []
    if cell is not None:
        parts.append(f"Last move: {cell_name(cell, game.size)}.")
    if ai_cell is not None:
        parts.append(f"🤖 I played **{cell_name(ai_cell, game.size)}**.")
    return " ".join(parts) or None


# -- challenges -------------------------------------------------------------------------------


def challenge_reply(challenge: ChallengeRecord) -> Reply:
    challenger = f"**{escape(challenge.challenger_name)}**"
    opponent = f"**{escape(challenge.opponent_name)}**" if challenge.opponent_name else None
    match challenge.status:
        case ChallengeStatus.PENDING:
            view = discord.ui.View(timeout=None)
            view.add_item(ChallengeButton(challenge.id, "accept"))
            if challenge.opponent_id is not None:
                view.add_item(ChallengeButton(challenge.id, "decline"))
            view.add_item(ChallengeButton(challenge.id, "withdraw"))
            expires = timestamp(challenge.expires_at)
            if challenge.opponent_id is None:
                return Reply(
                    content=f"⚔️ {challenger} is looking for a tic-tac-toe opponent! "
                    f"Anyone can accept; the challenge expires {expires}.",
                    view=view,
                )
            return Reply(
                content=f"⚔️ <@{challenge.opponent_id}>, {challenger} challenges you to "
                f"tic-tac-toe! Accept or decline; the challenge expires {expires}.",
                view=view,
                # The one ping the bot ever makes: the member who was challenged.
                allowed_mentions=discord.AllowedMentions(
                    users=[discord.Object(challenge.opponent_id)],
                    everyone=False,
                    roles=False,
                    replied_user=False,
                ),
            )
        case ChallengeStatus.DECLINED:
            text = f"{opponent} declined {challenger}'s challenge."
        case ChallengeStatus.WITHDRAWN:
            text = f"{challenger} withdrew the challenge."
        case ChallengeStatus.EXPIRED:
            text = f"⌛ {challenger}'s challenge expired: nobody accepted in time."
        case ChallengeStatus.ACCEPTED:
            text = f"{challenger}'s challenge was accepted."
    return Reply(content=text, view=discord.ui.View(timeout=None))


def retired_challenge_reply(challenge: ChallengeRecord) -> Reply:
    """An older message of a challenge shown again below: no buttons, a pointer."""
    challenger = f"**{escape(challenge.challenger_name)}**"
    return Reply(
        content=f"⚔️ {challenger}'s challenge moved to a newer message below.",
        view=discord.ui.View(timeout=None),
    )


# -- stats, leaderboard, help -------------------------------------------------------------------


def stats_reply(stats: PlayerStats, name: str, difficulties: tuple[str, ...]) -> Reply:
    embed = discord.Embed(title=f"Tic-tac-toe stats: {escape(name)}", colour=LIVE_COLOUR)
    members = stats.against(VS_MEMBER)
    rating = f"{stats.rating:.0f} Elo" if stats.rating is not None else "unrated"
    embed.add_field(
        name="Against members",
        value=f"{members.wins} W · {members.losses} L · {members.draws} D ({rating})",
        inline=False,
    )
    for difficulty in difficulties:
        record = stats.against(difficulty)
        embed.add_field(
            name=f"Against the bot ({difficulty})",
            value=f"{record.wins} W · {record.losses} L · {record.draws} D",
            inline=True,
        )
    if not any(record.games for record in stats.records.values()):
        embed.description = "No finished games yet in this server."
    return Reply(embed=embed)


def leaderboard_reply(rows: list[Rating]) -> Reply:
    embed = discord.Embed(title="Tic-tac-toe leaderboard", colour=LIVE_COLOUR)
    if not rows:
        embed.description = (
            "Nobody is rated yet: ratings come from games between members "
            "(games against the bot don't count)."
        )
        return Reply(embed=embed)
    medals = ["🥇", "🥈", "🥉"]
    lines = []
    for rank, row in enumerate(rows, start=1):
        badge = medals[rank - 1] if rank <= len(medals) else f"{rank}."
        lines.append(
            f"{badge} <@{row.user_id}>: **{row.rating:.0f}** "
            f"({row.wins} W · {row.losses} L · {row.draws} D)"
        )
    embed.description = "\n".join(lines)
    embed.set_footer(text="Elo from games between members; games against the bot don't count.")
    return Reply(embed=embed)


HELP_TEXT = """\
**Play a member:** `/ttt start opponent:@someone` (or leave `opponent` out: anyone can accept). \
The challenger plays ❌ and moves first.
**Play the bot:** `/ttt vs-ai difficulty:minimax first:me` (`random`, `smart` or `minimax`).
**Move:** click a cell, or `/ttt move cell:B2` (letter = column, number = row; `1`-`9` work too).
**Other commands:** `/ttt board` shows the board again, `/ttt resign`, `/ttt stats [member]`, \
`/ttt leaderboard`, and `/ttt end` for moderators (counts for nobody).
One game per channel; a player who doesn't move in time loses the game."""


def help_reply() -> Reply:
    return Reply(embed=discord.Embed(title="Tic-tac-toe", description=HELP_TEXT))
