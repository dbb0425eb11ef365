"""Reviews and hints for ultimate tic-tac-toe (game/ultimate_review.py): known facts on games
and positions whose result is certain, the sentences' forms, and that the same game reads the
same every time."""

from __future__ import annotations

import doctest

import pytest

import game.ultimate_review
from game import IllegalMoveError, Mark, UltimateBoard, parse_ultimate_cell
from game.budget import SearchBudget
from game.ultimate_ai import WIN_SCORE
from game.ultimate_review import (
    ReplyEffect,
    UltimateMoveReview,
    UltimateVerdict,
    judge,
    review_ultimate_game,
    ultimate_best_move,
)
from tests.test_ultimate_ai import X_CAN_ONLY_DRAW, X_WINS_IN_ONE, loses_at_once
from tests.test_ultimate_rules import X_WINS_DIAGONAL

# A small budget, the same on any machine (300 iterations of the tree search): enough for the
# facts below (a win in one is played without searching, and a move that lets the opponent win at
# once is proven lost as soon as the search tries it).
TEST_BUDGET = SearchBudget(seconds=None, nodes=300)


def cell(name: str) -> int:
    return parse_ultimate_cell(name)


@pytest.fixture(scope="module")
def diagonal_review() -> tuple[UltimateMoveReview, ...]:
    """X_WINS_DIAGONAL reviewed: O's 20th move, I3, sends X where H8 wins the game."""
    return review_ultimate_game(X_WINS_DIAGONAL, TEST_BUDGET)


def test_docstring_examples_hold() -> None:
    failures, tried = doctest.testmod(game.ultimate_review, verbose=False)
    assert tried > 0
    assert failures == 0


def test_a_move_that_lets_the_opponent_win_at_once_is_a_blunder_with_the_winning_reply(
    diagonal_review: tuple[UltimateMoveReview, ...],
) -> None:
    review = diagonal_review[19]
    assert (review.number, review.mark, review.cell_name) == (20, Mark.O, "I3")
    assert review.verdict is UltimateVerdict.BLUNDER
    assert review.proven
    assert review.result_after == -1
    assert review.score_after == -(WIN_SCORE - 1)  # X wins with its next move
    assert review.reply == cell("H8")
    assert review.reply_effect is ReplyEffect.WINS_GAME
    assert review.sent_to == 8
    # The better move does not let X win at once.
    assert review.better is not None
    assert not loses_at_once(review.position.play(review.better))
    assert review.sentence == (
        "20. O I3 — blunder by the engine's search (proven): it sends X to the bottom-right "
        f"board, where X wins the game with H8. {review.better_name} was better."
    )


def test_a_move_that_wins_the_game_at_once_is_good(
    diagonal_review: tuple[UltimateMoveReview, ...],
) -> None:
    review = diagonal_review[-1]
    assert (review.number, review.cell_name) == (21, "H8")
    assert review.verdict is UltimateVerdict.GOOD
    assert review.proven
    assert review.better is None
    assert review.reply is None
    assert review.sentence == "21. X H8 — X wins the game."
    assert len(diagonal_review) == len(X_WINS_DIAGONAL)


def test_a_missed_win_in_one_names_the_winning_cell() -> None:
    review = review_ultimate_game([*X_WINS_DIAGONAL[:20], "G8"], TEST_BUDGET)[-1]
    assert review.position == X_WINS_IN_ONE
    assert review.verdict is UltimateVerdict.MISSED_WIN
    assert review.result_before == 1
    assert review.better == cell("H8")
    assert review.better_wins_at_once
    assert review.sentence == (
        "21. X G8 — missed win by the engine's search (not proven): H8 won the game at once."
    )


def test_the_same_game_reviewed_twice_reads_the_same(
    diagonal_review: tuple[UltimateMoveReview, ...],
) -> None:
    again = review_ultimate_game(X_WINS_DIAGONAL, TEST_BUDGET)
    assert again == diagonal_review
    assert [review.sentence for review in again] == [review.sentence for review in diagonal_review]


def test_every_sentence_says_the_verdict_is_the_search_s(
    diagonal_review: tuple[UltimateMoveReview, ...],
) -> None:
    for review in diagonal_review[:-1]:  # the last move ends the game: a fact, not a judgement
        assert f"{review.verdict.value} by the engine's search (" in review.sentence
        assert review.sentence.startswith(f"{review.number}. {review.mark} {review.cell_name} — ")
        proof = "proven" if review.proven else "not proven"
        assert f"({proof})" in review.sentence
    assert any(review.verdict is not UltimateVerdict.GOOD for review in diagonal_review)


def test_a_move_that_draws_at_once_when_its_side_can_only_draw_is_good() -> None:
    moves = [*X_CAN_ONLY_DRAW.moves, cell("H1")]
    review = review_ultimate_game(moves, TEST_BUDGET)[-1]
    assert review.verdict is UltimateVerdict.GOOD
    assert (review.score_before, review.score_after) == (0, 0)
    assert review.sentence == "49. X H1 — the game ends in a draw."


# After X won the top-left board (B2), O is sent to the centre board, where X holds D6 and F6.
O_IN_THE_CENTRE = UltimateBoard.from_moves(X_WINS_DIAGONAL[:9])


