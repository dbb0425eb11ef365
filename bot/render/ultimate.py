"""Ultimate tic-tac-toe's board: the 9x9 grid as text, and the buttons of its two steps.

The grid shows every cell in emoji, the small boards apart; a won small board is one big mark
(its cells no longer matter), and the empty cells the player to move may play are white, the
others dark. A message holds 40 components, far fewer than 81 cells, so the buttons are only the
nine cells of the small board to play in (a move is one click). When the player may choose any
open board, the buttons first offer the boards (``PICK_ID``), then the chosen board's cells with
a way back: the choice is only what the message shows, nothing is stored, and the cell click
that follows is checked like any other move.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import discord

from bot.components import CELL_ID, PICK_ID
from bot.i18n import N_, Language
from bot.render.parts import (
    CORNER_EMOJI,
    EMPTY_EMOJI,
    JSON,
    MARK_EMOJI,
    ROW_EMOJI,
    WINNING_EMOJI,
    button,
    button_row,
)
from bot.storage.base import GameRecord
from game import COLUMN_LETTERS, Mark, cell_name
from game.ultimate import UltimateBoard, small_board_cells

# An empty cell that cannot be played now (its board is not the one to play in, or the game is
# over), beside the white ones that can.
IDLE_EMOJI = CORNER_EMOJI
# The column letters on top, as regional indicators kept apart by spaces (side by side, two of
# them would make a flag).
COLUMN_EMOJI = ["🇦", "🇧", "🇨", "🇩", "🇪", "🇫", "🇬", "🇭", "🇮"]
BOARD_GAP = " ┃ "
# How a won small board shows its winner: one big mark over its nine cells.
_BIG_MARK = {
    Mark.X: (True, False, True, False, True, False, True, False, True),
    Mark.O: (True, True, True, True, False, True, True, True, True),
}
# A components-v2 message holds 4,000 characters of text in all. The grid with a server's
# custom emoji (up to 55 characters each) can pass that; past this length it is drawn with the
# bot's own marks (the buttons still show the server's).
GRID_LIMIT = 3_000
# Each small board's place in the grid, on its button.
BOARD_ARROWS = ("↖️", "⬆️", "↗️", "⬅️", "⏺️", "➡️", "↙️", "⬇️", "↘️")
BACK = N_("Boards")


def playable_boards(board: UltimateBoard, picked: int | None) -> frozenset[int]:
    """The small boards whose empty cells the player to move may play now, as shown: the one
    they were sent to, the one they picked, or every open one."""
    if board.is_over:
        return frozenset()
    if board.forced_board is not None:
        return frozenset({board.forced_board})
    if picked is not None:
        return frozenset({picked})
    return frozenset(small for small in range(9) if not board.small_is_closed(small))


def winning_boards(board: UltimateBoard) -> frozenset[int]:
    return frozenset(board.winning_line or ())


def ultimate_grid(
    board: UltimateBoard, marks: Mapping[Mark, str], picked: int | None = None
) -> str:
    """The 9x9 grid in emoji with its column letters and row numbers (see the module); drawn
    with the bot's own marks where ``marks`` would make it longer than :data:`GRID_LIMIT`."""
    text = _grid(board, marks, picked)
    if len(text) > GRID_LIMIT:
        return _grid(board, MARK_EMOJI, picked)
    return text


def _grid(board: UltimateBoard, marks: Mapping[Mark, str], picked: int | None) -> str:
    playable = playable_boards(board, picked)
    winning = winning_boards(board)
    own_marks = all(marks[mark] == MARK_EMOJI[mark] for mark in Mark)
    header = BOARD_GAP.join(" ".join(COLUMN_EMOJI[start : start + 3]) for start in (0, 3, 6))
    lines = [f"{CORNER_EMOJI} {header}"]
    for row in range(9):
        if row and row % 3 == 0:
            lines.append("")
        thirds = []
        for band_column in range(3):
            cells = []
            for column in range(band_column * 3, band_column * 3 + 3):
                cell = row * 9 + column
                small = row // 3 * 3 + column // 3
                cells.append(_cell(board, cell, small, marks, playable, winning, own_marks))
            thirds.append(" ".join(cells))
        lines.append(f"{ROW_EMOJI[row]} {BOARD_GAP.join(thirds)}")
    return "\n".join(lines)


