"""Tournaments' rules: who may create, join, leave, start, pause, resume, remove, award and
cancel, and how a tournament moves on as its games end. No Discord here: the cog parses,
:mod:`bot.tournaments.rounds` opens the threads and posts, and this decides.

Every change reads the stored tournament, changes its document (:mod:`bot.tournaments.state`)
and saves it by compare-and-set: of two changes at the same moment, in one process or several,
one is saved and the other is made again on what the first left (or refused, if it no longer
applies). That is what makes a round start once: the process whose save of the next round's
pairings succeeds is the one that paired it.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from bot.clock import Clock
from bot.domain import Actor, UserError, check_size
from bot.i18n import N_
from bot.results import INITIAL_RATING
from bot.server_settings import ServerSettings, SettingsService
from bot.storage.base import (
    LIVE_TOURNAMENT,
    EndReason,
    GameRecord,
    GameStatus,
    NewTournament,
    Storage,
    TournamentHereError,
    TournamentRecord,
    TournamentStatus,
)
from bot.tournaments import state as doc
from bot.tournaments.state import Entry, Rules, Table, TournamentState
from game import Mark
from tournament import (
    MOST_ROUNDS,
    ROUND_ROBIN_MOST,
    Format,
    pair_round_robin,
    pair_swiss,
    round_robin_rounds,
    swiss_rounds,
)

log = logging.getLogger(__name__)

# What an organiser may choose.
NAME_LONGEST = 60
MOST_PLAYERS = 256
LATEST_START = 30 * 24 * 3600.0  # a start time at most this far ahead
LONGEST_TURN = 7 * 24 * 3600.0
# How many times a change is made again on a tournament another change just saved.
SAVE_TRIES = 8
# How long a process that set out to open a table's thread has it to itself.
CLAIM_SECONDS = 60.0

# Text a name may not hold: mentions, and the characters Discord's markdown reads.
_NOT_PLAIN = re.compile(r"<[@#&!:a]|@everyone|@here|[*_~`|>#\[\]()\\]|https?://")
# Nor characters that show it other than as typed: controls, format characters (zero-width
# spaces, right-to-left overrides that turn what follows around), line and paragraph
# separators, lone surrogates; the zero-width joiner alone is kept, for emoji made of several.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_JOINER = "\u200d"
# Nor are the tags of a subdivision's flag (a black flag, then tag letters and a cancel tag:
# Scotland's, Wales's), invisible as they are: outside such a flag a tag is hidden text.
_FLAG_TAGS = re.compile("(?<=\U0001f3f4)[\U000e0020-\U000e007e]+\U000e007f")
# Letters drawn as blanks (Hangul fillers, the blank braille pattern): a name of them alone
# shows nothing.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")

NOT_ORGANISER = N_(
    "Only the organiser of this tournament, members who can manage the server, or its "
    "moderator role can do that."
)
NO_TOURNAMENT_HERE = N_(
    "There is no tournament going in this channel: an admin can create one with "
    "`/ttt tournament create`."
)


@dataclass(frozen=True, slots=True)
class Tournament:
    """A stored tournament and its document, read together."""

    record: TournamentRecord
    state: TournamentState

    @property
    def id(self) -> int:
        return self.record.id

    @property
    def status(self) -> TournamentStatus:
        return self.record.status

    @property
    def live(self) -> bool:
        return self.status in LIVE_TOURNAMENT

    @classmethod
    def of(cls, record: TournamentRecord) -> Tournament:
        return cls(record, doc.loads(record.state))


@dataclass(frozen=True, slots=True)
class Change:
    """What a change leaves: the status, when the sweeper must look next, the document."""

    status: TournamentStatus
    due_at: float | None
    state: TournamentState


@dataclass(frozen=True, slots=True)
class Awarded:
    """An award saved: the tournament after it, and the round whose table it decided."""

    tournament: Tournament
    round_number: int


class TournamentService:
    def __init__(self, storage: Storage, clock: Clock, settings: SettingsService) -> None:
        self.storage = storage
        self.clock = clock
        self.server_settings = settings

    # -- reading ---------------------------------------------------------------------------

    async def get(self, tournament_id: int) -> Tournament | None:
        record = await self.storage.get_tournament(tournament_id)
        return None if record is None else Tournament.of(record)

    async def here(self, guild_id: int, channel_id: int, *, ended_too: bool = False) -> Tournament:
        """The tournament going in this channel; else, in a tournament game's thread, that
        game's (going, or ``ended_too``); else, with ``ended_too``, the one this channel hosted
        last; else the server's only one going."""
        # Read by their records first: only the tournament meant is read whole.
        live = await self.storage.live_tournaments(guild_id)
        for record in live:
            if record.channel_id == channel_id:
                return Tournament.of(record)
        of_thread = await self._of_games_thread(channel_id)
        if of_thread is not None and (ended_too or of_thread.live):
            return of_thread
        if ended_too and (latest := await self.storage.latest_tournament_in_channel(channel_id)):
            hosted = await self.get(latest)
            if hosted is not None:
                return hosted
        if len(live) == 1:
            return Tournament.of(live[0])
        raise UserError(NO_TOURNAMENT_HERE)

    async def _of_games_thread(self, channel_id: int) -> Tournament | None:
        """The tournament whose game is played in ``channel_id``, a thread of the game's own,
        if any: still once a Rematch (or any game) has followed it in the thread."""
        tournament_id = await self.storage.tournament_of_thread(channel_id)
        return None if tournament_id is None else await self.get(tournament_id)

    # -- the organiser's -------------------------------------------------------------------

    async def create(
        self,
        guild_id: int,
        channel_id: int,
        organiser: Actor,
        rules: Rules,
        *,
        starts_in: float | None,
    ) -> Tournament:
        settings = await self.server_settings.of(guild_id)
        if not _may_organise(settings, organiser):
            raise UserError(
                "Only members who can manage the server, or its moderator role, can create a "
                "tournament."
            )
        _check_rules(rules)
        now = self.clock.now()
        if starts_in is not None and not 60 <= starts_in <= LATEST_START:
            raise UserError(
                "A tournament starts between 1 minute and 30 days from now; leave the start "
                "out to start it with `/ttt tournament start`."
            )
        starts_at = None if starts_in is None else now + starts_in
        state = TournamentState(rules=rules, organiser_id=organiser.id, starts_at=starts_at)
        state = state.logged(now, organiser.id, "created")
        new = NewTournament(
            guild_id=guild_id,
            channel_id=channel_id,
            status=TournamentStatus.REGISTERING,
            due_at=starts_at,
            state=doc.dumps(state),
            created_at=now,
        )
        try:
            record = await self.storage.create_tournament(new)
        except TournamentHereError:
            raise UserError(
                "This channel hosts a tournament already: one at a time in a channel."
            ) from None
        log.info("guild %s: tournament %s created by %s", guild_id, record.id, organiser.id)
        return Tournament.of(record)

    async def start(self, tournament_id: int, guild_id: int, actor: Actor) -> Tournament:
        await self._check_organiser(tournament_id, guild_id, actor)
        await self.rate_entrants(tournament_id, guild_id)
        return await self._change(tournament_id, guild_id, lambda t: self._started(t, actor.id))

    async def pause(self, tournament_id: int, guild_id: int, actor: Actor) -> Tournament:
        await self._check_organiser(tournament_id, guild_id, actor)

        def pause(t: Tournament) -> Change:
            if t.status is not TournamentStatus.RUNNING:
                raise UserError("Only a running tournament can be paused.")
            state = t.state.logged(self.clock.now(), actor.id, "paused")
            return Change(TournamentStatus.PAUSED, None, state)

        return await self._change(tournament_id, guild_id, pause)

    async def resume(self, tournament_id: int, guild_id: int, actor: Actor) -> Tournament:
        await self._check_organiser(tournament_id, guild_id, actor)

        def resume(t: Tournament) -> Change:
            if t.status is not TournamentStatus.PAUSED:
                raise UserError("This tournament is not paused.")
            state = t.state.logged(self.clock.now(), actor.id, "resumed")
            return Change(TournamentStatus.RUNNING, None, state)

        return await self._change(tournament_id, guild_id, resume)

    async def cancel(self, tournament_id: int, guild_id: int, actor: Actor) -> Tournament:
        await self._check_organiser(tournament_id, guild_id, actor)

        def cancel(t: Tournament) -> Change:
            _require_live(t)
            state = t.state.logged(self.clock.now(), actor.id, "cancelled")
            return Change(TournamentStatus.CANCELLED, None, state)

        return await self._change(tournament_id, guild_id, cancel)

    async def remove(
        self, tournament_id: int, guild_id: int, actor: Actor, member_id: int
    ) -> Tournament:
        await self._check_organiser(tournament_id, guild_id, actor)
        played = await self._game_of_round(tournament_id, member_id)

        def remove(t: Tournament) -> Change:
            _require_live(t)
            entry = t.state.entry(member_id)
            if entry is None or entry.withdrawn:
                raise UserError("That member is not playing in this tournament.")
            if t.status is TournamentStatus.REGISTERING:
                entries = tuple(e for e in t.state.entries if e.user_id != member_id)
                state = t.state.but(entries=entries)
            else:
                state = _withdrawn(t, entry, self.clock.now(), played)
            state = state.logged(self.clock.now(), actor.id, "removed", str(member_id))
            return Change(t.status, t.record.due_at, state)

        return await self._change(tournament_id, guild_id, remove)

    async def award(
        self,
        tournament_id: int,
        guild_id: int,
        actor: Actor,
        board: int,
        x_points: float,
        round_number: int | None = None,
    ) -> Awarded:
        """Decide a table's result by hand (a game that went wrong): logged with who and when.
        Without ``round_number``, the round being played when the award is saved."""
        await self._check_organiser(tournament_id, guild_id, actor)
        if x_points not in (0.0, 0.5, 1.0):
            raise UserError("A result is a win for X, a win for O, or a draw.")
        decided = 0

        def award(t: Tournament) -> Change:
            nonlocal decided  # made again on a newer document if a save loses a race
            if t.status not in (TournamentStatus.RUNNING, TournamentStatus.PAUSED):
                raise UserError("Results are awarded while a tournament runs.")
            # Round 0 is no round (they count from 1), not the one being played.
            number = decided = t.state.current_round if round_number is None else round_number
            table = t.state.table(number, board)
            if table is None or table.o is None:
                raise UserError("Round {} has no game at table {}.", str(number), str(board))
            awarded = dataclasses.replace(
                table, x_points=x_points, forfeit=False, awarded_by=actor.id
            )
            detail = f"{number}:{board}:{x_points}"
            state = t.state.with_table(awarded).logged(
                self.clock.now(), actor.id, "awarded", detail
            )
            return Change(t.status, t.record.due_at, state)

        changed = await self._change(tournament_id, guild_id, award)
        return Awarded(changed, decided)

    # -- the players' ----------------------------------------------------------------------

    async def join(self, tournament_id: int, guild_id: int, member: Actor) -> Tournament:
        settings = await self.server_settings.of(guild_id)
        if member.is_bot:
            raise UserError("Bots don't play in tournaments.")
        settings.require_player(member)

        def join(t: Tournament) -> Change:
            if t.status is not TournamentStatus.REGISTERING:
                raise UserError(_CLOSED.get(t.status, _CLOSED[TournamentStatus.RUNNING]))
            if t.state.entry(member.id) is not None:
                raise UserError("You are in this tournament already.")
            if len(t.state.entries) >= t.state.rules.most_players:
                raise UserError("This tournament is full.")
            entry = Entry(member.id, member.name, joined_at=self.clock.now())
            state = t.state.but(entries=(*t.state.entries, entry))
            return Change(t.status, t.record.due_at, state)

        return await self._change(tournament_id, guild_id, join)

    async def leave(self, tournament_id: int, guild_id: int, member: Actor) -> Tournament:
        played = await self._game_of_round(tournament_id, member.id)

        def leave(t: Tournament) -> Change:
            entry = t.state.entry(member.id)
            if entry is None or entry.withdrawn:
                raise UserError("You are not playing in this tournament.")
            if t.status is TournamentStatus.REGISTERING:
                entries = tuple(e for e in t.state.entries if e.user_id != member.id)
                return Change(t.status, t.record.due_at, t.state.but(entries=entries))
            _require_live(t)
            state = _withdrawn(t, entry, self.clock.now(), played)
            return Change(t.status, t.record.due_at, state)

        return await self._change(tournament_id, guild_id, leave)

    async def _game_of_round(self, tournament_id: int, user_id: int) -> GameRecord | None:
        """The game of the current round ``user_id`` plays in, as stored now (it may have
        ended since the sweeper last copied results), or None."""
        tournament = await self.get(tournament_id)
        if tournament is None:
            return None
        table = tournament.state.current_table_of(user_id)
        if table is None:
            return None
        game_id = tournament.record.games.get((table.round, table.board))
        return None if game_id is None else await self.storage.get_game(game_id)

    async def forget(self, user_id: int, placeholder: int) -> list[Tournament]:
        """``/ttt forget-me``: the member withdraws from every tournament still going (their
        game of the round is forfeited), and the placeholder takes their place in every
        tournament's history, their name gone. The tournaments changed."""
        changed = []
        for tournament_id in await self.storage.tournaments_of_member(user_id):
            # As leaving does: a game of the round already over keeps its result.
            played = await self._game_of_round(tournament_id, user_id)
            forget = functools.partial(self._forgotten, user_id, placeholder, played)
            forgotten = await self._saved(tournament_id, None, forget)
            if forgotten is not None:
                changed.append(forgotten)
        if changed:
            # Their old documents, with the name, are still on disk (SQLite: in the log, and
            # in the file as its last checkpoint wrote them).
            await self.storage.wipe_deleted(rewritten=True)
        return changed

    def _forgotten(
        self, user_id: int, placeholder: int, played: GameRecord | None, t: Tournament
    ) -> Change:
        state = t.state
        entry = state.entry(user_id)
        if entry is not None and t.live and not entry.withdrawn:
            if t.status is TournamentStatus.REGISTERING:
                entries = tuple(e for e in state.entries if e.user_id != user_id)
                state = state.but(entries=entries)
            else:
                state = _withdrawn(t, entry, self.clock.now(), played)
        return Change(t.status, t.record.due_at, _anonymised(state, user_id, placeholder))

    # -- moving on, as the sweeper does ----------------------------------------------------

    async def progress(self, tournament_id: int) -> Tournament | None:
        """Copy the results of the current round's finished games, then start the next round,
        or finish, when the round is over; a registering tournament whose start time has come
        starts. None if it is gone."""
        tournament = await self.get(tournament_id)
        if tournament is None:
            return None
        guild_id = tournament.record.guild_id
        starts_at = tournament.state.starts_at
        if tournament.status is TournamentStatus.REGISTERING:
            if starts_at is None or starts_at > self.clock.now():
                return tournament  # registering until its start
            await self.rate_entrants(tournament_id, guild_id)
        games: dict[int, GameRecord] = {}
        state = tournament.state
        for table in state.round_tables(state.current_round):
            game_id = tournament.record.games.get((table.round, table.board))
            if game_id is not None and not table.decided:
                game = await self.storage.get_game(game_id)
                if game is not None:
                    games[game_id] = game
        return await self._change(tournament_id, guild_id, lambda t: self._moved_on(t, games.get))

    def _moved_on(self, t: Tournament, games: Callable[[int], GameRecord | None]) -> Change:
        now = self.clock.now()
        if t.status is TournamentStatus.REGISTERING:
            if t.state.starts_at is not None and t.state.starts_at <= now:
                if len(t.state.active) < 2:
                    state = t.state.logged(now, t.state.organiser_id, "cancelled", "too few")
                    return Change(TournamentStatus.CANCELLED, None, state)
                return self._started(t, t.state.organiser_id)
            return Change(t.status, t.record.due_at, t.state)
        if t.status is not TournamentStatus.RUNNING:
            return Change(t.status, t.record.due_at, t.state)
        state = t.state
        for table in state.round_tables(state.current_round):
            game_id = t.record.games.get((table.round, table.board))
            if table.decided or game_id is None:
                continue
            game = games(game_id)
            if game is None or game.status is not GameStatus.FINISHED:
                continue
            result = _result_of(game, table)
            if result is None:
                state = _unresolved(state, table, game.updated_at)
            else:
                state = state.with_table(result)
        if not state.round_over:
            return Change(t.status, None, state)
        # Over after its last round, or once fewer than two players are left to pair.
        if state.current_round >= state.rounds or len(state.active) < 2:
            # Due until its podium is marked posted: a kill or a failure before then leaves
            # the podium to the next sweep.
            return Change(TournamentStatus.FINISHED, now, state)
        return Change(t.status, None, _next_round(state))

    def _started(self, t: Tournament, actor_id: int) -> Change:
        if t.status is not TournamentStatus.REGISTERING:
            raise UserError("This tournament has started already.")
        players = len(t.state.entries)
        if players < 2:
            raise UserError("A tournament needs at least 2 players to start.")
        if t.state.rules.format is Format.ROUND_ROBIN:
            rounds = round_robin_rounds(players)
        else:
            rounds = t.state.rules.rounds or swiss_rounds(players)
        state = t.state.but(rounds=rounds).logged(self.clock.now(), actor_id, "started")
        return Change(TournamentStatus.RUNNING, None, _next_round(state))

    async def rate_entrants(self, tournament_id: int, guild_id: int) -> None:
        """Note each entrant's rating on its board size, as seeding and the last tie-break
        read it: done just before the start. The ratings are read first and written onto the
        entries as they are at the save: someone who joined meanwhile is rated at the next
        call, or starts from the initial rating."""
        tournament = await self.get(tournament_id)
        if tournament is None or tournament.status is not TournamentStatus.REGISTERING:
            return
        size = tournament.state.rules.size
        ratings: dict[int, float] = {}
        for entry in tournament.state.entries:
            stats = await self.storage.player_stats(guild_id, entry.user_id, size=size)
            ratings[entry.user_id] = stats.rating if stats.rating is not None else INITIAL_RATING

        def rated(t: Tournament) -> Change:
            entries = tuple(
                dataclasses.replace(e, rating=ratings.get(e.user_id, e.rating))
                for e in t.state.entries
            )
            return Change(t.status, t.record.due_at, t.state.but(entries=entries))

        await self._change(tournament_id, guild_id, rated)

    async def claim_table(self, tournament_id: int, round_number: int, board: int) -> Table | None:
        """Take the opening of a table's game upon this process, for :data:`CLAIM_SECONDS`;
        the table as claimed (with its thread, if one was noted since), or None while another
        process holds it."""
        now = self.clock.now()

        def claimed(t: Tournament) -> Change:
            table = t.state.table(round_number, board)
            if table is None:
                raise _AlreadyDone()
            if table.thread_id is None:
                # A claim dated more than a claim's length ahead of this clock was made before
                # the wall clock stepped back (clocks in sync differ by seconds): it ran out,
                # rather than holding the table until the clock catches up with it.
                age = now - table.claimed_at if table.claimed_at is not None else None
                if age is not None and -CLAIM_SECONDS < age < CLAIM_SECONDS:
                    raise _AlreadyDone()
                table = dataclasses.replace(table, claimed_at=now)
            return Change(t.status, t.record.due_at, t.state.with_table(table))

        try:
            changed = await self._saved(tournament_id, None, claimed)
        except _AlreadyDone:
            return None
        return None if changed is None else changed.state.table(round_number, board)

    async def set_table_thread(
        self, tournament_id: int, round_number: int, board: int, thread_id: int
    ) -> Tournament | None:
        """Note the thread opened for a table; None if another process noted one first."""

        def noted(t: Tournament) -> Change:
            table = t.state.table(round_number, board)
            if table is None or table.thread_id is not None:
                raise _AlreadyDone()
            thread = dataclasses.replace(table, thread_id=thread_id)
            return Change(t.status, t.record.due_at, t.state.with_table(thread))

        try:
            return await self._saved(tournament_id, None, noted)
        except _AlreadyDone:
            return None

    async def note_announcement(self, tournament_id: int, message_id: int) -> None:
        await self._saved(
            tournament_id,
            None,
            lambda t: Change(t.status, t.record.due_at, t.state.but(announcement_id=message_id)),
        )

    async def note_final_posted(self, tournament_id: int) -> bool:
        """Mark the final standings posted; False if they were (by this or another process),
        or the tournament is gone."""

        def posted(t: Tournament) -> Change:
            if t.state.final_posted:
                raise _AlreadyDone()
            return Change(t.status, None, t.state.but(final_posted=True))

        try:
            return await self._saved(tournament_id, None, posted) is not None
        except _AlreadyDone:
            return False

    # -- plumbing --------------------------------------------------------------------------

    async def _check_organiser(self, tournament_id: int, guild_id: int, actor: Actor) -> None:
        tournament = await self._of_guild(tournament_id, guild_id)
        if actor.id == tournament.state.organiser_id or actor.manages_server:
            return
        settings = await self.server_settings.of(guild_id)
        if not _may_organise(settings, actor):
            raise UserError(NOT_ORGANISER)

    async def _of_guild(self, tournament_id: int, guild_id: int) -> Tournament:
        tournament = await self.get(tournament_id)
        if tournament is None or tournament.record.guild_id != guild_id:
            raise UserError("That tournament is not one of this server's.")
        return tournament

    async def _change(
        self, tournament_id: int, guild_id: int, change: Callable[[Tournament], Change]
    ) -> Tournament:
        """Make ``change`` on one of ``guild_id``'s tournaments (refused for any other) and
        save it by compare-and-set, made again on what another change saved meanwhile."""
        changed = await self._saved(tournament_id, guild_id, change)
        assert changed is not None  # _of_guild refuses a tournament that is gone
        return changed

    async def _saved(
        self, tournament_id: int, guild_id: int | None, change: Callable[[Tournament], Change]
    ) -> Tournament | None:
        """:meth:`_change`; with no ``guild_id`` (the bot's own steps, which have no server to
        check), None if the tournament is gone."""
        for _ in range(SAVE_TRIES):
            if guild_id is None:
                tournament = await self.get(tournament_id)
                if tournament is None:
                    return None
            else:
                tournament = await self._of_guild(tournament_id, guild_id)
            changed = change(tournament)
            if (
                changed.state == tournament.state
                and changed.status is tournament.status
                and changed.due_at == tournament.record.due_at
            ):
                return tournament
            saved = await self.storage.save_tournament(
                tournament.record,
                status=changed.status,
                due_at=changed.due_at,
                state=doc.dumps(changed.state),
                now=self.clock.now(),
            )
            if saved is not None:
                return Tournament(saved, changed.state)
        raise UserError("This tournament is busy changing: try again in a moment.")


