"""The bot's domain: challenges, games, moves, the bot's replies, timeouts and stats.

It knows nothing of Discord: the cog and the buttons turn interactions into calls here, and
render what comes back. Every failure a user can cause raises :class:`UserError` with the sentence
to show them; nothing is changed when that happens. The rules themselves live in :mod:`game`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar, get_args

from bot.clock import Clock
from bot.domain import (
    OUTSIDE_SERVERS,
    Actor,
    Listed,
    UserError,
    Verbatim,
    check_size,
    size_name,
)
from bot.i18n import ENGLISH, N_, Language
from bot.marks import DEFAULT_MARKS, custom_emoji_id
from bot.server_settings import ServerSettings, SettingsService
from bot.storage.base import (
    EVERY_GUILD,
    GAMES_PRUNED_THROUGH,
    AlreadyRematchedError,
    ChallengeRecord,
    ChallengeStatus,
    ChannelBusyError,
    CooldownError,
    EndReason,
    GameRecord,
    GameStatus,
    LiveGamesLimitError,
    NewChallenge,
    NewGame,
    PlayerStats,
    Rating,
    ShardSlice,
    Storage,
    is_forgotten,
)
from bot.thinking import (
    SEARCHED_FROM_SIZE,
    EngineWorkers,
    think,
    ultimate_hint,
    ultimate_move,
    ultimate_review,
)
from game import (
    BOARD_SIZES,
    COLUMN_LETTERS,
    DEFAULT_SIZE,
    InvalidCellError,
    Mark,
    cell_name,
    parse_cell,
    standard_line_length,
)
from game.ai import DIFFICULTIES as LEVELS
from game.ai import get_strategy
from game.board import quote_input
from game.errors import IllegalMoveError
from game.review import MoveReview, best_move, review_game
from game.search import SearchBudget
from game.ultimate import UltimateBoard, small_board_cells, small_board_of
from game.ultimate_review import UltimateMoveReview
from game.variants import Position, is_ultimate, position

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_K = TypeVar("_K")
_V = TypeVar("_V")
# A member of a guild: its id, then theirs.
_MemberKey = tuple[int, int]
# A game's moves and its board size: what its review depends on.
_ReviewKey = tuple[tuple[int, ...], int]

# The bot's difficulties are the engine's levels, weakest first (the order they are offered in).
DIFFICULTIES: tuple[str, ...] = tuple(level.name for level in LEVELS)
# Ultimate's levels that answer within a few milliseconds (measured: at most 0.3 ms and 4 ms),
# on the event loop; smart's rules look two moves ahead (up to about 60 ms) and minimax searches
# for its whole budget: those run in a worker process (bot.thinking).
ANSWERED_AT_ONCE = frozenset({"random", "casual"})
# Who moves first (and plays X) in a game against the bot.
FirstPlayer = Literal["me", "bot", "random"]
FIRST_PLAYERS: tuple[FirstPlayer, ...] = get_args(FirstPlayer)


@dataclass(frozen=True, slots=True)
class Clicked:
    """Where a button was clicked: its channel and the message it is on. A button acts only on
    the game or challenge of that message, in that channel, whatever its custom_id says."""

    channel_id: int
    message_id: int


class GameThreads(Protocol):
    """Threads of their own for games, off one channel: a port onto Discord, which the
    service does not speak to itself."""

    async def open(self, name: str) -> int:
        """Open a thread of that name for a game and give its id; a :class:`UserError` when
        Discord refuses or the bot cannot tell."""
        ...

    async def discard(self, thread_id: int, *, stored_nothing: bool) -> None:
        """The game ``thread_id`` was opened for did not start: remove the thread now if
        ``stored_nothing`` (a refusal), else look at it again before the next thread there
        (the failure may have come after its game was stored). Never raises."""
        ...


@dataclass(frozen=True, slots=True)
class Place:
    """Where a game is to start: the channel and its parents (a thread's channel, a channel's
    category), for a server's list of channels where games may be played. ``more_parents``
    finds parents the interaction did not say (a thread's category), asked only when the
    list does not name the others."""

    channel_id: int
    parents: tuple[int, ...] = ()
    more_parents: Callable[[], Awaitable[Collection[int]]] | None = None
    # Threads off the channel, for a server that plays games in threads; None where there can
    # be none (outside servers, in a thread).
    threads: GameThreads | None = None


@dataclass(frozen=True, slots=True)
class MoveResult:
    game: GameRecord
    cell: int  # the move the player made
    ai_cell: int | None = None  # the bot's answer, if it played one


@dataclass(frozen=True, slots=True)
class Started:
    game: GameRecord
    ai_cell: int | None = None  # the bot's first move, when it plays X


@dataclass(frozen=True, slots=True)
class Review:
    """A finished game and what each of its moves did to its value, in order."""

    game: GameRecord
    moves: tuple[MoveReview, ...]


@dataclass(frozen=True, slots=True)
class UltimateReview:
    """A finished ultimate game and each of its moves as the engine's search judged it."""

    game: GameRecord
    moves: tuple[UltimateMoveReview, ...]


@dataclass(frozen=True, slots=True)
class Hint:
    game: GameRecord  # as saved with the hint: assisted
    cell: int  # the best move for the player to move
    newly_assisted: bool  # the first hint of the game: its board does not say so yet


@dataclass(frozen=True, slots=True)
class Swept:
    """Games and challenges a sweep acts on: those it settled (lost on time, expired), or
    those it must show (saved without their message); and the games it ended for nobody,
    their channel deleted, which nothing can show."""

    games: list[GameRecord]
    challenges: list[ChallengeRecord]
    orphaned: list[GameRecord] = dataclasses.field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GameRules:
    """What a new game takes from its server's settings and keeps: its turn clock (None: the
    bot's own) and its marks (None: the bot's own)."""

    turn_timeout: float | None = None
    mark_x: str | None = None
    mark_o: str | None = None
    own_thread: bool = False  # it is played in a thread the bot opened for it


# Whether a custom emoji (by server and emoji id) still exists: a port onto Discord, which the
# service does not speak to itself.
EmojiCheck = Callable[[int, int], Awaitable[bool]]
# Whether a channel was deleted (by id), as Discord says now: True for a channel it no longer
# has, False for one it has or that the bot cannot ask about, None when it could not say (an
# outage). A port onto Discord too: the bot asks for no gateway events, so is never told.
ChannelDeleted = Callable[[int], Awaitable[bool | None]]
# The roles a member has in a server (by server and member id), None for someone who is no
# longer a member; :class:`RolesUnknownError` when Discord did not say. A port onto Discord
# too: the interaction carries only its own member's roles, not their opponent's.
MemberRoles = Callable[[int, int], Awaitable[frozenset[int] | None]]


class RolesUnknownError(Exception):
    """Discord did not say what roles a member has (an outage, the bot's access withdrawn)."""


# Games kept in memory for their next click (about half a kilobyte each): a move while live,
# a rematch once over. Beyond this, the oldest are read from the database again when clicked.
GAMES_KEPT = 10_000
# Searched reviews (5x5) kept in memory, by the moves they judge: a finished game's review never
# changes, and costs about a second of search in a thread that holds the interpreter's lock for
# much of it, slowing every other answer meanwhile. A game reviewed again (by a second
# spectator, or the same click repeated) is searched once. A 5x5 review is about 10-20 KB.
REVIEWS_KEPT = 64

BUSY_GAME = N_(
    "There is already a game in this channel: finish it first, or play in another channel."
)
BUSY_CHALLENGE = N_(
    "There is already an open challenge in this channel: wait for it to be answered."
)
NO_GAME = N_("There is no game in this channel. Start one with `/ttt start` or `/ttt vs-ai`.")
CHANGED = N_("The board changed while you were moving: look again and retry.")
# A button no board of the bot's has (a hand-made one): nothing to do with it.
NO_SUCH_BUTTON = N_("That button does nothing: use the buttons on the newest board.")
# Over HTTP the message a response made is adopted (its id stored) a round trip after the
# response (bot/answers.py asks Discord for it): a click on a challenge's newest message may
# come before. It waits for the adoption this long at most (the id asked again for about
# 0.75 s when Discord fails), well before the answer's deferral is due.
ADOPTION_PATIENCE = 1.0
ADOPTION_POLL = 0.05
NOT_HERE = N_("That button doesn't belong to this message: use the buttons on the newest board.")
NOT_AN_ULTIMATE_CELL = N_(
    "{} is not a cell: use a column letter A-I and a row number 1-9, like E5 (the board is "
    "ultimate tic-tac-toe's 9\N{MULTIPLICATION SIGN}9 grid)."
)
HINT_CHANGED = N_("The game changed while I was thinking: ask for a hint again.")

DAY = 86_400
# Old finished games (TTT_KEEP_FINISHED_GAMES_DAYS) are removed this many in one transaction,
# so that a sweep never holds the database's write lock long (on SQLite about as long as 20
# moves: 8 ms, 2026-11-27), and at most this many batches a sweep, other work running between
# them: far more than finish between two sweeps at the peak of docs/operating.md's "Scaling"
# (415 in 5 s), while a first sweep over years of old games is spread over many.
PRUNE_BATCH = 100
PRUNE_BATCHES_PER_SWEEP = 40


class NotKept(UserError):
    """No finished game to review, where finished games are removed after a while: game
    ``number`` was (told apart from a number that never was), or, without a number, the
    channel has none left."""

    def __init__(self, number: int | None, keep_days: int | None) -> None:
        # As str() gives it, for logs and tests; members read sentence()'s.
        told = (
            "No finished game of this channel is kept."
            if number is None
            else f"Game #{number} is no longer kept."
        )
        super().__init__(told)
        self.number = number
        self.keep_days = keep_days

    def sentence(self, lang: Language, escape: Callable[[str], str]) -> str:
        if self.number is None:
            return lang.n_(
                "No game has finished in this channel in the last {count} day: play one, "
                "then review it.",
                "No game has finished in this channel in the last {count} days: play one, "
                "then review it.",
                self.keep_days or 0,
            )
        if self.keep_days is None:  # removal was on once, and is off now
            return lang._("Game #{number} is no longer kept.", number=self.number)
        return lang.n_(
            "Game #{number} is no longer kept: finished games are kept for {count} day.",
            "Game #{number} is no longer kept: finished games are kept for {count} days.",
            self.keep_days,
            number=self.number,
        )


# Why a challenge no longer takes answers, by its status.
CLOSED_CHALLENGE = {
    ChallengeStatus.ACCEPTED: N_("This challenge is closed: it was accepted."),
    ChallengeStatus.DECLINED: N_("This challenge is closed: it was declined."),
    ChallengeStatus.WITHDRAWN: N_("This challenge is closed: it was withdrawn."),
    ChallengeStatus.EXPIRED: N_("This challenge is closed: it was expired."),
}


class GameService:
    """The domain service. One per bot process; safe to share between concurrent handlers
    because every change is an optimistic, versioned write in storage."""

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        *,
        bot_user: Actor,
        turn_timeout: float,
        challenge_timeout: float,
        rng: random.Random | None = None,
        shards: ShardSlice = EVERY_GUILD,
        search_budget: SearchBudget | None = None,
        settings: SettingsService | None = None,
        custom_emoji_exists: EmojiCheck | None = None,
        member_roles: MemberRoles | None = None,
        channel_deleted: ChannelDeleted | None = None,
        keep_finished_days: int | None = None,
        engine_workers: EngineWorkers | None = None,
    ) -> None:
        self.storage = storage
        self.clock = clock
        # Days a finished game is kept after it ended (TTT_KEEP_FINISHED_GAMES_DAYS); None:
        # for good.
        self.keep_finished_days = keep_finished_days
        # The servers' own settings, read again by every action they bear on.
        self.server_settings = settings or SettingsService(storage, clock)
        self._custom_emoji_exists = custom_emoji_exists
        # None: nobody but the acting member is checked for the server's player roles (the
        # service's own tests, which speak to no Discord).
        self._member_roles = member_roles
        # None: every channel is taken to be there (the service's own tests).
        self._channel_deleted = channel_deleted
        self.bot_user = bot_user
        self.turn_timeout = turn_timeout
        self.challenge_timeout = challenge_timeout
        self._rng = rng or random.Random()
        # What the bot may spend on a move where it searches (None: the engine's default).
        self.search_budget = search_budget
        # Where ultimate's searches run: processes of their own (see bot.thinking).
        self.engine_workers = engine_workers or EngineWorkers()
        # The guilds whose timeouts this process settles: with several processes on one
        # database, each settles its own shards' so that none is done twice.
        self.shards = shards
        # The live games this process wrote or read last, as the database has them: a click
        # that saves (a move, a resignation) reads its game here rather than from the
        # database. Every write goes to the database first and is copied here after it
        # committed; the copy is only ever a guess, since another process may have moved on
        # (another `serve` worker, given the game's last click): the compare-and-set of each
        # save still decides, and a click refused on the copy is tried again on the stored
        # game. A click that saves nothing (a pick) reads the stored game.
        self._kept: dict[int, GameRecord] = {}
        # Searched reviews done or under way, the most recently asked for last.
        self._reviews: dict[_ReviewKey, asyncio.Future[tuple[MoveReview, ...]]] = {}
        self._ultimate_reviews: dict[
            tuple[int, ...], asyncio.Future[tuple[UltimateMoveReview, ...]]
        ] = {}
        # Where a server limits live games: a member's game starts in this process, one at a
        # time. The storage decides the limit, across processes; this only spares a thread
        # opened for a game it then refuses. Over the gateway a guild's interactions all come
        # to the process of its shard; `serve` workers may each open one, and the refused
        # start removes its own.
        self._starting = _MemberLocks()

    # -- challenges ----------------------------------------------------------------------

    async def challenge(
        self,
        guild_id: int,
        channel_id: int,
        challenger: Actor,
        opponent: Actor | None,
        size: int | None = None,
        language: str = ENGLISH,
        *,
        place: Place | None = None,
    ) -> ChallengeRecord:
        """A challenge to ``opponent`` (anyone, if None), on a ``size`` board (the server's
        default if None); ``language``: the catalogue its message and its game's board are
        shown in, unless the server chose one. ``place``: the channel's parents, for the
        server's list of channels (by default, the channel alone)."""
        rules = await self.server_settings.of(guild_id)
        size = rules.board(size)
        if opponent is not None:
            if opponent.id == self.bot_user.id:
                raise UserError("To play me, use `/ttt vs-ai` and pick a difficulty.")
            if opponent.is_bot:
                raise UserError("Bots can't play tic-tac-toe here: challenge a person instead.")
            if opponent.id == challenger.id:
                raise UserError("You can't challenge yourself: pick another member, or nobody.")
        pending = await self.storage.pending_challenge_in_channel(channel_id)
        if pending and pending.message_id is None and pending.challenger_id == challenger.id:
            return pending  # saved, but its message never went out: show it now
        await self._may_start(rules, place or Place(channel_id), challenger)
        if opponent is not None and not rules.lets_play(opponent):
            raise UserError(
                "{} can't play here: games in this server are for members with {}.",
                opponent.name,
                rules.roles_to_play,
            )
        await self._require_free_channel(channel_id)
        await self._check_live_games(rules.max_games, guild_id, challenger)
        now = self.clock.now()
        try:
            return await self.storage.create_challenge(
                NewChallenge(
                    guild_id=guild_id,
                    channel_id=channel_id,
                    challenger_id=challenger.id,
                    challenger_name=challenger.name,
                    opponent_id=opponent.id if opponent else None,
                    opponent_name=opponent.name if opponent else None,
                    expires_at=now + (rules.challenge_timeout or self.challenge_timeout),
                    created_at=now,
                    size=size,
                    language=rules.language or language,
                ),
                cooldown=rules.cooldown,
            )
        except ChannelBusyError:
            raise UserError(await self._busy_reason(channel_id)) from None
        except CooldownError as error:
            raise UserError(
                "This server asks members to wait between challenges: you can challenge again {}.",
                when(error.until),
            ) from None

    async def accept(
        self, challenge_id: int, user: Actor, clicked: Clicked, *, place: Place | None = None
    ) -> tuple[ChallengeRecord, GameRecord]:
        """``user`` accepts a challenge clicked in ``place`` (by default, the channel alone);
        the game starts there, or in a thread of its own off it."""
        challenge = await self._pending_challenge(challenge_id, clicked)
        if user.id == challenge.challenger_id:
            raise UserError("You can't accept your own challenge. Withdraw it instead.")
        if challenge.opponent_id is not None and user.id != challenge.opponent_id:
            raise UserError(
                "This challenge is for {}, not for you.", _name(challenge.opponent_name)
            )
        rules = await self.server_settings.of(challenge.guild_id)
        where = place or Place(challenge.channel_id)
        # An accepted challenge is a game starting now: the server's rules as they are now
        # hold it, its list of channels (which may have dropped the challenge's since) and
        # its player roles, the challenger's too (they may have lost the role, or left).
        await self._may_start(rules, where, user)
        challenger = Actor(challenge.challenger_id, challenge.challenger_name)
        await self._require_other_player(rules, challenge.guild_id, challenger)
        game_rules = await self._game_rules(challenge.guild_id, rules)

        async def start(
            channel_id: int, game_rules: GameRules
        ) -> tuple[ChallengeRecord, GameRecord]:
            game = self._new_game(
                challenge.guild_id,
                channel_id,
                challenger,
                user,
                size=challenge.size,
                # A game starting now: the admins' language if they chose one since the
                # challenge (as its marks and turn time are theirs now), else the challenge's.
                language=rules.language or challenge.language,
                rules=game_rules,
            )
            try:
                closed = await self.storage.close_challenge(
                    challenge_id, ChallengeStatus.ACCEPTED, game, live_limit=rules.max_games
                )
            except ChannelBusyError:
                raise UserError(BUSY_GAME) from None
            except LiveGamesLimitError as error:
                raise _limit_reached(error, user, challenger) from None
            if closed is None or closed[1] is None:
                raise UserError("This challenge was answered a moment ago.")
            return closed[0], self._remember(closed[1])

        async with self._one_start_at_a_time(challenge.guild_id, rules, (user, challenger)):
            return await self._at_home(
                challenge.guild_id, rules, where, game_rules, challenger, user, user, start
            )

    async def decline(self, challenge_id: int, user: Actor, clicked: Clicked) -> ChallengeRecord:
        challenge = await self._pending_challenge(challenge_id, clicked)
        if user.id == challenge.challenger_id:
            return await self._close(challenge_id, ChallengeStatus.WITHDRAWN)
        if challenge.opponent_id is None:
            raise UserError("This is an open challenge: there is nothing to decline.")
        if user.id != challenge.opponent_id:
            raise UserError("Only {} can decline this challenge.", _name(challenge.opponent_name))
        return await self._close(challenge_id, ChallengeStatus.DECLINED)

    async def withdraw(self, challenge_id: int, user: Actor, clicked: Clicked) -> ChallengeRecord:
        challenge = await self._pending_challenge(challenge_id, clicked)
        if user.id != challenge.challenger_id:
            raise UserError("Only {} can withdraw this challenge.", challenge.challenger_name)
        return await self._close(challenge_id, ChallengeStatus.WITHDRAWN)

    async def _adopted(self, challenge: ChallengeRecord, clicked: Clicked) -> ChallengeRecord:
        """``challenge`` as stored once the message clicked is its message, if the click came
        on a newer message of its channel while its id was not yet stored; as it was, after
        :data:`ADOPTION_PATIENCE`, if the message is not adopted by then."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ADOPTION_PATIENCE
        while (
            challenge.channel_id == clicked.channel_id
            and challenge.message_id is not None
            and challenge.message_id < clicked.message_id  # snowflakes grow with time
            and challenge.status is ChallengeStatus.PENDING
            and loop.time() < deadline
        ):
            await asyncio.sleep(ADOPTION_POLL)
            stored = await self.storage.get_challenge(challenge.id)
            if stored is None:
                break
            challenge = stored
        return challenge

    async def _pending_challenge(self, challenge_id: int, clicked: Clicked) -> ChallengeRecord:
        challenge = await self.storage.get_challenge(challenge_id)
        if challenge is None:
            raise UserError("That challenge no longer exists.")
        challenge = await self._adopted(challenge, clicked)
        if challenge.channel_id != clicked.channel_id or challenge.message_id not in (
            None,
            clicked.message_id,
        ):
            raise UserError(NOT_HERE)
        if challenge.status is not ChallengeStatus.PENDING:
            raise UserError(
                CLOSED_CHALLENGE[challenge.status], changed=await self._board_behind(challenge)
            )
        if challenge.expires_at <= self.clock.now():
            closed = await self.storage.close_challenge(challenge_id, ChallengeStatus.EXPIRED)
            raise UserError(
                "This challenge has expired.", changed=closed[0] if closed else challenge
            )
        return challenge

    async def _board_behind(self, challenge: ChallengeRecord) -> GameRecord | None:
        """The live game an accepted ``challenge`` started in its own message, which still
        shows the challenge: the accept was saved and its answer never left (its process
        killed in between), so the message kept its Accept button. A click on it shows the
        game there, as a click on a board left behind its game redraws it."""
        if challenge.status is not ChallengeStatus.ACCEPTED or challenge.game_id is None:
            return None
        game = await self.storage.get_game(challenge.game_id)
        if game is None or not game.is_active or game.message_id != challenge.message_id:
            return None
        return game

    async def _close(self, challenge_id: int, status: ChallengeStatus) -> ChallengeRecord:
        closed = await self.storage.close_challenge(challenge_id, status)
        if closed is None:
            raise UserError("This challenge was answered a moment ago.")
        return closed[0]

    # -- starting games ------------------------------------------------------------------

    async def start_vs_ai(
        self,
        guild_id: int,
        channel_id: int,
        user: Actor,
        difficulty: str,
        first: str = "me",
        size: int | None = None,
        language: str = ENGLISH,
        *,
        place: Place | None = None,
    ) -> Started:
        """Start a game against the bot; if the bot moves first, its move is already made.
        ``size`` None: the server's default; ``language``: the catalogue its board is shown
        in, unless the server chose one."""
        if difficulty not in DIFFICULTIES:
            raise UserError("Pick a difficulty: {}.", Listed(DIFFICULTIES))
        if first not in FIRST_PLAYERS:
            raise UserError("Pick who moves first: {}.", Listed(FIRST_PLAYERS))
        rules = await self.server_settings.of(guild_id)
        size = rules.board(size)
        where = place or Place(channel_id)
        await self._may_start(rules, where, user)
        bot_first = first == "bot" or (first == "random" and self._rng.random() < 0.5)
        game_rules = await self._game_rules(guild_id, rules)
        bot = self._bot_as(difficulty)
        x, o = (bot, user) if bot_first else (user, bot)

        async def start(channel_id: int, game_rules: GameRules) -> Started:
            return await self._start_vs_ai(
                guild_id,
                channel_id,
                user,
                difficulty,
                bot_first,
                None,
                size,
                rules.language or language,
                game_rules,
                rules.max_games,
            )

        async with self._one_start_at_a_time(guild_id, rules, (user,)):
            return await self._at_home(guild_id, rules, where, game_rules, x, o, user, start)

    async def _start_vs_ai(
        self,
        guild_id: int,
        channel_id: int,
        user: Actor,
        difficulty: str,
        bot_first: bool,
        rematch_of: int | None,
        size: int,
        language: str,
        rules: GameRules,
        live_limit: int | None,
    ) -> Started:
        bot = self._bot_as(difficulty)
        ai_cell = None
        if bot_first:
            if size >= SEARCHED_FROM_SIZE:
                # Not for nothing: a search takes a while. Elsewhere the database's refusals
                # (of a second occupant, of a game past the limit) say so, round trips sooner.
                await self._require_free_channel(channel_id)
                await self._check_live_games(live_limit, guild_id, user)
            ai_cell = await self._choose(difficulty, position((), size))
        game = self._new_game(
            guild_id,
            channel_id,
            *((bot, user) if bot_first else (user, bot)),
            ai_difficulty=difficulty,
            ai_mark=Mark.X if bot_first else Mark.O,
            moves=() if ai_cell is None else (ai_cell,),
            rematch_of=rematch_of,
            size=size,
            language=language,
            rules=rules,
        )
        return Started(await self._create(game, live_limit, user), ai_cell)

    def _bot_as(self, difficulty: str) -> Actor:
        """The bot as a player at ``difficulty``, named with it."""
        return Actor(self.bot_user.id, f"{self.bot_user.name} ({difficulty})", is_bot=True)

    async def _at_home(
        self,
        guild_id: int,
        rules: ServerSettings,
        place: Place,
        game_rules: GameRules,
        x: Actor,
        o: Actor,
        member: Actor,
        start: Callable[[int, GameRules], Awaitable[_T]],
    ) -> _T:
        """``start`` the game ``member`` asks for between ``x`` and ``o`` in its channel: a
        thread of its own off ``place`` where the server plays games in threads and one can be
        opened there, else ``place`` itself. A thread opened for a game that does not start
        is discarded."""
        threads = place.threads
        if not rules.threads or threads is None:
            return await start(place.channel_id, game_rules)
        # A thread is opened only for a game the limit lets start, as far as can be told
        # before its insert decides (in this process, nobody else's start for these members
        # runs meanwhile: see _one_start_at_a_time).
        others = [player for player in (x, o) if player.id != member.id and not player.is_bot]
        await self._check_live_games(rules.max_games, guild_id, member, *others)
        thread_id = await threads.open(thread_name(x.name, o.name))
        try:
            return await start(thread_id, dataclasses.replace(game_rules, own_thread=True))
        except UserError:
            # Refused: the game was not stored, and its thread stays empty.
            await threads.discard(thread_id, stored_nothing=True)
            raise
        except Exception:
            await threads.discard(thread_id, stored_nothing=False)
            raise

    @contextlib.asynccontextmanager
    async def _one_start_at_a_time(
        self, guild_id: int, rules: ServerSettings, members: Iterable[Actor]
    ) -> AsyncIterator[None]:
        """Where ``rules`` limit live games, hold ``members``' starts in ``guild_id`` in this
        process until the block ends."""
        if rules.max_games is None:
            yield
            return
        async with self._starting.holding((guild_id, member.id) for member in members):
            yield

    async def rematch(self, game_id: int, user: Actor, clicked: Clicked) -> Started:
        """A new game between the same players with sides swapped (same difficulty and board
        size)."""
        # As stored, never a copy in memory: a finished game changes too when a player asks to
        # be forgotten or the server's data is erased, maybe in another process. Its server's
        # settings come with it, in the same statement: one round trip, not two in turn.
        stored = await self.storage.game_with_guild_settings(game_id)
        if stored is None:
            raise UserError("That game no longer exists.")
        old, settings = stored
        if old.channel_id != clicked.channel_id:
            raise UserError(NOT_HERE)
        if old.is_active:
            raise UserError("This game is still going: finish it before a rematch.")
        if old.mark_of(user.id) is None:
            raise UserError("Only the players of this game can start a rematch.")
        if is_forgotten(old.x_id) or is_forgotten(old.o_id):
            raise UserError(
                "The other player of this game deleted their data: start a new game with "
                "`/ttt start`."
            )
        # A rematch is a new game: the server's rules for starting one apply (but not its list
        # of channels: the players stay where their game was), its language too once the
        # admins chose one (else the game's, which was the server's or its starter's).
        rules = self.server_settings.as_stored(old.guild_id, settings)
        rules.require_player(user)
        # The storage decides the limit on live games, in the insert: no count before it.
        if old.ai_mark is not None and old.ai_difficulty is not None:
            async with self._one_start_at_a_time(old.guild_id, rules, (user,)):
                return await self._start_vs_ai(
                    old.guild_id,
                    old.channel_id,
                    user,
                    old.ai_difficulty,
                    bot_first=old.ai_mark is Mark.O,
                    rematch_of=old.id,
                    size=old.size,
                    language=rules.language or old.language,
                    rules=await self._rematch_rules(old, rules),
                    live_limit=rules.max_games,
                )
        x, o = (Actor(old.player_id(mark), old.player_name(mark)) for mark in (Mark.O, Mark.X))
        # Its other player too: their game may have started before the roles were set, and
        # they may have lost the role, or left, since.
        await self._require_other_player(rules, old.guild_id, o if x.id == user.id else x)
        game = self._new_game(
            old.guild_id,
            old.channel_id,
            x,
            o,
            rematch_of=old.id,
            size=old.size,
            language=rules.language or old.language,
            rules=await self._rematch_rules(old, rules),
        )
        async with self._one_start_at_a_time(old.guild_id, rules, (x, o)):
            return Started(await self._create(game, rules.max_games, user, x, o))

    def _new_game(
        self,
        guild_id: int,
        channel_id: int,
        x: Actor,
        o: Actor,
        *,
        ai_difficulty: str | None = None,
        ai_mark: Mark | None = None,
        moves: tuple[int, ...] = (),
        rematch_of: int | None = None,
        size: int = DEFAULT_SIZE,
        language: str = ENGLISH,
        rules: GameRules = GameRules(),
    ) -> NewGame:
        """A game starting now, with the first turn's clock running, on its server's
        ``rules``."""
        now = self.clock.now()
        return NewGame(
            guild_id=guild_id,
            channel_id=channel_id,
            x_id=x.id,
            x_name=x.name,
            o_id=o.id,
            o_name=o.name,
            ai_difficulty=ai_difficulty,
            ai_mark=ai_mark,
            moves=moves,
            deadline=now + (rules.turn_timeout or self.turn_timeout),
            created_at=now,
            rematch_of=rematch_of,
            size=size,
            language=language,
            turn_timeout=rules.turn_timeout,
            mark_x=rules.mark_x,
            mark_o=rules.mark_o,
            own_thread=rules.own_thread,
        )

    async def tournament_game(
        self,
        guild_id: int,
        thread_id: int,
        x: Actor,
        o: Actor,
        *,
        size: int,
        language: str,
        turn_timeout: float,
    ) -> NewGame:
        """A tournament pairing's game, starting now in its own thread: its server's marks,
        the tournament's turn clock (not the server's)."""
        rules = await self._game_rules(guild_id, await self.server_settings.of(guild_id))
        rules = dataclasses.replace(rules, turn_timeout=turn_timeout, own_thread=True)
        return self._new_game(guild_id, thread_id, x, o, size=size, language=language, rules=rules)

    async def _rematch_rules(self, old: GameRecord, settings: ServerSettings) -> GameRules:
        """A rematch's rules: its server's now, in its game's thread if it had one."""
        rules = await self._game_rules(old.guild_id, settings)
        return dataclasses.replace(rules, own_thread=old.own_thread)

    async def _game_rules(self, guild_id: int, settings: ServerSettings) -> GameRules:
        """What a game starting now in ``guild_id`` keeps of its ``settings``. A custom emoji
        mark that no longer exists (deleted since it was chosen) gives way to the bot's own,
        with a warning: a board with a missing emoji is one Discord refuses to show."""
        marks = {Mark.X: settings.mark_x, Mark.O: settings.mark_o}
        if self._custom_emoji_exists is not None:
            for mark, text in marks.items():
                emoji_id = custom_emoji_id(text) if text else None
                if emoji_id is not None and not await self._custom_emoji_exists(guild_id, emoji_id):
                    log.warning(
                        "guild %s: its mark for %s, %s, is no longer one of its emoji: "
                        "playing with the bot's own",
                        guild_id,
                        mark.value,
                        text,
                    )
                    marks[mark] = None
        shown = {mark: text or DEFAULT_MARKS[mark] for mark, text in marks.items()}
        if shown[Mark.X] == shown[Mark.O]:  # one gave way to the bot's mark the other has
            marks = {Mark.X: None, Mark.O: None}
        return GameRules(settings.turn_timeout, marks[Mark.X], marks[Mark.O])

    async def _create(
        self, game: NewGame, live_limit: int | None, member: Actor, *players: Actor
    ) -> GameRecord:
        """Store ``game``, which ``member`` starts (with ``players``, who play it), within the
        server's ``live_limit``."""
        try:
            return self._remember(await self.storage.create_game(game, live_limit=live_limit))
        except ChannelBusyError:
            raise UserError(await self._busy_reason(game.channel_id)) from None
        except AlreadyRematchedError:
            raise UserError("A rematch of this game was already started.") from None
        except LiveGamesLimitError as error:
            raise _limit_reached(error, member, *players) from None

    async def _may_start(self, rules: ServerSettings, place: Place, member: Actor) -> None:
        """Refuse a game ``member`` would start in ``place`` where the server's settings do
        not let them: a channel off its list, a member without one of its roles."""
        if not rules.allows_games_in((place.channel_id, *place.parents)) and not (
            place.more_parents is not None and rules.allows_games_in(await place.more_parents())
        ):
            raise UserError(
                "Games aren't played in this channel: this server plays them in {}.",
                Listed(tuple(Verbatim(f"<#{channel}>") for channel in sorted(rules.channels))),
            )
        rules.require_player(member)

    async def _require_other_player(
        self, rules: ServerSettings, guild_id: int, player: Actor
    ) -> None:
        """Refuse a game with ``player``, a member who is not the one acting (whose roles
        their interaction shows), where the server's games are for some roles only and
        Discord says they have none of them or are no longer a member. Discord is asked only
        where the server has player roles: elsewhere this costs nothing."""
        if not rules.player_roles or self._member_roles is None:
            return
        try:
            roles = await self._member_roles(guild_id, player.id)
        except RolesUnknownError:
            raise UserError(
                "Discord didn't say whether {} may play here, so nothing was done: try again "
                "in a moment.",
                player.name,
            ) from None
        if roles is None or not rules.lets_play(dataclasses.replace(player, roles=roles)):
            raise UserError(
                "{} can't play here: games in this server are for members with {}.",
                player.name,
                rules.roles_to_play,
            )

    async def _check_live_games(
        self, live_limit: int | None, guild_id: int, member: Actor, *others: Actor
    ) -> None:
        """Refuse a new game for ``member`` (and ``others``, who would play it too) once one
        of them is in ``live_limit`` live games: an early look, before a step that costs
        (a thread, a search); the game's insert decides."""
        if live_limit is None:
            return
        for player in (member, *others):
            if await self.storage.live_games_of(guild_id, player.id) >= live_limit:
                error = LiveGamesLimitError(guild_id, (player.id,), live_limit)
                raise _limit_reached(error, member, *others)

    async def _require_free_channel(self, channel_id: int) -> None:
        if await self.storage.live_game_in_channel(channel_id) is not None:
            raise UserError(BUSY_GAME)
        if await self.storage.pending_challenge_in_channel(channel_id) is not None:
            raise UserError(BUSY_CHALLENGE)

    async def _busy_reason(self, channel_id: int) -> str:
        return BUSY_GAME if await self.storage.live_game_in_channel(channel_id) else BUSY_CHALLENGE

    # -- playing -------------------------------------------------------------------------

    async def shown_in_channel(self, channel_id: int) -> GameRecord | ChallengeRecord:
        """What ``/ttt board`` shows: the channel's live game, else its pending challenge."""
        game = await self.storage.live_game_in_channel(channel_id)
        if game is not None:
            return game
        challenge = await self.storage.pending_challenge_in_channel(channel_id)
        if challenge is None:
            raise UserError(NO_GAME)
        return challenge

    async def game_in_channel(self, channel_id: int) -> GameRecord:
        """The channel's live game; a UserError if there is none."""
        game = await self.storage.live_game_in_channel(channel_id)
        if game is None:
            raise UserError(NO_GAME)
        return game

    async def move_in_channel(self, channel_id: int, user: Actor, cell_text: str) -> MoveResult:
        """``/ttt move``: play ``cell_text`` (anything :func:`game.parse_cell` reads)."""
        game = await self.game_in_channel(channel_id)
        return await self._play(game, user, cell_text)

    async def move_on_board(
        self, game_id: int, user: Actor, cell: int, clicked: Clicked, ply: int | None
    ) -> MoveResult:
        """A click on a cell button of game ``game_id``'s board, drawn after ``ply`` moves
        (None for boards drawn before buttons said): a click on an older position than the
        game's is refused, so a burst of clicks on a board not yet redrawn plays one move."""
        return await self._on_board(
            game_id, clicked, lambda game: self._play(game, user, cell, ply)
        )

    async def pick_on_board(
        self, game_id: int, user: Actor, small: int | None, clicked: Clicked, ply: int
    ) -> GameRecord:
        """A click on one of an ultimate board's small boards (``small``, 0..8), or on the way
        back to them (None), on a board drawn after ``ply`` moves: the game, if its player to
        move may pick that board now. Nothing is stored: the caller shows the board with it.
        Read as stored, never from the copy in memory: with nothing saved, no compare-and-set
        would refuse a pick made on a copy another process moved past, and the board it shows
        would put an older position (or a live game that ended) back on the message."""
        return await _shown_if_behind(
            await self.game_on_board(game_id, clicked),
            lambda game: self._pick(game, user, small, ply),
        )

    async def _pick(self, game: GameRecord, user: Actor, small: int | None, ply: int) -> GameRecord:
        mark = game.mark_of(user.id)
        if mark is None:
            raise UserError("You are not playing in this game: you can watch, though.")
        game = await self._check_clock(game)
        if ply != len(game.moves):
            raise _BoardBehind(CHANGED)
        board = game.board
        if not isinstance(board, UltimateBoard):
            raise UserError(NO_SUCH_BUTTON)
        if board.turn is not mark:
            raise UserError("It is not your turn: waiting for {}.", game.player_name(board.turn))
        forced = board.forced_board
        if forced is not None:
            cells = small_board_cells(forced)
            raise UserError(
                "You were sent to the small board from {} to {}: play there.",
                cell_name(cells[0], board.size),
                cell_name(cells[-1], board.size),
            )
        if small is not None and board.small_is_closed(small):
            raise UserError("That small board is closed: pick one that is still open.")
        return game

    async def _on_board(
        self, game_id: int, clicked: Clicked, act: Callable[[GameRecord], Awaitable[_T]]
    ) -> _T:
        """``act`` on the live game a board's button names: on the copy in memory if there is
        one, and again on the stored game if that was refused (the copy may be behind)."""
        kept = self._kept.get(game_id)
        if kept is not None and kept.is_active and kept.channel_id == clicked.channel_id:
            try:
                return await act(kept)
            except UserError as error:
                if error.changed is not None:  # the refusal itself changed the stored game
                    raise
                self._kept.pop(game_id, None)
        return await _shown_if_behind(await self.game_on_board(game_id, clicked), act)

    async def game_on_board(self, game_id: int, clicked: Clicked) -> GameRecord:
        """The live game a board's button names, as stored; a UserError if it is over, gone,
        or not in the channel of the click."""
        game = await self.storage.get_game(game_id)
        if game is None:
            raise UserError("That game no longer exists.")
        if game.channel_id != clicked.channel_id:
            raise UserError(NOT_HERE)
        if not game.is_active:
            # Shown with its result: the board clicked may not show it yet (settled while the
            # bot could not edit it, or an edit that failed).
            raise UserError(
                "This game is over. Start a new one with `/ttt start` or `/ttt vs-ai`.",
                changed=game,
            )
        return self._remember(game)

    def _remember(self, game: GameRecord) -> GameRecord:
        """Keep ``game``, just read or written, for its next click: a move while it is live,
        a rematch once it is over."""
        _keep_latest(self._kept, game.id, game, GAMES_KEPT)
        return game

    async def _play(
        self, game: GameRecord, user: Actor, cell: int | str, ply: int | None = None
    ) -> MoveResult:
        mark = game.mark_of(user.id)
        if mark is None:
            raise UserError("You are not playing in this game: you can watch, though.")
        game = await self._check_clock(game)
        if ply is not None and ply != len(game.moves):
            raise _BoardBehind(CHANGED)
        board = game.board
        if board.turn is not mark:
            raise UserError("It is not your turn: waiting for {}.", game.player_name(board.turn))
        try:
            index = board.parse_move(cell)
        except InvalidCellError as error:
            if isinstance(board, UltimateBoard):
                raise UserError(NOT_AN_ULTIMATE_CELL, quote_input(error.text)) from None
            if isinstance(cell, str) and _on_a_larger_board(cell):
                raise _off_board(cell, board.size) from None
            raise _not_a_cell(error.text, board.size) from None
        except IllegalMoveError as error:
            raise _cannot_play(board, error.cell) from None
        moves = (*game.moves, index)
        ai_cell = None
        after = board.play(index)
        if not after.is_over and game.ai_mark is after.turn and game.ai_difficulty:
            ai_cell = await self._choose(game.ai_difficulty, after)
            moves = (*moves, ai_cell)
            after = after.play(ai_cell)
        saved = await self._save(self._advance(game, moves, after))
        return MoveResult(saved, index, ai_cell)

    async def _choose(self, difficulty: str, board: Position) -> int:
        """The bot's move at ``difficulty``."""
        if isinstance(board, UltimateBoard):
            seed = self._rng.getrandbits(64)
            if difficulty in ANSWERED_AT_ONCE:
                return ultimate_move(board.moves, difficulty, seed, self.search_budget)
            return await self.engine_workers.run(
                ultimate_move, board.moves, difficulty, seed, self.search_budget
            )
        strategy = get_strategy(difficulty, self._rng, self.search_budget)
        return await think(board.size, lambda: strategy.choose(board))

    def _advance(self, game: GameRecord, moves: tuple[int, ...], board: Position) -> GameRecord:
        """``game`` with ``moves`` played, which make ``board``: finished if the board is,
        else the next deadline."""
        now = self.clock.now()
        if not board.is_over:
            advanced = dataclasses.replace(
                game,
                moves=moves,
                deadline=now + (game.turn_timeout or self.turn_timeout),
                updated_at=now,
            )
        else:
            advanced = dataclasses.replace(
                game,
                moves=moves,
                status=GameStatus.FINISHED,
                winner=board.winner,
                end_reason=EndReason.LINE if board.winner else EndReason.DRAW,
                deadline=None,
                updated_at=now,
            )
        return advanced.knowing(board)

    def _finish(
        self, game: GameRecord, winner: Mark | None, reason: EndReason, at: float | None = None
    ) -> GameRecord:
        """``game`` ended, ``at`` (by default now)."""
        return dataclasses.replace(
            game,
            status=GameStatus.FINISHED,
            winner=winner,
            end_reason=reason,
            deadline=None,
            updated_at=self.clock.now() if at is None else at,
        )

    async def _save(self, game: GameRecord, refusal: str = CHANGED) -> GameRecord:
        """Save ``game`` over the version it was read at; ``refusal`` if that moved on."""
        saved = await self.storage.save_game(game)
        if saved is None:
            self._kept.pop(game.id, None)
            raise UserError(refusal)
        # The save wrote game's moves: their position is the one game already knows.
        return self._remember(saved.knowing(game.board))

    async def _check_clock(self, game: GameRecord) -> GameRecord:
        """Settle a turn whose time ran out before anything else happens to the game."""
        if game.deadline is None or game.deadline > self.clock.now():
            return game
        timed_out = await self._time_out(game)
        if timed_out is None:
            raise UserError(CHANGED)
        loser = game.player_name(game.board.turn)
        raise UserError(
            "Too late: {}'s time ran out and the game is over.", loser, changed=timed_out
        )

    async def _time_out(self, game: GameRecord) -> GameRecord | None:
        loser = game.board.turn
        self._kept.pop(game.id, None)
        return await self.storage.save_game(
            self._finish(game, loser.other, EndReason.TIMEOUT, at=self._clock_ran_out(game))
        )

    def _clock_ran_out(self, game: GameRecord) -> float:
        """When ``game``'s turn ran out: the moment it ended, not when a sweep (perhaps days
        later, after the bot was down) found it out. That moment decides its season, its age
        for retention, and when its rating moved."""
        now = self.clock.now()
        return now if game.deadline is None else min(game.deadline, now)

    async def resign_in_channel(self, channel_id: int, user: Actor) -> GameRecord:
        return await self._resign(await self.game_in_channel(channel_id), user)

    async def resign_on_board(self, game_id: int, user: Actor, clicked: Clicked) -> GameRecord:
        return await self._on_board(game_id, clicked, lambda game: self._resign(game, user))

    async def _resign(self, game: GameRecord, user: Actor) -> GameRecord:
        mark = game.mark_of(user.id)
        if mark is None:
            raise UserError("You are not playing in this game, so you can't resign it.")
        game = await self._check_clock(game)
        return await self._save(self._finish(game, mark.other, EndReason.RESIGN))

    async def end_decided(self, game_id: int, user_id: int | None) -> GameRecord | None:
        """End a tournament's live game whose table was decided without it: as the loss of
        ``user_id`` by resignation (a player withdrawn), or, with None, for nobody (a result
        the organiser awarded); the game as saved, or None if it was over already (or moved on
        meanwhile: whoever moved it shows it)."""
        game = await self.storage.get_game(game_id)
        if game is None or not game.is_active:
            return None
        if user_id is None:
            finished = self._finish(game, None, EndReason.ENDED)
        else:
            mark = game.mark_of(user_id)
            if mark is None:
                return None
            finished = self._finish(game, mark.other, EndReason.RESIGN)
        self._kept.pop(game.id, None)
        return await self.storage.save_game(finished)

    async def end_in_channel(self, guild_id: int, channel_id: int, user: Actor) -> GameRecord:
        """A moderator ends the channel's game; it counts for nobody. Moderators are members
        who can manage messages, and those with the server's moderator role."""
        rules = await self.server_settings.of(guild_id)
        if not rules.lets_end_games(user):
            if rules.moderator_role is None:
                raise UserError("Only members who can manage messages can do that.")
            raise UserError(
                "Only members who can manage messages, or with {}, can end games.",
                Verbatim(f"<@&{rules.moderator_role}>"),
            )
        # A turn that ran out before the sweeper saw it ended the game already: a win that
        # counts (a tournament's forfeit), not one a moderator's end makes count for nobody.
        game = await self._check_clock(await self.game_in_channel(channel_id))
        return await self._save(self._finish(game, None, EndReason.ENDED))

    # -- hints and reviews ---------------------------------------------------------------

    async def hint_in_channel(self, channel_id: int, user: Actor) -> Hint:
        """``/ttt hint``: the best move for ``user`` in the channel's game against the bot,
        which from then on is assisted (counted in no stats). The flag is saved, as a move is,
        over the version the hint was worked out for, before the hint is shown: a hint that
        could not be recorded is not given."""
        game = await self.game_in_channel(channel_id)
        if not game.against_ai:
            raise UserError(
                "Hints are only for games against me: between members, you're on your own."
            )
        mark = game.mark_of(user.id)
        if mark is None:
            raise UserError("You are not playing in this game, so there is no hint for you.")
        game = await self._check_clock(game)
        board = game.board
        if board.turn is not mark:
            raise UserError("It is not your turn: waiting for {}.", game.player_name(board.turn))
        if isinstance(board, UltimateBoard):
            cell = await self.engine_workers.run(ultimate_hint, board.moves)
        else:
            square, budget = board, self.search_budget
            cell = await think(board.size, lambda: best_move(square, budget))
        if game.assisted:
            return Hint(self._remember(game), cell, newly_assisted=False)
        helped = dataclasses.replace(game, assisted=True, updated_at=self.clock.now())
        return Hint(await self._save(helped, HINT_CHANGED), cell, newly_assisted=True)

    async def unseen_hint(self, hint: Hint) -> None:
        """``hint`` never reached its player: its game is not assisted after all, unless it
        was before, or has moved on since (then the flag stays: nothing is known to undo)."""
        if not hint.newly_assisted:
            return
        unhelped = dataclasses.replace(hint.game, assisted=False, updated_at=self.clock.now())
        try:
            await self._save(unhelped)
        except UserError:
            log.info("game %s moved on before its unseen hint could be taken back", hint.game.id)
            return
        log.info("game %s is not assisted: its hint never reached its player", hint.game.id)

    async def review(self, channel_id: int, number: int | None = None) -> Review | UltimateReview:
        """Every move of the finished game ``number`` of this channel (by default its last
        finished one), judged. Anyone who can see the channel may: the game is public there.
        A live game is refused: its review would be a hint for the player to move."""
        game = await self._reviewable(channel_id, number)
        if is_ultimate(game.size):
            return UltimateReview(game, await self._ultimate_review(game.moves))
        return await self._square_review(game)

    async def review_to_practise(self, channel_id: int, number: int) -> Review:
        """The review of game ``number`` that "Practise this" makes drills of: drills are
        positions of the square boards, so an ultimate game (only a hand-made button names one)
        is refused before it is searched."""
        game = await self._reviewable(channel_id, number)
        if is_ultimate(game.size):
            raise UserError("Drills come from games on the square boards: ultimate has none.")
        return await self._square_review(game)

    async def _reviewable(self, channel_id: int, number: int | None) -> GameRecord:
        game = await self.storage.finished_game_in_channel(channel_id, number)
        if game is None:
            raise await self._not_reviewable(channel_id, number)
        return game

    async def _square_review(self, game: GameRecord) -> Review:
        moves, size = game.moves, game.size
        if size < SEARCHED_FROM_SIZE:
            return Review(game, review_game(moves, size))
        searched = await self._once(
            self._reviews, (moves, size), lambda: think(size, lambda: review_game(moves, size))
        )
        return Review(game, searched)

    async def _ultimate_review(self, moves: tuple[int, ...]) -> tuple[UltimateMoveReview, ...]:
        return await self._once(
            self._ultimate_reviews,
            moves,
            lambda: self.engine_workers.run(ultimate_review, moves),
        )

    @staticmethod
    async def _once(
        kept: dict[_K, asyncio.Future[_T]], key: _K, search: Callable[[], Awaitable[_T]]
    ) -> _T:
        r"""A review ``search``\ed once however many ask for it, together or later (the latest
        :data:`REVIEWS_KEPT` are kept in ``kept``, by what they judge)."""
        review = kept.get(key)
        if review is None or (review.done() and (review.cancelled() or review.exception())):
            review = asyncio.ensure_future(search())
        _keep_latest(kept, key, review, REVIEWS_KEPT)
        # Shielded: one asker going away (a shutdown) must not stop the others' review.
        return await asyncio.shield(review)

    async def _not_reviewable(self, channel_id: int, number: int | None) -> UserError:
        """Why there is no finished game ``number`` in this channel to review."""
        if number is None:
            if self.keep_finished_days is not None:
                return NotKept(None, self.keep_finished_days)
            return UserError("No game has finished in this channel yet: play one, then review it.")
        game = await self.storage.get_game(number)
        if game is None:
            # Ids are never handed out twice: one missing at or below the highest removed was
            # removed (for its age, or with its server's data).
            pruned_through = await self.storage.get_setting(GAMES_PRUNED_THROUGH)
            if pruned_through is not None and number <= int(pruned_through):
                return NotKept(number, self.keep_finished_days)
            return UserError("There is no game #{}: its number is on its board.", str(number))
        if game.channel_id != channel_id:
            return UserError(
                "Game #{} was played in another channel: review it there.", str(number)
            )
        return UserError("Game #{} is still going: review it once it is over.", str(number))

    async def board_in_channel(self, channel_id: int) -> Position | None:
        """The position of the channel's live game, if there is one (for autocomplete)."""
        game = await self.storage.live_game_in_channel(channel_id)
        return game.board if game else None

    # -- time ----------------------------------------------------------------------------

    async def settle_overdue(self) -> Swept:
        """Finish every game whose turn clock ran out and expire every overdue challenge,
        including those that ran out while the bot was down, in this process's guilds. A
        game whose channel was deleted meanwhile ends then for nobody: its player to move
        could not move there, so owes nobody a win. One whose channel Discord could not say
        anything about is left for the next sweep."""
        now = self.clock.now()
        games = []
        orphaned = []
        deleted: dict[int, bool | None] = {}  # a channel is asked about once a sweep
        for game in await self.storage.overdue_games(now, self.shards):
            if game.channel_id not in deleted:
                deleted[game.channel_id] = await self._is_deleted(game)
            match deleted[game.channel_id]:
                case None:
                    continue
                case True:
                    ended = await self._end_orphaned(game)
                    if ended is not None:  # else a move got in first
                        orphaned.append(ended)
                case False:
                    timed_out = await self._time_out(game)
                    if timed_out is not None:  # else a move got in first: nothing to settle
                        games.append(timed_out)
        challenges = []
        for challenge in await self.storage.overdue_challenges(now, self.shards):
            closed = await self.storage.close_challenge(challenge.id, ChallengeStatus.EXPIRED)
            if closed is not None:
                challenges.append(closed[0])
        if games or challenges:
            # The first ids only: after a long outage there may be thousands.
            log.info(
                "settled %d timed-out games %s and %d expired challenges %s",
                len(games),
                [game.id for game in games[:20]],
                len(challenges),
                [challenge.id for challenge in challenges[:20]],
            )
        if orphaned:
            log.info(
                "ended %d games for nobody, their channels deleted: %s",
                len(orphaned),
                [(game.id, game.channel_id) for game in orphaned[:20]],
            )
        return Swept(games, challenges, orphaned)

    async def _is_deleted(self, game: GameRecord) -> bool | None:
        """Whether ``game``'s channel was deleted; only a server's channels can be."""
        if self._channel_deleted is None or game.guild_id == OUTSIDE_SERVERS:
            return False
        return await self._channel_deleted(game.channel_id)

    async def _end_orphaned(self, game: GameRecord) -> GameRecord | None:
        """End for nobody, as a moderator's end does, a game whose turn ran out in a channel
        deleted since; at its deadline, as a timeout would have ended it."""
        self._kept.pop(game.id, None)
        return await self.storage.save_game(
            self._finish(game, None, EndReason.ENDED, at=self._clock_ran_out(game))
        )

    async def time_out_overdue_of(self, user_id: int) -> list[GameRecord]:
        """Settle the member's live games whose turn clock ran out, as the sweeper would:
        before anything else happens to them (the member forgotten, or withdrawn from a
        tournament), the player who was waiting gets the win they are owed; one whose
        channel was deleted ends for nobody. Where Discord cannot say (an outage), the
        channel is taken to be there: this cannot wait for the next sweep."""
        now = self.clock.now()
        settled = []
        for game in await self.storage.active_games_of(user_id):
            if game.deadline is not None and game.deadline <= now:
                if await self._is_deleted(game):
                    ended = await self._end_orphaned(game)
                else:
                    ended = await self._time_out(game)
                if ended is not None:  # else a move got in first
                    settled.append(ended)
        return settled

    async def use_default_marks(self, game_id: int) -> None:
        """Game ``game_id`` shows the bot's own marks from now on, in every process: Discord
        refused its server's custom emoji (see ``TTTBot.marks_refused``)."""
        self._kept.pop(game_id, None)
        await self.storage.use_default_marks(game_id)

    async def prune_old_games(self) -> int:
        """Remove the finished games of this process's guilds that ended more than
        :attr:`keep_finished_days` ago (none if that is None), a batch at a time (see
        :data:`PRUNE_BATCH`), with their challenges and the challenges closed as long ago
        without a game: how many games went. Stats and ratings stay: they were counted
        when each game ended."""
        if self.keep_finished_days is None:
            return 0
        finished_before = self.clock.now() - self.keep_finished_days * DAY
        games = challenges = 0
        for _ in range(PRUNE_BATCHES_PER_SWEEP):
            pruned = await self.storage.prune_finished(finished_before, PRUNE_BATCH, self.shards)
            for game_id in pruned.games:  # a copy of a finished game is otherwise trusted
                self._kept.pop(game_id, None)
            games += len(pruned.games)
            challenges += pruned.challenges
            if len(pruned.games) < PRUNE_BATCH and pruned.challenges < PRUNE_BATCH:
                break
        if games or challenges:
            log.info(
                "removed %d finished games and %d closed challenges older than %d days",
                games,
                challenges,
                self.keep_finished_days,
            )
        return games

    def drop_copies(self, changed: Callable[[GameRecord], bool]) -> None:
        """Forget the copies in memory of the games ``changed`` picks: their stored rows
        changed without a save (a member forgotten, a server's data erased), and a copy of a
        finished game is otherwise trusted for good."""
        for game_id in [game_id for game_id, game in self._kept.items() if changed(game)]:
            del self._kept[game_id]

    # -- stats ---------------------------------------------------------------------------

    async def stats(self, guild_id: int, user_id: int, size: int = DEFAULT_SIZE) -> PlayerStats:
        check_size(size)
        return await self.storage.player_stats(guild_id, user_id, size=size)

    async def leaderboard(
        self, guild_id: int, size: int = DEFAULT_SIZE, limit: int = 10
    ) -> list[Rating]:
        check_size(size)
        return await self.storage.leaderboard(guild_id, limit, size=size)


