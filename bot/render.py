"""Everything the bot shows, in one place: boards, challenges, reviews, hints, stats, the
leaderboard, help.

Each function returns a :class:`Message`: the message as Discord's API takes it, its buttons
and layout written here once. Both ways of answering send that same payload: discord.py, through
a View that is only those components (:meth:`Message.send_kwargs`), and the hot path as JSON
(:meth:`Message.payload`). Names are escaped (markdown and mentions) and every message says
exactly whom it may ping.

A classic message holds at most 5 rows of 5 buttons: enough for a 3x3 or 4x4 board and its
control row, not for 5x5's 25 cells and control. Every message about a game too large for that
(its challenge, its board, the board once retired) is a components-v2 message from the start:
Discord would not let it turn back into a classic one, and keeping one form per game means no
edit ever has to change it.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import babel
import babel.dates
import babel.lists
import discord

from bot import i18n
from bot.components import (
    CELL_ID,
    CHALLENGE_ID,
    DRILL_ID,
    DRILL_NEXT_ID,
    ERASE_ID,
    FORGET_ID,
    GAME_ACTION_ID,
    PRACTISE_ID,
    PUZZLE_AGAIN_ID,
    PUZZLE_ID,
    encode_day,
    encode_moves,
    walk,
)
from bot.domain import OUTSIDE_SERVERS, size_name
from bot.i18n import N_, Language
from bot.marks import DEFAULT_MARKS, button_emoji, custom_emoji_id
from bot.practice import Counted, DrillView, PuzzleStats, PuzzleView
from bot.privacy import Forgetting
from bot.server_settings import ServerSettings, Setting
from bot.service import Hint, Review
from bot.storage.base import (
    VS_MEMBER,
    ChallengeRecord,
    ChallengeStatus,
    EndReason,
    GameRecord,
    GuildErased,
    MemberData,
    PlayerStats,
    Rating,
    is_forgotten,
)
from game import BOARD_SIZES, DEFAULT_SIZE, Board, Mark, cell_name, standard_line_length
from game.ai import DIFFICULTIES, describe, is_solved
from game.drills import Drill, drills_of
from game.puzzles import Puzzle, Reason, Refutation, Reply, Step, StepKind, Task
from game.review import MoveReview, Verdict

MARK_EMOJI = DEFAULT_MARKS  # the bot's own marks; a server may choose others (bot.marks)
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
BOARD_FOOTER = N_("Game #{game} · click a cell or use /ttt move")
LAYOUT_FOOTER = "-# {}"
# The footer as every language writes it (boards keep the language they were drawn in).
_BOARD_FOOTERS = tuple(
    re.compile(re.escape(form.format(footer)).replace(r"\{game\}", "([0-9]+)"))
    for footer in {i18n.language(code).gettext(BOARD_FOOTER) for code in i18n.ALL_LANGUAGES}
    for form in ("{}", LAYOUT_FOOTER)
)
# How each board size is named in the size choices and messages.
SIZE_LABELS = {
    3: N_("3\N{MULTIPLICATION SIGN}3 (3 in a row)"),
    4: N_("4\N{MULTIPLICATION SIGN}4 (4 in a row)"),
    5: N_("5\N{MULTIPLICATION SIGN}5 (4 in a row)"),
}
# A classic message's limit: 5 action rows.
CLASSIC_ROWS = 5

# Discord's component types and the message flag of a components-v2 message.
ACTION_ROW, BUTTON, TEXT_DISPLAY, CONTAINER = 1, 2, 10, 17
COMPONENTS_V2 = 1 << 15

# How each action's button looks: its label, emoji and style. A board's controls (Resign while
# live, Rematch and Review once over) and a challenge's answers.
ACTIONS: Mapping[str, tuple[str, str | None, discord.ButtonStyle]] = {
    "resign": (N_("Resign"), "🏳️", discord.ButtonStyle.danger),
    "rematch": (N_("Rematch"), "🔁", discord.ButtonStyle.primary),
    "review": (N_("Review"), "🔍", discord.ButtonStyle.secondary),
    "accept": (N_("Accept"), None, discord.ButtonStyle.success),
    "decline": (N_("Decline"), None, discord.ButtonStyle.secondary),
    "withdraw": (N_("Withdraw"), None, discord.ButtonStyle.danger),
}

JSON = dict[str, Any]


def uses_layout(size: int) -> bool:
    """Whether a game on ``size``x``size`` shows as a components-v2 message: when its cells
    and its control row are more rows than a classic message holds."""
    return size + 1 > CLASSIC_ROWS


class _Components(discord.ui.View):
    """What discord.py is handed for a message's components: a View that is only their JSON.
    Finished from the start, so discord.py stores nothing for it: clicks are routed by the
    ``DynamicItem`` classes of :mod:`bot.components`, and no View is kept per message."""

    def __init__(self, components: list[JSON], *, layout: bool) -> None:
        super().__init__(timeout=None)
        self._components = components
        self._layout = layout
        self.stop()

    def to_components(self) -> list[JSON]:
        return self._components

    def has_components_v2(self) -> bool:
        return self._layout


@dataclass(frozen=True, slots=True)
class Message:
    """One message: its text, embed and components as Discord's API takes them. A
    components-v2 one (``layout``) has only its components: neither content nor embed."""

    content: str | None = None
    embed: discord.Embed | None = None
    components: list[JSON] = dataclasses.field(default_factory=list)
    layout: bool = False
    allowed_mentions: discord.AllowedMentions = NO_PINGS
    # A board with a server's own emoji on its buttons: what to send if Discord refuses them.
    fallback: MarksFallback | None = None

    def payload(self) -> JSON:
        """The message as the JSON of a new message or an edit (which replaces content,
        embeds and components alike), as discord.py writes it from :meth:`edit_kwargs`."""
        payload: JSON = {"components": self.components}
        if self.layout:
            payload["flags"] = COMPONENTS_V2
        else:
            payload["content"] = self.content
            payload["embeds"] = [self.embed.to_dict()] if self.embed is not None else []
        payload["allowed_mentions"] = self.allowed_mentions.to_dict()
        return payload

    def send_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``send_message``/``followup.send``/``channel.send``."""
        kwargs: dict[str, Any] = {"allowed_mentions": self.allowed_mentions}
        if self.content is not None:
            kwargs["content"] = self.content
        if self.embed is not None:
            kwargs["embed"] = self.embed
        if self.components or self.layout:
            kwargs["view"] = _Components(self.components, layout=self.layout)
        return kwargs

    def edit_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for an edit: replaces content, embed and components alike."""
        view = _Components(self.components, layout=self.layout)
        if self.layout:
            # A components-v2 message never had content or embeds: nothing to clear, and
            # Discord refuses them beside the layout.
            return {"view": view, "allowed_mentions": self.allowed_mentions}
        return {
            "content": self.content,
            "embeds": [self.embed] if self.embed is not None else [],
            "view": view,
            "allowed_mentions": self.allowed_mentions,
        }


@dataclass(frozen=True, slots=True)
class MarksFallback:
    """A game's board drawn with its server's custom emoji for a mark (``emoji_ids``), and
    ``message``, the same board with the bot's own marks: what the game plays on with once
    Discord refuses the emoji (deleted since the game started)."""

    game_id: int
    guild_id: int
    emoji_ids: tuple[int, ...]
    message: Message


def plain_text(content: str) -> Message:
    """A message of text alone."""
    return Message(content=content)


@functools.lru_cache(maxsize=4096)  # every board shows both names again
def escape(name: str) -> str:
    """A member's name made safe to show: no markdown, no mentions."""
    return discord.utils.escape_markdown(discord.utils.escape_mentions(name))


