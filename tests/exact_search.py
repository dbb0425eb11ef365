"""One exact 5x5 search for the tests of a process (``test_engine_exact.py``,
``test_engine_drills.py``): what it proves for one position is exact for every other, so
sharing it only saves work."""

from __future__ import annotations

import functools

from game import Board
from game.exact import ExactSolver

# What the shared search may remember: every position it proves on the way (about 2 million,
# some 200 MB). The bot's own limit (game.exact.TABLE_LIMIT, 600,000) would empty the table
# part way through the first three moves and prove much of it again: 195 s against 139 s.
SHARED_TABLE_LIMIT = 20_000_000


@functools.cache
def shared_5x5_solver() -> ExactSolver:
    """The process's exact 5x5 search. The tests using it are spread over the suite's
    processes all the same: apart, the costly ones share little of what they prove (8 s of
    some 210 s of CPU), and in one process they were the suite's last minutes."""
    return ExactSolver(Board(5).geometry, table_limit=SHARED_TABLE_LIMIT)
