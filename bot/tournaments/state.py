"""A tournament's state, as one document: what its organiser chose, who entered, every round's
tables and results, and everything the organiser did, with who and when. Stored whole
(:meth:`bot.storage.base.Storage.save_tournament`, a compare-and-set on its version) as JSON.

Nothing here talks to Discord or a database: :mod:`bot.tournaments.service` reads a stored
tournament, changes it with these functions, and saves it; the pairing and the standings come
from the pure :mod:`tournament` package.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bot.domain import UserError
from bot.i18n import N_
from bot.results import INITIAL_RATING
from tournament import Entrant, Format, Game, Pairing, Standing, standings

# The document's layout. A version that changes it (a field added or renamed, a value an older
# version cannot read, such as a new format) raises this number, so that an older process
# still running beside it in a rolling upgrade (docs/operating.md, "Upgrading") refuses its
# documents, rather than failing on them or saving them back without what it cannot read.
# tests/test_tournament_service.py pins the layout of each number.
SCHEMA = 1

NEWER_DOCUMENT = N_(
    "This tournament was changed by a newer version of the bot, which is being rolled out: "
    "try again in a minute."
)


class NewerTournamentError(UserError):
    """A tournament's document of a newer :data:`SCHEMA`: this version neither shows nor
    changes it (its members are told to try again once the newer version runs everywhere)."""

    def __init__(self, schema: object) -> None:
        super().__init__(NEWER_DOCUMENT)
        self.schema = schema


@dataclass(frozen=True, slots=True)
class Rules:
    """What the organiser chose at creation."""

    name: str
    format: Format
    size: int
    turn_timeout: float  # seconds a player has for each move
    most_players: int
    rounds: int | None  # a Swiss's rounds chosen by hand; None: from the count at the start
    language: str  # the catalogue its public messages are shown in


@dataclass(frozen=True, slots=True)
class Entry:
    """A member who entered: their name when they joined, their rating when it started, and
    when they withdrew (left or were removed after the start)."""

    user_id: int
    name: str
    joined_at: float
    rating: float | None = None
    withdrawn_at: float | None = None

    @property
    def withdrawn(self) -> bool:
        return self.withdrawn_at is not None


@dataclass(frozen=True, slots=True)
class Table:
    """One pairing of one round: its game's thread once opened, and its result once decided
    (``x_points``: 1 X won, 0.5 a draw, 0 O won), from the game or by the organiser's hand."""

    round: int
    board: int
    x: int
    o: int | None  # None: x has the bye
    thread_id: int | None = None
    x_points: float | None = None
    forfeit: bool = False
    awarded_by: int | None = None
    # When a process took it upon itself to open the table's thread: others leave the table
    # alone for a while (a lease), and take it over after, should that process have died.
    claimed_at: float | None = None

    @property
    def decided(self) -> bool:
        return self.x_points is not None

    def has(self, user_id: int) -> bool:
        return user_id in (self.x, self.o)


@dataclass(frozen=True, slots=True)
class Action:
    """One thing the organiser (or a moderator) did: shown with who and when, as settings are."""

    at: float
    actor_id: int
    action: str  # created, started, paused, resumed, removed, awarded, cancelled, unresolved
    detail: str = ""


