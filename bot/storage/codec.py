"""How records become rows and rows records, for every engine alike: each record field is a
column of the same name; moves are stored as comma-separated cell numbers, marks as ``X``/``O``."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any, NamedTuple, Protocol, TypeVar

from bot import results
from bot.storage.base import (
    ChallengeRecord,
    ChallengeStatus,
    CooldownError,
    DrillQueue,
    DrillRecord,
    EndReason,
    Forgotten,
    GameRecord,
    GameStatus,
    MemberData,
    NewChallenge,
    NewDrill,
    NewGame,
    NewTournament,
    PlayerStats,
    PuzzleAttempt,
    PuzzleResult,
    Rating,
    Record,
    ReplyRoute,
    StoredGames,
    StoredSetting,
    ThreadSuspects,
    TournamentRecord,
    TournamentStatus,
    is_forgotten,
)
from game import Mark

# A record's columns are its fields set at construction (a field that is not is a cache).
GAME_FIELDS = tuple(field.name for field in fields(GameRecord) if field.init)
GAME_COLUMNS = ", ".join(GAME_FIELDS)
# The columns a finished game is rated by (bot.results.tally), as migration 0011 found them:
# its replay reads no column a later migration adds (codec.rated_game fills the rest).
RATED_GAME_COLUMNS = (
    "id",
    "guild_id",
    "x_id",
    "o_id",
    "ai_difficulty",
    "ai_mark",
    "size",
    "status",
    "winner",
    "end_reason",
    "updated_at",
    "assisted",
    "language",  # (0005's) the language its boards were shown in: a season's announcement's
)
# A server setting's columns, and their prefix where they are read beside a game's.
SETTING_COLUMNS = ("key", "value", "changed_by", "changed_at")
SETTING_OF_GAME = "setting_"
CHALLENGE_COLUMNS = ", ".join(field.name for field in fields(ChallengeRecord))
PUZZLE_RESULT_COLUMNS = ", ".join(field.name for field in fields(PuzzleResult))
DRILL_COLUMNS = ", ".join(field.name for field in fields(DrillRecord))
# A tournament's columns: its record's fields but the games, read from tournament_games.
TOURNAMENT_FIELDS = tuple(field.name for field in fields(TournamentRecord) if field.name != "games")
TOURNAMENT_COLUMNS = ", ".join(TOURNAMENT_FIELDS)

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


def new_game_values(game: NewGame) -> tuple[Any, ...]:
    """The values of a game's INSERT (``sql.Statements.insert_game``): its setup, moves,
    deadline, and its creation time twice (created and last saved)."""
    return (
        game.guild_id,
        game.channel_id,
        game.x_id,
        game.o_id,
        game.x_name,
        game.o_name,
        game.ai_difficulty,
        mark_text(game.ai_mark),
        game.size,
        moves_text(game.moves),
        game.deadline,
        game.created_at,
        game.created_at,
        game.rematch_of,
        game.language,
        game.turn_timeout,
        game.mark_x,
        game.mark_o,
        game.own_thread,
    )


def saved_game_values(game: GameRecord) -> tuple[Any, ...]:
    """The values of a game's compare-and-set UPDATE (``sql.SAVE_GAME``): moves, status,
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
    """The values of a challenge's INSERT (``sql.Statements.insert_challenge``)."""
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
    # By the game's own columns: a row may hold others beside them (game_with_settings).
    values = {name: row[name] for name in GAME_FIELDS}
    moves: str = values["moves"]
    end_reason = values["end_reason"]
    deadline = values["deadline"]
    values.update(
        ai_mark=_optional_mark(values["ai_mark"]),
        moves=tuple(int(cell) for cell in moves.split(",")) if moves else (),
        status=GameStatus(values["status"]),
        winner=_optional_mark(values["winner"]),
        end_reason=None if end_reason is None else EndReason(end_reason),
        # SQLite's RETURNING hands back a whole-numbered REAL as an integer.
        deadline=None if deadline is None else float(deadline),
        created_at=float(values["created_at"]),
        updated_at=float(values["updated_at"]),
        # SQLite keeps a flag as 0 or 1.
        assisted=bool(values["assisted"]),
        own_thread=bool(values["own_thread"]),
    )
    return GameRecord(**values)