@pytest.mark.parametrize(
    ("move", "before", "after", "better", "reply", "sentence"),
    [
        (
            "E5",
            -36,
            -144,
            "E6",
            "E6",
            "10. O E5 — mistake by the engine's search (not proven): it sends X to the centre "
            "board, which X then wins with E6. E6 was better.",
        ),
        (
            "D4",
            -36,
            -144,
            "E6",
            "E6",
            "10. O D4 — mistake by the engine's search (not proven): it lets X play in any "
            "board, and X wins the centre board with E6. E6 was better.",
        ),
        (
            "D4",
            -36,
            -80,
            "E6",
            "F1",
            "10. O D4 — inaccuracy by the engine's search (not proven): X's best answer is F1. "
            "E6 was better.",
        ),
        (
            "D4",
            -36,
            -(WIN_SCORE - 4),
            "E6",
            "F1",
            "10. O D4 — blunder by the engine's search (proven): X's best answer is F1. E6 was "
            "better.",
        ),
        ("E6", -36, -30, None, None, "10. O E6 — good by the engine's search (not proven)."),
        (
            "E6",
            -36,
            WIN_SCORE - 9,
            None,
            None,
            "10. O E6 — good by the engine's search (proven): O wins by force.",
        ),
        (
            "E6",
            -(WIN_SCORE - 9),
            -(WIN_SCORE - 9),
            None,
            None,
            "10. O E6 — good by the engine's search (proven): X wins by force.",
        ),
    ],
)
def test_the_sentences(
    move: str, before: int, after: int, better: str | None, reply: str | None, sentence: str
) -> None:
    # The scores, the better move and the reply are given, not searched: the forms are checked.
    review = UltimateMoveReview(
        O_IN_THE_CENTRE,
        cell(move),
        before,
        after,
        None if better is None else cell(better),
        None if reply is None else cell(reply),
    )
    assert review.sentence == sentence
    assert str(review) == sentence


def test_a_move_that_ends_the_game_drawn_when_a_win_was_proven_is_a_missed_win() -> None:
    # The scores are given (not searched): X cannot win here, but the sentence's form is checked.
    review = UltimateMoveReview(X_CAN_ONLY_DRAW, cell("H1"), WIN_SCORE - 3, 0, better=cell("F3"))
    assert review.verdict is UltimateVerdict.MISSED_WIN
    assert review.sentence == (
        "49. X H1 — missed win by the engine's search (proven): it ends the game in a draw. F3 "
        "kept a forced win."
    )


def test_a_hint_in_a_position_with_a_win_in_one_is_that_win() -> None:
    assert ultimate_best_move(X_WINS_IN_ONE) == cell("H8")
    assert ultimate_best_move(X_WINS_IN_ONE, TEST_BUDGET) == cell("H8")


def test_a_hint_is_the_same_every_time() -> None:
    board = UltimateBoard.from_moves(X_WINS_DIAGONAL[:7])
    hints = {ultimate_best_move(board, TEST_BUDGET) for _ in range(3)}
    assert len(hints) == 1
    assert hints <= set(board.legal_moves)


def test_no_hint_once_the_game_is_over() -> None:
    with pytest.raises(IllegalMoveError, match="the game is over"):
        ultimate_best_move(UltimateBoard.from_moves(X_WINS_DIAGONAL))


def test_a_review_refuses_a_move_that_cannot_be_played() -> None:
    with pytest.raises(IllegalMoveError, match="A1 is not in the board you were sent to"):
        review_ultimate_game(["E5", "A1"], TEST_BUDGET)


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        (10, 0, UltimateVerdict.GOOD),
        (10, -15, UltimateVerdict.INACCURACY),
        (10, -50, UltimateVerdict.MISTAKE),
        (10, -140, UltimateVerdict.BLUNDER),
        (10, 60, UltimateVerdict.GOOD),
        (10, -(WIN_SCORE - 3), UltimateVerdict.BLUNDER),
        (WIN_SCORE - 1, 200, UltimateVerdict.MISSED_WIN),
        (WIN_SCORE - 1, -(WIN_SCORE - 2), UltimateVerdict.BLUNDER),
        (WIN_SCORE - 1, WIN_SCORE - 9, UltimateVerdict.GOOD),  # still a win: how fast is not judged
        (-(WIN_SCORE - 9), -(WIN_SCORE - 2), UltimateVerdict.GOOD),  # already lost
        (-(WIN_SCORE - 9), 0, UltimateVerdict.GOOD),
    ],
)
def test_the_thresholds(before: int, after: int, verdict: UltimateVerdict) -> None:
    assert judge(before, after) is verdict


def test_a_review_that_is_not_good_needs_a_better_move_and_only_then() -> None:
    board = X_WINS_IN_ONE
    with pytest.raises(ValueError, match="needs a better move"):
        UltimateMoveReview(board, cell("G8"), WIN_SCORE - 1, 0)
    with pytest.raises(ValueError, match="needs a better move"):
        UltimateMoveReview(board, cell("H8"), WIN_SCORE - 1, WIN_SCORE, better=cell("G8"))
    with pytest.raises(ValueError, match="another move"):
        UltimateMoveReview(board, cell("G8"), WIN_SCORE - 1, 0, better=cell("G8"))
    with pytest.raises(IllegalMoveError):
        UltimateMoveReview(board, cell("A1"), 0, 0)