def size_label(size: int, lang: Language) -> str:
    """A board size with its rule, as the size choices put it: 4, 4, and "in a row"."""
    return lang.gettext(SIZE_LABELS[size])


def mark_emoji(game: GameRecord, mark: Mark) -> str:
    """The emoji ``game`` shows for ``mark``: its server's choice when it started, or the
    bot's own."""
    return (game.mark_x if mark is Mark.X else game.mark_o) or MARK_EMOJI[mark]


# Who a forgotten member (/ttt forget-me) is shown as, in the games and challenges they were in.
FORGOTTEN_MEMBER = N_("a deleted member")


def member(user_id: int, name: str | None, lang: Language) -> str:
    """A member's name in bold; a forgotten member's placeholder in italics, translated."""
    if is_forgotten(user_id):
        return f"*{lang._(FORGOTTEN_MEMBER)}*"
    return f"**{escape(name or '')}**"


def player(game: GameRecord, mark: Mark, lang: Language) -> str:
    name = member(game.player_id(mark), game.player_name(mark), lang)
    return f"{mark_emoji(game, mark)} {name}"


def timestamp(epoch: float, style: str = "R") -> str:
    return f"<t:{int(epoch)}:{style}>"


# -- components -----------------------------------------------------------------------------


def _button(
    custom_id: str,
    label: str | None,
    emoji: str | None,
    style: discord.ButtonStyle,
    *,
    disabled: bool = False,
) -> JSON:
    """A button; ``emoji`` as a message writes it (a Unicode emoji, or ``<:name:id>``)."""
    button: JSON = {"type": BUTTON, "style": style.value, "custom_id": custom_id}
    if label is not None:
        button["label"] = label
    if emoji is not None:
        button["emoji"] = button_emoji(emoji)
    button["disabled"] = disabled
    return button


def _action(custom_id: str, action: str, lang: Language) -> JSON:
    label, emoji, style = ACTIONS[action]
    return _button(custom_id, lang.gettext(label), emoji, style)


def _row(buttons: Sequence[JSON]) -> JSON:
    return {"type": ACTION_ROW, "components": list(buttons)}


def _text_display(content: str) -> JSON:
    return {"type": TEXT_DISPLAY, "content": content}


# -- the board --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shown:
    """A game as one render draws it: its position and winning cells are worked out once."""

    game: GameRecord
    board: Board
    winning: frozenset[int]  # the cells to highlight: the line that won, if one did
    lang: Language  # the game's own: its board reads the same whoever redraws it
    marks: Mapping[Mark, str]  # the emoji it shows for each side

    @classmethod
    def of(cls, game: GameRecord) -> _Shown:
        board = game.board
        line = board.winning_line if game.end_reason is EndReason.LINE else None
        marks = {mark: mark_emoji(game, mark) for mark in (Mark.X, Mark.O)}
        return cls(game, board, frozenset(line or ()), i18n.language(game.language), marks)


def _grid(shown: _Shown) -> str:
    return grid(shown.board, shown.marks, shown.winning)


def grid(board: Board, marks: Mapping[Mark, str] = MARK_EMOJI, winning: Iterable[int] = ()) -> str:
    """``board`` in emoji, with its column letters and row numbers, the ``winning`` cells
    highlighted."""
    size, highlighted = board.size, frozenset(winning)
    lines = [" ".join([CORNER_EMOJI, *COLUMN_EMOJI[:size]])]
    for row in range(size):
        cells = []
        for column in range(size):
            cell = row * size + column
            mark = board[cell]
            if mark is None:
                cells.append(EMPTY_EMOJI)
            elif cell in highlighted and marks[mark] == MARK_EMOJI[mark]:
                cells.append(WINNING_EMOJI[mark])
            else:  # a server's own marks have no winning look: the buttons show the line
                cells.append(marks[mark])
        lines.append(" ".join([ROW_EMOJI[row], *cells]))
    return "\n".join(lines)


def _status_line(shown: _Shown) -> str:
    game, board, lang = shown.game, shown.board, shown.lang
    if game.is_active:
        turn = board.turn
        if game.deadline:
            return lang._(
                "{player} to move, time runs out {deadline}.",
                player=player(game, turn, lang),
                deadline=timestamp(game.deadline),
            )
        return lang._("{player} to move.", player=player(game, turn, lang))
    winner = game.winner
    loser = winner.other if winner else None
    match game.end_reason:
        case EndReason.LINE if winner and board.winning_line:
            line = " ".join(cell_name(cell, board.size) for cell in board.winning_line)
            return "🏆 " + lang._(
                "{winner} wins with {line}!", winner=player(game, winner, lang), line=line
            )
        case EndReason.DRAW:
            return "🤝 " + lang._("It's a draw.")
        case EndReason.RESIGN if winner and loser:
            return "🏳️ " + lang._(
                "{loser} resigned: {winner} wins.",
                loser=player(game, loser, lang),
                winner=player(game, winner, lang),
            )
        case EndReason.TIMEOUT if winner and loser:
            return "⏰ " + lang._(
                "{loser} ran out of time: {winner} wins.",
                loser=player(game, loser, lang),
                winner=player(game, winner, lang),
            )
        case EndReason.ENDED if _has_forgotten_player(game):
            # Ended by a moderator, or by a player's /ttt forget-me: the end does not say which.
            return "🛑 " + lang._("This game was ended: it counts for nobody.")
        case EndReason.ENDED:
            return "🛑 " + lang._("A moderator ended this game: it counts for nobody.")
    return lang._("The game is over.")


def _has_forgotten_player(game: GameRecord) -> bool:
    return is_forgotten(game.x_id) or is_forgotten(game.o_id)


def _title(size: int, lang: Language) -> str:
    if size == DEFAULT_SIZE:
        return lang._("Tic-tac-toe")
    return lang._("Tic-tac-toe {size}", size=size_label(size, lang))


def _colour(game: GameRecord) -> discord.Colour:
    return LIVE_COLOUR if game.is_active else (WIN_COLOUR if game.winner else OVER_COLOUR)


ASSISTED = N_("Assisted: a hint was used, so this game counts in no stats.")


def _board_text(shown: _Shown, note: str | None) -> str:
    """The players, the grid and the status: an embed's description, or a layout's text."""
    game = shown.game
    lines = [
        shown.lang._(
            "{x} vs {o}", x=player(game, Mark.X, shown.lang), o=player(game, Mark.O, shown.lang)
        ),
        "",
        _grid(shown),
        "",
        _status_line(shown),
    ]
    if game.assisted:
        lines.append("💡 " + shown.lang._(ASSISTED))
    if note:
        lines.append(note)
    return "\n".join(lines)


def _footer(shown: _Shown) -> str:
    return shown.lang._(BOARD_FOOTER, game=shown.game.id)


def _cells(shown: _Shown) -> list[JSON]:
    """The cell buttons in order. Each names the position it was drawn in (the ply), so that
    a click means exactly the position the player saw."""
    game, board = shown.game, shown.board
    ply = board.move_count
    return _cell_buttons(
        board,
        lambda cell: CELL_ID.build(game=game.id, ply=ply, cell=cell),
        playable=game.is_active,
        styles=dict.fromkeys(shown.winning, discord.ButtonStyle.success),
        marks=shown.marks,
    )


