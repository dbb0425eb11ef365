"""``python -m bot serve``'s endpoint (bot/endpoint.py) against the sim in HTTP mode: who may
POST interactions to it (Discord's signature, a fresh timestamp, each interaction once), what
it answers a PING, malformed and oversized bodies, deferrals and autocompletes through the
HTTP response, the health port beside it, the settings it needs, and the private API of
discord.py it relies on."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import inspect
import logging
import resource
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import AsyncIterator, Sequence
from contextvars import ContextVar
from pathlib import Path

import aiohttp
import discord
import nacl.signing
import orjson
import pytest
from aiohttp import web
from discord.webhook.async_ import AsyncWebhookAdapter, async_context

from bot import endpoint
from bot.__main__ import arguments, main
from bot.answers import DEFER_AFTER, ORIGINAL_RETRY_AFTER, ORIGINAL_TRIES, Answers
from bot.client import TTTBot
from bot.components import CHALLENGE_ID
from bot.config import ConfigError, Settings, require_serving
from bot.domain import Actor
from bot.health import MAX_REQUEST_BODY, REQUEST_PATIENCE
from bot.metrics import Metrics
from bot.service import Clicked, MoveResult
from bot.storage.base import DatabaseUnavailableError
from tests.bot_harness import (
    BotHarness,
    board_out_of_time,
    cell_id,
    free_cells,
    http_only,
    is_live,
    text_of,
)
from tests.bot_processes import started
from tests.discord_sim import DiscordSim, InteractionRecord, SimMessage, SimTimeout
from tests.discord_sim.models import FLAG_COMPONENTS_V2, FLAG_EPHEMERAL, JSON
from tests.postgres_cluster import free_port

KEY = "0b" * 32
# The bot's deferral deadline in the test of a slow answer, which waits past it.
SHORT_DEFER = 0.5


async def no_marks(fallback: object) -> None:
    raise AssertionError("nothing here draws a board")


def callbacks(sim: DiscordSim) -> int:
    """The interactions answered, each by its HTTP response (recorded as its callback)."""
    return sum(1 for request in sim.requests if request.http_response)


@http_only
async def test_unsigned_wrongly_signed_replayed_and_stale_requests_get_401_and_change_nothing(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    s = sim.seed
    async with harness.running():
        start = orjson.dumps(
            sim.command_interaction(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        )
        other = orjson.dumps(
            sim.command_interaction(s.bob, s.channel, "ttt vs-ai", difficulty="random")
        )
        now = int(time.time())
        caplog.set_level(logging.DEBUG, logger="bot.endpoint")
        refused = [
            await sim.post_signed(start, signature=""),  # unsigned
            await sim.post_signed(start, key=nacl.signing.SigningKey.generate()),
            await sim.post_signed(start, signature="not hex"),
            await sim.post_signed(start, signature="00" * 64),
            # Discord's signature of one body, sent with another.
            await sim.post_signed(other, signed_body=start),
            # Signed, but long ago, or ahead of the clock.
            await sim.post_signed(start, timestamp=str(now - int(endpoint.STALE_AFTER) - 5)),
            await sim.post_signed(start, timestamp=str(now + int(endpoint.STALE_AFTER) + 5)),
            await sim.post_signed(start, timestamp="yesterday"),
            # Signed, but no number of seconds a clock could read.
            await sim.post_signed(start, timestamp="9" * 400),
            await sim.post_signed(start, timestamp="9" * 5000),
        ]
        assert [answer.status for answer in refused] == [401] * len(refused)
        # The interaction, sent as Discord sends it, starts the game: none was started above.
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert started.response_type == 4
        assert not started.ephemeral
        # It sent again (a replay within the window): refused, nothing doubled.
        assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
    assert sim.messages(s.channel) == [started.message]
    assert callbacks(sim) == 1
    # Nothing a caller sent was logged above DEBUG, but that a request Discord signed was
    # refused for its time (once, for the two: see the next test).
    logged = [record.levelname for record in caplog.records if record.name == "bot.endpoint"]
    assert sorted(logged) == ["DEBUG"] * (len(refused) + 1) + ["WARNING"]


def stepped(step: float) -> float:
    """The time by a wall clock ``step`` seconds off."""
    return time.time() + step


@http_only
async def test_a_host_clock_stepped_by_minutes_refuses_every_interaction_and_says_so(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """This host's wall clock stepped 5 minutes ahead (or behind) of Discord's: every
    interaction is refused as stale (a replay could not be told apart), and the operator is
    told why by a WARNING at most once a minute, where only DEBUG lines said anything; set
    right, interactions are answered again."""
    s = sim.seed
    async with harness.running() as bot:
        assert bot.endpoint is not None
        for step in (300.0, -300.0):
            bot.endpoint.wall_clock = functools.partial(stepped, step)
            for _ in range(2):
                with pytest.raises(SimTimeout, match="401"):
                    await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
            warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
            assert len(warned) == 1, warned
            assert "behind this host's clock" in warned[0]
        bot.endpoint.wall_clock = time.time
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert started.response_type == 4
    assert sim.messages(s.channel) == [started.message]


@http_only
async def test_a_database_that_cannot_note_an_interaction_does_not_hold_it_up(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The note of an interaction's id in the database failing (a server down) or slower
    than NOTE_PATIENCE (a hung one): the interaction goes on, with a WARNING, and is answered
    without a deferral; sent again to the same worker, its own memory refuses it. A slow
    note is not cancelled: it is recorded when the database answers."""
    s = sim.seed
    async with harness.running() as bot:
        note = bot.storage.note_interactions

        async def failing(notes: Sequence[tuple[int, float]]) -> frozenset[int]:
            raise DatabaseUnavailableError("the server is down", nothing_written=True)

        bot.storage.note_interactions = failing  # type: ignore[method-assign]
        with caplog.at_level(logging.WARNING, logger="bot.endpoint"):
            started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
            assert started.response_type == 4
            assert not started.ephemeral
            assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
            released = asyncio.Event()

            async def hung(notes: Sequence[tuple[int, float]]) -> frozenset[int]:
                await released.wait()
                return await note(notes)

            bot.storage.note_interactions = hung  # type: ignore[method-assign]
            stats = await sim.slash(s.bob, s.channel, "ttt stats")
            assert stats.response_type == 4
            released.set()
            assert bot.endpoint is not None
            serving = bot.endpoint
            await sim.wait_for(lambda: not serving._notes_under_way)
        assert not await note([(stats.id, time.time())])  # noted once the database answered
    warnings = [
        record.getMessage()
        for record in caplog.records
        if record.name == "bot.endpoint" and record.levelno == logging.WARNING
    ]
    assert len(warnings) == 2, warnings
    assert "DatabaseUnavailableError" in warnings[0]
    assert f"no answer within {endpoint.NOTE_PATIENCE:g} s" in warnings[1]


