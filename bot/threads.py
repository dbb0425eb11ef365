"""Games' threads of their own, at Discord's end: opened off a channel for a game, a sentence
when Discord refuses one, found again after the connection dropped while one was being opened,
and removed when their game did not start.

The service decides when a game gets a thread and calls this through its port
(:class:`bot.service.GameThreads`); a :class:`ThreadKeeper` per process keeps what it must
look at again:

- A refusal gets a sentence that says what to do, and a WARNING line without a traceback:
  Discord's 403 (50013: a permission the bot lacks there) and 160006 (the server has as many
  active threads as Discord allows, 1,000).
- A dropped connection leaves the bot unable to tell whether Discord made the thread. It lists
  the server's active threads at once: an empty thread the bot made off that channel, of the
  name it asked for and holding no game, is the one, and the game starts in it. If none is
  listed (or the list cannot be read), the member hears that the bot cannot tell, and the next
  thread opened off that channel (by anyone) looks again first: the one of its name is taken,
  any other is removed.
- A thread opened for a game that then did not start (the limit on live games, a refusal of
  the database) is empty: it is deleted where the server lets the bot manage threads, and
  archived otherwise (the bot may archive the threads it opened), which takes it off the
  channel's list and out of the server's count of active threads. Where the failure leaves it
  unknown whether the game was stored, the thread is looked at again before the next one
  there: holding no game by then, it is taken for that next game if of its name, else
  removed.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp
import discord

from bot.answers import ANSWER_FAILURES
from bot.domain import UserError
from bot.i18n import N_
from bot.permissions import may_open_thread
from bot.storage.base import Storage

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


@dataclass
class _Suspects:
    """Threads off one channel that may be empty and the bot's: by name, those a dropped
    connection may have made (their ids unknown); by id, those whose game may not be stored."""

    names: set[str] = field(default_factory=set)
    ids: set[int] = field(default_factory=set)


class ThreadKeeper:
    """Opens games' threads and keeps, per channel, the threads to look at again; one per
    process. Over the gateway a guild's interactions all come to the process of its shard;
    under ``serve`` another worker does not know what this one keeps (docs/design.md, "What
    a serve worker keeps in its own memory")."""

    def __init__(self, client: discord.Client, storage: Storage) -> None:
        self.client = client
        self.storage = storage
        self._suspects: dict[int, _Suspects] = {}
        # Threads just opened or taken for a game, and when (time.monotonic()).
        self._claimed: dict[int, float] = {}

    def off(self, interaction: discord.Interaction[Any], channel_id: int) -> ChannelThreads:
        """The threads off ``channel_id`` (a text channel of a server), for ``interaction``."""
        return ChannelThreads(self, interaction, channel_id)

    def claim(self, thread_id: int) -> None:
        now = time.monotonic()
        self._claimed = {
            claimed: since
            for claimed, since in self._claimed.items()
            if now - since < CLAIM_SECONDS
        }
        self._claimed[thread_id] = now

    def release(self, thread_id: int) -> None:
        self._claimed.pop(thread_id, None)

    def is_claimed(self, thread_id: int) -> bool:
        since = self._claimed.get(thread_id)
        return since is not None and time.monotonic() - since < CLAIM_SECONDS

    def suspects(self, channel_id: int) -> _Suspects:
        return self._suspects.setdefault(channel_id, _Suspects())

    def has_suspects(self, channel_id: int) -> bool:
        return channel_id in self._suspects

    def take_suspects(self, channel_id: int) -> _Suspects:
        return self._suspects.pop(channel_id, _Suspects())


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
        channel_id = self._channel_id
        if self._keeper.has_suspects(channel_id):
            found = await self._tidy(name)
            if found is not None:
                return found
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
            log.warning(
                "no answer from Discord to opening thread %r off channel %s (%r): looking for it",
                name,
                channel_id,
                error,
            )
            self._keeper.suspects(channel_id).names.add(name)
            found = await self._tidy(name)
            if found is not None:
                return found
            # Not listed (or no list): Discord may list it later, so it is looked for again
            # before the next thread off this channel.
            self._keeper.suspects(channel_id).names.add(name)
            raise UserError(THREAD_UNSURE) from None
        thread_id = int(thread["id"])
        self._keeper.claim(thread_id)
        log.info("opened thread %s off channel %s", thread_id, channel_id)
        return thread_id

    async def discard(self, thread_id: int, *, stored_nothing: bool) -> None:
        self._keeper.release(thread_id)
        if stored_nothing:
            await self._remove(thread_id)
            return
        log.info("thread %s: its game may not have been stored; looked at again later", thread_id)
        self._keeper.suspects(self._channel_id).ids.add(thread_id)

    async def _tidy(self, name: str) -> int | None:
        """Look at the channel's suspected threads in the server's list of active threads: an
        empty one of the bot's named ``name`` and holding no game is taken (its id returned),
        the other empty ones removed. None, and the suspects kept, if the list cannot be read."""
        guild_id = self._interaction.guild_id
        assert guild_id is not None  # threads are opened in servers only
        try:
            listed = await self._http.get_active_threads(guild_id)
        except ANSWER_FAILURES as error:
            log.info("could not list the active threads of guild %s: %r", guild_id, error)
            return None
        suspects = self._keeper.take_suspects(self._channel_id)
        found = None
        for thread in listed.get("threads", []):
            thread_id = int(thread["id"])
            if not self._left_empty(thread, suspects) or await self._holds_a_game(thread_id):
                continue
            if found is None and thread.get("name") == name:
                self._keeper.claim(thread_id)
                log.info("taking empty thread %s off channel %s", thread_id, self._channel_id)
                found = thread_id
            else:
                await self._remove(thread_id)
        return found

    def _left_empty(self, thread: Any, suspects: _Suspects) -> bool:
        """Whether ``thread`` (as Discord lists it) is one of ``suspects``, off this channel,
        made by the bot, without a message, and not just opened for a game."""
        bot = self._keeper.client.user
        return (
            thread.get("parent_id") == str(self._channel_id)
            and bot is not None
            and thread.get("owner_id") == str(bot.id)
            and (thread.get("name") in suspects.names or int(thread["id"]) in suspects.ids)
            and not thread.get("last_message_id")
            and not thread.get("message_count")
            and not self._keeper.is_claimed(int(thread["id"]))
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
