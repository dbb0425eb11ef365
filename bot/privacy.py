"""Members' data: what the bot keeps about a member (``/ttt my-data``), forgetting it
(``/ttt forget-me``), and erasing a server's data at its admins' request. No Discord imports.

What is kept about a member: their id and the name they had, in every game and challenge
they played or were challenged to; their records and ratings, per server (``0``: outside
servers) and board size. Forgetting them, after they confirm, does everything at once,
everywhere, and cannot be undone:

- a live game of theirs whose turn clock already ran out is settled first, as the sweeper
  would (the player who was waiting gets the win they are owed; in a channel deleted since,
  it ends for nobody);
- in one transaction (:meth:`bot.storage.base.Storage.forget_member`): their id and name in
  every game and challenge become a placeholder (a negative id of their own, shown as "a
  deleted member"), so that the other players' records and ratings still add up from the
  games; their other live games end, counting for nobody, and their pending challenges close;
  their stats and ratings are deleted.

The caller then shows the ended games and closed challenges on their messages; a message
that cannot be edited changes nothing of what was forgotten. Messages the bot posted before
(finished boards in channels) keep the name they were drawn with: they belong to the channel.

A confirmation is a button that carries who asked (or which server) and when: it works for
:data:`CONFIRMATION_LIFETIME` only, so an old one found in a client later deletes nothing.

When the database fails (locked by another process past the busy timeout, down, the
connection lost), the member is told what became of their data: nothing deleted when the
failure came before anything was written, and otherwise that it may or may not have gone
through; in both cases that asking again is safe, as it is: forgetting a member or erasing a
server a second time deletes what is left, or nothing, and says which.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

from bot.clock import Clock
from bot.domain import OUTSIDE_SERVERS, UserError
from bot.i18n import N_
from bot.service import GameService
from bot.storage.base import (
    ChallengeRecord,
    DatabaseUnavailableError,
    Forgotten,
    GameRecord,
    GuildErased,
    MemberData,
    Storage,
)
from bot.tournaments.state import NewerTournamentError, loads

log = logging.getLogger(__name__)

# How long a confirmation button works after it was shown: long enough to read it, short
# enough that a forgotten one does not delete the data of a later day.
CONFIRMATION_LIFETIME = 10 * 60

NOTHING_STORED = N_("I keep nothing about you: there is nothing to delete.")
EXPIRED = N_("This confirmation has expired, so nothing was deleted: ask again.")
# What a deletion the database failed did, and that asking again is safe.
NOT_FORGOTTEN = N_(
    "Nothing was deleted: the database did not answer (it may be busy or down). Asking again "
    "is safe: click **Delete my data** again in a moment, or use `/ttt forget-me`."
)
MAYBE_FORGOTTEN = N_(
    "The database failed while deleting your data, so I can't tell whether it went through. "
    "Asking again is safe: click **Delete my data** again, and it says whether anything was "
    "left to delete; `/ttt my-data` shows what I keep."
)
# A forget-me whose games and stats went, meeting a tournament that a newer version of the bot
# changed (a rolling upgrade under way), which this version cannot change.
FORGOTTEN_BUT_A_NEWER_TOURNAMENT = N_(
    "Your games and stats are deleted, but a tournament you entered was just changed by a "
    "newer version of the bot, which is being rolled out: click **Delete my data** again in "
    "a minute to take you out of it."
)
# /ttt my-data meeting such a tournament: the names its entry keeps cannot be read yet, and a
# partial answer would not be everything stored.
DATA_IN_A_NEWER_TOURNAMENT = N_(
    "A tournament you entered was just changed by a newer version of the bot, which is being "
    "rolled out, so I can't show everything I keep about you yet: try `/ttt my-data` again in "
    "a minute."
)
NOT_ERASED = N_(
    "Nothing was deleted: the database did not answer (it may be busy or down). Asking again "
    "is safe: click **Delete this server's data** again in a moment, or use "
    "`/ttt-settings erase-data`."
)
MAYBE_ERASED = N_(
    "The database failed while deleting this server's data, so I can't tell whether it went "
    "through. Asking again is safe: click **Delete this server's data** again, and it says "
    "whether anything was left to delete."
)


@dataclass(frozen=True, slots=True)
class Forgetting:
    """A member forgotten: what storage did, and the games and challenges whose messages
    must now show it (ended or timed out, closed), as stored after."""

    forgotten: Forgotten
    games: tuple[GameRecord, ...]
    challenges: tuple[ChallengeRecord, ...]


class MembersData:
    """The members'-data rules. One per bot process, beside the :class:`GameService` whose
    copies of games it keeps true."""

    def __init__(self, storage: Storage, clock: Clock, games: GameService) -> None:
        self.storage = storage
        self.clock = clock
        self.games = games

    async def of_member(self, user_id: int) -> MemberData:
        """``/ttt my-data``: everything stored about the member, with the names their
        tournament entries keep beside those of their games and challenges."""
        data = await self.storage.member_data(user_id)
        if not data.tournaments:
            return data
        names = set(data.names)
        for tournament_id in await self.storage.tournaments_of_member(user_id):
            record = await self.storage.get_tournament(tournament_id)
            try:
                entry = None if record is None else loads(record.state).entry(user_id)
            except NewerTournamentError:
                raise UserError(DATA_IN_A_NEWER_TOURNAMENT) from None
            if entry is not None:
                names.add(entry.name)
        return dataclasses.replace(data, names=tuple(sorted(names)))

    async def to_forget(self, user_id: int) -> MemberData:
        """``/ttt forget-me``: what would be forgotten; a UserError if nothing is stored."""
        data = await self.storage.member_data(user_id)
        if data.is_empty:
            raise UserError(NOTHING_STORED)
        return data

    def check_confirmation(self, asked_at: int) -> None:
        """Refuse a confirmation shown more than :data:`CONFIRMATION_LIFETIME` ago (or, from
        a hand-made button, dated ahead of the clock)."""
        age = self.clock.now() - asked_at
        if not -60 <= age <= CONFIRMATION_LIFETIME:
            raise UserError(EXPIRED)

    async def forget(self, user_id: int, asked_at: int) -> Forgetting:
        """Forget the member everywhere (see the module's docstring), once they confirmed the
        question shown at ``asked_at``. Forgetting a member with nothing stored (a second
        click) changes nothing anyone can see."""
        self.check_confirmation(asked_at)
        about = f"forget user {user_id}"
        try:
            # Nothing of theirs is deleted before forget_member: a failure here deleted nothing.
            timed_out = await self.games.time_out_overdue_of(user_id)
            forgotten = await self.storage.forget_member(user_id, self.clock.now())
        except DatabaseUnavailableError as error:
            raise _failed(about, error, NOT_FORGOTTEN, MAYBE_FORGOTTEN) from None
        placeholder = forgotten.placeholder_id
        self.games.drop_copies(lambda game: user_id in (game.x_id, game.o_id))
        shown = list(forgotten.ended)
        try:
            for game in timed_out:
                stored = await self.storage.get_game(game.id)  # as forgotten: the placeholder
                if stored is not None:
                    shown.append(stored)
        except DatabaseUnavailableError as error:
            # Forgotten all the same: those boards keep their timeout, without the placeholder.
            log.warning("forgot user %s, but could not read their games back: %s", user_id, error)
        log.info(
            "forgot a member as %s: %d games, %d challenges, %d stats rows; ended %s",
            placeholder,
            forgotten.games,
            forgotten.challenges,
            forgotten.stats_rows,
            [game.id for game in shown],
        )
        return Forgetting(forgotten, tuple(shown), forgotten.closed)

    async def erase_guild(self, guild_id: int, asked_at: int) -> GuildErased:
        """Delete the server's games, challenges, stats and ratings, once an admin confirmed
        the question shown at ``asked_at`` (the caller checked they may)."""
        if guild_id == OUTSIDE_SERVERS:
            raise UserError("That only works in a server.")
        self.check_confirmation(asked_at)
        try:
            erased = await self.storage.erase_guild(guild_id)
        except DatabaseUnavailableError as error:
            raise _failed(f"erase guild {guild_id}", error, NOT_ERASED, MAYBE_ERASED) from None
        self.games.drop_copies(lambda game: game.guild_id == guild_id)
        log.info(
            "erased guild %s: %d games, %d challenges, %d stats rows",
            guild_id,
            erased.games,
            erased.challenges,
            erased.stats_rows,
        )
        return erased


def _failed(
    about: str, error: DatabaseUnavailableError, nothing_deleted: str, maybe_deleted: str
) -> UserError:
    """What to tell a member whose deletion the database failed, logged as one line: an
    outage is no bug of the bot's."""
    if error.nothing_written:
        log.warning("could not %s: the database failed, nothing was deleted: %s", about, error)
        return UserError(nothing_deleted)
    log.warning(
        "could not %s: the database failed while committing, it may or may not have gone"
        " through: %s",
        about,
        error,
    )
    return UserError(maybe_deleted)
