"""Round robin by Berger tables: everyone meets everyone once, sides as balanced as they can
be, a bye a round when the count is odd (the bye is the table's last seat)."""

from __future__ import annotations

from collections.abc import Sequence

from tournament.model import (
    ROUND_ROBIN_MOST,
    Entrant,
    Pairing,
    check_entrants,
    check_player_count,
)


def round_robin_rounds(players: int) -> int:
    """``players - 1`` rounds for an even count, ``players`` for an odd one (a bye each)."""
    check_player_count(players, ROUND_ROBIN_MOST)
    return players - 1 if players % 2 == 0 else players


def pair_round_robin(entrants: Sequence[Entrant], round: int) -> list[Pairing]:
    """Round ``round`` of the Berger table for ``entrants`` in the order given (seeding order:
    the first is table number 1). Top boards first, the bye (if any) last."""
    by_player = check_entrants(entrants)
    rounds = round_robin_rounds(len(by_player))
    if not 1 <= round <= rounds:
        raise ValueError(
            f"round {round} is out of range: a round robin of {len(by_player)} players has "
            f"rounds 1 to {rounds}"
        )
    seats = [entrant.player for entrant in entrants]
    bye_seat = None
    if len(seats) % 2:
        bye_seat = len(seats)
        seats.append(-1)
    table = _berger_round(len(seats), round)
    pairings: list[Pairing] = []
    bye = None
    for x_seat, o_seat in table:
        if bye_seat in (x_seat, o_seat):
            bye = seats[o_seat if x_seat == bye_seat else x_seat]
            continue
        pairings.append(Pairing(len(pairings) + 1, seats[x_seat], seats[o_seat]))
    if bye is not None:
        pairings.append(Pairing(len(pairings) + 1, bye, None))
    return pairings


def _berger_round(seats: int, round: int) -> list[tuple[int, int]]:
    """Berger's table: round ``round`` of ``seats`` (even) seats, as (X, O) pairs of 0-based
    seats, the last seat's game first. Seats 1..n-1 (1-based) meet where their numbers add up
    to ``round + 1`` modulo ``n - 1``; the one left over meets seat n, who has O in odd rounds
    and X in even ones; in the other pairs, the seat after the left-over one in the circle has X."""
    circle = seats - 1
    # The seat (1-based) whose double is round + 1 modulo the circle meets the last seat.
    pivot = next(seat for seat in range(1, seats) if (2 * seat - round - 1) % circle == 0)
    last = seats - 1
    first = (pivot - 1, last) if round % 2 else (last, pivot - 1)
    pairs = [first]
    for step in range(1, seats // 2):
        pairs.append(((pivot - 1 + step) % circle, (pivot - 1 - step) % circle))
    return pairs
