"""Elo ratings for games between members (games against the bot never count).

>>> update(1200.0, 1200.0, 1.0)
(1216.0, 1184.0)
"""

from __future__ import annotations

INITIAL_RATING = 1200.0
K_FACTOR = 32.0


def expected_score(rating: float, opponent: float) -> float:
    """The share of points ``rating`` is expected to take from ``opponent`` (0 to 1)."""
    return 1.0 / (1.0 + float(10.0 ** ((opponent - rating) / 400.0)))


def update(rating_a: float, rating_b: float, score_a: float) -> tuple[float, float]:
    """Both new ratings after a game where A scored ``score_a`` (1 win, 0.5 draw, 0 loss)."""
    change = K_FACTOR * (score_a - expected_score(rating_a, rating_b))
    return rating_a + change, rating_b - change
