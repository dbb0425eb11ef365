"""How records become rows and rows records, for every engine alike: each record field is a
column of the same name; moves are stored as comma-separated cell numbers, marks as ``X``/``O``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from typing import Any, Protocol, TypeVar

from bot import results
from bot.storage.base import (
    ChallengeRecord,
    ChallengeStatus,
    EndReason,
    GameRecord,
    GameStatus,
    NewChallenge,
    ReplyRoute,
)
from game import Mark

# A record's columns are its fields set at construction (a field that is not is a cache).
GAME_FIELDS = tuple(field.name for field in fields(GameRecord) if field.init)
GAME_COLUMNS = ", ".join(GAME_FIELDS)
CHALLENGE_COLUMNS = ", ".join(field.name for field in fields(ChallengeRecord))

_R = TypeVar("_R", GameRecord, ChallengeRecord)


class Row(Protocol):
    """A fetched row, read by column name: ``sqlite3.Row`` and ``asyncpg.Record`` both are."""

    def keys(self) -> Iterable[str]: ...

    def __getitem__(self, key: str, /) -> Any: ...


def is_row_id(value: int) -> bool:
    """Whether ``value`` can be a row id at all: ids are signed 64-bit integers, and an id from
    outside (a button's custom_id) may have any number of digits, which no driver can bind."""
    return 0 < value < 2**63


def first(records: list[_R]) -> _R | None:
    return records[0] if records else None


def moves_text(moves: Iterable[int]) -> str:
    return ",".join(str(cell) for cell in moves)


def mark_text(mark: Mark | None) -> str | None:
    return None if mark is None else mark.value


def increments(score: results.Score) -> tuple[int, int, int]:
    """A score as the (wins, losses, draws) columns it adds."""
    return score.wins, score.losses, score.draws


def saved_game_values(game: GameRecord) -> tuple[Any, ...]:
    """The values of a game's compare-and-set UPDATE, in both engines' order: moves, status,
    winner, end_reason, deadline, updated_at, assisted, then the id and the version it must
    still have."""
    return (
        moves_text(game.moves),
        game.status.value,
        mark_text(game.winner),
        None if game.end_reason is None else game.end_reason.value,
        game.deadline,
        game.updated_at,
        game.assisted,
        game.id,
        game.version,
    )


def new_challenge_values(challenge: NewChallenge) -> tuple[Any, ...]:
    """The values of a challenge's INSERT, in both engines' order."""
    return (
        challenge.guild_id,
        challenge.channel_id,
        challenge.challenger_id,
        challenge.challenger_name,
        challenge.opponent_id,
        challenge.opponent_name,
        challenge.expires_at,
        challenge.created_at,
        challenge.size,
        challenge.language,
    )


def game(row: Row) -> GameRecord:
    values = _by_column(row)
    moves: str = values["moves"]
    end_reason = values["end_reason"]
    values.update(
        ai_mark=_optional_mark(values["ai_mark"]),
        moves=tuple(int(cell) for cell in moves.split(",")) if moves else (),
        status=GameStatus(values["status"]),
        winner=_optional_mark(values["winner"]),
        end_reason=None if end_reason is None else EndReason(end_reason),
        # SQLite keeps a flag as 0 or 1.
        assisted=bool(values["assisted"]),
    )
    return GameRecord(**values)


def challenge(row: Row) -> ChallengeRecord:
    values = _by_column(row)
    values.update(status=ChallengeStatus(values["status"]))
    return ChallengeRecord(**values)


def _by_column(row: Row) -> dict[str, Any]:
    # Iterating a sqlite3.Row yields its values, not its column names: keys() is needed.
    return {key: row[key] for key in row.keys()}  # noqa: SIM118


def _optional_mark(value: str | None) -> Mark | None:
    return None if value is None else Mark(value)


def reply_route(row: Row) -> ReplyRoute:
    return ReplyRoute(**{field.name: row[field.name] for field in fields(ReplyRoute)})


def reply_route_values(route: ReplyRoute) -> tuple[Any, ...]:
    """The values of both engines' route upsert: channel, token, expiry, message."""
    return route.channel_id, route.token, route.expires_at, route.message_id


# A channel without a reply route: the bot is in it, and may post there itself.
WITHOUT_ROUTE = "channel_id NOT IN (SELECT channel_id FROM reply_routes)"
