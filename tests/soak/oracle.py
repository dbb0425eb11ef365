"""The soak's oracle: the checks on the bot's database (SQLite or PostgreSQL), read directly,
and on the messages the sim holds.

1. Every game is valid: see :func:`game_problems` for the exact rule (and
   :func:`challenge_problems` for challenges).
2. No channel is blocked: one occupant per channel, each live game or pending challenge shown
   (or soon to be, by the sweeper), nothing overdue left unsettled.
3. Every finished game is counted exactly once: stats and ratings are exactly what the
   finished games add up to.

:func:`database_problems` runs them all; :func:`table_problems` those that need no sim.
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from bot.boards import UNSHOWN_GRACE
from bot.client import SWEEPER_LEASE_SWEEPS
from bot.components import CELL_ID, CHALLENGE_ID, GAME_ACTION_ID
from bot.results import Standing, play
from bot.service import DIFFICULTIES
from bot.storage.base import is_forgotten
from game import Board
from tests.discord_sim import DiscordSim, SimMessage

Row = dict[str, Any]

# The bot's clocks in the soak (the driver starts it with them, the rules check them). Short,
# so that games and challenges left alone run out within the soak and the sweeper's settling is
# part of it (the bot accepts 10 s at the least).
TURN_TIMEOUT = 15
CHALLENGE_TIMEOUT = 10

# How often python -m bot sweeps (TTTBot's default).
SWEEP_INTERVAL = 5.0
# Beyond its due time, how long the sweeper may take to settle a game or challenge, or to post
# one saved without its message: a sweep or two, a restart, a retried REST call.
SWEEP_SLACK = 3 * SWEEP_INTERVAL
# Over HTTP, a worker killed while it held the sweeper lease leaves nobody sweeping until its
# lease runs out (bot.client.SWEEPER_LEASE_SWEEPS sweeps, from its last renewal): by then the
# next holder's sweep comes as late again.
LEASED_SWEEP_SLACK = SWEEP_SLACK + SWEEPER_LEASE_SWEEPS * SWEEP_INTERVAL


# -- the database, read directly -----------------------------------------------------------------

# Where the bot keeps its tables: a SQLite file, or a PostgreSQL database's URL.
Database = Path | str


def connect_ro(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    db.row_factory = sqlite3.Row
    return db


async def read_rows(where: Database, *queries: tuple[str, tuple[Any, ...]]) -> list[list[Row]]:
    """Each query's rows, all in one read transaction: the tables as of one commit, even while
    the bot writes. The queries number their parameters as PostgreSQL does (``$1``), which
    SQLite reads as ``?1``."""
    if isinstance(where, Path):
        with closing(connect_ro(where)) as sqlite:
            sqlite.execute("BEGIN")
            return [
                [dict(row) for row in sqlite.execute(sql.replace("$", "?"), params).fetchall()]
                for sql, params in queries
            ]
    db = await asyncpg.connect(where)
    try:
        # REPEATABLE READ: every query sees the snapshot the first one took.
        async with db.transaction(isolation="repeatable_read", readonly=True):
            return [[dict(row) for row in await db.fetch(sql, *params)] for sql, params in queries]
    finally:
        await db.close()


@dataclass(frozen=True)
class Tables:
    games: list[Row]
    challenges: list[Row]
    occupants: list[Row]
    stats: list[Row]
    ratings: list[Row]

    @classmethod
    def read(cls, where: Database) -> Tables:
        """The tables, read while the caller's event loop waits (on PostgreSQL too, in a thread
        of its own): the sim in that loop answers nothing meanwhile, so the messages it holds
        are as of the tables' commit, which :func:`shown_problems` relies on. Awaited, a read
        let a live worker's board replaced after the snapshot show as a live game whose
        message no longer shows it."""
        reading = read_rows(
            where,
            ("SELECT * FROM games ORDER BY id", ()),
            ("SELECT * FROM challenges ORDER BY id", ()),
            ("SELECT * FROM channel_occupants ORDER BY channel_id", ()),
            ("SELECT * FROM player_stats", ()),
            ("SELECT * FROM ratings", ()),
        )
        with ThreadPoolExecutor(max_workers=1) as thread:
            return cls(*thread.submit(asyncio.run, reading).result())


@dataclass(frozen=True)
class ChannelView:
    """What the database says about one channel right now."""

    game: Row | None  # its live game
    challenge: Row | None  # its pending challenge
    last: Row | None  # its most recently finished game


async def read_channel(where: Database, channel_id: int) -> ChannelView:
    game, challenge, last = await read_rows(
        where,
        ("SELECT * FROM games WHERE channel_id = $1 AND status = 'active'", (channel_id,)),
        ("SELECT * FROM challenges WHERE channel_id = $1 AND status = 'pending'", (channel_id,)),
        (
            "SELECT * FROM games WHERE channel_id = $1 AND status = 'finished'"
            " ORDER BY updated_at DESC, id DESC LIMIT 1",
            (channel_id,),
        ),
    )
    return ChannelView(
        game[0] if game else None, challenge[0] if challenge else None, last[0] if last else None
    )


def moves_of(game: Row) -> tuple[int, ...]:
    text: str = game["moves"]
    return tuple(int(cell) for cell in text.split(",")) if text else ()


def mark_at(ply: int) -> str:
    return "X" if ply % 2 == 0 else "O"


def side_id(game: Row, mark: str) -> int:
    return int(game["x_id"] if mark == "X" else game["o_id"])


def human_marks(game: Row) -> list[str]:
    return [mark for mark in ("X", "O") if mark != game["ai_mark"]]


def other_mark(mark: str) -> str:
    return "O" if mark == "X" else "X"


def result_for(mark: str, winner: str | None) -> str:
    return "draws" if winner is None else "wins" if winner == mark else "losses"


# -- 1. every game is valid -----------------------------------------------------------------------


def game_problems(game: Row, games: Mapping[int, Row], bot_id: int, members: set[int]) -> list[str]:
    """What is wrong with one game row. The rule:

    - its moves replay on ``game.Board`` from the empty board (legal cells, none taken, none
      after the board is over);
    - its sides: two members, or a member and the bot (whose side is ``ai_mark``, at a known
      difficulty), never the same id twice;
    - ``version`` is 1 + one save per move a human made (the bot's reply is saved with it)
      + one for a resign, timeout or moderator's end: each save is one step of the game;
    - active: the board is not over, no winner or end reason, the bot never owes a move, and
      the deadline is the turn timeout after the last save;
    - finished: no deadline, and the end reason agrees with the board: ``line``: the board is
      over with a line for ``winner``; ``draw``: a full board without a line and no winner;
      ``resign``, ``timeout`` and ``ended``: the board is NOT over. No exception: the move that
      ends the board finishes the game in the same versioned write, and a resign, a timeout or
      an end only applies to a row still active at the version it read. ``timeout``: the winner
      is the side that was waiting (the loser is the side to move); ``resign``: a winner, and
      against the bot it is the bot (only the human can resign); ``ended``: no winner;
    - a rematch follows a finished game of the same channel, sides swapped.
    """
    where = f"game {game['id']} ({game['status']}/{game['end_reason']}, moves {game['moves']!r})"
    try:
        moves = moves_of(game)
        board = Board.from_moves(moves, game["size"])
    except ValueError as error:  # the engine's errors are ValueErrors
        return [f"{where}: its moves do not replay: {error}"]
    problems: list[str] = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            problems.append(f"{where}: {what}")

    ai = game["ai_mark"]
    outcome = board.outcome()
    check(game["x_id"] != game["o_id"], "the same player on both sides")
    if ai is None:
        check(game["ai_difficulty"] is None, "a difficulty without an AI side")
        check({game["x_id"], game["o_id"]} <= members, "a side that is no member")
    else:
        check(ai in ("X", "O"), f"ai_mark {ai!r}")
        check(game["ai_difficulty"] in DIFFICULTIES, f"difficulty {game['ai_difficulty']!r}")
        check(side_id(game, ai) == bot_id, "the AI side is not the bot")
        check(side_id(game, other_mark(ai)) in members, "the human side is no member")
    human_moves = sum(1 for ply in range(len(moves)) if mark_at(ply) != ai)
    extra_save = game["end_reason"] in ("resign", "timeout", "ended")
    check(
        game["version"] == 1 + human_moves + extra_save,
        f"version {game['version']}, but {human_moves} human moves"
        + (f" and a {game['end_reason']}" if extra_save else ""),
    )
    check(game["updated_at"] >= game["created_at"], "updated before it was created")
    if game["status"] == "active":
        check(outcome is None, "active, but the board is over")
        check(game["winner"] is None and game["end_reason"] is None, "active with a result")
        check(
            game["deadline"] is not None
            and math.isclose(game["deadline"], game["updated_at"] + TURN_TIMEOUT, abs_tol=1e-3),
            f"deadline {game['deadline']} is not {TURN_TIMEOUT} s after the last save",
        )
        if ai is not None:
            check(board.turn.value != ai, "the bot owes a move")
    elif game["status"] == "finished":
        reason, winner = game["end_reason"], game["winner"]
        check(game["deadline"] is None, "finished with a deadline")
        if reason == "line":
            check(
                outcome is not None
                and outcome.winner is not None
                and outcome.winner.value == winner,
                f"a line for {winner!r}, but the board's outcome is {outcome}",
            )
        elif reason == "draw":
            check(
                outcome is not None and outcome.winner is None and winner is None,
                f"a draw won by {winner!r}, board outcome {outcome}",
            )
        elif reason in ("resign", "timeout", "ended"):
            check(outcome is None, f"ended by {reason}, but the board is over ({outcome})")
            if reason == "ended":
                check(winner is None, "ended by a moderator, yet won")
            elif reason == "timeout":
                check(winner == board.turn.other.value, "the timeout was won by the side to move")
            else:
                check(winner is not None, "resigned without a winner")
                if ai is not None:
                    check(winner == ai, "a resign against the bot won by the human")
        else:
            check(False, f"finished with end reason {reason!r}")
    else:
        check(False, f"status {game['status']!r}")
    if game["rematch_of"] is not None:
        old = games.get(game["rematch_of"])
        check(old is not None and old["status"] == "finished", "a rematch of no finished game")
        if old is not None:
            check(old["channel_id"] == game["channel_id"], "a rematch in another channel")
            check(game["created_at"] >= old["updated_at"], "a rematch before the game ended")
            if ai is None:
                check(
                    (game["x_id"], game["o_id"]) == (old["o_id"], old["x_id"]),
                    "a rematch without the sides swapped",
                )
            else:
                check(
                    old["ai_mark"] == other_mark(ai)
                    and old["ai_difficulty"] == game["ai_difficulty"]
                    and side_id(old, ai) == side_id(game, other_mark(ai)),
                    "a rematch against the bot with another player, difficulty or the same sides",
                )
    return problems


def challenge_problems(tables: Tables, members: set[int]) -> list[str]:
    problems: list[str] = []
    games = {game["id"]: game for game in tables.games}
    started: set[int] = set()
    for challenge in tables.challenges:
        where = f"challenge {challenge['id']} ({challenge['status']})"
        challenger, opponent = challenge["challenger_id"], challenge["opponent_id"]
        if challenger not in members or opponent not in (*members, None):
            problems.append(f"{where}: a side that is no member")
        if challenger == opponent:
            problems.append(f"{where}: a challenge to oneself")
        if not math.isclose(
            challenge["expires_at"], challenge["created_at"] + CHALLENGE_TIMEOUT, abs_tol=1e-3
        ):
            problems.append(f"{where}: expires_at is not the challenge timeout after creation")
        if challenge["status"] != "accepted":
            if challenge["game_id"] is not None:
                problems.append(f"{where}: a game without being accepted")
            continue
        game = games.get(challenge["game_id"])
        started.add(challenge["game_id"])
        if (
            game is None
            or game["channel_id"] != challenge["channel_id"]
            or game["ai_mark"] is not None
            or game["rematch_of"] is not None
            or game["x_id"] != challenger
            or game["o_id"] == challenger
            or (opponent is not None and game["o_id"] != opponent)
        ):
            problems.append(f"{where}: its game {challenge['game_id']} is not the one it started")
    challenged = {
        game["id"]
        for game in tables.games
        if game["ai_mark"] is None and game["rematch_of"] is None
    }
    if challenged != started:
        problems.append(
            f"member games not started by exactly one accepted challenge: {challenged ^ started}"
        )
    return problems


# -- 2. no channel is blocked ---------------------------------------------------------------------


def channel_problems(tables: Tables, now: float, slack: float = SWEEP_SLACK) -> list[str]:
    """One occupant per channel, as ``channel_occupants`` says; each live game or pending
    challenge shown in a message, or saved recently enough that the sweeper will still post it;
    nothing left overdue, by more than ``slack``, that the sweeper should have settled."""
    problems: list[str] = []
    expected: dict[int, tuple[str, int]] = {}
    for kind, table, status in (
        ("game", tables.games, "active"),
        ("challenge", tables.challenges, "pending"),
    ):
        for row in table:
            if row["status"] != status:
                continue
            channel = row["channel_id"]
            if channel in expected:
                problems.append(
                    f"channel {channel} holds {expected[channel]} and {kind} {row['id']} at once"
                )
            expected[channel] = (kind, row["id"])
            saved = row["updated_at"] if kind == "game" else row["created_at"]
            if row["message_id"] is None and now - saved > UNSHOWN_GRACE + slack:
                problems.append(
                    f"{kind} {row['id']} in channel {channel} has had no message for "
                    f"{now - saved:.0f} s: the sweeper should have posted it"
                )
            due = row["deadline"] if kind == "game" else row["expires_at"]
            if due is not None and now - due > slack:
                problems.append(
                    f"{kind} {row['id']} in channel {channel} ran out {now - due:.0f} s ago and "
                    "is still live: the sweeper should have settled it"
                )
    occupants = {
        row["channel_id"]: ("game", row["game_id"])
        if row["game_id"] is not None
        else ("challenge", row["challenge_id"])
        for row in tables.occupants
    }
    if occupants != expected:
        problems.append(
            f"channel_occupants {occupants} disagrees with the live games and pending "
            f"challenges {expected}"
        )
    return problems


def shown_problems(sim: DiscordSim, tables: Tables, after_a_kill: bool = False) -> list[str]:
    """The message the database names for each live game or pending challenge is in its
    channel and still carries a button of that game or challenge. Just after a kill, a game
    may still show the challenge that started it in that message: its accept was saved and
    its answer died with its worker (the next click on the message shows the game,
    ``tests/test_bot_reliability.py``), and the end of the soak checks it was shown."""
    problems: list[str] = []
    started_by = {
        row["game_id"]: row["id"] for row in tables.challenges if row["game_id"] is not None
    }
    for kind, table, status in (
        ("game", tables.games, "active"),
        ("challenge", tables.challenges, "pending"),
    ):
        for row in table:
            if row["status"] != status or row["message_id"] is None:
                continue
            message = sim_message(sim, row["message_id"])
            names = set()
            for button in message.buttons() if message is not None else []:
                custom_id = button["custom_id"]
                if kind == "game":
                    fields = CELL_ID.parse(custom_id) or GAME_ACTION_ID.parse(custom_id)
                    names.add(int(fields["game"]) if fields else 0)
                else:
                    fields = CHALLENGE_ID.parse(custom_id)
                    names.add(int(fields["challenge"]) if fields else 0)
            challenges_shown = {
                int(fields["challenge"])
                for button in (message.buttons() if message is not None else [])
                if (fields := CHALLENGE_ID.parse(button["custom_id"])) is not None
            }
            still_the_challenge = (
                after_a_kill and kind == "game" and started_by.get(row["id"]) in challenges_shown
            )
            if (
                message is None
                or message.deleted
                or message.channel.id != row["channel_id"]
                or message.author is not sim.bot_user
                or (row["id"] not in names and not still_the_challenge)
            ):
                problems.append(
                    f"{kind} {row['id']}: its message {row['message_id']} does not show it "
                    f"(buttons naming {sorted(names)})"
                )
    return problems


# -- 3. every finished game is counted exactly once --------------------------------------------


def count_problems(tables: Tables) -> list[str]:
    """Recompute ``player_stats`` and ``ratings`` from the finished games (the rules of
    ``bot/results.py``) and compare, each board size on its own. Ratings are replayed (through
    ``bot.results.play``, each game at its end) in the order the games finished: by
    ``updated_at``, then id. A forgotten member's placeholder plays
    its games in the replay, and must have no row of its own."""
    stats: dict[tuple[int, int, int, str], Counter[str]] = {}
    rated: dict[tuple[int, int, int], Counter[str]] = {}
    ratings: dict[tuple[int, int, int], Standing] = {}
    finished = [game for game in tables.games if game["status"] == "finished"]
    for game in sorted(finished, key=lambda game: (game["updated_at"], game["id"])):
        guild, size, winner = game["guild_id"], game["size"], game["winner"]
        if game["end_reason"] == "ended" or game["assisted"] or game["x_id"] == game["o_id"]:
            # A moderator's end counts for nobody; nor does a game with a hint (the soak asks
            # for none), nor one against oneself.
            continue
        if game["ai_mark"] is not None:
            (human,) = human_marks(game)
            key = (guild, side_id(game, human), size, game["ai_difficulty"])
            stats.setdefault(key, Counter())[result_for(human, winner)] += 1
            continue
        for mark in ("X", "O"):
            member = side_id(game, mark)
            outcome = result_for(mark, winner)
            stats.setdefault((guild, member, size, "member"), Counter())[outcome] += 1
            rated.setdefault((guild, member, size), Counter()).update(["games", outcome])
        x, o = (guild, game["x_id"], size), (guild, game["o_id"], size)
        score_x = 1.0 if winner == "X" else 0.5 if winner is None else 0.0
        ratings[x], ratings[o] = play(
            ratings.get(x, Standing()), ratings.get(o, Standing()), score_x, game["updated_at"]
        )
    # A forgotten member's rows were deleted (bot/privacy.py); the games they played still
    # count, as played, for everyone else. Their placeholder must have no row left.
    stats = {key: counts for key, counts in stats.items() if not is_forgotten(key[1])}
    ratings = {key: rating for key, rating in ratings.items() if not is_forgotten(key[1])}
    problems: list[str] = []
    have_stats = {(r["guild_id"], r["user_id"], r["size"], r["opponent"]): r for r in tables.stats}
    for key in sorted(stats.keys() | have_stats.keys()):
        want = tuple(stats.get(key, Counter())[kind] for kind in ("wins", "losses", "draws"))
        row = have_stats.get(key)
        have = None if row is None else (row["wins"], row["losses"], row["draws"])
        if have != want:
            problems.append(
                f"player_stats {key}: (wins, losses, draws) is {have}, the finished games add "
                f"up to {want}"
            )
    have_ratings = {(r["guild_id"], r["user_id"], r["size"]): r for r in tables.ratings}
    for player in sorted(ratings.keys() | have_ratings.keys()):
        counts = rated.get(player, Counter())
        replayed = ratings.get(player)
        want_row = (
            None if replayed is None else replayed.rating,
            None if replayed is None else replayed.deviation,
            *(counts[k] for k in RATING_COLUMNS[2:]),
        )
        rating_row = have_ratings.get(player)
        have_row = None if rating_row is None else tuple(rating_row[k] for k in RATING_COLUMNS)
        if (
            have_row is None
            or replayed is None
            or not math.isclose(have_row[0], replayed.rating, rel_tol=1e-9)
            or not math.isclose(have_row[1], replayed.deviation, rel_tol=1e-9)
            or have_row[2:] != want_row[2:]
        ):
            problems.append(
                f"ratings {player}: (rating, deviation, games, wins, losses, draws) is "
                f"{have_row}, replaying the finished member games gives {want_row}"
            )
    return problems


RATING_COLUMNS = ("rating", "deviation", "games", "wins", "losses", "draws")


def table_problems(
    tables: Tables, bot_id: int, members: set[int], now: float, slack: float = SWEEP_SLACK
) -> list[str]:
    games = {game["id"]: game for game in tables.games}
    problems = [
        problem for game in tables.games for problem in game_problems(game, games, bot_id, members)
    ]
    problems += challenge_problems(tables, members)
    problems += channel_problems(tables, now, slack)
    problems += count_problems(tables)
    return problems


def database_problems(
    sim: DiscordSim,
    where: Database,
    members: set[int],
    slack: float = SWEEP_SLACK,
    *,
    after_a_kill: bool = False,
) -> list[str]:
    tables = Tables.read(where)
    now = time.time()
    return table_problems(tables, sim.bot_user.id, members, now, slack) + shown_problems(
        sim, tables, after_a_kill
    )


def sim_message(sim: DiscordSim, message_id: int | None) -> SimMessage | None:
    if message_id is None:
        return None
    try:
        return sim.message(message_id)
    except KeyError:
        return None
