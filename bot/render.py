"""Everything the bot shows, in one place: boards, challenges, reviews, hints, stats, the
leaderboard, help.

Each function returns a :class:`Reply`; handlers only choose how to send it. Names are escaped
(markdown and mentions) and every reply says exactly whom it may ping.

A classic message holds at most 5 rows of 5 buttons: enough for a 3x3 or 4x4 board and its
control row, not for 5x5's 25 cells and control. Every message about a game too large for that
(its challenge, its board, the board once retired) is a components-v2 message (a
``LayoutView``) from the start: Discord would not let it turn back into a classic one, and
keeping one form per game means no edit ever has to change it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import discord

from bot.components import CellButton, ChallengeButton, GameButton, walk
from bot.service import Hint, Review, size_label, size_name
from bot.storage.base import (
    VS_MEMBER,
    ChallengeRecord,
    ChallengeStatus,
    EndReason,
    GameRecord,
    PlayerStats,
    Rating,
)
from game import BOARD_SIZES, DEFAULT_SIZE, Board, Mark, cell_name, standard_line_length
from game.ai import DIFFICULTIES, is_solved

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

# Every board names its game, so that a click can be checked against the board it is on: in
# the embed's footer, or in a components-v2 board's last line (as small text).
BOARD_FOOTER = "Game #{} · click a cell or use /ttt move"
LAYOUT_FOOTER = "-# " + BOARD_FOOTER
_BOARD_FOOTERS = tuple(
    re.compile(re.escape(footer).replace(r"\{\}", "([0-9]+)"))
    for footer in (BOARD_FOOTER, LAYOUT_FOOTER)
)
# A classic message's limit: 5 action rows.
CLASSIC_ROWS = 5

View = discord.ui.View | discord.ui.LayoutView


def uses_layout(size: int) -> bool:
    """Whether a game on ``size``x``size`` shows as a components-v2 message: when its cells
    and its control row are more rows than a classic message holds."""
    return size + 1 > CLASSIC_ROWS


@dataclass
class Reply:
    """One message. A components-v2 one has only its ``view`` (a ``LayoutView``): neither
    content nor embed."""

    content: str | None = None
    embed: discord.Embed | None = None
    view: View | None = None
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
        if isinstance(self.view, discord.ui.LayoutView):
            # A components-v2 message never had content or embeds: nothing to clear, and
            # Discord refuses them beside the layout.
            return {"view": self.view, "allowed_mentions": self.allowed_mentions}
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


def _title(size: int) -> str:
    if size == DEFAULT_SIZE:
        return "Tic-tac-toe"
    return f"Tic-tac-toe {size_label(size)}"


def _colour(game: GameRecord) -> discord.Colour:
    return LIVE_COLOUR if game.is_active else (WIN_COLOUR if game.winner else OVER_COLOUR)


ASSISTED = "💡 Assisted: a hint was used, so this game counts in no stats."


def _board_text(shown: _Shown, note: str | None) -> str:
    """The players, the grid and the status: an embed's description, or a layout's text."""
    game = shown.game
    lines = [
        f"{player(game, Mark.X)} vs {player(game, Mark.O)}",
        "",
        _grid(shown),
        "",
        _status_line(shown),
    ]
    if game.assisted:
        lines.append(ASSISTED)
    if note:
        lines.append(note)
    return "\n".join(lines)


def _board_embed(shown: _Shown, note: str | None) -> discord.Embed:
    game = shown.game
    embed = discord.Embed(
        title=_title(shown.board.size), description=_board_text(shown, note), colour=_colour(game)
    )
    embed.set_footer(text=BOARD_FOOTER.format(game.id))
    return embed


def board_game_id(message: discord.Message) -> int | None:
    """The game a board message shows, read back from its footer; None if it is no board."""
    footers = [embed.footer.text or "" for embed in message.embeds]
    footers += [
        component.content
        for component in walk(message.components)
        if isinstance(component, discord.TextDisplay)
    ]
    for footer in footers:
        for pattern in _BOARD_FOOTERS:
            match = pattern.fullmatch(footer)
            if match is not None:
                return int(match[1])
    return None


def _cell_buttons(shown: _Shown, *, rows: bool) -> list[CellButton]:
    """The cells in order; with ``rows``, each placed in its classic message row."""
    game, board = shown.game, shown.board
    size = board.size
    buttons = []
    for cell in range(size * size):
        mark = board[cell]
        buttons.append(
            CellButton.make(
                game.id,
                board.move_count,
                cell,
                row=cell // size if rows else None,
                label=cell_name(cell, size) if mark is None else None,
                emoji=MARK_EMOJI[mark] if mark else None,
                style=discord.ButtonStyle.success
                if cell in shown.winning
                else discord.ButtonStyle.secondary,
                disabled=mark is not None or not game.is_active,
            )
        )
    return buttons


def _controls(game: GameRecord, *, row: int | None) -> list[GameButton]:
    """The control row: Resign while the game is live; Rematch and Review once it is over (a
    review of a live game would tell the player to move how to play)."""
    actions = ["resign"] if game.is_active else ["rematch", "review"]
    return [GameButton(game.id, action, row=row) for action in actions]


def _board_view(shown: _Shown) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for button in _cell_buttons(shown, rows=True):
        view.add_item(button)
    for control in _controls(shown.game, row=shown.board.size):
        view.add_item(control)
    return view


def _board_layout(shown: _Shown, note: str | None, *, buttons: bool) -> discord.ui.LayoutView:
    """One container: the title and text, the cells in rows and the control row (with
    ``buttons``), and the footer. At most 36 components for 5x5, under Discord's 40."""
    game, size = shown.game, shown.board.size
    board: discord.ui.Container[discord.ui.LayoutView] = discord.ui.Container(
        discord.ui.TextDisplay(f"### {_title(size)}\n{_board_text(shown, note)}"),
        accent_colour=_colour(game),
    )
    if buttons:
        cells = _cell_buttons(shown, rows=False)
        for row in range(size):
            board.add_item(discord.ui.ActionRow(*cells[row * size : (row + 1) * size]))
        board.add_item(discord.ui.ActionRow(*_controls(game, row=None)))
    board.add_item(discord.ui.TextDisplay(LAYOUT_FOOTER.format(game.id)))
    view = discord.ui.LayoutView(timeout=None)
    view.add_item(board)
    return view


