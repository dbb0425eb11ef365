"""Tournaments' rules on a real storage, where the end-to-end tests cannot time a race."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.clock import ManualClock
from bot.config import DatabaseUrl
from bot.domain import Actor, UserError
from bot.server_settings import SettingsService
from bot.storage.base import Storage, TournamentStatus
from bot.storage.connect import open_storage
from bot.tournaments.service import TournamentService
from bot.tournaments.state import (
    SCHEMA,
    Action,
    Entry,
    NewerTournamentError,
    Rules,
    Table,
    TournamentState,
    dumps,
    loads,
)
from tournament import Format

GUILD, CHANNEL = 1 << 22, 20
ORGANISER = Actor(1, "owner", manages_server=True)
ALICE, BOB = Actor(101, "alice"), Actor(102, "bob")


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    opened = await open_storage(DatabaseUrl(str(tmp_path / "ttt.sqlite3")), ManualClock())
    try:
        yield opened
    finally:
        await opened.close()


async def test_rating_the_entrants_keeps_who_joined_meanwhile(storage: Storage) -> None:
    """The start reads every entrant's rating, then saves them: a member who joins between
    the two is kept (their rating read at the start, or the initial one)."""
    clock = ManualClock()
    service = TournamentService(storage, clock, SettingsService(storage, clock))
    rules = Rules("Cup", Format.SWISS, 3, 300.0, 8, None, "en")
    created = await service.create(GUILD, CHANNEL, ORGANISER, rules, starts_in=None)
    await service.join(created.id, GUILD, ALICE)
    reading, joined = asyncio.Event(), asyncio.Event()
    read_stats = storage.player_stats

    async def slow_stats(*args: Any, **kwargs: Any) -> Any:
        reading.set()
        await joined.wait()
        return await read_stats(*args, **kwargs)

    storage.player_stats = slow_stats  # type: ignore[method-assign]
    rating = asyncio.create_task(service.rate_entrants(created.id, GUILD))
    await reading.wait()
    await service.join(created.id, GUILD, BOB)
    joined.set()
    await rating
    after = await service.get(created.id)
    assert after is not None
    assert [e.user_id for e in after.state.entries] == [ALICE.id, BOB.id]
    alice, bob = after.state.entries
    assert alice.rating is not None
    assert bob.rating is None  # joined after the ratings were read
    assert [e.player for e in after.state.entrants()] == [ALICE.id, BOB.id]


async def test_a_swiss_everyone_left_but_one_finishes_instead_of_pairing(storage: Storage) -> None:
    """Pairing needs two players: with one left, the round's end is the tournament's end (the
    sweeper must not fail at it every few seconds)."""
    clock = ManualClock()
    service = TournamentService(storage, clock, SettingsService(storage, clock))
    rules = Rules("Cup", Format.SWISS, 3, 300.0, 8, 5, "en")
    carol = Actor(103, "carol")
    created = await service.create(GUILD, CHANNEL, ORGANISER, rules, starts_in=None)
    for member in (ALICE, BOB, carol):
        await service.join(created.id, GUILD, member)
    started = await service.start(created.id, GUILD, ORGANISER)
    assert started.state.current_round == 1
    await service.leave(created.id, GUILD, BOB)
    await service.leave(created.id, GUILD, carol)
    after = await service.progress(created.id)
    assert after is not None
    assert after.status is TournamentStatus.FINISHED
    assert after.state.round_over
    assert after.state.current_round == 1  # no second round was paired
    assert {row.player for row in after.state.standings()} == {ALICE.id, BOB.id, carol.id}


async def test_an_award_says_which_round_it_decided(storage: Storage) -> None:
    """Without a round, an award decides the round being played as the save finds it; the
    caller ends that table's game, so it is told which round that was."""
    clock = ManualClock()
    service = TournamentService(storage, clock, SettingsService(storage, clock))
    rules = Rules("Cup", Format.ROUND_ROBIN, 3, 300.0, 8, None, "en")
    created = await service.create(GUILD, CHANNEL, ORGANISER, rules, starts_in=None)
    for member in (ALICE, BOB):
        await service.join(created.id, GUILD, member)
    started = await service.start(created.id, GUILD, ORGANISER)
    assert started.state.current_round == 1
    awarded = await service.award(created.id, GUILD, ORGANISER, 1, 1.0)
    assert awarded.round_number == 1
    table = awarded.tournament.state.table(1, 1)
    assert table is not None
    assert (table.x_points, table.awarded_by) == (1.0, ORGANISER.id)
    again = await service.award(created.id, GUILD, ORGANISER, 1, 0.5, round_number=1)
    assert again.round_number == 1
    with pytest.raises(UserError, match="Round 2 has no game at table 1"):
        await service.award(created.id, GUILD, ORGANISER, 1, 0.5, round_number=2)


# Each schema's layout of the document: a version that adds, renames or drops a field, or
# gives one a value an older version cannot read (a format), raises SCHEMA and pins its own,
# so that the processes of the version before refuse its documents in a rolling upgrade.
SCHEMA_1 = {
    "": {
        "announcement_id",
        "current_round",
        "entries",
        "final_posted",
        "log",
        "organiser_id",
        "rounds",
        "rules",
        "schema",
        "starts_at",
        "tables",
    },
    "rules": {"format", "language", "most_players", "name", "rounds", "size", "turn_timeout"},
    "entries": {"joined_at", "name", "rating", "user_id", "withdrawn_at"},
    "tables": {
        "awarded_by",
        "board",
        "claimed_at",
        "forfeit",
        "o",
        "round",
        "thread_id",
        "x",
        "x_points",
    },
    "log": {"action", "actor_id", "at", "detail"},
    "formats": {"swiss", "round-robin"},
}


def test_the_documents_layout_is_its_schemas() -> None:
    assert SCHEMA == 1, "a new schema: pin its layout beside schema 1's"
    rules = Rules("Cup", Format.SWISS, 3, 300.0, 8, None, "en")
    state = TournamentState(
        rules,
        ORGANISER.id,
        None,
        entries=(Entry(ALICE.id, "alice", 0.0),),
        tables=(Table(1, 1, ALICE.id, None),),
        log=(Action(0.0, ORGANISER.id, "created"),),
    )
    document = json.loads(dumps(state))
    assert document["schema"] == SCHEMA
    found = {
        "": set(document),
        "rules": set(document["rules"]),
        "entries": set(document["entries"][0]),
        "tables": set(document["tables"][0]),
        "log": set(document["log"][0]),
        "formats": {f.value for f in Format},
    }
    assert found == SCHEMA_1
    assert loads(dumps(state)) == state


def test_a_document_of_a_newer_schema_is_refused_and_one_from_before_the_number_is_read() -> None:
    rules = Rules("Cup", Format.ROUND_ROBIN, 3, 300.0, 8, None, "en")
    state = TournamentState(rules, ORGANISER.id, None)
    document = json.loads(dumps(state))
    with pytest.raises(NewerTournamentError):
        loads(json.dumps({**document, "schema": SCHEMA + 1, "bracket": []}))
    with pytest.raises(NewerTournamentError):
        loads(json.dumps({**document, "schema": "2"}))
    del document["schema"]  # as every version before the number wrote them
    assert loads(json.dumps(document)) == state
