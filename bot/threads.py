"""Games' threads of their own, at Discord's end: opened off a channel for a game, a sentence
when Discord refuses one, found again after the connection dropped while one was being opened,
and removed when their game did not start.

The service decides when a game gets a thread and calls this through its port
(:class:`bot.service.GameThreads`); a :class:`ThreadKeeper` keeps what it must look at again
in the database (migration 0016), where every process sees it: under ``python -m bot serve``
the next start in a channel may come to any worker.

- A refusal gets a sentence that says what to do, and a WARNING line without a traceback:
  Discord's 403 (50013: a permission the bot lacks there) and 160006 (the server has as many
  active threads as Discord allows, 1,000).
- A dropped connection leaves the bot unable to tell whether Discord made the thread. It lists
  the server's active threads at once: an empty thread the bot made off that channel, of the
  name it asked for and holding no game, is the one, and the game starts in it. If none is
  listed (or the list cannot be read), the member hears that the bot cannot tell, and the next
  thread opened off that channel (by anyone, on any worker) looks again first: the one of its
  name is taken, any other is removed.
- A thread opened for a game that then did not start (the limit on live games, a refusal of
  the database) is empty: it is deleted where the server lets the bot manage threads, and
  archived otherwise (the bot may archive the threads it opened), which takes it off the
  channel's list and out of the server's count of active threads. Where the failure leaves it
  unknown whether the game was stored, the thread is looked at again before the next one
  there: holding no game by then, it is taken for that next game if of its name, else
  removed.
- A thread just opened (or taken) for a game is claimed for :data:`CLAIM_SECONDS`, a row every
  worker reads: that search spares it while its game is being stored. The claim is a
  compare-and-set, and the search claims each thread it takes or removes first: of two
  workers, one acts on a thread. A search that claimed a fresh thread of its name before the
  worker that opened it (in the moment between Discord's answer and that worker's claim) has
  it; that worker opens another.

What this costs: a read before each thread is opened (whether the channel has suspects) and a
write after (the claim); the rest only after a dropped connection or a failed start. Nothing
on a click. The sweeper forgets claims that ran out and suspects older than an idle thread
stays active (:data:`SUSPECTS_KEPT_SECONDS`).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, Final

import aiohttp
import discord

from bot.answers import ANSWER_FAILURES
from bot.clock import Clock
from bot.domain import UserError
from bot.i18n import N_
from bot.permissions import may_open_thread
from bot.storage.base import Storage, StorageError, ThreadSuspects

log = logging.getLogger(__name__)

# Discord's answers to a thread it will not open: a permission the bot lacks (403, with its
# code 50013, or 50001 for a channel it may not see), a server at its limit of active threads
# (400, code 160006).
FORBIDDEN = 403
MAX_ACTIVE_THREADS = 160006
# The longest Discord allows: a live game's thread must not close under it.
AUTO_ARCHIVE_MINUTES: Final = 10080
# A thread just opened for a game is its own while the game is stored (a write waits 10 s at
# most for the database): the search for empty threads leaves it alone meanwhile.
CLAIM_SECONDS = 60.0
# A thread idle this long is archived by Discord and no longer listed among the active ones:
# a suspect older than that would not be found, so the sweeper forgets it.
SUSPECTS_KEPT_SECONDS: Final = AUTO_ARCHIVE_MINUTES * 60.0
# What a request that got no answer fails with: Discord may have applied it.
NO_ANSWER = (aiohttp.ClientError, OSError, TimeoutError)

# Where a server plays games in threads but the bot may not open one in this channel.
NO_THREADS = N_(
    "This server plays each game in a thread of its own, but I can't open threads here: I "
    "need Create Public Threads and Send Messages in Threads in this channel (or an admin "
    "can turn games in threads off)."
)
# Discord refused the thread for a permission, though the interaction said the bot had it.
THREAD_FORBIDDEN = N_(
    "Discord refused to open a thread for this game: I am missing a permission in this "
    "channel (Create Public Threads, and Send Messages in Threads to play there). An admin can "
    "grant it, or turn games in threads off with `/ttt-settings threads`. Nothing has started."
)
THREADS_FULL = N_(
    "This server has as many active threads as Discord allows (1,000), so I can't open one "
    "for this game. Archiving some threads makes room, or an admin can turn games in threads "
    "off with `/ttt-settings threads`. Nothing has started."
)
THREAD_UNSURE = N_(
    "The connection to Discord dropped while I was opening this game's thread, so I can't tell "
    "whether it was made. Nothing has started: try again, and I will use that thread if it was."
)


async def forget_old(storage: Storage, now: float) -> int:
    """Forget the claims that ran out by ``now`` and the suspects Discord no longer lists (the
    sweeper): how many."""
    return await storage.prune_threads(now - SUSPECTS_KEPT_SECONDS, now - CLAIM_SECONDS)


def name_digest(name: str) -> str:
    """What is kept of a lost thread's name, the players' names (``alice vs bob``): its
    SHA-256, enough to know the thread again in Discord's list, and no member's name in the
    database for a week where neither ``/ttt forget-me`` nor a server's erase would look."""
    return hashlib.sha256(name.encode()).hexdigest()