def tournament(row: Row, games: Iterable[Row] = ()) -> TournamentRecord:
    """A tournament's row, and the rows of its games (round, board, game_id)."""
    due_at = row["due_at"]
    return TournamentRecord(
        id=row["id"],
        guild_id=row["guild_id"],
        channel_id=row["channel_id"],
        status=TournamentStatus(row["status"]),
        # SQLite's RETURNING hands back a whole-numbered REAL as an integer.
        due_at=None if due_at is None else float(due_at),
        state=row["state"],
        created_at=float(row["created_at"]),
        version=row["version"],
        updated_at=float(row["updated_at"]),
        games={(game["round"], game["board"]): game["game_id"] for game in games},
    )


def naming_patterns(user_id: int) -> tuple[str, ...]:
    """SQL.tournaments_naming's LIKE patterns for ``user_id``: a JSON field holding it."""
    return (f'%":{user_id},%', f'%":{user_id}}}%')


def refuse_within_cooldown(challenge: NewChallenge, latest: float | None, cooldown: float) -> None:
    """Raise :class:`CooldownError` if the challenger's ``latest`` challenge in the guild (the
    time SQL.last_challenge_by read) was less than ``cooldown`` before ``challenge``."""
    if latest is not None and challenge.created_at < float(latest) + cooldown:
        until = float(latest) + cooldown
        raise CooldownError(challenge.guild_id, challenge.challenger_id, until)


def new_tournament_values(tournament: NewTournament) -> tuple[Any, ...]:
    """A new tournament's values in the order of SQL.insert_tournament."""
    return (
        tournament.guild_id,
        tournament.channel_id,
        tournament.status.value,
        tournament.due_at,
        tournament.state,
        tournament.created_at,
        tournament.created_at,
    )


def rated_game(row: Row) -> GameRecord:
    """A finished game from its :data:`RATED_GAME_COLUMNS`, enough to rate it again: what
    rating never reads (names, moves, channel) is left empty."""
    end_reason = row["end_reason"]
    return GameRecord(
        id=row["id"],
        guild_id=row["guild_id"],
        channel_id=0,
        x_id=row["x_id"],
        o_id=row["o_id"],
        x_name="",
        o_name="",
        ai_difficulty=row["ai_difficulty"],
        ai_mark=_optional_mark(row["ai_mark"]),
        size=row["size"],
        moves=(),
        status=GameStatus(row["status"]),
        winner=_optional_mark(row["winner"]),
        end_reason=None if end_reason is None else EndReason(end_reason),
        message_id=None,
        deadline=None,
        version=0,
        created_at=float(row["updated_at"]),
        updated_at=float(row["updated_at"]),
        assisted=bool(row["assisted"]),
        language=row["language"],
    )


def challenge(row: Row) -> ChallengeRecord:
    values = _by_column(row)
    values.update(
        status=ChallengeStatus(values["status"]),
        # SQLite's RETURNING hands back a whole-numbered REAL as an integer.
        expires_at=float(values["expires_at"]),
        created_at=float(values["created_at"]),
    )
    return ChallengeRecord(**values)


def thread_suspects(rows: Iterable[Row]) -> ThreadSuspects:
    """The suspects of ``rows`` (``name`` or ``thread_id`` set in each)."""
    names: set[str] = set()
    ids: set[int] = set()
    for row in rows:
        if row["name"] is not None:
            names.add(row["name"])
        else:
            ids.add(int(row["thread_id"]))
    return ThreadSuspects(frozenset(names), frozenset(ids))


def _by_column(row: Row) -> dict[str, Any]:
    # Iterating a sqlite3.Row yields its values, not its column names: keys() is needed.
    return {key: row[key] for key in row.keys()}  # noqa: SIM118


def _optional_mark(value: str | None) -> Mark | None:
    return None if value is None else Mark(value)


def reply_route(row: Row) -> ReplyRoute:
    return ReplyRoute(**{field.name: row[field.name] for field in fields(ReplyRoute)})


def reply_route_values(route: ReplyRoute) -> tuple[Any, ...]:
    """The values of the route upsert: channel, token, expiry, message."""
    return route.channel_id, route.token, route.expires_at, route.message_id


def guild_setting_values(guild_id: int, setting: StoredSetting) -> tuple[Any, ...]:
    """The values of a server setting's upsert: guild, key, value, who and when."""
    return guild_id, setting.key, setting.value, setting.changed_by, setting.changed_at