async def test_the_interactions_of_one_pass_of_the_event_loop_are_noted_in_one_call() -> None:
    """Requests read together are noted together: one transaction, one round trip. Each
    learns its own interaction's fate from the batch (the database refusing one that another
    worker was given); those asked for after the batch left go in the next one."""
    calls: list[list[tuple[int, float]]] = []
    given_elsewhere = 1_400_000_000_000_000_003

    async def note(notes: Sequence[tuple[int, float]]) -> frozenset[int]:
        calls.append(list(notes))
        return frozenset(i for i, _ in notes if i != given_elsewhere)

    serving = endpoint.InteractionsEndpoint(
        nacl.signing.SigningKey.generate().verify_key.encode().hex(),
        Answers(Metrics(), no_marks),
        parse=lambda data: True,
        note=note,
    )
    now = int(time.time())
    ids = [1_400_000_000_000_000_000 + number for number in range(5)]
    first = await asyncio.gather(*(serving._first_sight(i, now) for i in ids))
    assert first == [True, True, True, False, True]
    assert calls == [[(i, float(now)) for i in ids]]
    later = [1_400_000_000_000_000_010, 1_400_000_000_000_000_011]
    assert await asyncio.gather(*(serving._first_sight(i, now) for i in later)) == [True, True]
    # Sent again to the same worker: its memory refuses them, without the database.
    assert not await serving._first_sight(ids[0], now)
    assert calls[1:] == [[(i, float(now)) for i in later]]
    assert not serving._notes_under_way


def test_a_request_held_while_the_bot_starts_still_leaves_time_to_defer() -> None:
    """The longest an endpoint holds a request before its handler starts (the bot starting,
    then the database noting it) is within the deferral's deadline, which counts from the
    request's reading: the handler still defers within Discord's 3 s."""
    assert endpoint.OPEN_PATIENCE + endpoint.NOTE_PATIENCE <= DEFER_AFTER
    assert endpoint.ANSWER_PATIENCE <= 3.0