def not_looked_at(suspects: ThreadSuspects, seen: list[Any], unseen: list[Any]) -> ThreadSuspects:
    """What a search that stopped midway still had to deal with of ``suspects``, having looked
    at the listed threads ``seen`` and not at ``unseen``: a suspect only seen threads bore is
    done; one an unseen thread bears, or none of the list (Discord may list it later, as after
    a dropped connection), is not."""

    def names(threads: list[Any]) -> set[str]:
        return {name_digest(str(thread.get("name", ""))) for thread in threads}

    return ThreadSuspects(
        names=frozenset(suspects.names - (names(seen) - names(unseen))),
        ids=frozenset(suspects.ids - {int(thread["id"]) for thread in seen}),
    )


class ThreadKeeper:
    """Opens games' threads, and keeps in the database, per channel, the threads to look at
    again and the claims on threads just opened: what one worker keeps, every worker sees
    (docs/design.md, "What a serve worker keeps in its own memory")."""

    def __init__(self, client: discord.Client, storage: Storage, clock: Clock) -> None:
        self.client = client
        self.storage = storage
        self.clock = clock

    def off(self, interaction: discord.Interaction[Any], channel_id: int) -> ChannelThreads:
        """The threads off ``channel_id`` (a text channel of a server), for ``interaction``."""
        return ChannelThreads(self, interaction, channel_id)

    async def claim(self, channel_id: int, thread_id: int) -> bool:
        """Claim ``thread_id`` for a game: False if another claim holds it."""
        now = self.clock.now()
        return await self.storage.claim_thread(channel_id, thread_id, now, now - CLAIM_SECONDS)

    async def claimed(self, channel_id: int) -> frozenset[int]:
        return await self.storage.claimed_threads(channel_id, self.clock.now() - CLAIM_SECONDS)

    async def release(self, thread_id: int) -> None:
        await self.storage.release_thread(thread_id)

    async def suspect(
        self, channel_id: int, *, name: str | None = None, thread_id: int | None = None
    ) -> None:
        """Note a thread to look at: by id, or by its name's digest (:func:`name_digest`)."""
        await self.storage.suspect_thread(
            channel_id,
            self.clock.now(),
            name=None if name is None else name_digest(name),
            thread_id=thread_id,
        )

    async def has_suspects(self, channel_id: int) -> bool:
        return await self.storage.has_thread_suspects(channel_id)

    async def take_suspects(self, channel_id: int) -> ThreadSuspects:
        return await self.storage.take_thread_suspects(channel_id)

    async def suspect_again(self, channel_id: int, suspects: ThreadSuspects) -> None:
        """Note again ``suspects`` taken by a search that failed before it looked at them
        (their names digests already)."""
        now = self.clock.now()
        for digest in sorted(suspects.names):
            await self.storage.suspect_thread(channel_id, now, name=digest)
        for thread_id in sorted(suspects.ids):
            await self.storage.suspect_thread(channel_id, now, thread_id=thread_id)