@dataclass(frozen=True, slots=True)
class TournamentState:
    rules: Rules
    organiser_id: int
    starts_at: float | None  # None: when the organiser presses Start
    entries: tuple[Entry, ...] = ()
    tables: tuple[Table, ...] = ()
    rounds: int = 0  # how many it has, fixed at the start
    current_round: int = 0  # 0 before the first
    log: tuple[Action, ...] = ()
    announcement_id: int | None = None  # the message with Join/Leave, then the standings
    final_posted: bool = False

    # -- reading ---------------------------------------------------------------------------

    def entry(self, user_id: int) -> Entry | None:
        return next((entry for entry in self.entries if entry.user_id == user_id), None)

    @property
    def active(self) -> tuple[Entry, ...]:
        return tuple(entry for entry in self.entries if not entry.withdrawn)

    @property
    def withdrawn_ids(self) -> frozenset[int]:
        return frozenset(entry.user_id for entry in self.entries if entry.withdrawn)

    def round_tables(self, round_number: int) -> tuple[Table, ...]:
        return tuple(table for table in self.tables if table.round == round_number)

    def table(self, round_number: int, board: int) -> Table | None:
        return next((t for t in self.tables if (t.round, t.board) == (round_number, board)), None)

    @property
    def round_over(self) -> bool:
        """Whether every table of the current round has its result (true before the first)."""
        return all(table.decided for table in self.round_tables(self.current_round))

    def entrants(self) -> list[Entrant]:
        """Everyone who entered, in seeding order (rating, then who joined first)."""
        rated = [(e, INITIAL_RATING if e.rating is None else e.rating) for e in self.entries]
        rated.sort(key=lambda pair: (-pair[1], pair[0].joined_at, pair[0].user_id))
        return [Entrant(entry.user_id, rating) for entry, rating in rated]

    def games(self) -> list[Game]:
        """Every table as the pure engine reads it."""
        return [
            Game(table.round, table.x, table.o, table.x_points, table.forfeit)
            for table in self.tables
        ]

    def standings(self) -> list[Standing]:
        """Everyone's standing after what was played (none before the first round)."""
        if not self.tables:
            return []
        return standings(self.entrants(), self.games(), self.withdrawn_ids)

    def current_table_of(self, user_id: int) -> Table | None:
        return next((t for t in self.round_tables(self.current_round) if t.has(user_id)), None)

    # -- changing --------------------------------------------------------------------------

    def but(self, **changes: Any) -> TournamentState:
        return dataclasses.replace(self, **changes)

    def logged(self, at: float, actor_id: int, action: str, detail: str = "") -> TournamentState:
        return self.but(log=(*self.log, Action(at, actor_id, action, detail)))

    def with_table(self, table: Table) -> TournamentState:
        return self.but(
            tables=tuple(
                table if (t.round, t.board) == (table.round, table.board) else t
                for t in self.tables
            )
        )

    def with_entry(self, entry: Entry) -> TournamentState:
        return self.but(
            entries=tuple(entry if e.user_id == entry.user_id else e for e in self.entries)
        )

    def paired(self, round_number: int, pairings: Iterable[Pairing]) -> TournamentState:
        """The next round's tables (a bye decided at once, as a win)."""
        tables = [
            Table(round_number, p.board, p.x, p.o, x_points=1.0 if p.o is None else None)
            for p in pairings
        ]
        return self.but(tables=(*self.tables, *tables), current_round=round_number)


# -- the document ------------------------------------------------------------------------------


def dumps(state: TournamentState) -> str:
    document = {**dataclasses.asdict(state), "schema": SCHEMA}
    return json.dumps(document, separators=(",", ":"), sort_keys=True)


def loads(text: str) -> TournamentState:
    """The state a document holds; :class:`NewerTournamentError` if a newer version wrote it
    (documents written before the number was, schema 1, have none). An older document's
    missing fields take their defaults."""
    data = json.loads(text)
    schema = data.get("schema", 1)
    if not isinstance(schema, int) or schema > SCHEMA:
        raise NewerTournamentError(schema)
    rules = data["rules"]
    return TournamentState(
        rules=Rules(**{**rules, "format": Format(rules["format"])}),
        organiser_id=data["organiser_id"],
        starts_at=data["starts_at"],
        entries=tuple(Entry(**entry) for entry in data["entries"]),
        tables=tuple(Table(**table) for table in data["tables"]),
        rounds=data["rounds"],
        current_round=data["current_round"],
        log=tuple(Action(**action) for action in data["log"]),
        announcement_id=data["announcement_id"],
        final_posted=data["final_posted"],
    )