async def test_a_request_that_comes_while_the_bot_starts_waits_for_it() -> None:
    """``python -m bot serve`` listens before it is set up, and a platform that starts it for
    a request sends that request at once: it waits for the bot (up to OPEN_PATIENCE) and is
    answered, its deadlines counted from its reading. One whose wait runs out, or that the
    bot's stop (SIGTERM) finds waiting, gets a 503 then; after the stop, at once. A PING is
    answered while starting (Discord's check of the URL)."""
    key = nacl.signing.SigningKey.generate()
    answers = Answers(Metrics(), no_marks)
    seen: list[float] = []

    def parse(data: JSON) -> bool:
        interaction_id = int(data["id"])
        seen.append(answers.seen_at(interaction_id))
        responding = answers.responding(interaction_id)
        assert responding is not None
        responding.hand(b'{"type": 4, "data": {"content": "hi"}}')
        return True

    async def note(notes: Sequence[tuple[int, float]]) -> frozenset[int]:
        return frozenset(i for i, _ in notes)

    # The real patience: the windows below are fractions of it, room for a loaded machine.
    patience = endpoint.OPEN_PATIENCE
    loop = asyncio.get_running_loop()
    ids = iter(range(1_400_000_000_000_000_000, 1_400_000_000_000_001_000))

    @contextlib.asynccontextmanager
    async def served() -> AsyncIterator[tuple[endpoint.InteractionsEndpoint, str]]:
        serving = endpoint.InteractionsEndpoint(
            key.verify_key.encode().hex(), answers, parse, note, open_patience=patience
        )
        app = web.Application()
        app.router.add_post(endpoint.PATH, serving.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            yield serving, f"http://127.0.0.1:{port}{endpoint.PATH}"
        finally:
            await runner.cleanup()

    async def post(http: aiohttp.ClientSession, url: str, kind: int = 2) -> tuple[int, float]:
        body = orjson.dumps({"id": str(next(ids)), "type": kind, "token": "t", "version": 1})
        stamp = str(int(time.time()))
        headers = {
            "X-Signature-Ed25519": key.sign(stamp.encode() + body).signature.hex(),
            "X-Signature-Timestamp": stamp,
        }
        sent = loop.time()
        async with http.post(url, data=body, headers=headers) as response:
            await response.read()
            return response.status, loop.time() - sent

    async with aiohttp.ClientSession() as http:
        async with served() as (serving, url):
            status, took = await post(http, url, kind=1)
            assert status == 200
            assert took < patience / 2
            # Not opened within its patience: a 503 then, and nothing acts on it.
            status, took = await post(http, url)
            assert status == 503
            assert patience - 0.05 <= took < patience + 0.3
            # Opened while it waits: answered, its deferral due from its reading.
            waiting = asyncio.ensure_future(post(http, url))
            await asyncio.sleep(patience / 3)
            assert not waiting.done()
            opened_at = loop.time()
            serving.open()
            status, took = await waiting
            assert status == 200
            assert patience / 3 <= took < patience
            assert len(seen) == 1
            assert seen[0] < opened_at
            serving.close()
            status, took = await post(http, url)
            assert status == 503
            assert took < patience / 3
        async with served() as (serving, url):
            # Stopped while it waits: a 503 at once.
            waiting = asyncio.ensure_future(post(http, url))
            await asyncio.sleep(patience / 3)
            assert not waiting.done()
            serving.close()
            status, took = await waiting
            assert status == 503
            assert took < patience * 2 / 3
    assert len(seen) == 1


@http_only
async def test_a_new_board_s_id_is_asked_again_after_a_429_and_not_after_the_last_try(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """A message an HTTP response made has its id asked of Discord (GET @original), to adopt
    it as the game's board: a 429 is waited out and the question asked again; one never
    answered stops at its last try, with a WARNING, without a wait after it that only held
    the handler (and its game) up."""
    s = sim.seed
    original = "GET /webhooks/{id}/{token}/messages/@original"

    def asked() -> int:
        return sum(1 for call in sim.requests if call.path.endswith("/@original"))

    async with harness.running() as bot:
        sim.faults.add(original, rate_limit=0.1, count=1)
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert await bot.in_flight.wait_idle(patience=5)
        assert started.message is not None
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id == started.message.id
        assert asked() == 2
        sim.faults.add(original, status=404, count=None)
        before = asked()
        loop = asyncio.get_running_loop()
        await sim.slash(s.bob, s.other_channel, "ttt vs-ai", difficulty="minimax")
        answered_at = loop.time()
        assert await bot.in_flight.wait_idle(patience=5)
        held = loop.time() - answered_at
    assert asked() - before == ORIGINAL_TRIES
    waits = sum(ORIGINAL_RETRY_AFTER * 2**n for n in range(ORIGINAL_TRIES - 1))
    assert held < waits + ORIGINAL_RETRY_AFTER * 2 ** (ORIGINAL_TRIES - 1) * 0.6, held
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [line for line in warned if "did not say which message" in line] != []


@http_only
async def test_a_challenge_s_new_message_clicked_before_its_id_is_learnt_is_its_message(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Found by the soak over HTTP (seed 5): ``/ttt board`` shows a pending challenge in a new
    message, whose id the bot learns a round trip after its response (GET @original). The
    challenger's Withdraw on that message, clicked before, was refused with "That button
    doesn't belong to this message: use the buttons on the newest board.", on the newest
    board. The click now waits for the message's adoption (bot.service.ADOPTION_PATIENCE);
    one on the message before it is still refused."""
    s = sim.seed
    async with harness.running() as bot:
        made = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert made.message is not None
        assert await bot.in_flight.wait_idle(patience=5)
        # The id learnt only after the click below has come.
        sim.faults.add("GET /webhooks/{id}/{token}/messages/@original", reply_delay=0.3, count=1)
        shown = await sim.slash(s.carol, s.channel, "ttt board")
        assert shown.message is not None
        assert shown.message.id != made.message.id
        withdraw = CHALLENGE_ID.build(challenge=challenge_id_of(shown.message), action="withdraw")
        withdrawn = await sim.click(s.alice, shown.message, withdraw)
        assert withdrawn.response_type == 7, withdrawn.content
        assert "**alice** withdrew the challenge." in (withdrawn.content or "")
        assert sim.faults.injected  # the click did come before the id was learnt
        # A message older than the challenge's is no board of it any more.
        again = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert again.message is not None
        assert await bot.in_flight.wait_idle(patience=5)
        stale = CHALLENGE_ID.build(challenge=challenge_id_of(again.message), action="withdraw")
        refused = await sim.click(s.alice, made.message, stale, forged=True)
        assert refused.ephemeral
        assert "doesn't belong to this message" in (refused.content or "")


def challenge_id_of(message: SimMessage) -> int:
    for button in message.buttons():
        fields = CHALLENGE_ID.parse(button["custom_id"])
        if fields is not None:
            return int(fields["challenge"])
    raise AssertionError(f"no challenge: {message.buttons()}")


@http_only
async def test_a_ping_gets_a_pong(sim: DiscordSim, harness: BotHarness) -> None:
    """Discord's check of the URL (sim.verify_endpoint): a PING answered 200 with a PONG under
    a valid Content-Type, a wrongly signed one 401 (discord-api-docs,
    docs/interactions/overview.mdx, "Setting Up an Endpoint")."""
    async with harness.running():
        pong = await sim.ping()
        assert await sim.verify_endpoint() == []
    assert pong.status == 200
    assert pong.content_type == "application/json"
    assert pong.json() == {"type": 1}


@http_only
async def test_malformed_and_oversized_bodies_are_refused_before_anything_reads_them(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        assert (await sim.post_signed(b"{not json")).status == 400
        assert (await sim.post_signed(b"[1, 2]")).status == 400
        assert (await sim.post_signed(b'{"type": "ping"}')).status == 400
        assert (await sim.post_signed(b'{"type": true}')).status == 400  # no PING
        assert (await sim.post_signed(b'{"type": 2, "id": "x"}')).status == 400
        # Ids that are no snowflake: none is noted, none goes on to a handler.
        for wrong_id in (b'"99999999999999999999"', b'"-5"', b'" 12"', b"12", b"1.5", b"true"):
            body = b'{"type": 2, "token": "t", "id": ' + wrong_id + b"}"
            assert (await sim.post_signed(body)).status == 400, wrong_id
        huge = b'{"type": 1, "padding": "' + b"x" * MAX_REQUEST_BODY + b'"}'
        assert (await sim.post_signed(huge)).status == 413
        assert (await sim.post_signed(huge, signature="")).status == 413
        # The issue's own size: a body of 10 MB, signed and not.
        ten_mb = b'{"type": 1, "padding": "' + b"x" * (10 * 2**20) + b'"}'
        assert (await sim.post_signed(ten_mb)).status == 413
        assert (await sim.post_signed(ten_mb, signature="")).status == 413
        # Still serving.
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
    assert started.response_type == 4
    assert callbacks(sim) == 1


@http_only
async def test_a_compressed_body_is_read_as_sent_never_inflated(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Discord signs the bytes it sends, uncompressed. aiohttp inflated a body sent with
    ``Content-Encoding`` before the endpoint read it: one that would not inflate, unsigned, was
    a 500 and two tracebacks at ERROR. The bytes sent are what is checked, and what is read."""
    s = sim.seed
    ping = orjson.dumps({"id": "1", "type": 1, "version": 1})
    bomb = gzip.compress(bytes(64 * 2**20))  # 64 KB that would inflate to 64 MB

    def signed(signed_body: bytes) -> dict[str, str]:
        stamp = str(int(time.time()))
        signature = sim.signing_key.sign(stamp.encode() + signed_body).signature.hex()
        return {"X-Signature-Ed25519": signature, "X-Signature-Timestamp": stamp}

    async with harness.running() as bot, aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{bot.http_port}/interactions"
        sent = [
            ("gzip", b"not gzip", {}, 401),
            ("deflate", b"not deflate", {}, 401),
            ("gzip", bomb, signed(bomb), 400),  # signed as sent: no JSON
            ("deflate", zlib.compress(ping), signed(ping), 401),  # signed inflated: not sent
            ("gzip", gzip.compress(ping), signed(gzip.compress(ping)), 400),
        ]
        for encoding, body, signature, status in sent:
            headers = {"Content-Encoding": encoding, "Content-Type": "application/json"}
            async with http.post(url, data=body, headers=headers | signature) as response:
                assert response.status == status, (encoding, body[:10], await response.text())
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
    assert started.response_type == 4
    assert callbacks(sim) == 1
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def flags(ix: InteractionRecord) -> object:
    """The flags of an interaction's first answer (its response's ``data.flags``)."""
    return (ix.response_data or {}).get("flags")


@http_only
async def test_each_response_carries_only_the_flags_discord_allows_in_its_type(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Discord allows each callback type its own flags (discord-api-docs,
    docs/interactions/receiving-and-responding.mdx, "Interaction Callback Data Structure"): a
    message (4) may be EPHEMERAL or IS_COMPONENTS_V2, a deferral (5) EPHEMERAL alone ("If you'd
    like to create a component based message with IS_COMPONENTS_V2 you must do that with the
    edit original response endpoint"), and an update (7) keeps a components-v2 message's flag
    (docs/components/reference: it "can't be removed"). The 5x5 board is such a message; a
    board drawn with a server's emoji is deferred in the response (bot.answers), so a 5x5 one
    goes out as a deferral without flags and then as the original response's edit. A new
    message's id is asked of Discord with ``GET @original`` ("Returns the initial Interaction
    response", ibid., "Get Original Interaction Response"), which the sim answers 404 until it
    has read the response, as Discord has no message before."""
    s = sim.seed
    cross = sim.add_emoji(s.guild, "cross")
    async with harness.running():
        private = await sim.slash(s.carol, s.channel, "ttt help")
        board = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random", size=5)
        assert board.message is not None
        clicked = await sim.click(s.alice, board.message, cell_id(board.message, "C3"))
        await sim.slash(s.owner, s.channel, "ttt-settings marks", x=cross.text)
        marked = await sim.slash(s.bob, s.other_channel, "ttt vs-ai", difficulty="random", size=5)
        await marked.wait_done(timeout=5)
        assert marked.message is not None
        moved = await sim.click(s.bob, marked.message, cell_id(marked.message, "C3"))
        await moved.wait_done(timeout=5)
    assert (private.response_type, flags(private)) == (4, FLAG_EPHEMERAL)
    assert (board.response_type, flags(board)) == (4, FLAG_COMPONENTS_V2)
    assert (clicked.response_type, flags(clicked)) == (7, FLAG_COMPONENTS_V2)
    assert board.message.flags & FLAG_COMPONENTS_V2
    assert "Last move: C3." in text_of(board.message)
    # The deferrals carry no data at all, so no flag; the boards came through @original.
    assert (marked.response_type, marked.response_data) == (5, {})
    assert marked.original_edits == 1
    assert marked.message.flags & FLAG_COMPONENTS_V2
    assert not marked.message.loading
    assert cross.text in text_of(marked.message)
    assert (moved.response_type, moved.response_data) == (6, {})
    assert moved.original_edits == 1
    assert "C3" not in free_cells(marked.message)
    # Each public message the bot made with a response, it then asked Discord the id of; a
    # private one it never edits later, and asked nothing about.
    asked = [r for r in sim.requests if r.method == "GET" and board.token in r.path]
    assert [r.status for r in asked][-1:] == [200], asked
    assert all(r.path.endswith("/messages/@original") for r in asked)
    assert not [r for r in sim.requests if r.method == "GET" and private.token in r.path]


@http_only
async def test_a_slow_answer_is_deferred_in_the_response_and_finished_through_the_webhook(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.defer_after = SHORT_DEFER
    async with harness.running() as bot:
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert started.message is not None
        board = started.message
        move = bot.service.move_on_board

        async def slowly(
            game_id: int, user: Actor, cell: int, clicked: Clicked, ply: int | None
        ) -> MoveResult:
            await asyncio.sleep(SHORT_DEFER + 0.3)
            return await move(game_id, user, cell, clicked, ply)

        bot.service.move_on_board = slowly  # type: ignore[method-assign]
        clicked = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert clicked.response_type == 6  # the deferral, as the HTTP response
        await clicked.wait_done(timeout=5)
        assert await bot.in_flight.wait_idle(patience=5)
    # Then the clicked board was edited through the interaction's webhook.
    assert clicked.original_edits == 1
    assert "❌" in [(b.get("emoji") or {}).get("name") for b in sim.message(board.id).buttons()]
    assert callbacks(sim) == 2


@http_only
async def test_an_interaction_no_handler_takes_gets_a_503_in_time_and_the_bot_serves_on(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The endpoint's safety net: an interaction the bot somehow never answers (here a form
    whose refusal is made to send nothing) gets a 503 within Discord's 3 s, and the worker
    serves on."""
    s = sim.seed

    async def answers_nothing(interaction: discord.Interaction[TTTBot], error: Exception) -> None:
        return None

    async with harness.running() as bot:
        bot.refuse = answers_nothing  # type: ignore[method-assign]
        with pytest.raises(SimTimeout, match="with HTTP 503"):
            await sim.submit_unopened_modal(s.alice, s.channel, "ttt:form")
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
    assert started.response_type == 4
    (dropped,) = [record for record in sim.interactions if record.response_type is None]
    assert f"interaction {dropped.id} got no first answer within 3 s" in caplog.text


@http_only
async def test_an_answer_discord_stopped_waiting_for_is_given_up_and_never_sent_again(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    s = sim.seed
    harness.defer_after = 10.0  # no deferral: the answer comes after Discord hung up
    async with harness.running() as bot:
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert started.message is not None
        board = started.message
        assert await bot.in_flight.wait_idle(patience=5)
        move = bot.service.move_on_board

        async def slowly(
            game_id: int, user: Actor, cell: int, clicked: Clicked, ply: int | None
        ) -> MoveResult:
            await asyncio.sleep(1.0)
            return await move(game_id, user, cell, clicked, ply)

        bot.service.move_on_board = slowly  # type: ignore[method-assign]
        with pytest.raises(SimTimeout, match="did not answer"):
            await sim.click(s.alice, board, cell_id(board, "B2"), timeout=0.3)
        assert await bot.in_flight.wait_idle(patience=10)
    assert "Discord hung up" in caplog.text
    # Nothing went through the interaction's token after: Discord never took a first answer.
    (clicked,) = [record for record in sim.interactions if record.response_type is None]
    assert [r for r in sim.requests if clicked.token in r.path] == []


@http_only
async def test_autocomplete_choices_go_back_in_the_response(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert started.message is not None
        choices = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="b")
    assert [choice["value"] for choice in choices] == ["B1", "B2", "B3"]
    # Each answer went back in its HTTP response: the bot never POSTed a callback itself.
    answers = [request for request in sim.requests if request.path.endswith("/callback")]
    assert len(answers) == 2
    assert all(request.http_response for request in answers)


@http_only
async def test_the_health_port_serves_beside_the_endpoint(
    sim: DiscordSim, harness: BotHarness
) -> None:
    async with harness.running() as bot, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{bot.http_port}"
        async with http.get(f"{base}/readyz") as response:
            assert (response.status, await response.text()) == (200, "ready\n")
        async with http.get(f"{base}/livez") as response:
            assert response.status == 200
        async with http.get(f"{base}/metrics") as response:
            assert "tttbot_interactions_total" in await response.text()
        async with http.get(f"{base}/interactions") as response:
            assert response.status == 405
        # Stopping (SIGTERM), the endpoint takes no new interaction, and says it is not ready.
        assert bot.endpoint is not None
        bot.endpoint.close()
        async with http.get(f"{base}/readyz") as response:
            assert response.status == 503
            assert "not answering interactions: starting, or stopping" in await response.text()
        with pytest.raises(SimTimeout, match="with HTTP 503"):
            await sim.slash(sim.seed.alice, sim.seed.channel, "ttt vs-ai", difficulty="minimax")
        assert (await sim.ping()).status == 200  # Discord's check of the URL still answered
        bot.endpoint.open()


@http_only
async def test_serve_touches_the_heartbeat_file_while_it_answers(
    sim: DiscordSim, harness: BotHarness, tmp_path: Path
) -> None:
    """docs/operating.md: under serve, with no gateway connected, the heartbeat file is still
    touched while the bot serves, and removed when it stops."""
    heartbeat = tmp_path / "heartbeat"
    async with harness.running(heartbeat_file=str(heartbeat)):
        for _ in range(100):  # the file is no sim event: poll it, for up to 5 s
            if heartbeat.exists():
                break
            await asyncio.sleep(0.05)
        assert heartbeat.exists()
    assert not heartbeat.exists()


@http_only
async def test_shard_settings_left_from_the_gateway_mean_nothing_to_a_worker(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """SHARD_COUNT and SHARD_IDS kept from a sharded gateway deployment (its env file): any
    worker is given any server's interactions, so the one holding the sweeper lease must
    settle every server's timeouts, the commands must be synced, and no shard is run.
    docs/operating.md said the settings mean nothing under serve; the worker swept its
    "shards'" servers alone, left the commands to a "shard 0" no worker runs, and reported
    SHARD_COUNT shards in /metrics."""
    s = sim.seed
    count = 3
    elsewhere = 1 if (s.guild.id >> 22) % count != 1 else 2  # neither shard 0 nor the guild's
    async with harness.running(shard_count=count, shard_ids=(elsewhere,)) as bot:
        assert sim.commands() != []
        board = await board_out_of_time(sim, harness, bot)
        bot.wake_sweeper()
        await sim.wait_for(lambda: not is_live(sim.message(board.id)))
        scraped = (await bot.scrape()).decode()
        # No shard runs, not even in discord.py's eyes (the logs' shard field is 0).
        assert bot.shard_count is None
        assert bot.shard_ids is None
    assert "\ntttbot_shards 0.0\n" in scraped


def test_the_public_key_is_read_and_checked() -> None:
    settings = Settings.from_env({"DISCORD_TOKEN": "t", "DISCORD_PUBLIC_KEY": KEY.upper()})
    assert settings.public_key == KEY
    assert Settings.from_env({"DISCORD_TOKEN": "t"}).public_key is None
    for bad in ("0b" * 31, "0b" * 33, "zz" * 32, "0x" + "0b" * 31):
        with pytest.raises(ConfigError, match="DISCORD_PUBLIC_KEY must be the 64 hexadecimal"):
            Settings.from_env({"DISCORD_TOKEN": "t", "DISCORD_PUBLIC_KEY": bad})
    with pytest.raises(ConfigError, match="DISCORD_PUBLIC_KEY is not set"):
        require_serving(Settings.from_env({"DISCORD_TOKEN": "t", "TTT_HTTP_PORT": "8080"}))
    with pytest.raises(ConfigError, match="TTT_HTTP_PORT is not set"):
        require_serving(Settings.from_env({"DISCORD_TOKEN": "t", "DISCORD_PUBLIC_KEY": KEY}))


@pytest.mark.parametrize(
    ("key", "line"),
    [
        (None, "tttbot: DISCORD_PUBLIC_KEY is not set: `python -m bot serve` needs"),
        ("abc", "tttbot: DISCORD_PUBLIC_KEY must be the 64 hexadecimal digits"),
    ],
)
def test_serve_without_a_good_public_key_stops_with_one_line(
    key: str | None,
    line: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("DISCORD_PUBLIC_KEY", "DATABASE_URL", "TTT_HTTP_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DISCORD_TOKEN", "a-token")
    monkeypatch.setenv("TTT_HTTP_PORT", "8080")
    if key is not None:
        monkeypatch.setenv("DISCORD_PUBLIC_KEY", key)
    assert main(["serve"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1
    assert errors[0].startswith(line)
    assert list(tmp_path.iterdir()) == []  # no database made


def test_the_bot_takes_as_many_open_files_as_it_is_allowed() -> None:
    """Each connection to the HTTP port holds an open file: a process started with a low soft
    limit (systemd's 1,024 for a service) raises it to its hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, hard - 1, 256)

    def start_low() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))

    script = (
        "import resource; from bot.__main__ import open_files_as_allowed; "
        "print(*resource.getrlimit(resource.RLIMIT_NOFILE)); open_files_as_allowed(); "
        "print(*resource.getrlimit(resource.RLIMIT_NOFILE))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        preexec_fn=start_low,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent.parent,
    )
    assert result.stdout.split() == [str(lowered), str(hard), str(hard), str(hard)]


def test_sync_is_asked_for_before_serve_or_after_it() -> None:
    parse = arguments().parse_args
    assert parse(["serve", "--sync"]).sync
    assert parse(["--sync", "serve"]).sync
    assert not parse(["serve"]).sync
    gateway = parse(["--sync"])
    assert gateway.sync
    assert gateway.command is None


def test_discord_py_still_answers_autocompletes_through_its_context_adapter() -> None:
    """The private API bot/endpoint.py relies on: discord.py sends an interaction's answers
    through the webhook adapter its context variable holds, with this signature."""
    assert isinstance(async_context, ContextVar)
    assert isinstance(async_context.get(), AsyncWebhookAdapter)
    parameters = inspect.signature(AsyncWebhookAdapter.create_interaction_response).parameters
    assert list(parameters)[:3] == ["self", "interaction_id", "token"]
    assert {"session", "params"} <= set(parameters)
    source = inspect.getsource(discord.InteractionResponse.autocomplete)
    assert "async_context.get()" in source
    assert "create_interaction_response" in source


@pytest.mark.slow  # a real python -m bot serve process
async def test_python_m_bot_serve_answers_without_a_gateway_and_stops_on_sigterm(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """Serves once ready, stops cleanly on SIGTERM, and started again answers a request sent
    the moment its port accepts (the bot not yet set up): it waits for the bot."""
    s = sim.seed
    port = free_port()
    env = {"DISCORD_PUBLIC_KEY": sim.public_key, "TTT_HTTP_PORT": str(port)}
    async with (
        started(sim, tmp_path, "serve", **env) as bot,
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
    ):
        ready = False
        for _ in range(300):
            assert bot.process.returncode is None, bot.log
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(f"http://127.0.0.1:{port}/readyz") as response:
                    ready = response.status == 200
            if ready:
                break
            await asyncio.sleep(0.1)
        assert ready, bot.log
        sim.interactions_url = f"http://127.0.0.1:{port}/interactions"
        assert (await sim.ping()).json() == {"type": 1}
        started_game = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert started_game.response_type == 4
        assert started_game.message is not None
        bot.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(bot.process.wait(), 20) == 0
    assert "answering interactions at http://" in bot.log
    assert " ERROR " not in bot.log
    # Started again, as a platform that runs it only while there is work starts it for a
    # request: that request is sent as soon as the port takes connections, before the bot
    # has logged in and set up, and is answered.
    async with started(sim, tmp_path, "serve", **env) as bot:
        for _ in range(300):
            assert bot.process.returncode is None, bot.log
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.01)
                continue
            writer.close()
            break
        assert "answering interactions at http://" not in bot.log
        rematch = await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="minimax")
        assert rematch.response_type == 4, bot.log
        assert rematch.message is not None
    assert sim.identifies == 0  # no gateway connection, ever
    assert " ERROR " not in bot.log


@http_only
async def test_a_client_trickling_its_body_is_closed_and_the_others_are_served_meanwhile(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """A request that sends its headers and then a byte of its body now and then, as a
    "slowloris" would, holds nothing for long: it is answered 408 after the port's patience
    and its connection closed, no error logged, and a real interaction meanwhile is answered
    at once. A body of 10 MB, sent whole, is refused without being read; a client gone in
    the middle of its body is no error."""
    s = sim.seed
    async with harness.running() as bot:
        reader, writer = await asyncio.open_connection("127.0.0.1", bot.http_port)
        writer.write(
            b"POST /interactions HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n"
            b"Content-Length: 4096\r\nX-Signature-Ed25519: 00\r\nX-Signature-Timestamp: 1\r\n\r\n{"
        )
        opened = time.monotonic()
        answer = b""
        while not reader.at_eof() and time.monotonic() - opened < 3 * REQUEST_PATIENCE:
            writer.write(b" ")
            with contextlib.suppress(TimeoutError):
                answer += await asyncio.wait_for(reader.read(1024), 0.2)
            if time.monotonic() - opened > 1 and not answer:
                started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
                assert started.response_type == 4
                answer = b"served meanwhile; "
        closed_after = time.monotonic() - opened
        writer.close()
        # Answered 408 after the port's patience; closed once aiohttp has read and dropped
        # what still comes for as long again (its lingering close, bounded the same way).
        assert reader.at_eof(), answer
        assert closed_after < 2 * REQUEST_PATIENCE + 1, (closed_after, answer)
        assert answer.startswith(b"served meanwhile; HTTP/1.1 408 Request Timeout\r\n"), answer
        huge = b'{"type": 1, "padding": "' + b"x" * (10 * 2**20) + b'"}'
        assert (await sim.post_signed(huge)).status == 413
        # A client gone in the middle of its body: nobody to answer, nothing to log.
        _, writer = await asyncio.open_connection("127.0.0.1", bot.http_port)
        writer.write(b"POST /interactions HTTP/1.1\r\nHost: bot\r\nContent-Length: 99\r\n\r\n{")
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.close()
        await asyncio.sleep(0.2)
    assert callbacks(sim) == 1
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
