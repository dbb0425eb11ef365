"""How much a budgeted search (:mod:`game.search`) may spend on a move.

Apart from the search itself so that :mod:`game.ai` can take a budget without importing the
search, which only boards other than those the game offers need (see :mod:`game.lazy`).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["DEFAULT_TIME_BUDGET", "SearchBudget"]

# What one move may take by default, in seconds: most moves end far sooner (a forced reply, a
# forced result), so a game's median stays well under it; the few open ones use it all.
DEFAULT_TIME_BUDGET = 0.3


# A named tuple rather than a dataclass: building a dataclass costs about a millisecond at
# import, and every program that plays 3x3 imports this module.
class SearchBudget(NamedTuple):
    """How much a search may do: ``seconds`` of wall time, or ``nodes`` positions (reproducible
    whatever the machine's speed, for tests), whichever ends first; ``max_depth`` caps the
    iterative deepening."""

    seconds: float | None = DEFAULT_TIME_BUDGET
    nodes: int | None = None
    max_depth: int = 64