class ChannelThreads:
    """:class:`bot.service.GameThreads` off one channel, for one interaction (whose
    permissions say what the bot may do there)."""

    def __init__(
        self, keeper: ThreadKeeper, interaction: discord.Interaction[Any], channel_id: int
    ) -> None:
        self._keeper = keeper
        self._interaction = interaction
        self._channel_id = channel_id

    @property
    def _http(self) -> discord.http.HTTPClient:
        return self._keeper.client.http

    async def open(self, name: str) -> int:
        """A public thread named ``name`` off the channel for a game: an empty one the bot left
        there if one is to be looked for, else a new one."""
        if not may_open_thread(self._interaction.app_permissions):
            raise UserError(NO_THREADS)
        # Read by every start with threads on: the one statement the kept threads cost it.
        if await self._keeper.has_suspects(self._channel_id):
            found = await self._tidy(name)
            if found is not None:
                return found
        for _ in range(2):
            thread_id = await self._new(name)
            if thread_id is not None:
                return thread_id
        # Claimed first twice by other workers' searches for lost threads of this name:
        # nothing started, and trying again is right.
        raise UserError(THREAD_UNSURE)

    async def _new(self, name: str) -> int | None:
        """A new thread named ``name`` (or, the connection dropped, the one Discord made);
        None if another worker's search for a lost thread claimed it before this one could
        (it is that worker's then)."""
        channel_id = self._channel_id
        try:
            thread = await self._http.start_thread_without_message(
                channel_id,
                name=name,
                auto_archive_duration=AUTO_ARCHIVE_MINUTES,
                type=discord.ChannelType.public_thread.value,
            )
        except discord.HTTPException as error:
            if error.status == FORBIDDEN:  # 50013 Missing Permissions, or 50001 Missing Access
                log.warning(
                    "Discord refused a game thread off channel %s: a permission is missing (%s %s)",
                    channel_id,
                    error.code,
                    error.text,
                )
                raise UserError(THREAD_FORBIDDEN) from None
            if error.code == MAX_ACTIVE_THREADS:
                log.warning(
                    "Discord refused a game thread off channel %s: the server has as many "
                    "active threads as it allows (%s)",
                    channel_id,
                    error.text,
                )
                raise UserError(THREADS_FULL) from None
            raise
        except NO_ANSWER as error:
            # Not by its name: that is the players' names, which the logs never hold.
            log.warning(
                "no answer from Discord to opening a game's thread off channel %s (%r):"
                " looking for it",
                channel_id,
                error,
            )
            found = await self._tidy(name, just_lost=True)
            if found is not None:
                return found
            # Not listed (or no list): Discord may list it later, so it is looked for again
            # before the next thread off this channel, by whichever worker opens it.
            await self._note_suspect(name=name)
            raise UserError(THREAD_UNSURE) from None
        thread_id = int(thread["id"])
        if not await self._claim(thread_id):
            log.warning(
                "thread %s off channel %s was claimed by another worker's search before its "
                "game's: opening another",
                thread_id,
                channel_id,
            )
            return None
        log.info("opened thread %s off channel %s", thread_id, channel_id)
        return thread_id

    async def discard(self, thread_id: int, *, stored_nothing: bool) -> None:
        if stored_nothing:
            # Still claimed while it is removed, so that no search takes it meanwhile; the
            # claim, of a thread gone, runs out.
            await self._remove(thread_id)
            return
        try:
            # The next search must not spare it.
            await self._keeper.release(thread_id)
        except StorageError as error:
            log.info("could not give up the claim on thread %s: %r", thread_id, error)
        log.info("thread %s: its game may not have been stored; looked at again later", thread_id)
        await self._note_suspect(thread_id=thread_id)

    async def _claim(self, thread_id: int) -> bool:
        """Claim the thread just opened, so that no worker's search takes or removes it: False
        if a search claimed it first (between Discord's answer and this claim)."""
        try:
            return await self._keeper.claim(self._channel_id, thread_id)
        except StorageError as error:
            # Its game's insert meets the same database: a thread whose game does not start
            # is discarded then.
            log.warning("could not claim thread %s for its game: %r", thread_id, error)
            return True

    async def _note_suspect(self, *, name: str | None = None, thread_id: int | None = None) -> None:
        try:
            await self._keeper.suspect(self._channel_id, name=name, thread_id=thread_id)
        except StorageError as error:
            log.warning(
                "could not note thread %s off channel %s to look at again: %r",
                thread_id if name is None else "lost by its name",  # the players' names
                self._channel_id,
                error,
            )

    async def _tidy(self, name: str, *, just_lost: bool = False) -> int | None:
        """Look at the channel's suspected threads (and, ``just_lost``, the one named ``name``,
        the connection having just dropped while it was opened) in the server's list of
        active threads: an empty one of the bot's named ``name`` and holding no game is taken
        (its id returned), the other empty ones removed. None, and the suspects kept, if the
        list (or the database) cannot be read. The database failing midway raises, as it
        would anywhere in the start (the member gets the usual answer to that): the suspects
        not yet looked at are noted again, and the thread taken, if any, removed."""
        guild_id = self._interaction.guild_id
        assert guild_id is not None  # threads are opened in servers only
        try:
            listed = await self._http.get_active_threads(guild_id)
        except ANSWER_FAILURES as error:
            log.info("could not list the active threads of guild %s: %r", guild_id, error)
            return None
        channel_id = self._channel_id
        suspects = ThreadSuspects()
        try:
            suspects = await self._keeper.take_suspects(channel_id)
            # Read after the list: a thread listed there was opened before, so its claim is
            # made by now or a moment from now, when the claim below decides.
            claimed = await self._keeper.claimed(channel_id)
        except StorageError as error:
            log.warning(
                "could not read the threads to look at off channel %s: %r", channel_id, error
            )
            await self._suspect_again(suspects)  # taken, if the take went through
            return None
        if just_lost:
            suspects = ThreadSuspects(suspects.names | {name_digest(name)}, suspects.ids)
        left = [
            thread for thread in listed.get("threads", []) if self._left_empty(thread, suspects)
        ]
        found = None
        for index, thread in enumerate(left):
            try:
                found = await self._look_at(thread, claimed, name, found)
            except Exception:
                await self._suspect_again(not_looked_at(suspects, left[:index], left[index:]))
                if found is not None:
                    # Claimed, empty, and no game will be stored in it: removed at once,
                    # which asks nothing of the database that just failed.
                    await self._remove(found)
                raise
        return found

    async def _look_at(
        self, thread: Any, claimed: frozenset[int], name: str, found: int | None
    ) -> int | None:
        """Take or remove ``thread``, one the bot left empty (as Discord lists it), unless it
        is claimed or holds a game: the thread taken so far (``found``), or this one if it is
        the first named ``name``."""
        thread_id = int(thread["id"])
        if thread_id in claimed or await self._holds_a_game(thread_id):
            return found
        # Claimed before it is taken or removed: of two workers' searches, one acts on it, and
        # a worker that opened it a moment ago finds its own claim refused.
        if not await self._keeper.claim(self._channel_id, thread_id):
            return found
        if found is None and thread.get("name") == name:
            log.info("taking empty thread %s off channel %s", thread_id, self._channel_id)
            return thread_id
        await self._remove(thread_id)
        return found

    async def _suspect_again(self, suspects: ThreadSuspects) -> None:
        """Best effort: the database has just failed, and the error that says so is the one
        to report, not this one."""
        if not suspects.names and not suspects.ids:
            return
        try:
            await self._keeper.suspect_again(self._channel_id, suspects)
        except StorageError as error:
            log.warning(
                "could not note the threads off channel %s to look at again (%d of them): %r",
                self._channel_id,
                len(suspects.names) + len(suspects.ids),
                error,
            )

    def _left_empty(self, thread: Any, suspects: ThreadSuspects) -> bool:
        """Whether ``thread`` (as Discord lists it) is one of ``suspects``, off this channel,
        made by the bot, and without a message."""
        bot = self._keeper.client.user
        return (
            thread.get("parent_id") == str(self._channel_id)
            and bot is not None
            and thread.get("owner_id") == str(bot.id)
            and (
                name_digest(str(thread.get("name", ""))) in suspects.names
                or int(thread["id"]) in suspects.ids
            )
            and not thread.get("last_message_id")
            and not thread.get("message_count")
        )

    async def _holds_a_game(self, thread_id: int) -> bool:
        storage = self._keeper.storage
        return (
            await storage.live_game_in_channel(thread_id) is not None
            or await storage.finished_game_in_channel(thread_id) is not None
        )

    async def _remove(self, thread_id: int) -> None:
        """Delete the empty thread ``thread_id``, where the bot may manage threads; else
        archive it, as its creator may."""
        try:
            if self._interaction.app_permissions.manage_threads:
                await self._http.delete_channel(thread_id, reason="its game did not start")
                log.info("deleted empty thread %s off channel %s", thread_id, self._channel_id)
            else:
                await self._http.edit_channel(thread_id, archived=True)
                log.info("archived empty thread %s off channel %s", thread_id, self._channel_id)
        except ANSWER_FAILURES as error:
            log.info("could not remove empty thread %s: %r", thread_id, error)