def _cell_buttons(
    board: Board,
    custom_id: Callable[[int], str],
    *,
    playable: bool,
    styles: Mapping[int, discord.ButtonStyle],
    marks: Mapping[Mark, str] = MARK_EMOJI,
) -> list[JSON]:
    """``board``'s cells as buttons, in order: the free ones named and clickable while
    ``playable``, the taken ones showing their ``marks``; ``styles`` colours some (a winning
    line, the moves just played)."""
    size = board.size
    return [
        _button(
            custom_id(cell),
            cell_name(cell, size) if mark is None else None,
            marks[mark] if mark is not None else None,
            styles.get(cell, discord.ButtonStyle.secondary),
            disabled=not playable or mark is not None,
        )
        for cell, mark in enumerate(board.cells)
    ]


def _controls(shown: _Shown) -> list[JSON]:
    """The control row: Resign while the game is live; Rematch and Review once it is over (a
    review of a live game would tell the player to move how to play)."""
    game = shown.game
    actions = ["resign"] if game.is_active else ["rematch", "review"]
    return [
        _action(GAME_ACTION_ID.build(action=action, game=game.id), action, shown.lang)
        for action in actions
    ]


def _board_rows(shown: _Shown) -> list[JSON]:
    """The cells, a row of buttons per board row, and the control row."""
    return _cell_rows(_cells(shown), shown.board.size, _controls(shown))


def _cell_rows(cells: list[JSON], size: int, controls: Sequence[JSON]) -> list[JSON]:
    """``cells`` in a row of buttons per board row, and the ``controls`` in a row after them
    (if any)."""
    rows = [_row(cells[start : start + size]) for start in range(0, len(cells), size)]
    if controls:
        rows.append(_row(controls))
    return rows


def _panel(
    title: str, text: str, footer: str, colour: discord.Colour, rows: list[JSON], *, layout: bool
) -> Message:
    """A message of a title, a text, button ``rows`` and a footer: an embed with the rows
    under it, or with ``layout`` one components-v2 container holding them all (at most 36
    components for a 5x5 board and its control row, under Discord's 40)."""
    if not layout:
        embed = discord.Embed(title=title, description=text, colour=colour)
        embed.set_footer(text=footer)
        return Message(embed=embed, components=rows)
    inside = [
        _text_display(f"### {title}\n{text}"),
        *rows,
        _text_display(LAYOUT_FOOTER.format(footer)),
    ]
    container = {"type": CONTAINER, "accent_color": colour.value, "components": inside}
    return Message(components=[container], layout=True)


def _board(shown: _Shown, note: str | None, *, buttons: bool) -> Message:
    """A board message; without ``buttons``, one that no longer takes clicks."""
    size = shown.board.size
    return _panel(
        _title(size, shown.lang),
        _board_text(shown, note),
        _footer(shown),
        _colour(shown.game),
        _board_rows(shown) if buttons else [],
        layout=uses_layout(size),
    )


def board_message(game: GameRecord, note: str | None = None) -> Message:
    """The game's board message: the grid and status, and the cell buttons with Resign, or
    Rematch and Review. A server's custom emoji among its marks comes with the board drawn
    with the bot's own (:class:`MarksFallback`)."""
    message = _board(_Shown.of(game), note, buttons=True)
    custom = [custom_emoji_id(mark) for mark in (game.mark_x, game.mark_o) if mark]
    emoji_ids = tuple(emoji_id for emoji_id in custom if emoji_id is not None)
    if not emoji_ids:
        return message
    own_marks = dataclasses.replace(game, mark_x=None, mark_o=None)
    plain = _board(_Shown.of(own_marks), note, buttons=True)
    fallback = MarksFallback(game.id, game.guild_id, emoji_ids, plain)
    return dataclasses.replace(message, fallback=fallback)


def retired_board_message(game: GameRecord) -> Message:
    """An older board message, once a newer one carries the game: no buttons, a pointer."""
    shown = _Shown.of(game)
    note = "*" + shown.lang._("This board moved to a newer message below.") + "*"
    return _board(shown, note, buttons=False)


def board_game_id(message: discord.Message) -> int | None:
    """The game a board message shows, read back from its footer; None if it is no board."""
    texts = [embed.footer.text or "" for embed in message.embeds]
    texts += [c.content for c in walk(message.components) if isinstance(c, discord.TextDisplay)]
    return game_in_footers(texts)


def board_game_id_in(message: Mapping[str, Any]) -> int | None:
    """:func:`board_game_id` of a message as the gateway sends it (JSON)."""
    texts = [
        str((embed.get("footer") or {}).get("text", "")) for embed in message.get("embeds") or ()
    ]
    stack = list(message.get("components") or ())
    while stack:
        component = stack.pop()
        if component.get("type") == TEXT_DISPLAY:
            texts.append(str(component.get("content", "")))
        stack.extend(component.get("components") or ())
    return game_in_footers(texts)


def game_in_footers(texts: Iterable[str]) -> int | None:
    """The game the first board footer among ``texts`` names; None if none is one."""
    for footer in texts:
        for pattern in _BOARD_FOOTERS:
            match = pattern.fullmatch(footer)
            if match is not None:
                return int(match[1])
    return None


def move_note(game: GameRecord, cell: int | None, ai_cell: int | None) -> str | None:
    lang = i18n.language(game.language)
    parts = []
    if cell is not None:
        parts.append(lang._("Last move: {cell}.", cell=cell_name(cell, game.size)))
    if ai_cell is not None:
        played = f"**{cell_name(ai_cell, game.size)}**"
        parts.append("🤖 " + lang._("I played {cell}.", cell=played))
    return " ".join(parts) or None


def last_answer_note(game: GameRecord) -> str | None:
    """The note a live game against the bot was last shown with: on the player's turn, the
    last move is the bot's answer, and the one before it the player's move (if any)."""
    if game.ai_mark is None or not game.moves:
        return None
    moves = game.moves
    return move_note(game, moves[-2] if len(moves) > 1 else None, moves[-1])


# -- reviews and hints ----------------------------------------------------------------------


def review_message(review: Review, lang: Language, viewer_id: int | None = None) -> Message:
    """A finished game move by move, for the member who asked (``viewer_id``), in their
    language: who played, how it ended, and one sentence a move; and **Practise this** when
    the viewer played a move that lost value (see :mod:`bot.practice`). At most 25 moves of at
    most about 90 characters each: well within an embed description's 4,096."""
    game = review.game
    shown = dataclasses.replace(_Shown.of(game), lang=lang)
    lines = [
        lang._(
            "{x} (X) vs {o} (O), {size}",
            x=player(game, Mark.X, lang),
            o=player(game, Mark.O, lang),
            size=size_label(game.size, lang),
        ),
        _status_line(shown),
    ]
    if game.assisted:
        lines.append("💡 " + lang._(ASSISTED))
    lines.append("")
    lines.extend(move_sentence(move, lang) for move in review.moves)
    if not review.moves:
        lines.append(lang._("No move was played."))
    embed = discord.Embed(
        title=lang._("Review of game #{game}", game=game.id),
        description="\n".join(lines),
        colour=_colour(game),
    )
    if is_solved(shown.board):
        embed.set_footer(text=lang._("Every move is judged against perfect play."))
    else:
        embed.set_footer(
            text=lang._(
                "Every move is judged by a search, which calls a move a mistake only when it "
                "proves it."
            )
        )
    mark = game.mark_of(viewer_id) if viewer_id is not None else None
    if mark is None or not drills_of(review.moves, mark):
        return Message(embed=embed)
    practise = _button(
        PRACTISE_ID.build(game=game.id),
        lang._("Practise this"),
        "🎯",
        discord.ButtonStyle.primary,
    )
    return Message(embed=embed, components=[_row([practise])])