def board_reply(game: GameRecord, note: str | None = None) -> Reply:
    """The game's board message: the grid and status, and the cell buttons with Resign, or
    Rematch and Review."""
    shown = _Shown.of(game)
    if uses_layout(game.size):
        return Reply(view=_board_layout(shown, note, buttons=True))
    return Reply(embed=_board_embed(shown, note), view=_board_view(shown))


def retired_board_reply(game: GameRecord) -> Reply:
    """An older board message, once a newer one carries the game: no buttons, a pointer."""
    shown, note = _Shown.of(game), "*This board moved to a newer message below.*"
    if uses_layout(game.size):
        return Reply(view=_board_layout(shown, note, buttons=False))
    return Reply(embed=_board_embed(shown, note), view=discord.ui.View(timeout=None))


def move_note(game: GameRecord, cell: int | None, ai_cell: int | None) -> str | None:
    parts = []
    if cell is not None:
        parts.append(f"Last move: {cell_name(cell, game.size)}.")
    if ai_cell is not None:
        parts.append(f"🤖 I played **{cell_name(ai_cell, game.size)}**.")
    return " ".join(parts) or None


def last_answer_note(game: GameRecord) -> str | None:
    """The note a live game against the bot was last shown with: on the player's turn, the
    last move is the bot's answer, and the one before it the player's move (if any)."""
    if game.ai_mark is None or not game.moves:
        return None
    moves = game.moves
    return move_note(game, moves[-2] if len(moves) > 1 else None, moves[-1])


# -- reviews and hints ----------------------------------------------------------------------


def review_reply(review: Review) -> Reply:
    """A finished game move by move, for the member who asked: who played, how it ended, and
    one sentence a move. At most 25 moves of at most about 90 characters each: well within
    an embed description's 4,096."""
    game = review.game
    shown = _Shown.of(game)
    lines = [
        f"{player(game, Mark.X)} (X) vs {player(game, Mark.O)} (O), {size_label(game.size)}",
        _status_line(shown),
    ]
    if game.assisted:
        lines.append(ASSISTED)
    lines.append("")
    lines.extend(move.sentence for move in review.moves)
    if not review.moves:
        lines.append("No move was played.")
    embed = discord.Embed(
        title=f"Review of game #{game.id}", description="\n".join(lines), colour=_colour(game)
    )
    if is_solved(shown.board):
        embed.set_footer(text="Every move is judged against perfect play.")
    else:
        embed.set_footer(
            text="Every move is judged by a search, which calls a move a mistake only when it "
            "proves it."
        )
    return Reply(embed=embed)


def hint_reply(hint: Hint) -> Reply:
    """The best move, for the player alone."""
    cell = cell_name(hint.cell, hint.game.size)
    return Reply(
        content=f"Hint: {cell}. This game is assisted now, so it counts in no stats.",
    )


# -- challenges -------------------------------------------------------------------------------


def _message(
    size: int,
    text: str,
    buttons: list[ChallengeButton],
    allowed_mentions: discord.AllowedMentions | None = None,
) -> Reply:
    """A challenge's message in its game's form: classic, or components v2 for a board that
    needs it (see the module's docstring). Without ``buttons``, it has none left."""
    mentions = allowed_mentions or discord.AllowedMentions.none()
    if uses_layout(size):
        layout = discord.ui.LayoutView(timeout=None)
        layout.add_item(discord.ui.TextDisplay(text))
        if buttons:
            layout.add_item(discord.ui.ActionRow(*buttons))
        return Reply(view=layout, allowed_mentions=mentions)
    view = discord.ui.View(timeout=None)
    for button in buttons:
        view.add_item(button)
    return Reply(content=text, view=view, allowed_mentions=mentions)


