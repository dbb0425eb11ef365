"""Tournaments' rounds, run in Discord by the sweeper of the process whose shards hold their
server: results copied from finished games, the next round paired (by the service), each of its
games opened in a thread of its own off the host channel with its two players pinged there
once, the tournament's message kept current, and the podium posted once at the end.

Every step can be cut short by a restart, and another process may run the same step at the
same moment: each is safe to repeat. A table's thread is noted in the tournament before its
game starts (a thread another process noted first wins, and this one's is removed); a table's
game is stored only if it has none (the database's key), and pinged only by whoever stored it.
A process killed between opening a thread and noting it leaves that thread empty: the next
sweep opens another.
"""

from __future__ import annotations

import logging

import discord

from bot import render
from bot.answers import ANSWER_FAILURES
from bot.boards import Boards
from bot.clock import Clock
from bot.domain import Actor
from bot.i18n import language
from bot.render.tournaments import (
    final_message,
    round_ping_message,
    thread_name,
    tournament_message,
)
from bot.service import GameService
from bot.storage.base import (
    DatabaseUnavailableError,
    GameRecord,
    ShardSlice,
    Storage,
    StorageError,
    TournamentRecord,
    TournamentStatus,
)
from bot.threads import AUTO_ARCHIVE_MINUTES
from bot.tournaments.service import Tournament, TournamentService
from bot.tournaments.state import NewerTournamentError, Table

log = logging.getLogger(__name__)

# How long a tournament whose thread Discord refused waits before the next try (a deleted host
# channel, a permission taken away): one warning, not one every sweep.
THREAD_RETRY_SECONDS = 60.0
# How many times in a row the tournament's message is edited to catch up with changes other
# workers save meanwhile: each of them edits it after its own change too.
SHOW_TRIES = 3