def move_sentence(move: MoveReview, lang: Language) -> str:
    """``game.review``'s sentence for a move (the engine's, word for word, in English), in
    ``lang``: one whole sentence a case, so that each language can order it its own way."""
    size = move.position.size
    mark, other = move.mark.value, move.mark.other.value
    head = f"{move.number}. {mark} {cell_name(move.cell, size)} — "
    if move.verdict is Verdict.GOOD:
        outcome = move.position.play(move.cell).outcome()
        if outcome is None and move.value_after == 0:
            return head + lang._("draw.")
        if outcome is None:
            winner = mark if move.value_after > 0 else other
            return head + lang._("{mark} wins.", mark=winner)
        if outcome.winner is None:
            return head + lang._("the game ends in a draw.")
        return head + lang._("{mark} wins the game.", mark=outcome.winner.value)
    assert move.better is not None  # a move that lost value names one that kept it
    better = cell_name(move.better, size)
    at_once = move.position.play(move.better).winner is move.mark
    if move.value_before == 0:
        text = N_("blunder: the game was a draw, now {other} wins. {better} kept the draw.")
    elif move.value_after < 0 and at_once:
        text = N_("blunder: the game was a win for {mark}, now {other} wins. {better} won at once.")
    elif move.value_after < 0:
        text = N_(
            "blunder: the game was a win for {mark}, now {other} wins. {better} kept the win."
        )
    elif at_once:
        text = N_("missed win: the game was a win for {mark}, now a draw. {better} won at once.")
    else:
        text = N_("missed win: the game was a win for {mark}, now a draw. {better} kept the win.")
    return head + lang._(text, mark=mark, other=other, better=better)


def hint_message(hint: Hint, lang: Language) -> Message:
    """The best move, for the player alone."""
    cell = cell_name(hint.cell, hint.game.size)
    return plain_text(
        lang._("Hint: {cell}. This game is assisted now, so it counts in no stats.", cell=cell)
    )


# -- the daily puzzle and drills ---------------------------------------------------------------

PUZZLE_COLOUR = discord.Colour.gold()
SOLVED_COLOUR = discord.Colour.green()
MISSED_COLOUR = discord.Colour.red()
# How a position's cells show what just happened: the member's move, and the answer to it.
_MOVED_STYLE = discord.ButtonStyle.primary
_ANSWER_STYLE = discord.ButtonStyle.danger
# The most solvers of the day a stats message names; the rest are counted.
SOLVERS_SHOWN = 30


def task_sentence(puzzle: Puzzle, lang: Language) -> str:
    """The puzzle's task, as ``game.puzzles`` words it in English: "X to play and win in 3",
    "O to play: only one move keeps the draw"."""
    if puzzle.task is Task.WIN:
        return lang._(
            "{mark} to play and win in {count}", mark=puzzle.turn.value, count=puzzle.moves
        )
    return lang._("{mark} to play: only one move keeps the draw", mark=puzzle.turn.value)


def refutation_sentence(refutation: Refutation, lang: Language) -> str:
    """``game.puzzles``' refutation of a wrong move (its English, word for word), in ``lang``."""
    size = refutation.position.size
    wrong, answer = cell_name(refutation.move, size), cell_name(refutation.reply, size)
    mark = refutation.position.turn.other.value  # the side that answers
    match refutation.reason:
        case Reason.COMPLETES_LINE:
            text = N_("{wrong}? {reply} completes a line: {mark} wins.")
        case Reason.FORK:
            text = N_("{wrong}? {reply} wins: {reply} makes two threats at once.")
        case Reason.FORCED_WIN:
            text = N_(
                "{wrong}? {reply}, and the win can no longer be stopped: {mark} wins in {count}."
            )
        case Reason.BLOCK:
            text = N_("{wrong}? {reply} blocks the threat: a draw.")
        case _:
            text = N_("{wrong}? {reply} holds the draw.")
    return lang._(text, wrong=wrong, reply=answer, mark=mark, count=refutation.replier_moves)


def reply_sentence(answered: Reply, lang: Language) -> str:
    """``game.puzzles``' answer to a right move (its English, word for word), in ``lang``."""
    size = answered.position.size
    right = cell_name(answered.move, size)
    solver, defender = answered.position.turn.value, answered.position.turn.other.value
    if answered.answer is None:
        return lang._("{right} completes a line: {mark} wins.", right=right, mark=solver)
    answer = cell_name(answered.answer, size)
    if answered.moves_left is None:
        return lang._(
            "{right}! The draw is held; {defender} answers {answer}.",
            right=right,
            defender=defender,
            answer=answer,
        )
    return lang._(
        "{right}! {defender}'s longest defence is {answer}; {mark} wins in {count} more.",
        right=right,
        defender=defender,
        answer=answer,
        mark=solver,
        count=answered.moves_left,
    )


def _step_shown(answered: Step) -> tuple[Board, dict[int, discord.ButtonStyle]]:
    """The position after a step, as its message shows it, and its cells' colours: the move
    and the answer to it, or the line it completed."""
    moved = answered.position.play(answered.move)
    styles = {answered.move: _MOVED_STYLE}
    answer: int | None = None
    if answered.refutation is not None:
        answer = answered.refutation.reply
    elif answered.reply is not None:
        answer = answered.reply.answer
    if moved.winning_line is not None:
        return moved, dict.fromkeys(moved.winning_line, discord.ButtonStyle.success)
    if answer is not None:
        styles[answer] = _ANSWER_STYLE
        return moved.play(answer), styles
    return moved, styles


def _step_sentence(answered: Step, lang: Language) -> str:
    if answered.kind is StepKind.WRONG:
        assert answered.refutation is not None  # a wrong step comes with its refutation
        return "❌ " + refutation_sentence(answered.refutation, lang)
    if answered.kind is StepKind.TOO_SLOW:
        size = answered.position.size
        assert answered.faster is not None  # a slow step comes with a faster move
        return "❌ " + lang._(
            "{move} still wins, but not within the puzzle's count: {faster} wins faster.",
            move=cell_name(answered.move, size),
            faster=cell_name(answered.faster, size),
        )
    assert answered.reply is not None  # a right step comes with the defender's answer
    return "✅ " + reply_sentence(answered.reply, lang)


def _puzzle_outcome(view: PuzzleView, lang: Language) -> list[str]:
    """What an ended attempt did to the day's result."""
    assert view.step is not None  # an ended attempt has its last step
    if view.counted is Counted.DAY_OVER:
        return [
            "**"
            + lang._(
                "This was an earlier day's puzzle: it no longer counts. `/ttt puzzle today` "
                "has today's."
            )
            + "**"
        ]
    if view.counted is Counted.SOLVED_BEFORE:
        return ["**" + lang._("You solved this puzzle already: this try changes nothing.") + "**"]
    lines = []
    result = view.result
    if view.step.kind is not StepKind.SOLVED:
        lines.append("**" + lang._("Not solved: try again from the start.") + "**")
    elif result is not None and result.first_try:
        lines.append("🏆 **" + lang._("Solved on the first try!") + "**")
    else:
        lines.append("🏆 **" + lang._("Solved.") + "**")
    if view.streak is not None:
        lines.append(
            "🔥 "
            + lang.n_(
                "Streak: {count} day in a row.",
                "Streak: {count} days in a row.",
                view.streak.current,
            )
        )
    return lines


PUZZLE_FOOTER = N_("Puzzle {puzzle}, proven by the exact solver · a new one every day at 00:00 UTC")


