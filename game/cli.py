"""Tic-tac-toe in the terminal: two people at one keyboard, or against a computer player.

The wording follows a course's published transcript word for word, so it must not drift::

    Welcome to TIC-TAC-TOE Game!
    Bob, X: Enter a cell [A-C][1-3]:
    You did not choose correctly.
    Bob is a winner!
    Would you like to play again? [Y/N]
    Goodbye!
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence

from game.ai import STRATEGIES, Strategy, get_strategy
from game.board import BOARD_SIZES, COLUMN_LETTERS, DEFAULT_SIZE, Board, Mark, cell_name
from game.errors import GameError
from game.ultimate import (
    ULTIMATE,
    UltimateBoard,
    small_board_cells,
    small_board_name,
    ultimate_cell_name,
)
from game.ultimate_ai import UltimateStrategy, get_ultimate_strategy

NAMES = {Mark.X: "Bob", Mark.O: "Alice"}


def render(board: Board) -> str:
    """The board with column letters on top and row numbers on the left."""
    size = board.size
    header = "    " + "   ".join(COLUMN_LETTERS[:size])
    rule = "   " + "+".join(["---"] * size)
    rows = []
    for row in range(size):
        marks = [board[row * size + column] for column in range(size)]
        cells = "|".join(f" {' ' if mark is None else mark.value} " for mark in marks)
        rows.append(f"{row + 1}  {cells}".rstrip())
    return "\n".join([header, *_interleave(rows, rule)])


def _interleave(rows: list[str], rule: str) -> list[str]:
    lines: list[str] = []
    for index, row in enumerate(rows):
        if index:
            lines.append(rule)
        lines.append(row)
    return lines


def prompt(board: Board) -> str:
    last_column = COLUMN_LETTERS[board.size - 1]
    return f"{NAMES[board.turn]}, {board.turn}: Enter a cell [A-{last_column}][1-{board.size}]: "


class _Conversation:
    """Games one after another, as long as the players want another: what every board's
    conversation shares."""

    _read: Callable[[str], str]
    _write: Callable[[str], None]

    def run(self) -> None:
        """Play games until the players decline another; EOFError ends it from any prompt."""
        self._write("Welcome to TIC-TAC-TOE Game!")
        while True:
            self.play_one()
            answer = self._read("Would you like to play again? [Y/N] ")
            if answer.strip() not in ("Y", "y"):
                return

    def play_one(self) -> object:
        raise NotImplementedError


class Terminal(_Conversation):
    """The game's conversation, with input and output injectable for tests."""

    def __init__(
        self,
        players: dict[Mark, Strategy | None],
        read: Callable[[str], str] = input,
        write: Callable[[str], None] = print,
        size: int = DEFAULT_SIZE,
    ) -> None:
        self._players = players
        self._size = size
        self._read = read
        self._write = write

    def play_one(self) -> Board:
        board = Board(self._size)
        self._write(render(board))
        while (outcome := board.outcome()) is None:
            board = board.play(self._next_cell(board))
            self._write(render(board))
        if outcome.winner is None:
            self._write("It is a tie!")
        else:
            self._write(f"{NAMES[outcome.winner]} is a winner!")
        return board

    def _next_cell(self, board: Board) -> int:
        strategy = self._players[board.turn]
        if strategy is not None:
            cell = strategy.choose(board)
            self._write(prompt(board) + cell_name(cell, board.size))
            return cell
        while True:
            try:
                return board.parse_move(self._read(prompt(board)))
            except GameError:
                self._write("You did not choose correctly.")


def render_ultimate(board: UltimateBoard) -> str:
    """The 9x9 grid with column letters on top, row numbers on the left, small boards apart."""
    lines = ["    A B C   D E F   G H I"]
    for row in range(9):
        if row and row % 3 == 0:
            lines.append("    ------+-------+------")
        marks = [board[row * 9 + column] for column in range(9)]
        text = ["." if mark is None else mark.value for mark in marks]
        groups = " | ".join(" ".join(text[start : start + 3]) for start in (0, 3, 6))
        lines.append(f"{row + 1}   {groups}")
    return "\n".join(lines)