def _board_of(size: int) -> str:
    """What a challenge says of its board: nothing for the classic 3x3."""
    if size == DEFAULT_SIZE:
        return ""
    return f" on a {size_name(size)} board ({standard_line_length(size)} in a row)"


def challenge_reply(challenge: ChallengeRecord) -> Reply:
    challenger = f"**{escape(challenge.challenger_name)}**"
    opponent = f"**{escape(challenge.opponent_name)}**" if challenge.opponent_name else None
    board = _board_of(challenge.size)
    match challenge.status:
        case ChallengeStatus.PENDING:
            buttons = [ChallengeButton(challenge.id, "accept")]
            if challenge.opponent_id is not None:
                buttons.append(ChallengeButton(challenge.id, "decline"))
            buttons.append(ChallengeButton(challenge.id, "withdraw"))
            expires = timestamp(challenge.expires_at)
            if challenge.opponent_id is None:
                return _message(
                    challenge.size,
                    f"⚔️ {challenger} is looking for a tic-tac-toe opponent{board}! "
                    f"Anyone can accept; the challenge expires {expires}.",
                    buttons,
                )
            return _message(
                challenge.size,
                f"⚔️ <@{challenge.opponent_id}>, {challenger} challenges you to "
                f"tic-tac-toe{board}! Accept or decline; the challenge expires {expires}.",
                buttons,
                # The one ping the bot ever makes: the member who was challenged.
                discord.AllowedMentions(
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
    return _message(challenge.size, text, [])


def retired_challenge_reply(challenge: ChallengeRecord) -> Reply:
    """An older message of a challenge shown again below: no buttons, a pointer."""
    challenger = f"**{escape(challenge.challenger_name)}**"
    return _message(
        challenge.size, f"⚔️ {challenger}'s challenge moved to a newer message below.", []
    )


# -- stats, leaderboard, help -------------------------------------------------------------------


def stats_reply(
    stats: PlayerStats, name: str, difficulties: tuple[str, ...], *, in_server: bool = True
) -> Reply:
    """A member's stats in this server, or (``in_server=False``) in all their DMs."""
    embed = discord.Embed(
        title=f"Tic-tac-toe stats: {escape(name)} ({size_name(stats.size)})", colour=LIVE_COLOUR
    )
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
        where = "in this server" if in_server else "outside servers"
        embed.description = f"No finished games yet {where} on {size_name(stats.size)} boards."
    embed.set_footer(text="Games in which a hint was used (/ttt hint) count in no stats.")
    return Reply(embed=embed)


def leaderboard_reply(rows: list[Rating], size: int = DEFAULT_SIZE) -> Reply:
    embed = discord.Embed(title=f"Tic-tac-toe leaderboard ({size_name(size)})", colour=LIVE_COLOUR)
    if not rows:
        embed.description = (
            f"Nobody is rated yet on {size_name(size)} boards: ratings come from games between "
            "members (games against the bot don't count)."
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
    embed.set_footer(
        text=f"Elo from games between members on {size_name(size)} boards; games against the "
        "bot don't count."
    )
    return Reply(embed=embed)


_DEFAULT = size_name(DEFAULT_SIZE)
_SIZES = ", ".join(size_label(size) for size in BOARD_SIZES)
_LEVELS = "\n".join(f"- `{level.name}`: {level.description}" for level in DIFFICULTIES)
HELP_TEXT = f"""\
**Play a member:** `/ttt start opponent:@someone` (or leave `opponent` out: anyone can accept). \
The challenger plays ❌ and moves first.
**Play the bot:** `/ttt vs-ai difficulty:casual first:me`, at one of these levels, \
weakest first:
{_LEVELS}
**Board sizes:** add `size:4` or `size:5` to either: {_SIZES}; {_DEFAULT} if you leave it out. \
Each size has its own stats and leaderboard.
**Move:** click a cell, or `/ttt move cell:B2` (letter = column, number = row; numbers count \
the cells row by row from 1, so `1`-`9` on {_DEFAULT}).
**Hint:** `/ttt hint` shows you alone the best move in a game against me; the game then \
counts in no stats.
**Review:** the **Review** button on a finished board, or `/ttt review [game]` (the number on \
its board; the channel's last game if you leave it out), goes through a game move by move, \
for you alone: which moves kept the result, which missed a win, which threw the game away.
**Other commands:** `/ttt board` shows the board again, `/ttt resign`, \
`/ttt stats [member] [size]`, `/ttt leaderboard [size]`, and `/ttt end` for moderators (counts \
for nobody).
One game per channel; a player who doesn't move in time loses the game."""


def help_reply() -> Reply:
    return Reply(embed=discord.Embed(title="Tic-tac-toe", description=HELP_TEXT))