def puzzle_message(view: PuzzleView, lang: Language) -> Message:
    """The daily puzzle for one member: the task, the position with its cells to click, and
    after an answer what it did (the defender's answer, or the refutation of a wrong move)."""
    puzzle, day = view.puzzle, view.day
    dated = babel.dates.format_date(day, format="long", locale=lang.code)
    lines = [
        f"{dated} · {size_label(puzzle.size, lang)}",
        "**" + task_sentence(puzzle, lang) + "**",
        "",
    ]
    over = view.is_over
    board: Board = view.position
    styles: dict[int, discord.ButtonStyle] = {}
    if view.step is not None:
        # After a right move that goes on, this is the position to play: view.position.
        board, styles = _step_shown(view.step)
    lines.append(grid(board, winning=board.winning_line or ()))
    if view.step is not None:
        lines += ["", _step_sentence(view.step, lang)]
    if over:
        lines += _puzzle_outcome(view, lang)
    moves = encode_moves(view.moves)
    cells = _cell_buttons(
        board,
        lambda cell: PUZZLE_ID.build(
            day=encode_day(day), puzzle=puzzle.id, tries=view.tries, moves=moves, cell=cell
        ),
        playable=not over,
        styles=styles,
    )
    controls = []
    if over and view.step is not None and view.step.kind is not StepKind.SOLVED:
        again = PUZZLE_AGAIN_ID.build(day=encode_day(day), puzzle=puzzle.id)
        controls.append(_button(again, lang._("Try again"), "🔁", discord.ButtonStyle.primary))
    solved = over and view.step is not None and view.step.kind is StepKind.SOLVED
    colour = SOLVED_COLOUR if solved else MISSED_COLOUR if over else PUZZLE_COLOUR
    footer = lang._(PUZZLE_FOOTER, puzzle=puzzle.id)
    rows = _cell_rows(cells, board.size, controls)
    # The form follows the size alone, so that every edit of the message keeps it.
    title = lang._("Puzzle of the day")
    return _panel(title, "\n".join(lines), footer, colour, rows, layout=uses_layout(board.size))


def puzzle_stats_message(stats: PuzzleStats, name: str, lang: Language) -> Message:
    """A member's daily puzzles, and in a server today's solvers there (first-try ones
    starred), mentioned without pinging anyone."""
    streak = stats.streak
    lines = [
        lang._(
            "Solved: {solved} of {days} answered, {first} on the first try.",
            solved=stats.solved,
            days=stats.days,
            first=stats.first_tries,
        ),
        "🔥 "
        + lang.n_("Streak: {count} day in a row.", "Streak: {count} days in a row.", streak.current)
        + " "
        + lang.n_("Best: {count} day.", "Best: {count} days.", streak.best),
        lang._("Today's puzzle: solved.")
        if stats.solved_today
        else lang._("Today's puzzle: not solved yet."),
    ]
    if stats.in_server:
        lines += ["", "**" + lang._("Solved today in this server") + "**"]
        shown = [
            f"<@{result.user_id}>" + (" ★" if result.first_try else "")
            for result in stats.solvers[:SOLVERS_SHOWN]
        ]
        if not shown:
            lines.append(lang._("Nobody yet: `/ttt puzzle today`."))
        else:
            more = len(stats.solvers) - len(shown)
            if more:
                shown.append(lang.n_("and {count} more", "and {count} more", more))
            lines.append(", ".join(shown))
            lines.append("-# " + lang._("★ solved on the first try"))
    embed = discord.Embed(
        title=lang._("Daily puzzles: {name}", name=escape(name)),
        description="\n".join(lines),
        colour=PUZZLE_COLOUR,
    )
    return Message(embed=embed)


def drill_task(drill: Drill, lang: Language) -> str:
    """What a drill asks: the move that kept what the position held."""
    if drill.value == 1:
        return lang._(
            "The game was a win for {mark} here: find a move that keeps the win.",
            mark=drill.position.turn.value,
        )
    return lang._("The game was a draw here: find a move that keeps the draw.")


def _drill_schedule(view: DrillView, lang: Language) -> str:
    record = view.record
    if record.learned_at is not None:
        return "🎓 " + lang.n_(
            "Learned: right {count} time in a row. It won't be asked again.",
            "Learned: right {count} times in a row. It won't be asked again.",
            record.right_in_row,
        )
    return lang._("It comes back {when}.", when=timestamp(record.due_at))


def drill_message(view: DrillView, lang: Language) -> Message:
    """A drill for its member: the position of their game and the task, its cells to click;
    once answered, whether the move was right (or its refutation) and when it comes back."""
    record, drill, answered = view.record, view.drill, view.answer
    size = drill.position.size
    lines = []
    if view.from_game is not None:
        lines.append(
            lang.n_(
                "{count} drill from game #{game}: here is the first.",
                "{count} drills from game #{game}: here is the first.",
                view.from_game,
                game=record.game_id,
            )
        )
    lines += [
        lang._("From game #{game}, {size}.", game=record.game_id, size=size_label(size, lang))
        if view.game_kept
        else lang._(
            "From game #{game} (no longer kept), {size}.",
            game=record.game_id,
            size=size_label(size, lang),
        ),
        "**" + drill_task(drill, lang) + "**",
        lang._("In the game, {played} was played here.", played=cell_name(drill.played, size)),
        "",
    ]
    board: Board = drill.position
    styles: dict[int, discord.ButtonStyle] = {}
    if answered is not None:
        moved = drill.position.play(answered.move)
        styles = {answered.move: _MOVED_STYLE}
        board = moved
        if answered.refutation is not None:
            styles[answered.refutation.reply] = _ANSWER_STYLE
            board = moved.play(answered.refutation.reply)
    lines.append(grid(board, winning=board.winning_line or ()))
    controls = []
    if answered is not None:
        move = cell_name(answered.move, size)
        if answered.right and drill.value == 1:
            lines += ["", "✅ " + lang._("{move} keeps the win.", move=move)]
        elif answered.right:
            lines += ["", "✅ " + lang._("{move} keeps the draw.", move=move)]
        else:
            assert answered.refutation is not None  # a wrong answer comes with one
            lines += ["", "❌ " + refutation_sentence(answered.refutation, lang)]
        lines.append(_drill_schedule(view, lang))
        queue = view.queue
        if queue is not None and queue.due:
            lines.append(
                lang.n_("{count} more drill is due.", "{count} more drills are due.", queue.due)
            )
            controls.append(
                _button(
                    DRILL_NEXT_ID.build(), lang._("Next drill"), "➡️", discord.ButtonStyle.primary
                )
            )
    cells = _cell_buttons(
        board,
        lambda cell: DRILL_ID.build(drill=record.id, answers=record.answers, cell=cell),
        playable=answered is None,
        styles=styles,
    )
    colour = (
        PUZZLE_COLOUR if answered is None else SOLVED_COLOUR if answered.right else MISSED_COLOUR
    )
    footer = lang._("Drill #{drill} · /ttt drill asks the next one", drill=record.id)
    rows = _cell_rows(cells, size, controls)
    return _panel(lang._("Drill"), "\n".join(lines), footer, colour, rows, layout=uses_layout(size))


def level_description(name: str, lang: Language) -> str:
    """A level's one line (the engine's, extracted with Babel from ``game/ai.py``)."""
    return lang.gettext(describe(name))


# -- challenges -------------------------------------------------------------------------------


