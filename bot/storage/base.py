"""The storage contract: records, the one small interface, and its errors.

Both implementations (SQLite and PostgreSQL) pass the same tests in ``tests/test_storage.py``.
Times are UNIX epoch seconds as floats, so that the domain's injectable clock is the only
source of "now".
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, Self

from game import DEFAULT_SIZE, Mark
from game.variants import Position, position

# Stats are kept per opponent kind: other members, or the bot at one difficulty.
VS_MEMBER = "member"


class GameStatus(StrEnum):
    ACTIVE = "active"
    FINISHED = "finished"


class EndReason(StrEnum):
    LINE = "line"  # a player completed a line
    DRAW = "draw"  # the board filled up
    RESIGN = "resign"
    TIMEOUT = "timeout"  # the player to move let the turn clock run out
    ENDED = "ended"  # a moderator ended it: counts for nobody


@dataclass(frozen=True, slots=True)
class ShardSlice:
    """The guilds whose background work (timeouts, messages to post again) is one process's:
    those Discord routes to the gateway shards it runs, ``(guild_id >> 22) % count in ids``.
    The default, one shard of one, is every guild."""

    count: int = 1
    ids: frozenset[int] = frozenset({0})

    def __post_init__(self) -> None:
        if self.count < 1 or not self.ids or not all(0 <= i < self.count for i in self.ids):
            raise ValueError(f"shards {sorted(self.ids)} are not shards of {self.count}")

    def owns(self, guild_id: int) -> bool:
        return (guild_id >> 22) % self.count in self.ids


EVERY_GUILD = ShardSlice()


class ChallengeStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    WITHDRAWN = "withdrawn"
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSetup:
    """Who plays a game, where, and on what board: what a new game and a stored one share.

    For a game against the bot, the bot's own user id fills its side and
    ``ai_difficulty``/``ai_mark`` say which side it plays and how well.
    """

    guild_id: int
    channel_id: int
    x_id: int
    o_id: int
    x_name: str
    o_name: str
    ai_difficulty: str | None = None
    ai_mark: Mark | None = None
    size: int = DEFAULT_SIZE
    rematch_of: int | None = None
    language: str = "en"  # the catalogue its public messages are shown in (bot.i18n)
    # Seconds a player has for each move, from its server's settings when it started; None:
    # the bot's own TTT_TURN_TIMEOUT.
    turn_timeout: float | None = None
    # The emoji shown for X and for O (bot.marks), from its server's settings when it started;
    # None: the bot's own.
    mark_x: str | None = None
    mark_o: str | None = None
    # Played in a thread the bot opened for it, off the channel it was asked for in.
    own_thread: bool = False

    @property
    def against_ai(self) -> bool:
        return self.ai_mark is not None

    def player_id(self, mark: Mark) -> int:
        return self.x_id if mark is Mark.X else self.o_id

    def player_name(self, mark: Mark) -> str:
        return self.x_name if mark is Mark.X else self.o_name

    def mark_of(self, user_id: int) -> Mark | None:
        """The mark a human plays in this game, or None for a spectator (or the bot itself)."""
        for mark in (Mark.X, Mark.O):
            if self.player_id(mark) == user_id and mark is not self.ai_mark:
                return mark
        return None

    @property
    def human_ids(self) -> tuple[int, ...]:
        """The members who play it (not the bot's side), each once, in ascending order."""
        return tuple(
            sorted({self.player_id(mark) for mark in (Mark.X, Mark.O) if mark is not self.ai_mark})
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class NewGame(GameSetup):
    """What it takes to start a game: its setup, the first deadline, any opening moves."""

    deadline: float
    created_at: float
    moves: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRecord(GameSetup):
    """A stored game."""

    id: int
    moves: tuple[int, ...]
    status: GameStatus
    winner: Mark | None  # None while active, on a draw, and when ended by a moderator
    end_reason: EndReason | None
    message_id: int | None  # the live board message; older board messages are stale
    deadline: float | None  # when the player to move loses by timeout; None once finished
    version: int  # bumped by every save: the optimistic lock for concurrent clicks
    created_at: float
    updated_at: float
    # Its player asked the bot for a hint (a game against the bot only): it counts for nobody.
    assisted: bool = False

    # The position its moves make, worked out on first use: a click reads it several times.
    _board: Position | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def board(self) -> Position:
        board = self._board
        if board is None:
            board = position(self.moves, self.size)
            object.__setattr__(self, "_board", board)  # a cache, not a change: frozen holds
        return board

    def knowing(self, board: Position) -> Self:
        """This record, told the position its moves make: ``board``, just played by the
        caller, so that no one works it out again from the moves."""
        if board.size != self.size or board.move_count != len(self.moves):
            raise ValueError(f"{board!r} is not the position of moves {self.moves}")
        object.__setattr__(self, "_board", board)
        return self

    @property
    def is_active(self) -> bool:
        return self.status is GameStatus.ACTIVE


@dataclass(frozen=True, slots=True)
class ThreadSuspects:
    """Threads off one channel that may be empty and the bot's (bot.threads): by name (a
    digest of it: bot.threads.name_digest), those a dropped connection may have made (their
    ids unknown); by id, those whose game may not be stored."""

    names: frozenset[str] = frozenset()
    ids: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class NewChallenge:
    guild_id: int
    channel_id: int
    challenger_id: int
    challenger_name: str
    opponent_id: int | None  # None: an open challenge, anyone but the challenger may accept
    opponent_name: str | None
    expires_at: float
    created_at: float
    size: int = DEFAULT_SIZE  # the board the game it starts is played on
    language: str = "en"  # the catalogue its message is shown in (bot.i18n)


@dataclass(frozen=True, slots=True)
class ChallengeRecord:
    id: int
    guild_id: int
    channel_id: int
    challenger_id: int
    challenger_name: str
    opponent_id: int | None
    opponent_name: str | None
    status: ChallengeStatus
    message_id: int | None
    expires_at: float
    game_id: int | None  # the game it started, once accepted
    created_at: float
    size: int = DEFAULT_SIZE
    language: str = "en"


@dataclass(frozen=True, slots=True)
class Record:
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyRoute:
    """How the bot shows things in a channel it is not in (a group DM, a DM between members, a
    server where only a member installed the app): through the token of the latest interaction
    there that showed a game or challenge, which can edit ``message_id`` until ``expires_at``
    (``message_id`` 0: none, where the answer that should have shown one never arrived).
    ``unseen_game_id``: a game settled there while no token was valid, or one whose board never
    showed, still to be shown."""

    channel_id: int
    token: str
    expires_at: float
    message_id: int
    unseen_game_id: int | None = None


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A member's results in one guild on one board size: against members, and against the bot
    per difficulty. Each size keeps its own records and its own rating."""

    guild_id: int
    user_id: int
    records: dict[str, Record] = field(default_factory=dict)  # VS_MEMBER or a difficulty
    rating: float | None = None  # None until a rated game (member against member) finished
    rated_games: int = 0
    size: int = DEFAULT_SIZE
    # How unsure the rating is, grown for the time since the last rated game (None: unrated).
    deviation: float | None = None

    def against(self, opponent: str) -> Record:
        return self.records.get(opponent, Record())


@dataclass(frozen=True, slots=True)
class StoredSetting:
    """One of a server's settings as stored: its value as text (None once reset to the
    default), who changed it last, and when."""

    key: str
    value: str | None
    changed_by: int
    changed_at: float


@dataclass(frozen=True, slots=True)
class Rating:
    """A member's rating and rated record on one board size (bot.results: what they mean)."""

    user_id: int
    rating: float
    deviation: float
    games: int
    wins: int
    losses: int
    draws: int
    last_played: float | None  # when the last rated game ended (None: not known)


# -- members' data ------------------------------------------------------------------------

# A forgotten member (``/ttt forget-me``) is replaced in the games and challenges they were in
# by a placeholder id and an empty name. Each forgetting draws a new placeholder, a negative
# number (no Discord id is negative, and none is derived from theirs): the games of one
# forgotten member still hang together, so the ratings their opponents got from them still
# replay exactly from the games, while two forgotten members never merge into one player.
FORGOTTEN_NAME = ""


def is_forgotten(user_id: int) -> bool:
    """Whether ``user_id`` is the placeholder of a forgotten member."""
    return user_id < 0


@dataclass(frozen=True, slots=True)
class StoredGames:
    """How many games (live or finished) a member has stored in one guild on one size."""

    guild_id: int
    size: int
    games: int


@dataclass(frozen=True, slots=True)
class MemberData:
    """Everything stored about one member: their stats and ratings per guild and size, the
    games and challenges they are in, every name stored with those, and how many of each
    other kind of row name them."""

    user_id: int
    stats: tuple[PlayerStats, ...] = ()  # by guild, then size
    games: tuple[StoredGames, ...] = ()  # by guild, then size
    challenges: int = 0  # made or received, in any state
    names: tuple[str, ...] = ()  # distinct, sorted
    puzzle_days: int = 0  # days with a daily puzzle answered
    drills: int = 0  # drills made from their games, learned or not
    # Tournaments naming them: organised, entered, played in, or run (a pause, an award).
    tournaments: int = 0
    # Servers' settings they changed last (guild_settings.changed_by): kept by id.
    settings: int = 0

    @property
    def is_empty(self) -> bool:
        return not (
            self.stats
            or self.games
            or self.challenges
            or self.puzzle_days
            or self.drills
            or self.tournaments
            or self.settings
        )

    @property
    def guild_ids(self) -> tuple[int, ...]:
        """Every guild (``0``: outside servers) with something of theirs, in order."""
        found = {stats.guild_id for stats in self.stats} | {kept.guild_id for kept in self.games}
        return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class Forgotten:
    """What forgetting a member did: the placeholder now standing for them, the live games
    that ended (counting for nobody) and the pending challenges that closed, as stored after,
    and how many games and challenges now show the placeholder."""

    placeholder_id: int
    ended: tuple[GameRecord, ...]
    closed: tuple[ChallengeRecord, ...]
    games: int
    challenges: int
    stats_rows: int  # player_stats and ratings rows deleted
    practice_rows: int = 0  # puzzle results and drills deleted
    settings: int = 0  # servers' settings now shown as changed by the placeholder


@dataclass(frozen=True, slots=True)
class GuildErased:
    """What erasing a guild's data deleted: its live games and pending challenges as they were
    (their messages still show them), and how many rows of each kind went."""

    live_games: tuple[GameRecord, ...]
    pending_challenges: tuple[ChallengeRecord, ...]
    games: int
    challenges: int
    stats_rows: int  # player_stats, ratings and guild_settings rows
    drills: int = 0  # drills made from its games, deleted
    tournaments: int = 0  # deleted, in any state
    # Those still going, as they were (their announcements still show Join, Leave...).
    live_tournaments: tuple[TournamentRecord, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (
            self.games or self.challenges or self.stats_rows or self.drills or self.tournaments
        )


# The bot's own setting (:meth:`Storage.get_setting`) that holds the highest game id
# :meth:`Storage.prune_finished` deleted: a game number at or below it that is not stored was
# (most likely) removed for its age, rather than never there.
GAMES_PRUNED_THROUGH = "games_pruned_through"


@dataclass(frozen=True, slots=True)
class Pruned:
    """What one batch of :meth:`Storage.prune_finished` deleted: the games' ids, and how
    many challenges (those that started the games, and those closed without a game)."""

    games: tuple[int, ...] = ()
    challenges: int = 0


@dataclass(frozen=True, slots=True)
class PuzzleAttempt:
    """One attempt at a daily puzzle that ended: with its solution (``solved``) or a wrong
    move, by ``user_id`` in ``guild_id`` (0: outside servers) at ``at``. ``tries_before``:
    the attempts of the day counted when its message was drawn, the compare-and-set that
    counts an attempt once however many clicks end it at the same moment."""

    user_id: int
    day: datetime.date
    puzzle_id: str
    guild_id: int
    solved: bool
    at: float
    tries_before: int


@dataclass(frozen=True, slots=True)
class PuzzleResult:
    """A member's daily puzzle of one day: how many attempts ended, when it was solved (None:
    not yet), whether on the first attempt, and where it was last answered (None once that
    server's data was erased)."""

    user_id: int
    day: datetime.date
    puzzle_id: str
    guild_id: int | None
    tries: int
    solved_at: float | None
    first_try: bool

    @property
    def solved(self) -> bool:
        return self.solved_at is not None


@dataclass(frozen=True, slots=True)
class NewDrill:
    """A drill to keep for ``user_id``: a position of their game ``game_id`` in ``guild_id``,
    as ``game.drills.Drill.line`` writes it; first due at ``created_at``."""

    user_id: int
    guild_id: int
    game_id: int
    position: str
    created_at: float


@dataclass(frozen=True, slots=True)
class DrillRecord:
    """A stored drill and its schedule: answered right ``right_in_row`` times in a row, next
    due at ``due_at``, learned at ``learned_at`` (None: not yet); ``answers`` counts every
    answer taken (the compare-and-set of :meth:`Storage.answer_drill`)."""

    id: int
    user_id: int
    guild_id: int
    game_id: int
    position: str
    right_in_row: int
    answers: int
    due_at: float
    learned_at: float | None
    created_at: float


@dataclass(frozen=True, slots=True)
class DrillQueue:
    """A member's drills as of one moment: the one to ask next (the earliest due of those not
    learned; None when every drill is learned), and how many are due, waiting and learned."""

    next: DrillRecord | None
    due: int
    waiting: int
    learned: int


# -- tournaments ----------------------------------------------------------------------------


class TournamentStatus(StrEnum):
    REGISTERING = "registering"  # open to join, until its start
    RUNNING = "running"  # its rounds pair and start themselves
    PAUSED = "paused"  # between rounds, held by its organiser: no new round starts
    FINISHED = "finished"
    CANCELLED = "cancelled"


# Statuses of a tournament still going: one a channel at most, and the sweeper's to look at.
LIVE_TOURNAMENT = frozenset(
    {TournamentStatus.REGISTERING, TournamentStatus.RUNNING, TournamentStatus.PAUSED}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewTournament:
    """A tournament as its organiser created it: ``state`` is its document
    (:mod:`bot.tournaments.state` writes and reads it), ``due_at`` when the sweeper must look
    at it (its start time; None: when its organiser presses Start)."""

    guild_id: int
    channel_id: int
    status: TournamentStatus
    due_at: float | None
    state: str
    created_at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TournamentRecord(NewTournament):
    """A stored tournament, as read at ``version`` (its compare-and-set), with the games its
    pairings started: ``(round, board)`` to the game's id."""

    id: int
    version: int
    updated_at: float
    games: Mapping[tuple[int, int], int] = field(default_factory=dict)


class StorageError(Exception):
    """Base class of the storage's own errors."""


class ChannelBusyError(StorageError):
    """The channel already has a live game or a pending challenge."""


class TournamentHereError(StorageError):
    """The channel already hosts a tournament still going."""


class SchemaTooNewError(StorageError):
    """The database was written by a newer version of the bot; it is left untouched."""


class AlreadyRematchedError(StorageError):
    """A rematch of that game was already started."""


class LiveGamesLimitError(StorageError):
    """A new game would put its players past their server's limit on live games: ``user_ids``
    are those already in as many as it allows (ascending)."""

    def __init__(self, guild_id: int, user_ids: tuple[int, ...], limit: int) -> None:
        super().__init__(
            f"guild {guild_id}: {', '.join(map(str, user_ids))} already in {limit} live games"
        )
        self.user_ids = user_ids
        self.limit = limit


class CooldownError(StorageError):
    """A member's new challenge came within their server's cooldown of their last one there:
    they may challenge again at ``until``."""

    def __init__(self, guild_id: int, user_id: int, until: float) -> None:
        super().__init__(f"guild {guild_id}: {user_id} may challenge again at {until}")
        self.until = until


def over_the_limit(live: dict[int, int], limit: int) -> tuple[int, ...]:
    """Those of ``live`` (a member's id: the live games they are in) with ``limit`` or more."""
    return tuple(sorted(user_id for user_id, count in live.items() if count >= limit))


class DatabaseUnavailableError(StorageError):
    """The database failed an operation for a reason of its own, not the bot's: a write lock
    another connection held past the busy timeout, a server that is down or cannot be
    reached, a connection lost, a full disk. ``nothing_written``: it is known to have failed
    before anything of the operation was written (the lock was never had, the connection
    never made, the transaction rolled back); False when it failed while committing or
    after, so that it may or may not have gone through."""

    def __init__(self, message: str, *, nothing_written: bool) -> None:
        super().__init__(message)
        self.nothing_written = nothing_written


def check_closing(status: ChallengeStatus, game: NewGame | None) -> None:
    """Raise ValueError for a close :meth:`Storage.close_challenge` refuses whatever is stored:
    to pending, or starting a game on anything but acceptance."""
    if status is ChallengeStatus.PENDING:
        raise ValueError("a challenge cannot be closed as pending")
    if game is not None and status is not ChallengeStatus.ACCEPTED:
        raise ValueError(f"only an accepted challenge starts a game, not a {status} one")


class Storage(Protocol):
    """Where games, challenges, stats and settings live. One instance per bot process."""

    async def close(self) -> None: ...

    # -- games ---------------------------------------------------------------------------

    async def create_game(self, game: NewGame, *, live_limit: int | None = None) -> GameRecord:
        """Insert an active game (version 1). Raises :class:`ChannelBusyError` if the channel
        has an active game or a pending challenge, :class:`AlreadyRematchedError` if
        ``rematch_of`` was rematched, and with a ``live_limit`` :class:`LiveGamesLimitError`
        if one of its members (:attr:`GameSetup.human_ids`) is already in that many active
        games in its guild. The limit is decided inside the insert's transaction, with every
        other create for those members in any process waiting its turn: simultaneous creates
        never get past it."""
        ...

    async def get_game(self, game_id: int) -> GameRecord | None:
        """The game with that id; None if there is none, for any int (ids come from buttons)."""
        ...

    async def game_with_guild_settings(
        self, game_id: int
    ) -> tuple[GameRecord, list[StoredSetting]] | None:
        """The game with that id and its guild's settings (as :meth:`guild_settings` gives
        them), read in one statement, so at one moment and in one round trip: what a rematch
        needs. None if there is no such game, for any int."""
        ...

    async def live_game_in_channel(self, channel_id: int) -> GameRecord | None:
        """The channel's active game, if any."""
        ...

    async def save_game(self, game: GameRecord) -> GameRecord | None:
        """Write ``game``'s moves, status, winner, end reason, deadline and ``assisted``, if
        the stored row still has ``game.version`` and is active; return it with the version
        bumped, else None.

        When the save finishes the game, stats and ratings are recorded in the same
        transaction, so a game counts exactly once.
        """
        ...

    async def set_game_message(
        self, game_id: int, message_id: int, *, as_of: int | None = None
    ) -> int | None:
        """Record the live board message (does not bump the version); return the one it
        replaced (None if none), read in the same transaction: of two boards recorded at
        once, each learns the board before it, so that every board but the last is retired.
        With ``as_of``, the Discord id of the moment ``message_id`` became the board (a
        post's own id, a click's interaction id; Discord's ids grow with time): unless the
        board recorded is newer than that, which stays, and is returned (the caller then
        retires ``message_id``)."""
        ...

    async def first_game_message(self, game_id: int, message_id: int) -> bool:
        """Record the board message of a game that has none yet; False if it has one (another
        process posted it meanwhile), which stays."""
        ...

    async def use_default_marks(self, game_id: int) -> None:
        """Show the game with the bot's own marks from now on: its ``mark_x`` and ``mark_o``
        set to None (does not bump the version: a move saved meanwhile keeps them so)."""
        ...

    async def finished_game_in_channel(
        self, channel_id: int, game_id: int | None = None
    ) -> GameRecord | None:
        """The finished game ``game_id`` if it was played in ``channel_id``; without
        ``game_id``, the channel's last finished game. None if there is no such game (for any
        int: ids come from what members type)."""
        ...

    async def overdue_games(self, now: float, shards: ShardSlice = EVERY_GUILD) -> list[GameRecord]:
        """Active games in ``shards``' guilds whose deadline is at or before ``now``, oldest
        deadline first."""
        ...

    async def unshown_games(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[GameRecord]:
        """Active games in ``shards``' guilds with no board message, last saved at or before
        ``before``: their answer failed after they were saved. Games in channels with a
        reply route are left out: only an interaction there can show them."""
        ...

    # -- challenges ----------------------------------------------------------------------

    async def create_challenge(
        self, challenge: NewChallenge, *, cooldown: float | None = None
    ) -> ChallengeRecord:
        """Insert a pending challenge. Raises :class:`ChannelBusyError` if the channel already
        has a pending challenge or an active game; with ``cooldown``, :class:`CooldownError`
        if its challenger made one in its guild less than ``cooldown`` seconds before its
        ``created_at``: decided with the insert, so that a member's challenges at the same
        moment in several channels open one (nothing is written)."""
        ...

    async def get_challenge(self, challenge_id: int) -> ChallengeRecord | None:
        """The challenge with that id; None if there is none, for any int."""
        ...

    async def pending_challenge_in_channel(self, channel_id: int) -> ChallengeRecord | None: ...

    async def set_challenge_message(self, challenge_id: int, message_id: int) -> int | None:
        """As :meth:`set_game_message` as of ``message_id``, for a challenge: its messages are
        all posts, and one may be recorded after a newer one (over HTTP a new message's id
        comes a round trip after the answer)."""
        ...

    async def first_challenge_message(self, challenge_id: int, message_id: int) -> bool:
        """As :meth:`first_game_message`, for a challenge."""
        ...

    async def close_challenge(
        self,
        challenge_id: int,
        status: ChallengeStatus,
        game: NewGame | None = None,
        *,
        live_limit: int | None = None,
    ) -> tuple[ChallengeRecord, GameRecord | None] | None:
        """Move a pending challenge to ``status``; with ``game`` (on acceptance) create that
        game in the same transaction. None if the challenge was no longer pending. Raises
        :class:`ChannelBusyError` (and changes nothing) if the game cannot start there, and
        :class:`LiveGamesLimitError` (changing nothing) past a ``live_limit``, decided as
        :meth:`create_game` decides it."""
        ...

    async def overdue_challenges(
        self, now: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        """Pending challenges in ``shards``' guilds whose ``expires_at`` is at or before
        ``now``."""
        ...

    async def unshown_challenges(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        """Pending challenges in ``shards``' guilds with no message, created at or before
        ``before``, in channels without a reply route."""
        ...

    # -- channels the bot is not in ------------------------------------------------------

    async def save_reply_route(self, route: ReplyRoute) -> None:
        """Record ``route``'s token and message for its channel (keeping any unseen game)."""
        ...

    async def reply_route(self, channel_id: int) -> ReplyRoute | None:
        """The channel's route; None for a channel the bot is in (it never got one)."""
        ...

    async def forget_reply_route(self, channel_id: int) -> None:
        """Drop the channel's route (its unseen game with it): the bot reaches it again."""
        ...

    async def set_unseen_game(self, channel_id: int, game_id: int | None) -> None:
        """Note (or, with None, clear) a game settled in a routed channel but not shown."""
        ...

    async def take_unseen_game(self, channel_id: int, game_id: int) -> bool:
        """Clear the channel's unseen game if it is still ``game_id``: whether it was, so that
        of two interactions there at once, one shows it."""
        ...

    # -- stats ---------------------------------------------------------------------------

    async def player_stats(
        self, guild_id: int, user_id: int, *, size: int = DEFAULT_SIZE
    ) -> PlayerStats:
        """The member's records and rating from the games played on ``size``x``size`` boards."""
        ...

    async def leaderboard(
        self, guild_id: int, limit: int = 10, *, size: int = DEFAULT_SIZE
    ) -> list[Rating]:
        """Members ranked by their rating on ``size``x``size`` boards as of now, deviations
        grown for inactivity (``bot.results.ranked``: the conservative figure highest first,
        then most games, then lowest user id)."""
        ...

    # -- seasons (bot.seasons) -----------------------------------------------------------

    async def season_games(
        self, guild_id: int, size: int, start: float, end: float
    ) -> list[GameRecord]:
        """The finished games between members in ``guild_id`` on ``size``x``size`` boards that
        ended at or after ``start`` and before ``end``, in the order they finished (then by
        id), with the columns :func:`bot.results.tally` reads (``codec.rated_game``)."""
        ...

    async def last_rated_game_before(self, guild_id: int, size: int, before: float) -> float | None:
        """When the last game ``bot.results`` rates (between two members, neither ended by a
        moderator nor assisted) in ``guild_id`` on ``size``x``size`` boards ended before
        ``before``; None if none did."""
        ...

    async def unannounced_guilds(
        self, season: str, ended_at: float, channel_key: str, shards: ShardSlice = EVERY_GUILD
    ) -> list[int]:
        """The guilds in ``shards`` with a ``channel_key`` setting (a channel to announce in)
        set before ``ended_at``, for which no process claimed ``season``'s announcement."""
        ...

    async def claim_season(self, guild_id: int, season: str, now: float) -> bool:
        """Claim announcing ``season``'s end in ``guild_id``: True for the one caller that
        inserted the claim, False for every other (on every engine, across processes)."""
        ...

    async def release_season(self, guild_id: int, season: str) -> None:
        """Give a claim up (the announcement could not be posted): a later sweep tries again."""
        ...

    async def take_lease(self, name: str, holder: str, now: float, until: float) -> bool:
        """Hold the lease ``name`` until ``until`` if it is free, ran out by ``now`` or is
        ``holder``'s already (a renewal): True for that one caller, False while another holds
        it (on every engine, across processes)."""
        ...

    async def release_lease(self, name: str, holder: str) -> None:
        """Give ``holder``'s lease ``name`` up (a clean shutdown): another worker takes it at
        once, not when it runs out. Nothing happens if someone else holds it."""
        ...

    async def note_interactions(self, notes: Sequence[tuple[int, float]]) -> frozenset[int]:
        """Note that the interactions ``notes`` (each an id, and the time it was signed at)
        were received, in one transaction: the ids noted now for the first time. An id noted
        before (a replay) is not among them, on every engine and across processes, however
        many try at once."""
        ...

    async def prune_interactions(self, signed_before: float) -> int:
        """Forget the interactions noted as signed before ``signed_before``: how many."""
        ...

    async def suspect_thread(
        self, channel_id: int, now: float, *, name: str | None = None, thread_id: int | None = None
    ) -> None:
        """Note a thread off ``channel_id`` to look at before the next one there is opened:
        by ``name`` (a dropped connection may have made it) or by ``thread_id`` (its game may
        not be stored), exactly one of the two."""
        ...

    async def has_thread_suspects(self, channel_id: int) -> bool:
        """Whether a thread off ``channel_id`` is to be looked at (by any process)."""
        ...

    async def take_thread_suspects(self, channel_id: int) -> ThreadSuspects:
        """The threads off ``channel_id`` to look at, forgotten as they are returned: of
        callers at once, each suspect goes to one (on every engine, across processes)."""
        ...

    async def claim_thread(
        self, channel_id: int, thread_id: int, now: float, claimed_before: float
    ) -> bool:
        """Claim ``thread_id`` (off ``channel_id``) for a game being stored: True if it was
        unclaimed or its claim was made before ``claimed_before`` (run out), False while
        another claim holds it (on every engine, across processes)."""
        ...

    async def release_thread(self, thread_id: int) -> None:
        """Give a claim on ``thread_id`` up (its game did not start)."""
        ...

    async def claimed_threads(self, channel_id: int, claimed_since: float) -> frozenset[int]:
        """The threads off ``channel_id`` claimed at ``claimed_since`` or later."""
        ...

    async def prune_threads(self, suspected_before: float, claimed_before: float) -> int:
        """Forget the suspects noted before ``suspected_before`` and the claims made before
        ``claimed_before``: how many rows."""
        ...

    async def live_games_of(self, guild_id: int, user_id: int) -> int:
        """How many active games in ``guild_id`` the member plays in."""
        ...

    # -- servers' settings ---------------------------------------------------------------

    async def guild_settings(self, guild_id: int) -> list[StoredSetting]:
        """Every setting ``guild_id``'s admins changed (or reset), in key order."""
        ...

    async def change_guild_setting(self, guild_id: int, setting: StoredSetting) -> None:
        """Store ``setting`` for ``guild_id`` in place of any before it."""
        ...

    # -- members' data -------------------------------------------------------------------

    async def member_data(self, user_id: int) -> MemberData:
        """Everything stored about ``user_id`` in every guild and outside servers, as of one
        moment."""
        ...

    async def active_games_of(self, user_id: int) -> list[GameRecord]:
        """The live games ``user_id`` plays, everywhere, oldest first."""
        ...

    async def forget_member(self, user_id: int, now: float) -> Forgotten:
        """Forget ``user_id`` everywhere, in one transaction: draw a new placeholder
        (:func:`is_forgotten`) and put it, with :data:`FORGOTTEN_NAME`, in place of their id
        and name in every game and challenge; end their live games (``ended`` at ``now``,
        counting for nobody, version bumped) and close their pending challenges (withdrawn
        if they made it, declined if they received it); delete their stats and ratings rows.
        The other players' rows are untouched: what their games added stays. A member with
        nothing stored gets a placeholder that nothing shows."""
        ...

    async def erase_guild(self, guild_id: int) -> GuildErased:
        """Delete, in one transaction, every game, challenge, stats row and rating of
        ``guild_id`` and the reply routes of the channels they were in; the channels are
        free afterwards."""
        ...

    async def wipe_deleted(self, *, rewritten: bool = False) -> bool:
        """Make what :meth:`forget_member` and :meth:`erase_guild` deleted unreadable on disk
        where the engine can: SQLite keeps the old pages in its write-ahead log until a
        checkpoint, so each of those operations checkpoints and truncates the log once it has
        committed (freed pages are zeroed: ``secure_delete``). Another connection reading
        (a backup) blocks that without waiting for it; then this tries again. True when
        nothing deleted is left to wipe, False if it is still blocked. PostgreSQL: nothing to
        do here (see docs/operating.md's "What deletion means on disk"), always True.

        ``rewritten``: a member's data was overwritten since by other operations (their
        tournaments' documents, rewritten without them after :meth:`forget_member`): the old
        versions are wiped as a deletion's are."""
        ...

    async def prune_finished(
        self, finished_before: float, limit: int, shards: ShardSlice = EVERY_GUILD
    ) -> Pruned:
        """Delete, in one transaction, up to ``limit`` of ``shards``' finished games whose
        last save (their end) was at or before ``finished_before``, oldest first, with the
        challenges that started them; and up to ``limit`` of ``shards``' challenges closed
        without a game, made at or before ``finished_before``. Stats, ratings and drills stay
        (they were counted, or copied, when the game ended); a rematch no longer names the
        game it followed, and a reply route no longer has it to show. Records the highest game
        id deleted (:data:`GAMES_PRUNED_THROUGH`)."""
        ...

    # -- puzzles and drills ----------------------------------------------------------------

    async def record_puzzle(self, attempt: PuzzleAttempt) -> tuple[PuzzleResult, bool]:
        """Count an ended attempt at the day's puzzle: the day's result as stored after it, and
        whether this attempt changed it. The first attempt makes the row (``first_try`` if it
        solved the puzzle); a later one adds a try and, if it solved it, its time and place,
        if the row still counts ``attempt.tries_before`` tries (else another attempt was
        counted since its message was drawn); once solved, the row stays as it is. When the
        attempt changed nothing, False says so."""
        ...

    async def puzzle_result(self, user_id: int, day: datetime.date) -> PuzzleResult | None:
        """``user_id``'s result of ``day``'s puzzle; None if they have not answered it."""
        ...

    async def puzzle_results(self, user_id: int) -> list[PuzzleResult]:
        """Every daily puzzle ``user_id`` answered, oldest day first."""
        ...

    async def puzzle_solvers(self, guild_id: int, day: datetime.date) -> list[PuzzleResult]:
        """The members who solved ``day``'s puzzle, last answering it in ``guild_id``, first
        solved first."""
        ...

    async def add_drills(self, drills: Sequence[NewDrill]) -> list[DrillRecord]:
        """Keep ``drills`` (of one member), each position once: one the member already has
        stays as it is. Returns each as stored, in the order given."""
        ...

    async def get_drill(self, drill_id: int) -> DrillRecord | None: ...

    async def drill_queue(self, user_id: int, now: float) -> DrillQueue:
        """What ``user_id`` has to practise at ``now`` (see :class:`DrillQueue`)."""
        ...

    async def answer_drill(
        self,
        drill_id: int,
        answers: int,
        right_in_row: int,
        due_at: float,
        learned_at: float | None,
    ) -> DrillRecord | None:
        """Save an answer's new schedule, if the drill has still taken ``answers`` answers
        (counting this one in); None if another answer came first (nothing is written)."""
        ...

    # -- tournaments ---------------------------------------------------------------------

    async def create_tournament(self, tournament: NewTournament) -> TournamentRecord:
        """Store a new tournament. Raises :class:`TournamentHereError` if its channel hosts a
        live tournament already (nothing is written)."""
        ...

    async def get_tournament(self, tournament_id: int) -> TournamentRecord | None: ...

    async def live_tournaments(self, guild_id: int) -> list[TournamentRecord]:
        """The guild's tournaments still going (registering, running or paused), oldest first."""
        ...

    async def save_tournament(
        self,
        tournament: TournamentRecord,
        *,
        status: TournamentStatus,
        due_at: float | None,
        state: str,
        now: float,
    ) -> TournamentRecord | None:
        """Replace the tournament's status, due time and document, if it is still at the
        version it was read at; None if another change came first (nothing is written)."""
        ...

    async def start_tournament_game(
        self, tournament_id: int, round_number: int, board: int, game: NewGame
    ) -> GameRecord | None:
        """Store ``game`` as the game of table ``board`` of round ``round_number``, in one
        transaction; None if that table has a game already (nothing is written)."""
        ...

    async def tournament_of_thread(self, channel_id: int) -> int | None:
        """The tournament whose pairing started a game in ``channel_id`` (a game's thread),
        whatever was played there since; the latest such game's, if several."""
        ...

    async def latest_tournament_in_channel(self, channel_id: int) -> int | None:
        """The tournament the channel hosted last, in any state, if it hosted one."""
        ...

    async def tournaments_of_member(self, user_id: int) -> list[int]:
        """Every tournament (of any server, in any state) whose document names the member."""
        ...

    async def due_tournaments(self, now: float, shards: ShardSlice = EVERY_GUILD) -> list[int]:
        """The tournaments of ``shards``' guilds the sweeper must look at: those running,
        those registering whose start time has come, and those finished whose ``due_at`` is
        still set (their podium not yet marked posted)."""
        ...

    # -- the bot's own settings ----------------------------------------------------------

    async def get_setting(self, key: str) -> str | None: ...

    async def set_setting(self, key: str, value: str) -> None: ...

    # -- health and metrics --------------------------------------------------------------

    async def ping(self) -> None:
        """Run a trivial query: returns once the database answers (``/readyz`` asks)."""
        ...

    async def live_games(self) -> int:
        """How many games are being played, in every guild and every process."""
        ...
