"""Every statement both engines run, written once with ``?`` placeholders and spelled for each
engine once (:data:`QMARK` for SQLite, :data:`NUMBERED` for asyncpg's ``$1``, ``$2``...)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from bot.storage.base import GAMES_PRUNED_THROUGH, SchemaTooNewError, ShardSlice
from bot.storage.codec import (
    CHALLENGE_COLUMNS,
    DRILL_COLUMNS,
    GAME_COLUMNS,
    GAME_FIELDS,
    PUZZLE_RESULT_COLUMNS,
    RATED_GAME_COLUMNS,
    SETTING_COLUMNS,
    SETTING_OF_GAME,
    TOURNAMENT_COLUMNS,
)
from bot.storage.migrations import migration_files

_PLACEHOLDER = re.compile(r"\?")


def numbered(statement: str) -> str:
    """``statement`` with its ``?`` placeholders numbered in order, as asyncpg takes them:
    ``$1``, ``$2``... A ``?`` inside a quoted string is text, and stays."""
    number = itertools.count(1)
    # Split at the quotes, the pieces outside strings are the even ones. (A doubled quote
    # inside a string makes an empty even piece between its halves, with nothing to number.)
    pieces = statement.split("'")
    pieces[::2] = [_PLACEHOLDER.sub(lambda _: f"${next(number)}", piece) for piece in pieces[::2]]
    return "'".join(pieces)


def _as_written(statement: str) -> str:
    return statement


def shard_params(shards: ShardSlice) -> tuple[int, ...]:
    """The parameters of a statement's shard condition, after all of its others: the count,
    then the ids."""
    return (shards.count, *sorted(shards.ids))


def refuse_newer_schema(newest: int | None, dialect: str) -> None:
    """Raise :class:`SchemaTooNewError` if ``newest``, the highest migration the database has
    applied, is past this bot's own for ``dialect``: checked before anything is written, so
    that a newer bot's database stays as it was."""
    known = max(version for version, _ in migration_files(dialect))
    if newest is not None and newest > known:
        raise SchemaTooNewError(
            f"its schema is version {newest}, newer than this bot's {known}: a newer tttbot "
            "wrote it; run that version (the database was left unchanged)"
        )


_GAMES = f"SELECT {GAME_COLUMNS} FROM games WHERE"
# A game and its guild's settings, one row a setting (or one of NULLs where there are none):
# the game's columns named as in _GAMES, the setting's prefixed (codec.game_with_settings).
_GAME_WITH_GUILD_SETTINGS = (
    f"SELECT {', '.join(f'g.{name} AS {name}' for name in GAME_FIELDS)},"
    f" {', '.join(f's.{column} AS {SETTING_OF_GAME}{column}' for column in SETTING_COLUMNS)}"
    " FROM games g LEFT JOIN guild_settings s ON s.guild_id = g.guild_id"
    " WHERE g.id = ? ORDER BY s.key"
)
_CHALLENGES = f"SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE"
_DRILLS = f"SELECT {DRILL_COLUMNS} FROM drills WHERE"
# A channel without a reply route: the bot is in it, and may post there itself.
_WITHOUT_ROUTE = "channel_id NOT IN (SELECT channel_id FROM reply_routes)"
# The setting that counts forgotten members: the next placeholder is minus its new value.
PLACEHOLDER_COUNTER = "forgotten_members"
# Where a statement names the shards its guilds are on: their count and ids (shard_params).
_SHARDS = "<shards>"


def _in_shards(ids: int) -> str:
    """That a row's guild is on one of ``ids`` shards (:meth:`ShardSlice.owns`)."""
    return f"((guild_id >> 22) % ?) IN ({', '.join('?' * ids)})"


# A rating's standing (bot.results.Standing), read and set.
_STANDING = "rating, deviation, last_played"
_SET_STANDING = (
    "rating = excluded.rating, deviation = excluded.deviation, last_played = excluded.last_played"
)


def _add_score(table: str) -> str:
    """An upsert's update of a player's wins, losses and draws by the row it tried to insert.
    (PostgreSQL needs the row there named by its table; SQLite takes it so too.)"""
    return ", ".join(
        f"{column} = {table}.{column} + excluded.{column}" for column in ("wins", "losses", "draws")
    )