def guild_setting(row: Row, prefix: str = "") -> StoredSetting:
    return StoredSetting(
        key=row[f"{prefix}key"],
        value=row[f"{prefix}value"],
        changed_by=row[f"{prefix}changed_by"],
        changed_at=float(row[f"{prefix}changed_at"]),
    )


def game_with_settings(rows: Sequence[Row]) -> tuple[GameRecord, list[StoredSetting]] | None:
    """A game and its guild's settings from the rows of ``game_with_guild_settings``: the
    game in each, and a setting in each unless the guild has none (a row of NULLs)."""
    if not rows:
        return None
    settings = [
        guild_setting(row, SETTING_OF_GAME)
        for row in rows
        if row[f"{SETTING_OF_GAME}key"] is not None
    ]
    return game(rows[0]), settings


def player_stats(
    guild_id: int,
    user_id: int,
    size: int,
    records: Iterable[Row],
    rating: Row | None,
    now: float,
) -> PlayerStats:
    """A member's stats from their record rows and their rating row (None: never rated), its
    deviation grown to ``now``."""
    return PlayerStats(
        guild_id=guild_id,
        user_id=user_id,
        records={
            row["opponent"]: Record(row["wins"], row["losses"], row["draws"]) for row in records
        },
        rating=None if rating is None else rating["rating"],
        rated_games=0 if rating is None else rating["games"],
        size=size,
        deviation=None if rating is None else standing(rating).deviation_at(now),
    )


def standing(row: Row) -> results.Standing:
    """A rating row's standing, as stored."""
    last_played = row["last_played"]
    return results.Standing(
        float(row["rating"]),
        float(row["deviation"]),
        None if last_played is None else float(last_played),
    )


def rating(row: Row) -> Rating:
    """A leaderboard row (``sql.Statements.leaderboard``) as stored (``results.ranked`` grows
    its deviation to the moment it is read)."""
    kept = standing(row)
    return Rating(
        user_id=row["user_id"],
        rating=kept.rating,
        deviation=kept.deviation,
        games=row["games"],
        wins=row["wins"],
        losses=row["losses"],
        draws=row["draws"],
        last_played=kept.last_played,
    )


def current_ratings(rows: Iterable[Row]) -> dict[int, results.Standing]:
    """The players' standings a finished game is rated from (``sql.Statements.ratings_of``). A
    row with no game yet is no rating: PostgreSQL's placeholder, made only to be locked."""
    return {row["user_id"]: standing(row) for row in rows if row["games"] > 0}


def record_rows(counted: results.Tally) -> list[tuple[Any, ...]]:
    """The player_stats rows (guild_id, user_id, size, opponent, wins, losses, draws) a
    finished game adds, in key order."""
    return [
        (r.guild_id, r.user_id, r.size, r.opponent, *_increments(r.score))
        for r in sorted(counted.records, key=lambda r: (r.user_id, r.opponent))
    ]


def rating_rows(counted: results.Tally) -> list[tuple[Any, ...]]:
    """The ratings rows (guild_id, user_id, size, rating, deviation, last_played, wins,
    losses, draws) a finished game sets and adds to, in key order."""
    return [
        (r.guild_id, r.user_id, r.size, *_standing_values(r.standing), *_increments(r.score))
        for r in sorted(counted.ratings, key=lambda r: r.user_id)
    ]


def replayed_rows(replayed: dict[tuple[int, int, int], Rating]) -> list[tuple[Any, ...]]:
    """The ratings rows (``sql.Statements.replayed_rating``) of a replay (``results.replay``),
    in key order, but none for a forgotten member: their rows were deleted with the rest of
    what was theirs, though their games still rated their opponents."""
    return [
        (guild_id, user_id, size, r.rating, r.deviation, r.last_played, *_counts(r))
        for (guild_id, size, user_id), r in sorted(replayed.items())
        if not is_forgotten(user_id)
    ]


def _counts(row: Rating) -> tuple[int, int, int, int]:
    return row.games, row.wins, row.losses, row.draws


def _standing_values(kept: results.Standing) -> tuple[float, float, float | None]:
    return kept.rating, kept.deviation, kept.last_played


def _increments(score: results.Score) -> tuple[int, int, int]:
    """A score as the (wins, losses, draws) columns it adds."""
    return score.wins, score.losses, score.draws


