"""bot.threads' own rules, apart from Discord: what it keeps of a lost thread (the end-to-end
thread tests are in test_bot_server_settings.py, and across serve workers in
test_bot_workers.py)."""

from __future__ import annotations

import hashlib
from typing import cast

import discord

from bot.clock import ManualClock
from bot.storage.base import Storage
from bot.threads import ThreadKeeper, name_digest


class _NotedSuspects:
    """The one storage call :meth:`ThreadKeeper.suspect` makes, recorded."""

    def __init__(self) -> None:
        self.noted: list[tuple[int, str | None, int | None]] = []

    async def suspect_thread(
        self, channel_id: int, now: float, *, name: str | None = None, thread_id: int | None = None
    ) -> None:
        self.noted.append((channel_id, name, thread_id))


async def test_a_lost_threads_name_is_stored_as_a_digest_not_the_players_names() -> None:
    """A lost thread is looked for by its name, which is the players' names: the database gets
    its SHA-256 only (a week's row that neither /ttt forget-me nor a server's erase reads)."""
    storage = _NotedSuspects()
    keeper = ThreadKeeper(cast(discord.Client, None), cast(Storage, storage), ManualClock(0))
    await keeper.suspect(7, name="alice vs bob")
    await keeper.suspect(7, thread_id=99)
    assert storage.noted == [
        (7, hashlib.sha256(b"alice vs bob").hexdigest(), None),
        (7, None, 99),
    ]
    assert name_digest("alice vs bob") == storage.noted[0][1]
