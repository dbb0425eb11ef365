"""Seasons: the periods a server's leaderboard starts afresh in, and their tables.

A season is a calendar month in UTC ("2026-11"), unless the server's admins turned seasons
off (:class:`~bot.server_settings.ServerSettings` ``seasons``). A season's table ranks the
members the same way as the all-time one (:func:`bot.results.ranked`), from that season's rated
games only: they are replayed from fresh ratings through :func:`bot.results.replay` each time
the table is asked for (docs/design.md, "Seasons", says why and what it costs).

Pure domain, as :mod:`bot.results` is: epoch seconds in, seasons and tables out.
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from bot import results
from bot.storage.base import GameRecord, Rating, is_forgotten

log = logging.getLogger(__name__)

# What the leaderboard's ``season:`` option takes for the table of every game ever rated.
ALL_TIME = "all-time"

_NAME = re.compile(r"(\d{4})-(\d{2})")


class SeasonLength(StrEnum):
    """How long a server's seasons last: a calendar month (the default), or no seasons."""

    MONTHLY = "monthly"
    OFF = "off"


@dataclass(frozen=True, order=True, slots=True)
class Season:
    """One calendar month in UTC: from its first midnight to the next month's."""

    year: int
    month: int

    @classmethod
    def at(cls, when: float) -> Season:
        """The season ``when`` (epoch seconds) falls in."""
        moment = datetime.datetime.fromtimestamp(when, datetime.UTC)
        return cls(moment.year, moment.month)

    @classmethod
    def named(cls, name: str) -> Season:
        """The season called ``name`` ("2026-11"); ValueError for anything else."""
        match = _NAME.fullmatch(name.strip())
        if match is None:
            raise ValueError(f"{name!r} is not a season's name")
        season = cls(int(match.group(1)), int(match.group(2)))
        if not 1 <= season.month <= 12 or season.year < 1970:
            raise ValueError(f"{name!r} is not a season's name")
        return season

    @property
    def name(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> float:
        """Its first moment, in epoch seconds."""
        return datetime.datetime(self.year, self.month, 1, tzinfo=datetime.UTC).timestamp()

    @property
    def end(self) -> float:
        """The first moment after it (the next season's start), in epoch seconds."""
        return self.next.start

    @property
    def next(self) -> Season:
        return Season(self.year + self.month // 12, self.month % 12 + 1)

    @property
    def previous(self) -> Season:
        return Season(self.year - (self.month == 1), (self.month - 2) % 12 + 1)


def table(games: Iterable[GameRecord], as_of: float) -> list[Rating]:
    """A season's table from its ``games`` (in the order they finished), as of ``as_of``:
    every member rated from a fresh start by those games alone, ranked as the all-time table
    is. A forgotten member's placeholder plays its games but is not listed."""
    replayed = results.replay(games)
    return results.ranked(
        (row for row in replayed.values() if not is_forgotten(row.user_id)), as_of
    )
