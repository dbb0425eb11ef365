"""A process that pairs a tournament's next round and dies before it commits, for the test of
a process killed while pairing (``tests/test_bot_tournaments.py``):

    python -m tests.tournament_pairing_process DATABASE_URL TOURNAMENT_ID

It runs the bot's own service on PostgreSQL, but its save writes the new round inside a
transaction it never commits: it prints ``paired round N`` and waits, holding the row, until
the test kills it with SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from bot.clock import SystemClock
from bot.config import parse_database_url
from bot.server_settings import SettingsService
from bot.storage.base import TournamentRecord
from bot.storage.connect import open_storage
from bot.storage.postgres import SQL, PostgresStorage
from bot.tournaments import state as doc
from bot.tournaments.service import TournamentService


async def pair_and_hang(url: str, tournament_id: int) -> None:
    storage = await open_storage(parse_database_url(url), SystemClock())
    assert isinstance(storage, PostgresStorage)

    async def written_never_committed(
        tournament: TournamentRecord, *, status: Any, due_at: Any, state: str, now: float
    ) -> None:
        async with storage.transaction() as db:
            row = await db.fetchrow(
                SQL.save_tournament,
                status.value,
                due_at,
                state,
                now,
                tournament.id,
                tournament.version,
            )
            assert row is not None, "the tournament changed before this process paired it"
            print(f"paired round {doc.loads(state).current_round}", flush=True)
            await asyncio.Event().wait()  # killed here, the transaction open

    storage.save_tournament = written_never_committed  # type: ignore[method-assign]
    service = TournamentService(storage, SystemClock(), SettingsService(storage, SystemClock()))
    await service.progress(tournament_id)


if __name__ == "__main__":
    asyncio.run(pair_and_hang(sys.argv[1], int(sys.argv[2])))