def _challenge(
    challenge: ChallengeRecord,
    text: str,
    actions: Sequence[str] = (),
    allowed_mentions: discord.AllowedMentions = NO_PINGS,
) -> Message:
    """A challenge's message in its game's form: classic, or components v2 for a board that
    needs it (see the module's docstring), with a button for each of ``actions``."""
    lang = i18n.language(challenge.language)
    buttons = [
        _action(CHALLENGE_ID.build(challenge=challenge.id, action=action), action, lang)
        for action in actions
    ]
    rows = [_row(buttons)] if buttons else []
    if uses_layout(challenge.size):
        return Message(
            components=[_text_display(text), *rows], layout=True, allowed_mentions=allowed_mentions
        )
    return Message(content=text, components=rows, allowed_mentions=allowed_mentions)


def challenge_message(challenge: ChallengeRecord) -> Message:
    lang = i18n.language(challenge.language)
    challenger = member(challenge.challenger_id, challenge.challenger_name, lang)
    opponent = (
        None
        if challenge.opponent_id is None
        else member(challenge.opponent_id, challenge.opponent_name, lang)
    )
    board = (
        ""
        if challenge.size == DEFAULT_SIZE
        else " "
        + lang._(
            "on a {size} board ({line} in a row)",
            size=size_name(challenge.size),
            line=standard_line_length(challenge.size),
        )
    )
    match challenge.status:
        case ChallengeStatus.PENDING:
            actions = ["accept", "withdraw"]
            if challenge.opponent_id is not None:
                actions.insert(1, "decline")
            expires = timestamp(challenge.expires_at)
            if challenge.opponent_id is None:
                return _challenge(
                    challenge,
                    "⚔️ "
                    + lang._(
                        "{challenger} is looking for a tic-tac-toe opponent{board}! "
                        "Anyone can accept; the challenge expires {expires}.",
                        challenger=challenger,
                        board=board,
                        expires=expires,
                    ),
                    actions,
                )
            return _challenge(
                challenge,
                "⚔️ "
                + lang._(
                    "{opponent}, {challenger} challenges you to tic-tac-toe{board}! Accept or "
                    "decline; the challenge expires {expires}.",
                    opponent=f"<@{challenge.opponent_id}>",
                    challenger=challenger,
                    board=board,
                    expires=expires,
                ),
                actions,
                # The one ping the bot ever makes: the member who was challenged.
                discord.AllowedMentions(
                    users=[discord.Object(challenge.opponent_id)],
                    everyone=False,
                    roles=False,
                    replied_user=False,
                ),
            )
        case ChallengeStatus.DECLINED:
            text = lang._(
                "{opponent} declined {challenger}'s challenge.",
                opponent=opponent,
                challenger=challenger,
            )
        case ChallengeStatus.WITHDRAWN:
            text = lang._("{challenger} withdrew the challenge.", challenger=challenger)
        case ChallengeStatus.EXPIRED:
            text = "⌛ " + lang._(
                "{challenger}'s challenge expired: nobody accepted in time.",
                challenger=challenger,
            )
        case ChallengeStatus.ACCEPTED:
            text = lang._("{challenger}'s challenge was accepted.", challenger=challenger)
    return _challenge(challenge, text)


def retired_challenge_message(challenge: ChallengeRecord) -> Message:
    """An older message of a challenge shown again below: no buttons, a pointer."""
    lang = i18n.language(challenge.language)
    challenger = member(challenge.challenger_id, challenge.challenger_name, lang)
    return _challenge(
        challenge,
        "⚔️ "
        + lang._("{challenger}'s challenge moved to a newer message below.", challenger=challenger),
    )


# -- stats, leaderboard, help -------------------------------------------------------------------


def _record(lang: Language, wins: int, losses: int, draws: int) -> str:
    return lang._("{wins} W · {losses} L · {draws} D", wins=wins, losses=losses, draws=draws)


def stats_message(
    stats: PlayerStats,
    name: str,
    difficulties: tuple[str, ...],
    lang: Language,
    *,
    in_server: bool = True,
) -> Message:
    """A member's stats in this server, or (``in_server=False``) in all their DMs."""
    embed = discord.Embed(
        title=lang._(
            "Tic-tac-toe stats: {name} ({size})", name=escape(name), size=size_name(stats.size)
        ),
        colour=LIVE_COLOUR,
    )
    members = stats.against(VS_MEMBER)
    rating = (
        lang._("{rating} Elo", rating=f"{stats.rating:.0f}")
        if stats.rating is not None
        else lang._("unrated")
    )
    embed.add_field(
        name=lang._("Against members"),
        value=f"{_record(lang, members.wins, members.losses, members.draws)} ({rating})",
        inline=False,
    )
    for difficulty in difficulties:
        record = stats.against(difficulty)
        embed.add_field(
            name=lang._("Against the bot ({difficulty})", difficulty=difficulty),
            value=_record(lang, record.wins, record.losses, record.draws),
            inline=True,
        )
    if not any(record.games for record in stats.records.values()):
        embed.description = (
            lang._(
                "No finished games yet in this server on {size} boards.",
                size=size_name(stats.size),
            )
            if in_server
            else lang._(
                "No finished games yet outside servers on {size} boards.",
                size=size_name(stats.size),
            )
        )
    embed.set_footer(text=lang._("Games in which a hint was used (/ttt hint) count in no stats."))
    return Message(embed=embed)


def leaderboard_message(rows: list[Rating], lang: Language, size: int = DEFAULT_SIZE) -> Message:
    embed = discord.Embed(
        title=lang._("Tic-tac-toe leaderboard ({size})", size=size_name(size)),
        colour=LIVE_COLOUR,
    )
    if not rows:
        embed.description = lang._(
            "Nobody is rated yet on {size} boards: ratings come from games between members "
            "(games against the bot don't count).",
            size=size_name(size),
        )
        return Message(embed=embed)
    medals = ["🥇", "🥈", "🥉"]
    lines = []
    for rank, row in enumerate(rows, start=1):
        badge = medals[rank - 1] if rank <= len(medals) else f"{rank}."
        record = _record(lang, row.wins, row.losses, row.draws)
        lines.append(f"{badge} <@{row.user_id}>: **{row.rating:.0f}** ({record})")
    embed.description = "\n".join(lines)
    embed.set_footer(
        text=lang._(
            "Elo from games between members on {size} boards; games against the bot don't count.",
            size=size_name(size),
        )
    )
    return Message(embed=embed)


HELP_TEXT = N_("""\
**Play a member:** `/ttt start opponent:@someone` (or leave `opponent` out: anyone can accept). \
The challenger plays ❌ and moves first.
**Play the bot:** `/ttt vs-ai difficulty:casual first:me`, at one of these levels, \
weakest first:
{levels}
**Board sizes:** add `size:4` or `size:5` to either: {sizes}; {default} if you leave it out. \
Each size has its own stats and leaderboard.
**Move:** click a cell, or `/ttt move cell:B2` (letter = column, number = row; numbers count \
the cells row by row from 1, so `1`-`9` on {default}).
**Hint:** `/ttt hint` shows you alone the best move in a game against me; the game then \
counts in no stats.
**Review:** the **Review** button on a finished board, or `/ttt review [game]` (the number on \
its board; the channel's last game if you leave it out), goes through a game move by move, \
for you alone: which moves kept the result, which missed a win, which threw the game away.
**Other commands:** `/ttt board` shows the board again, `/ttt resign`, \
`/ttt stats [member] [size]`, `/ttt leaderboard [size]`, and `/ttt end` for moderators (counts \
for nobody).
One game per channel; a player who doesn't move in time loses the game.""")


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
        sizes=", ".join(size_label(size, lang) for size in BOARD_SIZES),
        default=size_name(default_size),
    )
    text += "\n" + lang._(HELP_PRACTICE)
    return Message(embed=discord.Embed(title=lang._("Tic-tac-toe"), description=text))