def add_records(rows: str) -> str:
    """The upsert that adds ``rows`` (a VALUES list or a SELECT of guild_id, user_id, size,
    opponent, wins, losses, draws) to the players' records."""
    return (
        "INSERT INTO player_stats (guild_id, user_id, size, opponent, wins, losses, draws)"
        f" {rows} ON CONFLICT (guild_id, user_id, size, opponent)"
        f" DO UPDATE SET {_add_score('player_stats')}"
    )


# A move's compare-and-set, its values in codec.saved_game_values' order. RETURNING reads back
# the stored row rather than echoing the argument: message_id may have moved on since the
# caller read the game, and stats must use the stored players.
SAVE_GAME = (
    "UPDATE games SET moves = ?, status = ?, winner = ?, end_reason = ?,"
    " deadline = ?, version = version + 1, updated_at = ?, assisted = ?"
    f" WHERE id = ? AND version = ? AND status = 'active' RETURNING {GAME_COLUMNS}"
)


# The statements about the guilds of some shards (Statements.overdue_games and the rest).
_OVERDUE_GAMES = f"{_GAMES} status = 'active' AND deadline <= ? AND {_SHARDS} ORDER BY deadline, id"
_UNSHOWN_GAMES = (
    f"{_GAMES} status = 'active' AND message_id IS NULL AND updated_at <= ?"
    f" AND {_WITHOUT_ROUTE} AND {_SHARDS} ORDER BY id"
)
# The tournaments the sweeper looks at: now, then the shards' parameters.
_DUE_TOURNAMENTS = (
    "SELECT id FROM tournaments WHERE (status = 'running'"
    f" OR (status IN ('registering', 'finished') AND due_at <= ?)) AND {_SHARDS} ORDER BY id"
)
_OVERDUE_CHALLENGES = (
    f"{_CHALLENGES} status = 'pending' AND expires_at <= ? AND {_SHARDS} ORDER BY expires_at, id"
)
_UNSHOWN_CHALLENGES = (
    f"{_CHALLENGES} status = 'pending' AND message_id IS NULL AND created_at <= ?"
    f" AND {_WITHOUT_ROUTE} AND {_SHARDS} ORDER BY id"
)

# Old data removed (TTT_KEEP_FINISHED_GAMES_DAYS), a batch at a time. A batch of finished games:
# its cutoff, then the shards' parameters, then its size.
_PRUNABLE_GAMES = (
    "SELECT id, updated_at FROM games WHERE status = 'finished' AND updated_at <= ?"
    f" AND {_SHARDS} ORDER BY updated_at, id LIMIT ?"
)
# The batch, named by its last game's (updated_at, id), then the shards' parameters: every
# statement of the transaction reads the same games (no game can finish at a time this old).
_IN_PRUNED_BATCH = f"status = 'finished' AND (updated_at, id) <= (?, ?) AND {_SHARDS}"
_PRUNED_BATCH = f"SELECT id FROM games WHERE {_IN_PRUNED_BATCH}"
# What points at those games first: the rematches that followed them, a channel's game still
# to be shown, the challenges that started them.
_UNLINK_PRUNED_REMATCHES = (
    f"UPDATE games SET rematch_of = NULL WHERE rematch_of IN ({_PRUNED_BATCH})"
)
_UNLINK_PRUNED_UNSEEN = (
    f"UPDATE reply_routes SET unseen_game_id = NULL WHERE unseen_game_id IN ({_PRUNED_BATCH})"
)
_DELETE_PRUNED_CHALLENGES = (
    f"DELETE FROM challenges WHERE game_id IN ({_PRUNED_BATCH}) RETURNING id"
)
_DELETE_PRUNED_GAMES = f"DELETE FROM games WHERE {_IN_PRUNED_BATCH} RETURNING id"
# Challenges closed without a game: the cutoff, the shards' parameters, the batch size.
_DELETE_OLD_CHALLENGES = (
    "DELETE FROM challenges WHERE id IN (SELECT id FROM challenges WHERE game_id IS NULL"
    f" AND status <> 'pending' AND created_at <= ? AND {_SHARDS} ORDER BY created_at, id"
    " LIMIT ?) RETURNING id"
)