def _keep_latest(kept: dict[_K, _V], key: _K, value: _V, limit: int) -> None:
    """Put ``value`` in ``kept`` as its most recent entry (dicts keep their order), dropping
    the least recent beyond ``limit``."""
    kept.pop(key, None)
    kept[key] = value
    if len(kept) > limit:
        del kept[next(iter(kept))]


# Discord's limit on a thread's name.
THREAD_NAME_LIMIT = 100


def thread_name(x: str, o: str) -> str:
    """The name of a game's own thread: its players."""
    return f"{x} vs {o}"[:THREAD_NAME_LIMIT]


def _limit_reached(error: LiveGamesLimitError, member: Actor, *players: Actor) -> UserError:
    """What ``member`` hears when their new game would take them, or another of its
    ``players``, past the server's limit on live games."""
    limit = str(error.limit)
    if member.id in error.user_ids:
        return UserError(
            "You are already in as many live games as this server allows ({}): finish one first.",
            limit,
        )
    over = next(player for player in players if player.id in error.user_ids)
    return UserError(
        "{} is already in as many live games as this server allows ({}).", over.name, limit
    )


class _BoardBehind(UserError):
    """A click on a board drawn after fewer (or more) moves than the game has."""


async def _shown_if_behind(stored: GameRecord, act: Callable[[GameRecord], Awaitable[_T]]) -> _T:
    """``act`` on the game as ``stored``; a click on a board behind it refused with the game
    to show in its place. The board clicked may be behind for good: a process stopped dead
    between saving a move and answering leaves it so, and every click on it would be refused
    while it never changed. Shown, the next click is on the game as it is."""
    try:
        return await act(stored)
    except _BoardBehind as behind:
        raise UserError(behind.template, changed=stored) from None