# -- server settings ---------------------------------------------------------------------------


def duration(seconds: float, lang: Language) -> str:
    """A duration in words, exactly, in ``lang``: "1 hour and 30 minutes"."""
    locale = babel.Locale.parse(lang.code)
    whole = max(round(seconds), 1)
    parts = []
    units: tuple[tuple[Literal["day", "hour", "minute", "second"], int], ...] = (
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
        ("second", 1),
    )
    for unit, size in units:
        count, whole = divmod(whole, size)
        if count:
            # An infinite threshold holds the unit given: babel would say "1 week" for 7 days.
            exact = datetime.timedelta(seconds=count * size)
            parts.append(
                babel.dates.format_timedelta(
                    exact, granularity=unit, threshold=math.inf, locale=locale
                )
            )
    return babel.lists.format_list(parts, locale=locale)


def language_name(code: str) -> str:
    """A language's own name for itself: "Deutsch", "português (Brasil)"."""
    return str(babel.Locale.parse(code).get_display_name(code))


def settings_message(
    settings: ServerSettings,
    lang: Language,
    *,
    turn_timeout: float,
    challenge_timeout: float,
    saved: bool = False,
) -> Message:
    """A server's settings, each with who changed it last; the timeouts given are the bot's
    own, shown where the server keeps them."""

    def changed(*shown: Setting) -> str:
        changes = [settings.changes[setting] for setting in shown if setting in settings.changes]
        if not changes:
            return ""
        change = max(changes, key=lambda change: change.at)
        return "\n" + lang._(
            "-# changed by <@{user}> {when}", user=change.by, when=timestamp(change.at)
        )

    def field(name: str, setting: Setting | tuple[Setting, ...], value: str) -> None:
        shown = setting if isinstance(setting, tuple) else (setting,)
        embed.add_field(name=name, value=value + changed(*shown), inline=False)

    def default(value: str) -> str:
        return lang._("{value} (the bot's default)", value=value)

    embed = discord.Embed(title=lang._("Tic-tac-toe settings for this server"), colour=LIVE_COLOUR)
    if settings.channels:
        where = ", ".join(f"<#{channel}>" for channel in sorted(settings.channels))
    else:
        where = lang._("Every channel")
    field(lang._("Where games can be started"), Setting.CHANNELS, where)
    if settings.player_roles:
        who = ", ".join(f"<@&{role}>" for role in sorted(settings.player_roles))
    else:
        who = lang._("Everyone")
    field(lang._("Who can play"), Setting.PLAYER_ROLES, who)
    if settings.moderator_role is None:
        enders = lang._("Members who can manage messages")
    else:
        enders = lang._(
            "Members who can manage messages, and {role}", role=f"<@&{settings.moderator_role}>"
        )
    field(lang._("Who can end games (/ttt end)"), Setting.MODERATOR_ROLE, enders)
    for setting, name, own, bot_default in (
        (Setting.TURN_TIMEOUT, lang._("Time for a move"), settings.turn_timeout, turn_timeout),
        (
            Setting.CHALLENGE_TIMEOUT,
            lang._("Time to answer a challenge"),
            settings.challenge_timeout,
            challenge_timeout,
        ),
    ):
        shown = duration(own, lang) if own is not None else default(duration(bot_default, lang))
        field(name, setting, shown)
    if settings.language is None:
        spoken = lang._("The server's Discord language")
    else:
        spoken = language_name(settings.language)
    field(lang._("Language of boards and challenges"), Setting.LANGUAGE, spoken)
    if settings.max_games is None:
        limit = lang._("No limit")
    else:
        limit = lang.n_("{count} game", "{count} games", settings.max_games)
    field(lang._("Live games a member can be in at once"), Setting.MAX_GAMES, limit)
    wait = duration(settings.cooldown, lang) if settings.cooldown else lang._("None")
    field(lang._("Wait between one member's challenges"), Setting.COOLDOWN, wait)
    marks = " ".join(
        mark or MARK_EMOJI[side]
        for side, mark in ((Mark.X, settings.mark_x), (Mark.O, settings.mark_o))
    )
    chosen = settings.mark_x or settings.mark_o
    both = (Setting.MARK_X, Setting.MARK_O)
    field(lang._("Marks for X and O"), both, marks if chosen else default(marks))
    threads = (
        lang._("On: each game gets a thread of its own") if settings.threads else lang._("Off")
    )
    field(lang._("Games in threads"), Setting.THREADS, threads)
    size = settings.size or DEFAULT_SIZE
    shown_size = size_label(size, lang) if settings.size else default(size_label(size, lang))
    field(lang._("Board size when none is picked"), Setting.SIZE, shown_size)
    embed.set_footer(text=lang._("Change them with /ttt-settings; members don't see this."))
    content = lang._("Saved. The settings now:") if saved else None
    return Message(content=content, embed=embed)


# -- members' data --------------------------------------------------------------------------

# An embed description's limit is 4,096 characters; what is cut says so in the last line.
_DESCRIPTION_LIMIT = 3900


def _fit(lines: list[str], lang: Language) -> str:
    """``lines`` joined, as many as fit in an embed's description."""
    text = "\n".join(lines)
    if len(text) <= _DESCRIPTION_LIMIT:
        return text
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > _DESCRIPTION_LIMIT:
            break
        kept.append(line)
        used += len(line) + 1
    left = len(lines) - len(kept)
    kept.append(lang.n_("… and {count} more line.", "… and {count} more lines.", left))
    return "\n".join(kept)


def _place(guild_id: int, here: int | None, lang: Language) -> str:
    """Where some data was played: a server by its id (the bot knows no server's name), or
    outside servers."""
    if guild_id == OUTSIDE_SERVERS:
        return lang._("Outside servers (DMs and group DMs)")
    if guild_id == here:
        return lang._("This server ({id})", id=guild_id)
    return lang._("Server {id}", id=guild_id)


def member_data_message(
    data: MemberData, here: int | None, difficulties: tuple[str, ...], lang: Language
) -> Message:
    """``/ttt my-data``: everything the bot keeps about the member, for them alone: per server
    (``here``: the one asked from) and board size their records, ratings and stored games,
    then their challenges and the names stored with them."""
    title = lang._("What I keep about you")
    if data.is_empty:
        return Message(
            embed=discord.Embed(
                title=title,
                description=lang._("Nothing: I keep no data about you."),
                colour=LIVE_COLOUR,
            )
        )
    stats = {(kept.guild_id, kept.size): kept for kept in data.stats}
    games = {(kept.guild_id, kept.size): kept.games for kept in data.games}
    lines: list[str] = []
    for guild_id in data.guild_ids:
        lines.append(f"**{_place(guild_id, here, lang)}**")
        for size in sorted(
            {size for guild, size in stats.keys() | games.keys() if guild == guild_id}
        ):
            stored = games.get((guild_id, size), 0)
            lines.append(
                f"- {size_name(size)}: "
                + lang.n_("{count} game stored", "{count} games stored", stored)
            )
            kept = stats.get((guild_id, size))
            if kept is None:
                continue
            members = kept.against(VS_MEMBER)
            if members.games or kept.rating is not None:
                rating = (
                    lang._("{rating} Elo", rating=f"{kept.rating:.0f}")
                    if kept.rating is not None
                    else lang._("unrated")
                )
                record = _record(lang, members.wins, members.losses, members.draws)
                lines.append(f"  - {lang._('Against members')}: {record} ({rating})")
            for difficulty in difficulties:
                against = kept.against(difficulty)
                if against.games:
                    record = _record(lang, against.wins, against.losses, against.draws)
                    name = lang._("Against the bot ({difficulty})", difficulty=difficulty)
                    lines.append(f"  - {name}: {record}")
    lines.append("")
    lines.append(
        lang.n_("{count} challenge stored.", "{count} challenges stored.", data.challenges)
    )
    names = ", ".join(f"**{escape(name)}**" for name in data.names)
    lines.append(lang._("Names stored with your games and challenges: {names}", names=names))
    if data.puzzle_days or data.drills:
        lines.append(
            lang.n_(
                "Daily puzzles answered on {count} day;",
                "Daily puzzles answered on {count} days;",
                data.puzzle_days,
            )
            + " "
            + lang.n_(
                "{count} drill from your games.", "{count} drills from your games.", data.drills
            )
        )
    embed = discord.Embed(title=title, description=_fit(lines, lang), colour=LIVE_COLOUR)
    embed.set_footer(
        text=lang._(
            "Only you see this. /ttt forget-me deletes your stats and ratings and takes your "
            "name and id out of every game."
        )
    )
    return Message(embed=embed)