def _cell(
    board: UltimateBoard,
    cell: int,
    small: int,
    marks: Mapping[Mark, str],
    playable: frozenset[int],
    winning: frozenset[int],
    own_marks: bool,
) -> str:
    winner = board.small_winner(small)
    if winner is not None:
        local = (cell // 9 % 3) * 3 + cell % 9 % 3
        if not _BIG_MARK[winner][local]:
            return IDLE_EMOJI
        if small in winning and own_marks:
            return WINNING_EMOJI[winner]
        return marks[winner]
    mark = board[cell]
    if mark is not None:
        return marks[mark]
    return EMPTY_EMOJI if small in playable else IDLE_EMOJI


def board_range(small: int) -> str:
    """A small board as its first and last cells, ``G1`` to ``I3`` with a dash between."""
    cells = small_board_cells(small)
    return f"{cell_name(cells[0], 9)}\N{EN DASH}{cell_name(cells[-1], 9)}"


def where_to_play(board: UltimateBoard, picked: int | None, lang: Language) -> str:
    """The line under the status of a live game: which small board the player to move plays
    in, or that they may pick any open one."""
    if board.forced_board is not None:
        return "➡️ " + lang._(
            "Play in the small board {board}.", board=board_range(board.forced_board)
        )
    if picked is not None:
        return "➡️ " + lang._(
            "Any open small board may be played: {board} is picked.", board=board_range(picked)
        )
    return "➡️ " + lang._("Any open small board may be played: pick one below.")


def ultimate_rows(
    game: GameRecord,
    board: UltimateBoard,
    marks: Mapping[Mark, str],
    picked: int | None,
    controls: list[JSON],
    lang: Language,
) -> list[JSON]:
    """The buttons of a live game: the nine cells of the small board to play in, or the nine
    small boards to pick from, then ``controls`` (with a way back to the boards once one is
    picked). A finished game has its controls only."""
    if not game.is_active or board.is_over:
        return [button_row(controls)]
    ply = board.move_count
    small = board.forced_board if board.forced_board is not None else picked
    if small is None:
        buttons = [_board_button(board, game.id, ply, each, marks) for each in range(9)]
    else:
        buttons = _cell_buttons(
            board, small, marks, lambda cell: CELL_ID.build(game=game.id, ply=ply, cell=cell)
        )
        if board.forced_board is None:
            back = PICK_ID.build(game=game.id, ply=ply, board="all")
            controls = [button(back, lang._(BACK), "↩️", discord.ButtonStyle.secondary), *controls]
    rows = [button_row(buttons[start : start + 3]) for start in (0, 3, 6)]
    rows.append(button_row(controls))
    return rows


def _cell_buttons(
    board: UltimateBoard, small: int, marks: Mapping[Mark, str], custom_id: Callable[[int], str]
) -> list[JSON]:
    buttons = []
    for cell in small_board_cells(small):
        mark = board[cell]
        buttons.append(
            button(
                custom_id(cell),
                cell_name(cell, 9) if mark is None else None,
                marks[mark] if mark is not None else None,
                discord.ButtonStyle.secondary,
                disabled=mark is not None,
            )
        )
    return buttons


def _board_button(
    board: UltimateBoard, game_id: int, ply: int, small: int, marks: Mapping[Mark, str]
) -> JSON:
    custom_id = PICK_ID.build(game=game_id, ply=ply, board=small)
    winner = board.small_winner(small)
    if winner is not None:
        return button(custom_id, None, marks[winner], discord.ButtonStyle.secondary, disabled=True)
    if board.small_is_closed(small):  # full without a line: nobody's
        return button(custom_id, "—", None, discord.ButtonStyle.secondary, disabled=True)
    label = board_range(small)
    return button(custom_id, label, BOARD_ARROWS[small], discord.ButtonStyle.primary)


assert len(COLUMN_LETTERS) >= 9  # the grid's columns are named A to I