class _AlreadyDone(Exception):
    """A change another process made first."""


_CLOSED = {
    TournamentStatus.RUNNING: N_("This tournament has started: joining is closed."),
    TournamentStatus.PAUSED: N_("This tournament has started: joining is closed."),
    TournamentStatus.FINISHED: N_("This tournament is over."),
    TournamentStatus.CANCELLED: N_("This tournament was cancelled."),
}


def _may_organise(settings: ServerSettings, actor: Actor) -> bool:
    """Members who can manage the server, and the server's moderator role, run tournaments."""
    moderators = settings.moderator_role
    return actor.manages_server or (moderators is not None and moderators in actor.roles)


def _require_live(t: Tournament) -> None:
    if not t.live:
        raise UserError(_CLOSED[t.status])


def _check_rules(rules: Rules) -> None:
    name = rules.name.strip()
    if not 1 <= len(name) <= NAME_LONGEST or _NOT_PLAIN.search(name) or not _shows_as_typed(name):
        raise UserError(
            "A tournament's name is plain text of 1 to 60 characters: no mentions, links, "
            "markdown (* _ ~ ` | > # [ ] ( ) \\) or invisible characters."
        )
    check_size(rules.size)
    if not 2 <= rules.most_players <= MOST_PLAYERS:
        raise UserError("A tournament takes from 2 to 256 players.")
    if rules.format is Format.ROUND_ROBIN:
        if rules.most_players > ROUND_ROBIN_MOST:
            raise UserError("A round robin takes at most 10 players: everyone plays everyone.")
        if rules.rounds is not None:
            raise UserError("A round robin has as many rounds as it takes: leave rounds out.")
    elif rules.rounds is not None and not 1 <= rules.rounds <= MOST_ROUNDS:
        raise UserError("A Swiss tournament has from 1 to 20 rounds.")
    if not 60 <= rules.turn_timeout <= LONGEST_TURN:
        raise UserError("A turn lasts from 1 minute to 7 days.")


