"""``python -m game`` driven through standard input, as a person at a terminal would."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROMPT_X = "Bob, X: Enter a cell [A-C][1-3]: "
PROMPT_O = "Alice, O: Enter a cell [A-C][1-3]: "
# X takes the top row while O plays the middle row: X wins on its third move.
X_WINS = ["A1", "A2", "B1", "B2", "C1"]
# A drawn game: X O X / X O O / O X X, played in a legal order.
DRAW = ["A1", "B1", "C1", "B2", "A2", "A3", "B3", "C2", "C3"]


def run_game(
    lines: list[str], *args: str, close_input: bool = False
) -> subprocess.CompletedProcess[str]:
    text = "\n".join(lines) + ("" if close_input else "\n")
    return subprocess.run(
        [sys.executable, "-m", "game", *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_full_game_that_x_wins_then_goodbye() -> None:
    result = run_game([*X_WINS, "N"])
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("Welcome to TIC-TAC-TOE Game!\n")
    assert "    A   B   C\n1     |   |\n" in out  # letters on top, row numbers on the left
    assert out.count(PROMPT_X) == 3
    assert out.count(PROMPT_O) == 2
    assert "1   X | X | X\n" in out
    assert "Bob is a winner!\nWould you like to play again? [Y/N] Goodbye!\n" in out
    assert out.endswith("Goodbye!\n")
    assert result.stderr == ""


def test_o_can_win() -> None:
    result = run_game(["A1", "A2", "B1", "B2", "A3", "C2", "N"])
    assert result.returncode == 0
    assert "Alice is a winner!" in result.stdout


def test_a_drawn_game_is_a_tie() -> None:
    result = run_game([*DRAW, "n"])
    assert result.returncode == 0
    assert "It is a tie!\nWould you like to play again? [Y/N] Goodbye!" in result.stdout


@pytest.mark.parametrize("bad", ["Z9", "B2", "", "hello", "0", "A4"])
def test_bad_or_taken_input_is_refused_and_asked_again(bad: str) -> None:
    # B2 is taken by X when O is asked; every other entry names no cell at all.
    result = run_game(["B2", bad, "A1", "C1", "A2", "C3", "A3", "N"])
    assert result.returncode == 0
    out = result.stdout
    assert f"{PROMPT_O}You did not choose correctly.\n{PROMPT_O}" in out
    assert out.count("You did not choose correctly.") == 1
    assert "Alice is a winner!" in out


def test_y_plays_again_and_anything_else_says_goodbye() -> None:
    result = run_game([*X_WINS, "y", *DRAW, "Y", *X_WINS, "maybe"])
    assert result.returncode == 0
    out = result.stdout
    assert out.count("Welcome to TIC-TAC-TOE Game!") == 1
    assert out.count("Bob is a winner!") == 2
    assert out.count("It is a tie!") == 1
    assert out.count("Would you like to play again? [Y/N] ") == 3
    assert out.count("Goodbye!") == 1


@pytest.mark.parametrize("cut", [0, 2, len(X_WINS)])
def test_end_of_input_exits_cleanly(cut: int) -> None:
    result = run_game(X_WINS[:cut], close_input=True)
    assert result.returncode == 0
    assert "Traceback" not in result.stderr
    assert result.stderr == ""
    assert result.stdout.rstrip().endswith("Goodbye!")


def test_the_computer_can_play_either_side_and_shows_its_cell() -> None:
    # minimax as O against a person who plays the corners: the person never wins.
    result = run_game(["A1", "C3", "A3", "C1", "B1", "B3", "N"], "--o", "minimax", "--seed", "4")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    o_moves = [line[len(PROMPT_O) :] for line in out.splitlines() if line.startswith(PROMPT_O)]
    assert o_moves
    assert all(len(move) == 2 and move[0] in "ABC" and move[1] in "123" for move in o_moves)
    assert "Bob is a winner!" not in out


def test_two_computers_play_a_whole_game_to_a_draw() -> None:
    result = run_game(["n"], "--x", "minimax", "--o", "smart", "--seed", "9")
    assert result.returncode == 0, result.stderr
    assert "It is a tie!" in result.stdout
    assert result.stdout.count("Enter a cell") == 9


def test_an_unknown_strategy_is_refused_by_the_argument_parser() -> None:
    result = run_game([], "--x", "genius")
    assert result.returncode == 2
    assert "invalid choice: 'genius'" in result.stderr


def test_a_4x4_game_asks_for_its_own_cells_and_needs_4_in_a_row() -> None:
    # X fills the top row while O fills the second: three in a row is not yet a win on 4x4.
    moves = ["A1", "A2", "B1", "B2", "C1", "C2", "E1", "D1", "N"]
    result = run_game(moves, "--size", "4")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "    A   B   C   D\n1     |   |   |\n   ---+---+---+---\n" in out
    assert "Bob, X: Enter a cell [A-D][1-4]: " in out
    assert out.count("You did not choose correctly.") == 1  # E1 is off a 4x4 board
    assert "1   X | X | X | X\n" in out
    assert "Bob is a winner!" in out


def test_a_5x5_game_between_computers_runs_to_its_end() -> None:
    result = run_game(["n"], "--size", "5", "--x", "smart", "--o", "random", "--seed", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "    A   B   C   D   E\n" in out
    assert "Bob, X: Enter a cell [A-E][1-5]: " in out
    assert "Bob is a winner!" in out or "Alice is a winner!" in out or "It is a tie!" in out
    assert out.endswith("Goodbye!\n")


@pytest.mark.parametrize("size", ["4", "5"])
def test_minimax_plays_the_larger_boards_in_the_terminal(size: str) -> None:
    # A person who always types A1 first, then whatever the prompt accepts: minimax never loses.
    cells = [f"{letter}{row}" for row in range(1, 6) for letter in "ABCDE"]
    result = run_game([*cells, "n"], "--size", size, "--o", "minimax", "--seed", "5")
    assert result.returncode == 0, result.stderr
    assert "Bob is a winner!" not in result.stdout
    assert result.stdout.endswith("Goodbye!\n")


def test_a_size_that_is_not_offered_is_refused() -> None:
    result = run_game([], "--size", "6")
    assert result.returncode == 2
    assert "invalid choice: 6" in result.stderr


def test_an_ultimate_game_says_where_to_play_and_why_a_cell_is_refused() -> None:
    # X takes the centre; O, sent to the centre board, plays its top-right cell (F4), sending X
    # to the top-right board: A1 is refused with the engine's sentence, G1 is played.
    result = run_game(["E5", "F4", "A1", "G1"], "--size", "ultimate", close_input=True)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "    A B C   D E F   G H I\n1   . . . | . . . | . . .\n" in out
    assert "5   . . . | . X . | . . .\n" in out
    assert "Bob, X: Enter a cell in any open board [A-I][1-9]: " in out
    assert "Alice, O: Enter a cell in the centre board [D-F][4-6]: " in out
    assert (
        "Bob, X: Enter a cell in the top-right board [G-I][1-3]: You did not choose correctly. "
        "A1 is not in the board you were sent to: play in the top-right board, G1..I3\n"
    ) in out
    assert "1   . . . | . . . | X . .\n" in out  # G1 played
    assert out.count("You did not choose correctly.") == 1
    assert out.rstrip().endswith("Goodbye!")


def test_an_ultimate_game_between_computers_runs_to_its_end() -> None:
    result = run_game(["n"], "--size", "ultimate", "--x", "smart", "--o", "random", "--seed", "2")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Bob is a winner!" in out or "Alice is a winner!" in out or "It is a tie!" in out
    assert out.endswith("Goodbye!\n")


def test_a_size_that_is_neither_a_number_nor_ultimate_is_refused() -> None:
    result = run_game([], "--size", "huge")
    assert result.returncode == 2
    assert "'huge' is not a size: use 3, 4, 5 or ultimate" in result.stderr