class _MemberLocks:
    """An asyncio lock per member of a guild (a ``(guild id, member id)`` key), made when
    first asked for and dropped once nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[_MemberKey, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def holding(self, keys: Iterable[_MemberKey]) -> AsyncIterator[None]:
        """Hold the locks of ``keys``, taken in sorted order (so that two holders of the
        same keys never wait for each other), until the block ends."""
        async with contextlib.AsyncExitStack() as stack:
            for key in sorted(set(keys)):
                await stack.enter_async_context(self._held(key))
            yield

    @contextlib.asynccontextmanager
    async def _held(self, key: _MemberKey) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


def when(epoch: float) -> Verbatim:
    """A moment, as Discord shows it to each member in their own language ("in 2 minutes")."""
    return Verbatim(f"<t:{math.ceil(epoch)}:R>")


def _on_a_larger_board(text: str) -> bool:
    """Whether ``text`` names a cell of the largest board, such as ``E5``."""
    try:
        parse_cell(text, max(BOARD_SIZES))
    except InvalidCellError:
        return False
    return True


def _off_board(text: str, size: int) -> UserError:
    """A cell of a larger board, typed in a smaller game: say so, and what this board has."""
    cells = size * size
    return UserError(
        "{} is not on this board, which is {} ({} in a row): use A1 to {}, or 1 to {}.",
        text.strip().upper(),
        size_name(size),
        str(standard_line_length(size)),
        cell_name(cells - 1, size),
        str(cells),
    )


def _not_a_cell(text: str, size: int) -> UserError:
    """Text that names no cell: what a cell looks like on this board. The text is quoted as
    typed (escaped when shown)."""
    return UserError(
        "{} is not a cell: use a column letter A-{} and a row number 1-{}, like B2, or a "
        "number 1-{} (the board is {}).",
        quote_input(text),
        COLUMN_LETTERS[size - 1],
        str(size),
        str(size * size),
        f"{size}x{size}",
    )


def _cannot_play(board: Position, cell: int) -> UserError:
    """A cell this position refuses: the game is over, the cell is taken, or (ultimate) it is
    outside the small board the player was sent to or in one already won; or no cell of this
    board at all, which only a hand-made button names."""
    if not 0 <= cell < board.size * board.size:
        return UserError(NO_SUCH_BUTTON)
    name = cell_name(cell, board.size)
    if board.is_over and board.winner is None:
        return UserError("Cannot play {}: the game is over, it ended in a draw.", name)
    if board.winner is not None:
        return UserError(
            "Cannot play {}: the game is over, it ended with a win for {}.",
            name,
            board.winner.value,
        )
    if isinstance(board, UltimateBoard):
        small = small_board_of(cell)
        forced = board.forced_board
        if forced is not None and small != forced:
            cells = small_board_cells(forced)
            return UserError(
                "{} is not in the small board you were sent to: play in the one from {} to {}.",
                name,
                cell_name(cells[0], board.size),
                cell_name(cells[-1], board.size),
            )
        won_by = board.small_winner(small)
        if won_by is not None:
            return UserError(
                "{} is in a small board {} has won: play in one that is still open.",
                name,
                won_by.value,
            )
    taken_by = board[cell]
    return UserError(
        "Cannot play {}: it is taken by {}.", name, taken_by.value if taken_by else "?"
    )


def _name(name: str | None) -> str:
    return name or "someone else"