def prompt_ultimate(board: UltimateBoard) -> str:
    """The prompt, with the columns and rows of the small board the player was sent to."""
    player = f"{NAMES[board.turn]}, {board.turn}"
    if board.forced_board is None:
        return f"{player}: Enter a cell in any open board [A-I][1-9]: "
    cells = small_board_cells(board.forced_board)
    first, last = ultimate_cell_name(cells[0]), ultimate_cell_name(cells[-1])
    where = small_board_name(board.forced_board)
    columns, rows = f"[{first[0]}-{last[0]}]", f"[{first[1]}-{last[1]}]"
    return f"{player}: Enter a cell in the {where} board {columns}{rows}: "


class UltimateTerminal(_Conversation):
    """Ultimate tic-tac-toe's conversation, in the same words; a refused cell is followed by
    the engine's sentence saying why and where to play."""

    def __init__(
        self,
        players: dict[Mark, UltimateStrategy | None],
        read: Callable[[str], str] = input,
        write: Callable[[str], None] = print,
    ) -> None:
        self._players = players
        self._read = read
        self._write = write

    def play_one(self) -> UltimateBoard:
        board = UltimateBoard()
        self._write(render_ultimate(board))
        while not board.is_over:
            board = board.play(self._next_cell(board))
            self._write(render_ultimate(board))
        if board.winner is None:
            self._write("It is a tie!")
        else:
            self._write(f"{NAMES[board.winner]} is a winner!")
        return board

    def _next_cell(self, board: UltimateBoard) -> int:
        strategy = self._players[board.turn]
        if strategy is not None:
            cell = strategy.choose(board)
            self._write(prompt_ultimate(board) + ultimate_cell_name(cell))
            return cell
        while True:
            try:
                return board.parse_move(self._read(prompt_ultimate(board)))
            except GameError as error:
                self._write(f"You did not choose correctly. {error}")


def _size(text: str) -> int | str:
    """A ``--size``: a board's side, or ``ultimate``."""
    if text.strip().lower() == ULTIMATE:
        return ULTIMATE
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size: use 3, 4, 5 or {ULTIMATE}"
        ) from None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m game",
        description="Play tic-tac-toe in the terminal. Bob plays X and moves first; Alice plays O.",
    )
    names = sorted(STRATEGIES)
    parser.add_argument("--x", choices=names, help="let the computer play X with this strategy")
    parser.add_argument("--o", choices=names, help="let the computer play O with this strategy")
    parser.add_argument("--seed", type=int, help="seed the computer players, to repeat a game")
    parser.add_argument(
        "--size",
        type=_size,
        choices=(*BOARD_SIZES, ULTIMATE),
        default=DEFAULT_SIZE,
        help="the board's side: 3 (3 in a row), 4 (4 in a row) or 5 (4 in a row); or ultimate "
        "(nine 3x3 boards in a 3x3 grid)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rng = random.Random(args.seed)
    terminal: Terminal | UltimateTerminal
    if args.size == ULTIMATE:
        terminal = UltimateTerminal(
            {
                Mark.X: get_ultimate_strategy(args.x, rng) if args.x else None,
                Mark.O: get_ultimate_strategy(args.o, rng) if args.o else None,
            }
        )
    else:
        players: dict[Mark, Strategy | None] = {
            Mark.X: get_strategy(args.x, rng) if args.x else None,
            Mark.O: get_strategy(args.o, rng) if args.o else None,
        }
        terminal = Terminal(players, size=args.size)
    try:
        terminal.run()
    except EOFError:
        print()  # the cursor is still on the prompt's line
    except KeyboardInterrupt:
        print()
        print("Goodbye!")
        return 130
    print("Goodbye!")
    return 0


if __name__ == "__main__":
    sys.exit(main())