def _shows_as_typed(name: str) -> bool:
    """Whether ``name`` shows something, and shows it as typed (see :data:`_HIDDEN`)."""
    name = _FLAG_TAGS.sub("", name)
    if any(unicodedata.category(c) in _HIDDEN and c != _JOINER for c in name):
        return False
    return any(unicodedata.category(c)[0] not in "ZCM" and c not in _BLANK_LETTERS for c in name)


def _next_round(state: TournamentState) -> TournamentState:
    number = state.current_round + 1
    if state.rules.format is Format.ROUND_ROBIN:
        pairings = pair_round_robin(state.entrants(), number)
    else:
        pairings = pair_swiss(state.entrants(), state.games(), number, state.withdrawn_ids)
    state = state.paired(number, pairings)
    # A round robin's table with a withdrawn player is the other's win, by forfeit.
    for table in state.round_tables(number):
        forfeited = _forfeited(table, state.withdrawn_ids)
        if forfeited is not None:
            state = state.with_table(forfeited)
    return state


def _forfeited(table: Table, gone: frozenset[int]) -> Table | None:
    if table.decided or table.o is None:
        return None
    if table.x in gone:
        points = 0.0
    elif table.o in gone:
        points = 1.0
    else:
        return None
    return dataclasses.replace(table, x_points=points, forfeit=True)


