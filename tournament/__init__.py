"""A pure tournament engine: Swiss and round-robin pairing, points, tie-breaks and standings.

Like ``game``, it imports nothing from Discord, a database or the bot: the bot stores the
entrants and games, and asks this package who plays whom next and who stands where. Every
function is deterministic: the same inputs give the same answer in every process. Bad input is
a ``ValueError`` whose sentence names it.

>>> from tournament import Entrant, pair_swiss
>>> pair_swiss([Entrant(1, 1500.0), Entrant(2, 1600.0), Entrant(3, 1400.0)], [], 1)
[Pairing(board=1, x=2, o=1), Pairing(board=2, x=3, o=None)]
"""

from tournament.model import (
    MOST_ROUNDS,
    ROUND_ROBIN_MOST,
    Entrant,
    Format,
    Game,
    Pairing,
    RoundResult,
    Standing,
)
from tournament.round_robin import pair_round_robin, round_robin_rounds
from tournament.standings import standings
from tournament.swiss import pair_swiss, swiss_rounds

__all__ = [
    "MOST_ROUNDS",
    "ROUND_ROBIN_MOST",
    "Entrant",
    "Format",
    "Game",
    "Pairing",
    "RoundResult",
    "Standing",
    "pair_round_robin",
    "pair_swiss",
    "round_robin_rounds",
    "standings",
    "swiss_rounds",
]