class TournamentRounds:
    """Runs this process's shards' tournaments: :meth:`sweep` at each of the sweeper's turns,
    and :meth:`show` after a member's change."""

    def __init__(
        self,
        client: discord.Client,
        storage: Storage,
        service: TournamentService,
        games: GameService,
        boards: Boards,
        clock: Clock,
        shards: ShardSlice,
    ) -> None:
        self._client = client
        self._storage = storage
        self._service = service
        self._games = games
        self._boards = boards
        self._clock = clock
        self._shards = shards
        # When Discord last refused a thread of each tournament: its games wait a while.
        self._refused: dict[int, float] = {}
        # The tournaments whose message this process edited since it started: a process
        # killed after saving a change and before showing it left that message behind, and
        # its successor's first pass shows each one it runs, changed or not.
        self._shown: set[int] = set()

    async def sweep(self) -> None:
        """Move every due tournament on; one that fails is logged and tried at the next."""
        for tournament_id in await self._storage.due_tournaments(self._clock.now(), self._shards):
            try:
                await self.run(tournament_id)
            except DatabaseUnavailableError as error:
                # An outage, not a bug: one line, no traceback, as the sweeper logs one.
                log.warning(
                    "running tournament %s failed, the database is unavailable (%s); trying "
                    "again later",
                    tournament_id,
                    error,
                )
            except NewerTournamentError as error:
                # A rolling upgrade under way: the newer version's processes run it.
                log.info(
                    "tournament %s is left to the newer version of the bot that wrote it "
                    "(document schema %s)",
                    tournament_id,
                    error.schema,
                )
            except Exception:
                log.exception("running tournament %s failed; trying again later", tournament_id)

    async def run(self, tournament_id: int) -> None:
        before = await self._service.get(tournament_id)
        after = await self._service.progress(tournament_id)
        if before is None or after is None:
            return
        if after.status in (TournamentStatus.RUNNING, TournamentStatus.PAUSED):
            await self._open_games(after)
        # A finished tournament without its podium may have been saved by a process killed
        # (or failed) before it showed its end: shown again with the podium.
        finishing = after.status is TournamentStatus.FINISHED and not after.state.final_posted
        changed = after.record.version != before.record.version
        if changed or finishing or after.id not in self._shown:
            await self.show(after)
        if finishing:
            await self._post_final(after)

    async def follow(self, tournament: Tournament) -> None:
        """After a change a member made and was told of: show it, and move the tournament on
        (the round's games opened, the next round paired). The change is saved and answered
        already, so a database failing here is a WARNING, not an answer saying nothing was
        done; the sweeper's next pass does the same steps."""
        try:
            await self.show(tournament)
            await self.run(tournament.id)
        except DatabaseUnavailableError as error:
            log.warning(
                "tournament %s: could not move on after a change, leaving it to the sweeper: %s",
                tournament.id,
                error,
            )
        except NewerTournamentError:
            # Changed since by a newer version (a rolling upgrade): it shows and runs it.
            log.info("tournament %s: moved on by a newer version of the bot", tournament.id)

    async def end_forfeited_game(self, tournament: Tournament, user_id: int) -> None:
        """End the live game of the round of a player just withdrawn (left or removed) as
        their loss: their table is the opponent's by forfeit, and the game in its thread
        would otherwise go on with nothing at stake, its clock running against the opponent
        and its result rated against the tournament's."""
        table = tournament.state.current_table_of(user_id)
        if table is None or not table.forfeit:
            return
        await self._end_decided_game(tournament, table.round, table.board, user_id)

    async def end_awarded_game(self, tournament: Tournament, round_number: int, board: int) -> None:
        """End the live game of a table the organiser just awarded, for nobody: the award is
        its result, and the game would otherwise go on, its clock running and its end rated
        beside the award."""
        await self._end_decided_game(tournament, round_number, board, None)

    async def _end_decided_game(
        self, tournament: Tournament, round_number: int, board: int, loser: int | None
    ) -> None:
        game_id = tournament.record.games.get((round_number, board))
        if game_id is None:
            return
        try:
            ended = await self._games.end_decided(game_id, loser)
        except DatabaseUnavailableError as error:
            # The table's decision is saved already: the answer must not say nothing was done.
            # The game goes on to its own end, counted as any game.
            log.warning(
                "tournament %s: could not end game %s of a decided table: %s",
                tournament.id,
                game_id,
                error,
            )
            return
        if ended is not None:
            log.info("tournament %s: game %s ended, its table decided", tournament.id, game_id)
            await self._boards.show_ended([ended], [])

    async def show(self, tournament: Tournament) -> None:
        """Bring the tournament's message up to date (logged if it cannot be): to
        ``tournament``, then to what another worker saved meanwhile, if anything, so that the
        last edit to arrive is never of an older state than the stored one."""
        self._shown.add(tournament.id)
        for _ in range(SHOW_TRIES):
            message_id = tournament.state.announcement_id
            if message_id is None:
                return
            await self._boards.edit(
                tournament.record.channel_id, message_id, self.message(tournament), reaches=True
            )
            newer = await self._newer(tournament)
            if newer is None:
                return
            tournament = newer

    async def show_erased(self, record: TournamentRecord) -> None:
        """The tournament was deleted with its server's data: its message loses its buttons
        and says so (a click there would find no tournament). One a newer version of the bot
        wrote is left as it is (its message's id is in what this version cannot read)."""
        try:
            tournament = Tournament.of(record)
        except NewerTournamentError:
            log.info("tournament %s was erased; its message is left as it was", record.id)
            return
        message_id = tournament.state.announcement_id
        if message_id is None:
            return
        lang = language(tournament.state.rules.language)
        message = render.erased_tournament_message(lang)
        await self._boards.edit(tournament.record.channel_id, message_id, message, reaches=True)

    async def show_if_changed(self, tournament: Tournament) -> None:
        """An answer just showed ``tournament``: edit its message again if another worker
        saved a change meanwhile (a member's join answered there before this answer), which
        this answer may have put an older state over."""
        newer = await self._newer(tournament)
        if newer is not None:
            await self.show(newer)

    async def _newer(self, tournament: Tournament) -> Tournament | None:
        """The tournament as stored if a change was saved since ``tournament``; None if not,
        or if the database fails here (its message stays as shown)."""
        try:
            stored = await self._service.get(tournament.id)
        except (StorageError, NewerTournamentError) as error:
            log.info("could not read tournament %s again: %r", tournament.id, error)
            return None
        if stored is None or stored.record.version <= tournament.record.version:
            return None
        return stored

    def message(self, tournament: Tournament) -> render.Message:
        state = tournament.state
        lang = language(state.rules.language)
        return tournament_message(tournament.id, tournament.status, state, state.standings(), lang)

    async def _open_games(self, tournament: Tournament) -> None:
        refused_at = self._refused.get(tournament.id)
        # A wall clock stepped back since the refusal counts as long ago: the tournament is
        # not held until the clock catches up with the refusal's time.
        if refused_at is not None and 0 <= self._clock.now() - refused_at < THREAD_RETRY_SECONDS:
            return
        state = tournament.state
        for table in state.round_tables(state.current_round):
            if table.o is None or table.decided:
                continue
            if (table.round, table.board) in tournament.record.games:
                continue
            await self._open_game(tournament, table)

    async def _open_game(self, tournament: Tournament, table: Table) -> None:
        state = tournament.state
        thread_id = table.thread_id
        if thread_id is None:
            claimed = await self._service.claim_table(tournament.id, table.round, table.board)
            if claimed is None:
                return  # another process is opening it
            thread_id = claimed.thread_id
        if thread_id is None:
            thread_id = await self._open_thread(tournament, table)
            if thread_id is None:
                return
            noted = await self._service.set_table_thread(
                tournament.id, table.round, table.board, thread_id
            )
            if noted is None:  # another process noted its own first: that one is the table's
                await self._remove_thread(thread_id)
                return
        x, o = state.entry(table.x), state.entry(table.o or 0)
        assert x is not None  # a table's players entered
        assert o is not None
        rules = state.rules
        game = await self._games.tournament_game(
            tournament.record.guild_id,
            thread_id,
            Actor(x.user_id, x.name),
            Actor(o.user_id, o.name),
            size=rules.size,
            language=rules.language,
            turn_timeout=rules.turn_timeout,
        )
        stored = await self._storage.start_tournament_game(
            tournament.id, table.round, table.board, game
        )
        if stored is None:
            return  # another process started it, and pings
        log.info(
            "tournament %s: round %s table %s is game %s",
            tournament.id,
            table.round,
            table.board,
            stored.id,
        )
        lang = language(rules.language)
        await self._boards.post(thread_id, round_ping_message(state, table, lang))
        await self._boards.post_in_own_thread(stored)

    async def ping_before_late_board(self, game: GameRecord) -> render.Message | None:
        """The ping of its players, for a round's game whose board is shown late (saved
        without its message: the process was killed after starting it, or Discord refused
        the board and, likely, the ping before it); None for any other game. Without it the
        players would not know their game began, and the clock would forfeit one of them."""
        if not game.own_thread:
            return None
        tournament_id = await self._storage.tournament_of_thread(game.channel_id)
        if tournament_id is None:
            return None
        try:
            tournament = await self._service.get(tournament_id)
        except NewerTournamentError:
            return None  # its newer processes show it
        if tournament is None:
            return None
        key = next((k for k, played in tournament.record.games.items() if played == game.id), None)
        table = None if key is None else tournament.state.table(*key)
        if table is None or table.o is None:
            return None
        state = tournament.state
        return round_ping_message(state, table, language(state.rules.language))

    async def _open_thread(self, tournament: Tournament, table: Table) -> int | None:
        try:
            thread = await self._client.http.start_thread_without_message(
                tournament.record.channel_id,
                name=thread_name(tournament.state, table),
                auto_archive_duration=AUTO_ARCHIVE_MINUTES,
                type=discord.ChannelType.public_thread.value,
            )
        except ANSWER_FAILURES as error:
            again = tournament.id in self._refused
            self._refused[tournament.id] = self._clock.now()
            log.log(
                logging.INFO if again else logging.WARNING,
                "tournament %s: could not open the thread of round %s table %s (trying again "
                "in %d s): %s",
                tournament.id,
                table.round,
                table.board,
                THREAD_RETRY_SECONDS,
                error,
            )
            return None
        self._refused.pop(tournament.id, None)
        return int(thread["id"])

    async def _remove_thread(self, thread_id: int) -> None:
        """Archive a thread opened for a table another process opened one for (after a lease
        ran out on a slow process): the bot may archive the threads it opened."""
        try:
            await self._client.http.edit_channel(thread_id, archived=True)
        except ANSWER_FAILURES as error:
            log.info("could not archive the spare thread %s: %s", thread_id, error)

    async def _post_final(self, tournament: Tournament) -> None:
        if not await self._service.note_final_posted(tournament.id):
            return  # posted by another process, or before a restart
        state = tournament.state
        lang = language(state.rules.language)
        table = state.standings()
        message = final_message(tournament.id, state, table, lang)
        await self._boards.post(tournament.record.channel_id, message)
