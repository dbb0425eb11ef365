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


class Terminal:
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

    def run(self) -> None:
        """Play games until the players decline another; EOFError ends it from any prompt."""
        self._write("Welcome to TIC-TAC-TOE Game!")
        while True:
            self.play_one()
            answer = self._read("Would you like to play again? [Y/N] ")
            if answer.strip() not in ("Y", "y"):
                return

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
        type=int,
        choices=BOARD_SIZES,
        default=DEFAULT_SIZE,
        help="the board's side: 3 (3 in a row), 4 (4 in a row) or 5 (4 in a row)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rng = random.Random(args.seed)
    players: dict[Mark, Strategy | None] = {
        Mark.X: get_strategy(args.x, rng) if args.x else None,
        Mark.O: get_strategy(args.o, rng) if args.o else None,
    }
    try:
        Terminal(players, size=args.size).run()
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
