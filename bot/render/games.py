"""Games' boards and challenges: a game's board message (its grid, status and buttons),
the board once retired, the notes under it, the pointer to a game's own thread, a challenge's
message in each state; and reading a board's game back from its footer."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import discord

from bot import i18n
from bot.components import CELL_ID, CHALLENGE_ID, GAME_ACTION_ID, walk
from bot.domain import size_name
from bot.i18n import N_, Language
from bot.marks import custom_emoji_id
from bot.render.parts import (
    JSON,
    LAYOUT_FOOTER,
    LIVE_COLOUR,
    NO_PINGS,
    OVER_COLOUR,
    TEXT_DISPLAY,
    WIN_COLOUR,
    MarksFallback,
    Message,
    action_button,
    button_row,
    cell_buttons,
    cell_rows,
    grid,
    mark_emoji,
    member,
    panel,
    player,
    size_label,
    text_display,
    timestamp,
    uses_layout,
)
from bot.render.ultimate import ultimate_grid, ultimate_rows, where_to_play
from bot.storage.base import ChallengeRecord, ChallengeStatus, EndReason, GameRecord, is_forgotten
from game import DEFAULT_SIZE, Board, Mark, cell_name, standard_line_length
from game.ultimate import UltimateBoard
from game.variants import Position, is_ultimate

# Every board names its game, so that a click can be checked against the board it is on: in
# the embed's footer, or in a components-v2 board's last line (as small text). A board that
# takes no more moves (the game over, or the board moved to a newer message) only names it.
BOARD_FOOTER = N_("Game #{game} · click a cell or use /ttt move")
CLOSED_BOARD_FOOTER = N_("Game #{game}")
# The footers as every language writes them (boards keep the language they were drawn in).
_BOARD_FOOTERS = tuple(
    re.compile(re.escape(form.format(footer)).replace(r"\{game\}", "([0-9]+)"))
    for footer in {
        i18n.language(code).gettext(text)
        for code in i18n.ALL_LANGUAGES
        for text in (BOARD_FOOTER, CLOSED_BOARD_FOOTER)
    }
    for form in ("{}", LAYOUT_FOOTER)
)


# -- the board --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shown:
    """A game as one render draws it: its position and winning cells are worked out once."""

    game: GameRecord
    board: Position
    winning: frozenset[int]  # the cells to highlight: the line that won, if one did
    lang: Language  # the game's own: its board reads the same whoever redraws it
    marks: Mapping[Mark, str]  # the emoji it shows for each side
    # Ultimate, when the player to move may play in any open small board: the one they picked
    # to play in (the buttons show its cells), or None (the buttons offer the boards).
    picked: int | None = None

    @classmethod
    def of(cls, game: GameRecord, picked: int | None = None) -> Shown:
        board = game.board
        line = board.winning_line if game.end_reason is EndReason.LINE else None
        if isinstance(board, UltimateBoard):
            line = None  # its winning line is of small boards, drawn as big marks
        marks = {mark: mark_emoji(game, mark) for mark in (Mark.X, Mark.O)}
        lang = i18n.language(game.language)
        return cls(game, board, frozenset(line or ()), lang, marks, picked)


def _grid(shown: Shown) -> str:
    if isinstance(shown.board, UltimateBoard):
        return ultimate_grid(shown.board, shown.marks, shown.picked)
    return grid(shown.board, shown.marks, shown.winning)


def status_line(shown: Shown) -> str:
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
        case EndReason.LINE if winner and isinstance(board, UltimateBoard):
            return "🏆 " + lang._(
                "{winner} wins three small boards in a row!", winner=player(game, winner, lang)
            )
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
    if is_ultimate(size):
        return lang._("Ultimate tic-tac-toe")
    return lang._("Tic-tac-toe {size}", size=size_label(size, lang))


def board_colour(game: GameRecord) -> discord.Colour:
    return LIVE_COLOUR if game.is_active else (WIN_COLOUR if game.winner else OVER_COLOUR)


ASSISTED = N_("Assisted: a hint was used, so this game counts in no stats.")


def _board_text(shown: Shown, note: str | None) -> str:
    """The players, the grid and the status: an embed's description, or a layout's text."""
    game = shown.game
    lines = [
        shown.lang._(
            "{x} vs {o}", x=player(game, Mark.X, shown.lang), o=player(game, Mark.O, shown.lang)
        ),
        "",
        _grid(shown),
        "",
        status_line(shown),
    ]
    if isinstance(shown.board, UltimateBoard) and game.is_active:
        lines.append(where_to_play(shown.board, shown.picked, shown.lang))
    if game.assisted:
        lines.append("💡 " + shown.lang._(ASSISTED))
    if note:
        lines.append(note)
    return "\n".join(lines)


def _footer(shown: Shown, *, buttons: bool) -> str:
    playable = buttons and shown.game.is_active
    return shown.lang._(BOARD_FOOTER if playable else CLOSED_BOARD_FOOTER, game=shown.game.id)


def _cells(shown: Shown) -> list[JSON]:
    """The cell buttons in order. Each names the position it was drawn in (the ply), so that
    a click means exactly the position the player saw."""
    game, board = shown.game, shown.board
    assert isinstance(board, Board)  # ultimate's are drawn by bot.render.ultimate
    ply = board.move_count
    return cell_buttons(
        board,
        lambda cell: CELL_ID.build(game=game.id, ply=ply, cell=cell),
        playable=game.is_active,
        styles=dict.fromkeys(shown.winning, discord.ButtonStyle.success),
        marks=shown.marks,
    )


def _controls(shown: Shown) -> list[JSON]:
    """The control row: Resign while the game is live; Rematch and Review once it is over (a
    review of a live game would tell the player to move how to play)."""
    game = shown.game
    actions = ["resign"] if game.is_active else ["rematch", "review"]
    return [
        action_button(GAME_ACTION_ID.build(action=action, game=game.id), action, shown.lang)
        for action in actions
    ]


def _board_rows(shown: Shown) -> list[JSON]:
    """The cells, a row of buttons per board row, and the control row (ultimate: see
    :func:`bot.render.ultimate.ultimate_rows`)."""
    board = shown.board
    if isinstance(board, UltimateBoard):
        return ultimate_rows(
            shown.game, board, shown.marks, shown.picked, _controls(shown), shown.lang
        )
    return cell_rows(_cells(shown), board.size, _controls(shown))


def _board(shown: Shown, note: str | None, *, buttons: bool) -> Message:
    """A board message; without ``buttons``, one that no longer takes clicks."""
    size = shown.board.size
    return panel(
        _title(size, shown.lang),
        _board_text(shown, note),
        _footer(shown, buttons=buttons),
        board_colour(shown.game),
        _board_rows(shown) if buttons else [],
        layout=uses_layout(size),
    )


def board_message(game: GameRecord, note: str | None = None, picked: int | None = None) -> Message:
    """The game's board message: the grid and status, and the cell buttons with Resign, or
    Rematch and Review (ultimate: with the small board ``picked`` to play in, if the player
    picked one). A server's custom emoji among its marks comes with the board drawn with the
    bot's own (:class:`MarksFallback`)."""
    message = _board(Shown.of(game, picked), note, buttons=True)
    custom = [custom_emoji_id(mark) for mark in (game.mark_x, game.mark_o) if mark]
    emoji_ids = tuple(emoji_id for emoji_id in custom if emoji_id is not None)
    if not emoji_ids:
        return message
    own_marks = dataclasses.replace(game, mark_x=None, mark_o=None)
    plain = _board(Shown.of(own_marks, picked), note, buttons=True)
    fallback = MarksFallback(game.id, game.guild_id, emoji_ids, plain)
    return dataclasses.replace(message, fallback=fallback)