def _question(
    title: str, text: str, custom_ids: tuple[str, str], labels: tuple[str, str], lang: Language
) -> Message:
    """A question with its two answers: a red button that does it, a grey one that cancels."""
    (confirm, cancel), (yes, no) = custom_ids, labels
    buttons = [
        _button(confirm, lang.gettext(yes), None, discord.ButtonStyle.danger),
        _button(cancel, lang.gettext(no), None, discord.ButtonStyle.secondary),
    ]
    embed = discord.Embed(title=title, description=text, colour=discord.Colour.red())
    return Message(embed=embed, components=[_row(buttons)])


def forget_confirmation(data: MemberData, asked_at: int, lang: Language) -> Message:
    """``/ttt forget-me``'s question, for the member alone: what goes, that it cannot be undone,
    and a button for each answer, which only they can use, for a while."""
    games = sum(kept.games for kept in data.games)
    text = "\n\n".join(
        [
            lang._(
                "In every server and outside servers, your stats and ratings are deleted, and "
                "your name and id are replaced by *{placeholder}* in {games} and {challenges}; "
                "the other players keep their results.",
                placeholder=lang._(FORGOTTEN_MEMBER),
                games=lang.n_("{count} game", "{count} games", games),
                challenges=lang.n_("{count} challenge", "{count} challenges", data.challenges),
            ),
            lang._(
                "Your live games end first, counting for nobody, and your open challenges close."
            ),
            lang._("Your daily puzzle results and your drills are deleted too."),
            "**" + lang._("This cannot be undone.") + "**",
        ]
    )
    ids = tuple(
        FORGET_ID.build(member=data.user_id, asked=asked_at, action=action)
        for action in ("confirm", "cancel")
    )
    title = lang._("Delete your data?")
    return _question(title, text, (ids[0], ids[1]), (N_("Delete my data"), N_("Cancel")), lang)


def forgotten_message(forgetting: Forgetting, lang: Language) -> Message:
    """What forgetting did, in place of the question."""
    forgotten = forgetting.forgotten
    if not (
        forgotten.games or forgotten.challenges or forgotten.stats_rows or forgotten.practice_rows
    ):
        # A second click, or a member with nothing left: nothing changed.
        return plain_text(lang._("There was nothing left to delete: your data is already gone."))
    lines = [
        "🗑️ "
        + lang._(
            "Done: your stats and ratings are deleted, and {games} and {challenges} now show "
            "*{placeholder}* instead of you.",
            games=lang.n_("{count} game", "{count} games", forgotten.games),
            challenges=lang.n_("{count} challenge", "{count} challenges", forgotten.challenges),
            placeholder=lang._(FORGOTTEN_MEMBER),
        )
    ]
    if forgotten.practice_rows:
        lines.append(lang._("Your daily puzzle results and your drills are deleted."))
    if forgetting.games:
        lines.append(
            lang.n_(
                "{count} live game ended, counting for nobody.",
                "{count} live games ended, counting for nobody.",
                len(forgetting.games),
            )
        )
    return plain_text("\n".join(lines))


def cancelled_message(lang: Language) -> Message:
    """A question answered with Cancel."""
    return plain_text(lang._("Cancelled: nothing was deleted."))


def forgotten_note(game: GameRecord) -> str:
    """The note on the board of a game that ended because a player was forgotten."""
    return (
        "*"
        + i18n.language(game.language)._("A player deleted their data, so this game ended.")
        + "*"
    )


def erase_server_confirmation(guild_id: int, asked_at: int, lang: Language) -> Message:
    """The question an admin answers before a server's data goes (posted, ephemeral, by the
    command that asks it): what goes, that it cannot be undone, and a button for each answer,
    which works for members who can manage the server, for a while."""
    text = "\n\n".join(
        [
            lang._(
                "Every game, challenge, record and rating of this server goes, for every member, "
                "and its settings too; live games and open challenges end."
            ),
            "**" + lang._("This cannot be undone.") + "**",
        ]
    )
    ids = tuple(
        ERASE_ID.build(guild=guild_id, asked=asked_at, action=action)
        for action in ("confirm", "cancel")
    )
    title = lang._("Delete this server's tic-tac-toe data?")
    labels = (N_("Delete this server's data"), N_("Cancel"))
    return _question(title, text, (ids[0], ids[1]), labels, lang)


def server_erased_message(erased: GuildErased, lang: Language) -> Message:
    """What erasing a server's data did, in place of the question."""
    if erased.is_empty:
        return plain_text(lang._("There was no data of this server to delete."))
    drills = (
        " "
        + lang.n_(
            "{count} drill made from its games went with them.",
            "{count} drills made from its games went with them.",
            erased.drills,
        )
        if erased.drills
        else ""
    )
    return plain_text(
        "🗑️ "
        + lang._(
            "Done: deleted {games}, {challenges} and {rows} of this server.",
            games=lang.n_("{count} game", "{count} games", erased.games),
            challenges=lang.n_("{count} challenge", "{count} challenges", erased.challenges),
            rows=lang.n_(
                "{count} row of records, ratings and settings",
                "{count} rows of records, ratings and settings",
                erased.stats_rows,
            ),
        )
        + drills
    )


def thread_pointer_message(game: GameRecord, size: int) -> Message:
    """Where a game went: the thread of its own it is played in (in place of its challenge,
    or as the answer to ``/ttt vs-ai``), in the form of a ``size`` game's messages."""
    lang = i18n.language(game.language)
    text = "🧵 " + lang._(
        "{x} vs {o}: the game is on in {thread}.",
        x=player(game, Mark.X, lang),
        o=player(game, Mark.O, lang),
        thread=f"<#{game.channel_id}>",
    )
    if uses_layout(size):
        return Message(components=[_text_display(text)], layout=True)
    return Message(content=text)


def erased_message(shown: GameRecord | ChallengeRecord) -> Message:
    """What the message of a live game or open challenge shows once its server's data was
    deleted: no buttons, a sentence, in its form (see the module's docstring)."""
    lang = i18n.language(shown.language)
    if isinstance(shown, GameRecord):
        text = "🗑️ " + lang._("This game was deleted with the server's data.")
    else:
        text = "🗑️ " + lang._("This challenge was deleted with the server's data.")
    if uses_layout(shown.size):
        return Message(components=[_text_display(text)], layout=True)
    return Message(content=text)
