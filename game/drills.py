"""Drills: the positions of a member's own finished games where their move lost value, asked
again.

A review (:func:`game.review.review_game`) finds the moves that turned a win into a draw (a
missed win) or a win or a draw into a loss (a blunder). Each is a :class:`Drill`: the position
the move was played in, the move, and what the position held for the side to move (a win, or a
draw). The task is to find a move that keeps it ("the game was a draw: find a move that keeps
it", "the game was a win for X: find a move that keeps the win"); any such move is right, not
only the one the review named, so the answer is judged by the exact values, not by a list.

Unlike a puzzle (:mod:`game.puzzles`), a drill need not have one answer: it comes from a game
as it was played, not from a search for positions worth asking. It is exact on the three boards
the game offers, 3x3 (3 in a row), 4x4 and 5x5 (4 in a row), and made on no other: there the
review's values come from a budgeted search, which may be wrong.

A drill is one line of text the bot stores (:meth:`Drill.line`, :meth:`Drill.from_line`): the
board (rows top to bottom, ``/`` between them), ``k`` and the line length, the value kept
(``win`` or ``draw``) and the move played::

    X../XO./... k3 draw B1

>>> from game.board import Mark, parse_cell
>>> from game.review import review_game
>>> (drill,) = drills_of(review_game(["A1", "B2", "A2", "B1", "A3"]), Mark.O)
>>> drill.line()  # O played B1 in a drawn position, and X completed column A
'X../XO./... k3 draw B1'
>>> answer(drill, parse_cell("A3")).right
True
>>> answer(drill, parse_cell("B1")).refutation.sentence
'B1? A3 completes a line: X wins.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from game.ai import is_solved
from game.board import Board, Mark, cell_name, parse_cell, quote_input
from game.errors import GameError
from game.puzzles import Refutation, _first_line, _position_value, refute
from game.review import MoveReview, Verdict

__all__ = ["Drill", "DrillAnswer", "answer", "drills_of"]

_LINE_FIELDS = "board, line length (k3), value kept (win or draw) and the move played"
_EXAMPLE_LINE = "X../XO./... k3 draw B1"
# A value for the side to move, as a drill's line writes it and as its errors say it.
_VALUE_WORDS = {1: "win", 0: "draw"}
_WORD_VALUES = {word: value for value, word in _VALUE_WORDS.items()}
_VALUE_NAMES = {1: "a win", 0: "a draw", -1: "a loss"}


def _check_exact(board: Board) -> None:
    """Raise ``ValueError`` unless ``board``'s values are exact: a drill's answers are judged by
    them, and a budgeted search may call a right move wrong."""
    if not is_solved(board):
        raise ValueError(
            "drills are made on 3x3 (3 in a row), 4x4 and 5x5 (4 in a row), where the values are "
            f"exact; not on {board.size}x{board.size} with {board.line_length} in a row"
        )


@dataclass(frozen=True, slots=True)
class Drill:
    """A position from a member's game (the member to move), the move they ``played`` there
    (a cell index), and the ``value`` the position held for them: 1 (a win) or 0 (a draw),
    which the move lost. Construction checks the shape only (the move can be played, the value
    is a win or a draw, the board is one of the game's); :func:`answer` reads the exact values.
    """

    position: Board
    played: int
    value: int

    def __post_init__(self) -> None:
        _check_exact(self.position)
        # Raises the board's own error for a game already over or a cell that is taken.
        self.position.parse_move(self.played)
        if self.value not in _VALUE_WORDS:
            raise ValueError(
                f"a drill's value is what the position held, 1 (a win) or 0 (a draw), not "
                f"{self.value}: a lost position has nothing to keep"
            )

    def line(self) -> str:
        """The drill as one line of text (see the module), which :meth:`from_line` reads."""
        return (
            f"{self.position} k{self.position.line_length} {_VALUE_WORDS[self.value]} "
            f"{cell_name(self.played, self.position.size)}"
        )

    @classmethod
    def from_line(cls, text: str) -> Drill:
        """Read a drill from :meth:`line`'s form. Anything wrong raises a ``ValueError`` that
        names the field and what was there.

        >>> Drill.from_line("X../XO./... k3 lose B1")
        Traceback (most recent call last):
        ...
        ValueError: drill line's value "lose" is not win or draw
        """
        fields = text.split()
        if len(fields) != 4:
            raise ValueError(
                f"a drill line has 4 fields ({_LINE_FIELDS}), like {_EXAMPLE_LINE!r}; "
                f"{quote_input(text.strip())} has {len(fields)}"
            )
        board_text, length_text, value_text, move_text = fields
        if not re.fullmatch(r"k[0-9]", length_text):
            raise ValueError(
                f"drill line's line length {quote_input(length_text)} is not k and a digit, like k3"
            )
        try:
            position = Board.from_string(board_text, int(length_text[1:]))
            _check_exact(position)
        except ValueError as error:  # the board's GameError, or a board no drill is made on
            raise ValueError(f"drill line's board: {_first_line(error)}") from None
        if value_text not in _WORD_VALUES:
            raise ValueError(f"drill line's value {quote_input(value_text)} is not win or draw")
        try:
            played = position.parse_move(parse_cell(move_text, position.size))
        except GameError as error:
            raise ValueError(f"drill line's move: {_first_line(error)}") from None
        return cls(position, played, _WORD_VALUES[value_text])


def drills_of(reviews: Sequence[MoveReview], mark: Mark) -> tuple[Drill, ...]:
    """The drills of a reviewed game for the player of ``mark``: each move of theirs that was
    not good (a missed win or a blunder), in the game's order, as the position it was played
    in, the move and the value it lost. A review of a board drills are not made on (another
    line length) raises ``ValueError``: its values are not exact."""
    return tuple(
        Drill(review.position, review.cell, review.value_before)
        for review in reviews
        if review.mark is mark and review.verdict is not Verdict.GOOD
    )


@dataclass(frozen=True, slots=True)
class DrillAnswer:
    """A move tried on a drill: ``right`` when it keeps the drill's value, else with the
    opponent's ``refutation`` (:func:`game.puzzles.refute`), and only then."""

    drill: Drill
    move: int
    right: bool
    refutation: Refutation | None

    def __post_init__(self) -> None:
        self.drill.position.parse_move(self.move)  # raises unless the move can be played there
        if self.right == (self.refutation is not None):
            raise ValueError("a wrong answer needs its refutation, and a right one has none")


def answer(drill: Drill, cell: int) -> DrillAnswer:
    """Whether ``cell`` keeps what ``drill``'s position held for the side to move (a move that
    completes a line does), with the refutation when it does not.

    Raises ``ValueError`` for a cell that cannot be played, with the board's sentence (not its
    grid: the bot shows the board), and for a drill whose value is not its position's (a line
    stored by hand, say): it would call a right move wrong, or find no refutation.

    On 5x5 the values of the first moves come from the opening book (every position of up to
    4 marks) and a refutation's fastest win from the book's fastest wins (its won positions of
    up to 3 marks), where the exact search alone took seconds; the answers are the search's
    all the same (the tests compare them). Past them the search answers: in milliseconds at
    the median and well under a second at p99 over the drills of games between the levels
    (``python -m bench.engine``), but a few positions of 3 to 6 marks still take it a second
    or more (a long forced win to count, a value off the book): call it off an event loop.
    """
    position = drill.position
    try:
        move = position.parse_move(cell)
    except GameError as error:
        raise ValueError(_first_line(error)) from None
    held = _position_value(position)
    if held != drill.value:
        raise ValueError(
            f"the drill says {position.turn} to play holds {_VALUE_NAMES[drill.value]}, but "
            f"the position holds {_VALUE_NAMES[held]}: the drill's value is wrong"
        )
    # The value for the side to move after its move; a completed line counts as a win.
    if -_position_value(position.play(move)) >= drill.value:
        return DrillAnswer(drill, move, True, None)
    return DrillAnswer(drill, move, False, refute(position, move))