class MemberCounts(NamedTuple):
    """What member_data counts of a member's: ``sql.Statements.member_challenges``'s count,
    ``member_practice``'s row, ``member_tournaments``' and ``member_settings``' counts."""

    challenges: int
    practice: Row
    tournaments: int
    settings: int


def member_data(
    user_id: int,
    records: Iterable[Row],
    ratings: Iterable[Row],
    games: Iterable[Row],
    names: Iterable[Row],
    counts: MemberCounts,
    now: float,
) -> MemberData:
    """A member's data from the rows ``sql.Statements.member_records``, ``member_ratings``,
    ``member_games`` and ``member_names`` read, in guild and size order, and ``counts``."""
    by_place: dict[tuple[int, int], tuple[list[Row], Row | None]] = {}
    for row in records:
        by_place.setdefault((row["guild_id"], row["size"]), ([], None))[0].append(row)
    for row in ratings:
        kept, _ = by_place.setdefault((row["guild_id"], row["size"]), ([], None))
        by_place[row["guild_id"], row["size"]] = kept, row
    return MemberData(
        user_id=user_id,
        stats=tuple(
            player_stats(guild_id, user_id, size, rows, rating, now)
            for (guild_id, size), (rows, rating) in sorted(by_place.items())
        ),
        games=tuple(
            sorted(
                (StoredGames(row["guild_id"], row["size"], int(row["games"])) for row in games),
                key=lambda kept: (kept.guild_id, kept.size),
            )
        ),
        challenges=counts.challenges,
        names=tuple(sorted({str(row["name"]) for row in names})),
        puzzle_days=int(counts.practice["puzzle_days"]),
        drills=int(counts.practice["drills"]),
        tournaments=counts.tournaments,
        settings=counts.settings,
    )


def forgotten(
    placeholder: int,
    ended: Iterable[Row],
    closed: Iterable[Row],
    *,
    games: int,
    challenges: int,
    stats_rows: int,
    practice_rows: int,
    settings: int,
) -> Forgotten:
    """What forgetting a member did, from the rows of the games it ended and the challenges
    it closed (each in id order) and the counts of the rest."""
    return Forgotten(
        placeholder_id=placeholder,
        ended=tuple(sorted((game(row) for row in ended), key=lambda record: record.id)),
        closed=tuple(sorted((challenge(row) for row in closed), key=lambda record: record.id)),
        games=games,
        challenges=challenges,
        stats_rows=stats_rows,
        practice_rows=practice_rows,
        settings=settings,
    )


def puzzle_attempt_values(attempt: PuzzleAttempt) -> tuple[Any, ...]:
    """The values of ``sql.Statements.record_puzzle``: the row a first attempt makes, then
    the tries a later attempt must find."""
    return (
        attempt.user_id,
        attempt.day.isoformat(),
        attempt.puzzle_id,
        attempt.guild_id,
        attempt.at if attempt.solved else None,
        attempt.solved,
        attempt.tries_before,
    )


def puzzle_result(row: Row) -> PuzzleResult:
    solved_at = row["solved_at"]
    return PuzzleResult(
        user_id=row["user_id"],
        day=datetime.date.fromisoformat(row["day"]),
        puzzle_id=row["puzzle_id"],
        guild_id=row["guild_id"],
        tries=row["tries"],
        solved_at=None if solved_at is None else float(solved_at),
        first_try=bool(row["first_try"]),
    )


def new_drill_values(drill: NewDrill) -> tuple[Any, ...]:
    """The values of ``sql.Statements.add_drill``: due as soon as it is made."""
    return (
        drill.user_id,
        drill.guild_id,
        drill.game_id,
        drill.position,
        drill.created_at,
        drill.created_at,
    )


def drill(row: Row) -> DrillRecord:
    values = _by_column(row)
    learned_at = values["learned_at"]
    values.update(
        due_at=float(values["due_at"]),
        created_at=float(values["created_at"]),
        learned_at=None if learned_at is None else float(learned_at),
    )
    return DrillRecord(**values)


def drill_queue(next_row: Row | None, counts: Row) -> DrillQueue:
    """A member's queue from ``sql.Statements.next_drill``'s row and ``drill_counts``'."""
    return DrillQueue(
        next=None if next_row is None else drill(next_row),
        due=int(counts["due"]),
        waiting=int(counts["waiting"]),
        learned=int(counts["learned"]),
    )