# The guilds whose last season's end is still to be seen to: its name and end, the setting
# naming their channel for announcements, then the shards' parameters.
_UNANNOUNCED_GUILDS = (
    "SELECT guild_id FROM guild_settings s WHERE key = ? AND value IS NOT NULL"
    " AND changed_at < ? AND NOT EXISTS (SELECT 1 FROM season_announcements a"
    " WHERE a.guild_id = s.guild_id AND a.season = ?)"
    f" AND {_SHARDS} ORDER BY guild_id"
)


class Statements:
    """The shared statements, by what they do, in one engine's placeholders: each is spelled
    once, here, or (those naming shards) once per number of shards, on first use."""

    def __init__(self, spell: Callable[[str], str]) -> None:
        self._spell = spell
        self._by_shards: dict[tuple[str, int], str] = {}
        # -- schema
        self.newest_migration = spell("SELECT MAX(version) AS newest FROM schema_migrations")
        self.migrations = spell("SELECT version, applied_at FROM schema_migrations")
        self.add_migration = spell(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)"
        )
        # -- games
        self.game = spell(f"{_GAMES} id = ?")
        self.game_with_guild_settings = spell(_GAME_WITH_GUILD_SETTINGS)
        self.live_game = spell(f"{_GAMES} channel_id = ? AND status = 'active'")
        self.finished_game = spell(f"{_GAMES} id = ? AND channel_id = ? AND status = 'finished'")
        self.last_finished_game = spell(
            f"{_GAMES} channel_id = ? AND status = 'finished' ORDER BY id DESC LIMIT 1"
        )
        # Values in codec.new_game_values' order.
        self.insert_game = spell(
            "INSERT INTO games (guild_id, channel_id, x_id, o_id, x_name, o_name, ai_difficulty,"
            " ai_mark, size, moves, status, deadline, version, created_at, updated_at,"
            " rematch_of, language, turn_timeout, mark_x, mark_o, own_thread) VALUES (?, ?, ?, ?,"
            " ?, ?, ?, ?, ?, ?, 'active', ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)"
            f" RETURNING {GAME_COLUMNS}"
        )
        self.save_game = spell(SAVE_GAME)
        self.first_game_message = spell(
            "UPDATE games SET message_id = ? WHERE id = ? AND message_id IS NULL RETURNING id"
        )
        self.use_default_marks = spell("UPDATE games SET mark_x = NULL, mark_o = NULL WHERE id = ?")
        # -- challenges
        self.challenge = spell(f"{_CHALLENGES} id = ?")
        self.pending_challenge = spell(f"{_CHALLENGES} channel_id = ? AND status = 'pending'")
        # Values in codec.new_challenge_values' order.
        self.insert_challenge = spell(
            "INSERT INTO challenges (guild_id, channel_id, challenger_id, challenger_name,"
            " opponent_id, opponent_name, status, expires_at, created_at, size, language)"
            " VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)"
            f" RETURNING {CHALLENGE_COLUMNS}"
        )
        self.close_challenge = spell(
            "UPDATE challenges SET status = ? WHERE id = ? AND status = 'pending'"
            f" RETURNING {CHALLENGE_COLUMNS}"
        )
        self.start_challenge_game = spell(
            f"UPDATE challenges SET game_id = ? WHERE id = ? RETURNING {CHALLENGE_COLUMNS}"
        )
        self.first_challenge_message = spell(
            "UPDATE challenges SET message_id = ? WHERE id = ? AND message_id IS NULL RETURNING id"
        )
        # -- stats: rows in codec.record_rows' and codec.rating_rows' order
        self.add_record = spell(add_records("VALUES (?, ?, ?, ?, ?, ?, ?)"))
        # The ratings a finished game is rated from: its guild, size, and two players.
        self.ratings_of = spell(
            f"SELECT user_id, {_STANDING}, games FROM ratings"
            " WHERE guild_id = ? AND size = ? AND user_id IN (?, ?)"
        )
        self.rate = spell(
            "INSERT INTO ratings (guild_id, user_id, size, rating, deviation, last_played,"
            " games, wins, losses, draws) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)"
            f" ON CONFLICT (guild_id, user_id, size) DO UPDATE SET {_SET_STANDING},"
            f" games = ratings.games + 1, {_add_score('ratings')}"
        )
        self.records = spell(
            "SELECT opponent, wins, losses, draws FROM player_stats"
            " WHERE guild_id = ? AND user_id = ? AND size = ?"
        )
        self.rating = spell(
            f"SELECT {_STANDING}, games FROM ratings"
            " WHERE guild_id = ? AND user_id = ? AND size = ?"
        )
        # Every rating of a guild on a size: ranked by bot.results.ranked as of the moment
        # read, since deviations grow with time.
        self.leaderboard = spell(
            f"SELECT user_id, {_STANDING}, games, wins, losses, draws FROM ratings"
            " WHERE guild_id = ? AND size = ?"
        )
        # -- seasons (bot.seasons): a season's games, oldest first, by the columns they are
        # rated by; when the last game that counts ended before a moment (the leaderboard's
        # list of seasons); the claim of a season's announcement, inserted once.
        self.season_games = spell(
            f"SELECT {', '.join(RATED_GAME_COLUMNS)} FROM games"
            " WHERE guild_id = ? AND size = ? AND status = 'finished' AND ai_mark IS NULL"
            " AND updated_at >= ? AND updated_at < ? ORDER BY updated_at, id"
        )
        self.last_rated_game_before = spell(
            "SELECT updated_at FROM games"
            " WHERE guild_id = ? AND size = ? AND status = 'finished' AND ai_mark IS NULL"
            " AND updated_at < ? AND end_reason <> 'ended' AND NOT assisted AND x_id <> o_id"
            " ORDER BY updated_at DESC, id DESC LIMIT 1"
        )
        self.claim_season = spell(
            "INSERT INTO season_announcements (guild_id, season, announced_at) VALUES (?, ?, ?)"
            " ON CONFLICT (guild_id, season) DO NOTHING RETURNING guild_id"
        )
        self.release_season = spell(
            "DELETE FROM season_announcements WHERE guild_id = ? AND season = ?"
        )
        # One statement takes a free or run-out lease and renews the holder's own: the row
        # changes only for them, so two workers asking at once cannot both get it.
        self.take_lease = spell(
            "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)"
            " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
            " expires_at = excluded.expires_at"
            " WHERE leases.holder = excluded.holder OR leases.expires_at <= ?"
            " RETURNING holder"
        )
        self.release_lease = spell("DELETE FROM leases WHERE name = ? AND holder = ?")
        self.prune_interactions = spell("DELETE FROM interactions_seen WHERE signed_at < ?")
        # bot.threads' suspects and claims (migration 0016). A suspect is taken by deleting
        # it, so of two workers looking at once, each row goes to one.
        self.suspect_thread = spell(
            "INSERT INTO thread_suspects (channel_id, name, thread_id, noted_at)"
            " VALUES (?, ?, ?, ?)"
        )
        self.has_thread_suspects = spell(
            "SELECT EXISTS (SELECT 1 FROM thread_suspects WHERE channel_id = ?) AS suspected"
        )
        self.take_thread_suspects = spell(
            "DELETE FROM thread_suspects WHERE channel_id = ? RETURNING name, thread_id"
        )
        # A claim is made where there is none or the one there ran out: the row changes only
        # for that caller, so two workers taking one thread cannot both get it.
        self.claim_thread = spell(
            "INSERT INTO thread_claims (thread_id, channel_id, claimed_at) VALUES (?, ?, ?)"
            " ON CONFLICT (thread_id) DO UPDATE SET channel_id = excluded.channel_id,"
            " claimed_at = excluded.claimed_at WHERE thread_claims.claimed_at < ?"
            " RETURNING thread_id"
        )
        self.release_thread = spell("DELETE FROM thread_claims WHERE thread_id = ?")
        self.claimed_threads = spell(
            "SELECT thread_id FROM thread_claims WHERE channel_id = ? AND claimed_at >= ?"
        )
        self.prune_thread_suspects = spell("DELETE FROM thread_suspects WHERE noted_at < ?")
        self.prune_thread_claims = spell("DELETE FROM thread_claims WHERE claimed_at < ?")
        # -- migration 0011's replay (bot.storage.migrations.DataStep.REPLAY_RATINGS): the
        # games between members in the order they finished, by the columns they are rated by
        # as that migration found them (codec.RATED_GAME_COLUMNS: a later migration's column
        # is not there yet when it runs); then each replayed rating, keeping the rated record
        # stored (it also counts games since pruned).
        self.rated_games_in_order = spell(
            f"SELECT {', '.join(RATED_GAME_COLUMNS)} FROM games"
            " WHERE status = 'finished' AND ai_mark IS NULL ORDER BY updated_at, id"
        )
        self.replayed_rating = spell(
            "INSERT INTO ratings (guild_id, user_id, size, rating, deviation, last_played,"
            " games, wins, losses, draws) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            f" ON CONFLICT (guild_id, user_id, size) DO UPDATE SET {_SET_STANDING}"
        )
        # -- channels the bot is not in: values in codec.reply_route_values' order
        self.save_reply_route = spell(
            "INSERT INTO reply_routes (channel_id, token, expires_at, message_id)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (channel_id) DO UPDATE SET"
            " token = excluded.token, expires_at = excluded.expires_at,"
            " message_id = excluded.message_id"
        )
        self.reply_route = spell("SELECT * FROM reply_routes WHERE channel_id = ?")
        self.forget_reply_route = spell("DELETE FROM reply_routes WHERE channel_id = ?")
        self.set_unseen_game = spell(
            "UPDATE reply_routes SET unseen_game_id = ? WHERE channel_id = ?"
        )
        self.take_unseen_game = spell(
            "UPDATE reply_routes SET unseen_game_id = NULL"
            " WHERE channel_id = ? AND unseen_game_id = ? RETURNING channel_id"
        )
        self.live_games_of = spell(
            "SELECT count(*) AS live FROM games WHERE guild_id = ? AND status = 'active'"
            " AND ? IN (x_id, o_id)"
        )
        self.last_challenge_by = spell(
            "SELECT max(created_at) AS latest FROM challenges"
            " WHERE guild_id = ? AND challenger_id = ?"
        )
        # -- servers' settings: values in codec.guild_setting_values' order
        self.guild_settings = spell(
            "SELECT key, value, changed_by, changed_at FROM guild_settings"
            " WHERE guild_id = ? ORDER BY key"
        )
        self.change_guild_setting = spell(
            "INSERT INTO guild_settings (guild_id, key, value, changed_by, changed_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (guild_id, key) DO UPDATE SET"
            " value = excluded.value, changed_by = excluded.changed_by,"
            " changed_at = excluded.changed_at"
        )
        # -- members' data: what member_data reads, by user id
        self.member_records = spell(
            "SELECT guild_id, size, opponent, wins, losses, draws FROM player_stats"
            " WHERE user_id = ?"
        )
        self.member_ratings = spell(
            f"SELECT guild_id, size, {_STANDING}, games FROM ratings WHERE user_id = ?"
        )
        self.member_games = spell(
            "SELECT guild_id, size, COUNT(*) AS games FROM games WHERE x_id = ? OR o_id = ?"
            " GROUP BY guild_id, size"
        )
        self.member_challenges = spell(
            "SELECT COUNT(*) AS challenges FROM challenges"
            " WHERE challenger_id = ? OR opponent_id = ?"
        )
        # The names stored beside the member's id, each once (sorted by the codec, so that
        # both engines' collations give one order).
        self.member_names = spell(
            "SELECT x_name AS name FROM games WHERE x_id = ?"
            " UNION SELECT o_name FROM games WHERE o_id = ?"
            " UNION SELECT challenger_name FROM challenges WHERE challenger_id = ?"
            " UNION SELECT opponent_name FROM challenges WHERE opponent_id = ?"
        )
        self.member_practice = spell(
            "SELECT (SELECT COUNT(*) FROM puzzle_results WHERE user_id = ?) AS puzzle_days,"
            " (SELECT COUNT(*) FROM drills WHERE user_id = ?) AS drills"
        )
        self.member_settings = spell(
            "SELECT COUNT(*) AS settings FROM guild_settings WHERE changed_by = ?"
        )
        self.active_games_of = spell(
            f"{_GAMES} status = 'active' AND (x_id = ? OR o_id = ?) ORDER BY id"
        )
        # -- forgetting a member: the placeholder first (its counter's row also queues
        # concurrent forgettings one behind the other), then the member's id and name
        # replaced by it, then what they had live ended by the placeholder
        self.next_placeholder = spell(
            f"INSERT INTO settings (key, value) VALUES ('{PLACEHOLDER_COUNTER}', '1')"
            " ON CONFLICT (key) DO UPDATE"
            " SET value = CAST(CAST(settings.value AS BIGINT) + 1 AS TEXT) RETURNING value"
        )
        # Each: placeholder id, placeholder name, member id.
        self.anonymise_games = (
            spell("UPDATE games SET x_id = ?, x_name = ? WHERE x_id = ? RETURNING id"),
            spell("UPDATE games SET o_id = ?, o_name = ? WHERE o_id = ? RETURNING id"),
        )
        self.anonymise_challenges = (
            spell(
                "UPDATE challenges SET challenger_id = ?, challenger_name = ?"
                " WHERE challenger_id = ? RETURNING id"
            ),
            spell(
                "UPDATE challenges SET opponent_id = ?, opponent_name = ?"
                " WHERE opponent_id = ? RETURNING id"
            ),
        )
        # The placeholder, then the member id: the settings they changed last keep the change
        # but no longer say who made it.
        self.anonymise_settings = spell(
            "UPDATE guild_settings SET changed_by = ? WHERE changed_by = ? RETURNING key"
        )
        # now, then the placeholder twice: counts for nobody, as a moderator's end does.
        self.end_games_of = spell(
            "UPDATE games SET status = 'finished', winner = NULL, end_reason = 'ended',"
            " deadline = NULL, version = version + 1, updated_at = ?"
            f" WHERE status = 'active' AND (x_id = ? OR o_id = ?) RETURNING {GAME_COLUMNS}"
        )
        # The placeholder three times: withdrawn if theirs, declined if made to them.
        self.close_challenges_of = spell(
            "UPDATE challenges SET status = CASE WHEN challenger_id = ? THEN 'withdrawn'"
            " ELSE 'declined' END"
            " WHERE status = 'pending' AND (challenger_id = ? OR opponent_id = ?)"
            f" RETURNING {CHALLENGE_COLUMNS}"
        )
        self.delete_member_stats = (
            spell("DELETE FROM player_stats WHERE user_id = ? RETURNING user_id"),
            spell("DELETE FROM ratings WHERE user_id = ? RETURNING user_id"),
        )
        self.delete_member_practice = (
            spell("DELETE FROM puzzle_results WHERE user_id = ? RETURNING user_id"),
            spell("DELETE FROM drills WHERE user_id = ? RETURNING user_id"),
        )
        # -- erasing a guild's data, in this order: what its messages show, then the rows
        # that point at its games and challenges, then those, then its stats
        self.guild_live_games = spell(f"{_GAMES} guild_id = ? AND status = 'active' ORDER BY id")
        self.guild_pending_challenges = spell(
            f"{_CHALLENGES} guild_id = ? AND status = 'pending' ORDER BY id"
        )
        # Each takes the guild id twice.
        self.free_guild_channels = spell(
            "DELETE FROM channel_occupants WHERE game_id IN (SELECT id FROM games WHERE"
            " guild_id = ?) OR challenge_id IN (SELECT id FROM challenges WHERE guild_id = ?)"
        )
        self.drop_guild_routes = spell(
            "DELETE FROM reply_routes WHERE channel_id IN (SELECT channel_id FROM games"
            " WHERE guild_id = ? UNION SELECT channel_id FROM challenges WHERE guild_id = ?)"
        )
        # Challenges before games (a challenge names the game it started); one statement
        # for all of a guild's games, so that a rematch and the game it follows go together.
        self.delete_guild_challenges = spell(
            "DELETE FROM challenges WHERE guild_id = ? RETURNING id"
        )
        self.delete_guild_games = spell("DELETE FROM games WHERE guild_id = ? RETURNING id")
        # Drills come from the guild's games and go with them; puzzle results are the
        # members' own, and only forget where they were answered.
        self.delete_guild_drills = spell("DELETE FROM drills WHERE guild_id = ? RETURNING id")
        self.unlink_guild_puzzles = spell(
            "UPDATE puzzle_results SET guild_id = NULL WHERE guild_id = ?"
        )
        self.delete_guild_stats = (
            spell("DELETE FROM player_stats WHERE guild_id = ? RETURNING user_id"),
            spell("DELETE FROM ratings WHERE guild_id = ? RETURNING user_id"),
            spell("DELETE FROM guild_settings WHERE guild_id = ? RETURNING changed_by"),
        )
        self.delete_guild_seasons = spell("DELETE FROM season_announcements WHERE guild_id = ?")
        # -- puzzles: an attempt's values in codec.puzzle_attempt_values' order
        self.record_puzzle = spell(
            f"INSERT INTO puzzle_results ({PUZZLE_RESULT_COLUMNS}) VALUES (?, ?, ?, ?, 1, ?, ?)"
            " ON CONFLICT (user_id, day) DO UPDATE SET tries = puzzle_results.tries + 1,"
            " solved_at = excluded.solved_at, guild_id = excluded.guild_id"
            " WHERE puzzle_results.solved_at IS NULL AND puzzle_results.tries = ?"
            f" RETURNING {PUZZLE_RESULT_COLUMNS}"
        )
        self.puzzle_result = spell(
            f"SELECT {PUZZLE_RESULT_COLUMNS} FROM puzzle_results WHERE user_id = ? AND day = ?"
        )
        self.puzzle_results = spell(
            f"SELECT {PUZZLE_RESULT_COLUMNS} FROM puzzle_results WHERE user_id = ? ORDER BY day"
        )
        self.puzzle_solvers = spell(
            f"SELECT {PUZZLE_RESULT_COLUMNS} FROM puzzle_results"
            " WHERE guild_id = ? AND day = ? AND solved_at IS NOT NULL"
            " ORDER BY solved_at, user_id"
        )
        # -- drills: a new one's values in codec.new_drill_values' order (due when made)
        self.add_drill = spell(
            "INSERT INTO drills (user_id, guild_id, game_id, position, due_at, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, position) DO NOTHING"
        )
        self.drill_at = spell(f"{_DRILLS} user_id = ? AND position = ?")
        self.drill = spell(f"{_DRILLS} id = ?")
        self.next_drill = spell(
            f"{_DRILLS} user_id = ? AND learned_at IS NULL ORDER BY due_at, id LIMIT 1"
        )
        # The user, then now twice.
        self.drill_counts = spell(
            "SELECT COALESCE(SUM(CASE WHEN learned_at IS NULL AND due_at <= ? THEN 1 END), 0)"
            " AS due,"
            " COALESCE(SUM(CASE WHEN learned_at IS NULL AND due_at > ? THEN 1 END), 0)"
            " AS waiting,"
            " COALESCE(SUM(CASE WHEN learned_at IS NOT NULL THEN 1 END), 0) AS learned"
            " FROM drills WHERE user_id = ?"
        )
        self.answer_drill = spell(
            "UPDATE drills SET answers = answers + 1, right_in_row = ?, due_at = ?,"
            f" learned_at = ? WHERE id = ? AND answers = ? RETURNING {DRILL_COLUMNS}"
        )
        # -- tournaments: a new one's values in codec.new_tournament_values' order
        self.insert_tournament = spell(
            "INSERT INTO tournaments"
            " (guild_id, channel_id, status, due_at, state, created_at, updated_at)"
            f" VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING {TOURNAMENT_COLUMNS}"
        )
        self.tournament = spell(f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE id = ?")
        self.tournament_games = spell(
            "SELECT round, board, game_id FROM tournament_games WHERE tournament_id = ?"
            " ORDER BY round, board"
        )
        self.live_tournaments = spell(
            f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE guild_id = ?"
            " AND status IN ('registering', 'running', 'paused') ORDER BY id"
        )
        # The compare-and-set: status, due_at, state, now, then the id and the version read.
        self.save_tournament = spell(
            "UPDATE tournaments SET status = ?, due_at = ?, state = ?, updated_at = ?,"
            f" version = version + 1 WHERE id = ? AND version = ? RETURNING {TOURNAMENT_COLUMNS}"
        )
        self.tournament_table_game = spell(
            "SELECT game_id FROM tournament_games WHERE tournament_id = ? AND round = ?"
            " AND board = ?"
        )
        self.link_tournament_game = spell(
            "INSERT INTO tournament_games (tournament_id, round, board, game_id)"
            " VALUES (?, ?, ?, ?)"
        )
        self.latest_tournament_in_channel = spell(
            "SELECT id FROM tournaments WHERE channel_id = ? ORDER BY id DESC LIMIT 1"
        )
        # The latest of the channel's games that a pairing started: a game's thread hosts
        # one, and then maybe rematches and other games.
        self.tournament_of_thread = spell(
            "SELECT t.tournament_id FROM tournament_games t JOIN games g ON g.id = t.game_id"
            " WHERE g.channel_id = ? ORDER BY t.game_id DESC LIMIT 1"
        )
        # The documents naming a member: as an entry's or a table's player, or as who acted
        # (bot.tournaments.state writes ids as JSON numbers, each followed by , or }: a
        # snowflake's digits are no other field's). codec.naming_patterns' two patterns.
        self.tournaments_naming = spell(
            "SELECT id FROM tournaments WHERE state LIKE ? OR state LIKE ? ORDER BY id"
        )
        self.member_tournaments = spell(
            "SELECT COUNT(*) FROM tournaments WHERE state LIKE ? OR state LIKE ?"
        )
        # A guild's erased: its tournaments' games first (SQLite does not cascade), then the
        # tournaments (live_tournaments read first: the announcements to take buttons off).
        self.delete_guild_tournaments = (
            spell(
                "DELETE FROM tournament_games WHERE tournament_id IN"
                " (SELECT id FROM tournaments WHERE guild_id = ?) RETURNING game_id"
            ),
            spell("DELETE FROM tournaments WHERE guild_id = ? RETURNING id"),
        )
        # -- old data removed: the highest game id deleted so far, kept (as text) if higher
        self.note_pruned = spell(
            f"INSERT INTO settings (key, value) VALUES ('{GAMES_PRUNED_THROUGH}', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            " WHERE CAST(settings.value AS BIGINT) < CAST(excluded.value AS BIGINT)"
        )
        # -- the bot's own settings
        self.setting = spell("SELECT value FROM settings WHERE key = ?")
        # -- health and metrics
        self.ping = spell("SELECT 1 AS ok")
        self.live_games = spell("SELECT count(*) AS live FROM games WHERE status = 'active'")
        self.set_setting = spell(
            "INSERT INTO settings (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )

    # -- statements about the guilds of some shards: parameters, then shard_params(shards)

    def overdue_games(self, shards: ShardSlice) -> str:
        return self._for_shards(_OVERDUE_GAMES, shards)

    def unshown_games(self, shards: ShardSlice) -> str:
        return self._for_shards(_UNSHOWN_GAMES, shards)

    def overdue_challenges(self, shards: ShardSlice) -> str:
        return self._for_shards(_OVERDUE_CHALLENGES, shards)

    def unshown_challenges(self, shards: ShardSlice) -> str:
        return self._for_shards(_UNSHOWN_CHALLENGES, shards)

    def prunable_games(self, shards: ShardSlice) -> str:
        return self._for_shards(_PRUNABLE_GAMES, shards)

    def prune_batch(self, shards: ShardSlice) -> tuple[str, ...]:
        """What deleting a batch of games takes, in order: the last returns their ids, the
        one before the challenges'."""
        return tuple(
            self._for_shards(template, shards)
            for template in (
                _UNLINK_PRUNED_REMATCHES,
                _UNLINK_PRUNED_UNSEEN,
                _DELETE_PRUNED_CHALLENGES,
                _DELETE_PRUNED_GAMES,
            )
        )

    def due_tournaments(self, shards: ShardSlice) -> str:
        return self._for_shards(_DUE_TOURNAMENTS, shards)

    def unannounced_guilds(self, shards: ShardSlice) -> str:
        return self._for_shards(_UNANNOUNCED_GUILDS, shards)

    def old_challenges(self, shards: ShardSlice) -> str:
        return self._for_shards(_DELETE_OLD_CHALLENGES, shards)

    def _for_shards(self, template: str, shards: ShardSlice) -> str:
        key = template, len(shards.ids)
        statement = self._by_shards.get(key)
        if statement is None:
            statement = self._spell(template.replace(_SHARDS, _in_shards(len(shards.ids))))
            self._by_shards[key] = statement
        return statement


QMARK = Statements(_as_written)
NUMBERED = Statements(numbered)