def _withdrawn(
    t: Tournament, entry: Entry, now: float, played: GameRecord | None = None
) -> TournamentState:
    """``entry`` withdrawn from a tournament under way: their undecided table of the current
    round is the opponent's win, by forfeit, and they are paired no more. ``played``, their
    game of the round as read just before: one that finished (and the sweeper has not copied
    yet) decides the table by its result instead, since only the games still to play are
    forfeited."""
    state = t.state.with_entry(
        Entry(entry.user_id, entry.name, entry.joined_at, entry.rating, withdrawn_at=now)
    )
    table = state.current_table_of(entry.user_id)
    if table is not None and not table.decided:
        decided = None
        game_id = t.record.games.get((table.round, table.board))
        if played is not None and played.id == game_id and played.status is GameStatus.FINISHED:
            decided = _result_of(played, table)
        if decided is None:
            decided = _forfeited(table, frozenset({entry.user_id}))
        if decided is not None:
            state = state.with_table(decided)
    return state


def _anonymised(state: TournamentState, user_id: int, placeholder: int) -> TournamentState:
    """``state`` with ``placeholder`` wherever it named ``user_id``, and no name of theirs."""

    def swap(value: int) -> int:
        return placeholder if value == user_id else value

    return state.but(
        organiser_id=swap(state.organiser_id),
        entries=tuple(
            dataclasses.replace(e, user_id=placeholder, name="") if e.user_id == user_id else e
            for e in state.entries
        ),
        tables=tuple(
            dataclasses.replace(
                t,
                x=swap(t.x),
                o=None if t.o is None else swap(t.o),
                awarded_by=None if t.awarded_by is None else swap(t.awarded_by),
            )
            for t in state.tables
        ),
        log=tuple(
            dataclasses.replace(
                a,
                actor_id=swap(a.actor_id),
                detail=str(placeholder) if a.detail == str(user_id) else a.detail,
            )
            for a in state.log
        ),
    )


def _unresolved(state: TournamentState, table: Table, ended_at: float) -> TournamentState:
    """Note once in the tournament's log that ``table``'s game ended for nobody at
    ``ended_at`` (a moderator ended it, or its thread was deleted): the round waits for the
    organiser's award, and the tournament's message says so rather than standing still
    unexplained."""
    detail = f"{table.round}:{table.board}"
    if any(a.action == "unresolved" and a.detail == detail for a in state.log):
        return state
    return state.logged(ended_at, state.organiser_id, "unresolved", detail)


def _result_of(game: GameRecord, table: Table) -> Table | None:
    """The table decided by its finished game; None for a game a moderator ended (it waits
    for the organiser's award)."""
    if game.end_reason is EndReason.ENDED:
        return None
    points = 0.5
    if game.winner is not None:
        # By mark, not by id: the table's X plays X, and one of them may be a forgotten
        # member's placeholder in the game and not yet in the table.
        points = 1.0 if game.winner is Mark.X else 0.0
    forfeit = game.end_reason is EndReason.TIMEOUT
    return dataclasses.replace(table, x_points=points, forfeit=forfeit)