def retired_board_message(game: GameRecord) -> Message:
    """An older board message, once a newer one carries the game: no buttons, a pointer."""
    shown = Shown.of(game)
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


def last_move_note(game: GameRecord) -> str | None:
    """The note a live game's board was last shown with, to draw it again as it was."""
    if game.ai_mark is not None:
        return last_answer_note(game)
    return move_note(game, game.moves[-1], None) if game.moves else None


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
        return Message(components=[text_display(text)], layout=True)
    return Message(content=text)


# -- challenges -------------------------------------------------------------------------------


def _challenge(
    challenge: ChallengeRecord,
    text: str,
    actions: Sequence[str] = (),
    allowed_mentions: discord.AllowedMentions = NO_PINGS,
) -> Message:
    """A challenge's message in its game's form: classic, or components v2 for a board that
    needs it (see :mod:`bot.render.parts`), with a button for each of ``actions``."""
    lang = i18n.language(challenge.language)
    buttons = [
        action_button(CHALLENGE_ID.build(challenge=challenge.id, action=action), action, lang)
        for action in actions
    ]
    rows = [button_row(buttons)] if buttons else []
    if uses_layout(challenge.size):
        return Message(
            components=[text_display(text), *rows], layout=True, allowed_mentions=allowed_mentions
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
        else lang._(", ultimate version (nine small boards)")
        if is_ultimate(challenge.size)
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
