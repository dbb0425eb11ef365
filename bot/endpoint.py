"""``POST /interactions``: the interactions Discord POSTs to ``python -m bot serve`` (its
Interactions Endpoint URL), answered on the bot's HTTP port (:mod:`bot.health`).

Each request is checked before anything reads it: its body no larger than
:data:`bot.health.MAX_REQUEST_BODY` (aiohttp refuses a larger one with 413 before reading it)
and sent whole within :data:`bot.health.REQUEST_PATIENCE` (a body trickled in slower is
answered 408 and its connection closed); its ``X-Signature-Ed25519`` the application's Ed25519
signature (``DISCORD_PUBLIC_KEY``, checked with PyNaCl) of its ``X-Signature-Timestamp`` and
raw body; that timestamp within :data:`STALE_AFTER` seconds of this host's clock; its
interaction not one any worker was already given (the database decides: the interaction's id
is inserted before anything acts on it, and an insert of an id already there is refused,
whichever worker made the first; the requests read in one pass of the event loop are noted in
one transaction). Any of those failing is answered 401 and nothing else
happens (one DEBUG line: anyone can send them, and Discord itself sends badly signed ones when
the URL is saved), but for a request Discord signed with a timestamp too far from this host's
clock: that one is a WARNING, at most once a minute (:data:`CLOCK_WARNING_EVERY`), since
every interaction refused so means this host's clock is off. A body that is not an
interaction's JSON is answered 400.

A database that cannot note the interaction within :data:`NOTE_PATIENCE` (down, hung, a
SQLite file locked) does not hold it up: the interaction goes on, refused again only by this
worker's own memory if sent again, and its handlers meet the database's failure themselves
and answer it as they do over the gateway (a refusal they could not write changes nothing).

A request that comes while the bot is still logging in and setting up (``python -m bot
serve`` listens before, so that ``/livez`` answers, and a platform that starts the bot for a
request sends it as soon as the port accepts) waits for it, up to :data:`OPEN_PATIENCE`; from
SIGTERM on, new interactions are answered 503 at once.

A PING is answered with a PONG. Any other interaction goes where the gateway's
``INTERACTION_CREATE`` goes (discord.py's parser table, with :mod:`bot.fast_clicks` in front),
so the same handlers answer it; the request waits for the first answer, which
:meth:`bot.answers.Answers.first` hands it (:class:`bot.answers.Responding`), and writes it as
its response. Handlers defer within Discord's 3 s as over the gateway (``Answer.in_time``).
Every interaction discord.py reads has a handler that answers it; one that somehow got no
answer gets a 503 after :data:`ANSWER_PATIENCE`, and Discord shows the user that it failed, as
over the gateway. One discord.py cannot read, or of a type no handler takes (:mod:`bot.events`
drops both), gets a 400 at once.

discord.py answers autocompletes itself (``InteractionResponse.autocomplete``), through its
webhook adapter: the adapter of the tasks an interaction POSTed here starts hands its choices to
the waiting request instead (:class:`_RespondingAdapter`). The adapter's context variable
(``discord.webhook.async_.async_context``) and ``create_interaction_response`` are private API
of discord.py's, checked by ``tests/test_bot_endpoint.py``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import nacl.exceptions
import nacl.signing
import orjson
from aiohttp import web
from discord.webhook.async_ import AsyncWebhookAdapter, async_context

from bot.answers import Answers, Responding
from bot.health import REQUEST_PATIENCE

log = logging.getLogger(__name__)

# The path to give Discord, after the bot's public address.
PATH = "/interactions"
# A request whose timestamp is further than this from this host's clock (either way) is
# refused: Discord's own deadline is 3 s, so a captured request cannot be replayed later, and
# a host clock a little off (NTP keeps it within a second) still lets every real one through.
STALE_AFTER = 60.0
# How long a request waits for its interaction's first answer, from when its body was read:
# Discord's own deadline (a handler defers long before, at bot.answers.DEFER_AFTER).
ANSWER_PATIENCE = 3.0
# How long a request that comes while the bot is still starting waits for it to answer:
# ``python -m bot serve`` listens before it logs in (so that /livez answers from the start),
# and a platform that starts it for a request (scaled to zero) sends that request as soon as
# the port accepts it. The handler's deferral is due bot.answers.DEFER_AFTER after the request
# was read (Answers.seen_at), which this and NOTE_PATIENCE together leave it time for.
OPEN_PATIENCE = 1.0
# How often at most a request signed by Discord but refused as stale is logged as a WARNING
# (measured on the monotonic clock: the wall clock is the suspect). Every interaction refused
# so means this host's clock is off (a VM without NTP, a clock stepped): the bot answers
# nothing, and without this line nothing above DEBUG said why. A replay of a captured request
# logs it too, no more often than this.
CLOCK_WARNING_EVERY = 60.0
# How long the database has to note an interaction (one insert: a millisecond or less) before
# it goes on without: with OPEN_PATIENCE, the handler starts by bot.answers.DEFER_AFTER after
# the request was read, when its deferral is due.
NOTE_PATIENCE = 0.5
# How long an interaction is remembered after the time it was signed at. A request is accepted
# until STALE_AFTER past that time by the clock of whichever worker it reaches; the second
# STALE_AFTER is room for workers' clocks that disagree.
SEEN_KEPT = 2 * STALE_AFTER
# More digits than a time within STALE_AFTER of now, or a snowflake, has: a longer timestamp
# or id is none (and int() refuses one of over 4,300 digits, float arithmetic one of over 308).
_MOST_DIGITS = 20
_PING = 1
_PONG = orjson.dumps({"type": 1})
_JSON = "application/json"
_AUTOCOMPLETE_RESULT = 8


def _snowflake(value: object) -> int | None:
    """The id of an interaction as Discord writes one (decimal digits in a string, within the
    database's 64 bits), or None: 1.5 or true is no id, and one too large for the database
    would fail the note of every interaction noted with it."""
    if not (isinstance(value, str) and value.isascii() and value.isdigit()):
        return None
    if len(value) > _MOST_DIGITS or int(value) >= 2**63:
        return None
    return int(value)


class _RespondingAdapter(AsyncWebhookAdapter):
    """discord.py's webhook adapter, but for the autocomplete choices of an interaction whose
    request waits: those become the request's response."""

    def __init__(self, answers: Answers) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._answers = answers

    async def create_interaction_response(
        self, interaction_id: int, token: str, **options: Any
    ) -> Any:
        params = options["params"]
        responding = self._answers.responding(interaction_id)
        payload = params.payload or {}
        if responding is None or params.files or payload.get("type") != _AUTOCOMPLETE_RESULT:
            return await super().create_interaction_response(interaction_id, token, **options)
        if not responding.hand(orjson.dumps(payload)) or not await asyncio.shield(
            responding.delivered
        ):
            # As discord.py's own answer failing: logged by its tree as a failed autocomplete.
            raise ConnectionResetError(f"the request of interaction {interaction_id} was over")
        return None


class InteractionsEndpoint:
    """Answers ``POST /interactions`` (see the module) for the application whose public key
    is ``public_key`` (hex), feeding each interaction to ``parse``, discord.py's parser of
    ``INTERACTION_CREATE``, once ``note`` (the storage's ``note_interactions``) said that no
    worker was given it before."""

    def __init__(
        self,
        public_key: str,
        answers: Answers,
        parse: Callable[[Any], bool],
        note: Callable[[Sequence[tuple[int, float]]], Awaitable[frozenset[int]]],
        *,
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        answer_patience: float = ANSWER_PATIENCE,
        body_patience: float = REQUEST_PATIENCE,
        note_patience: float = NOTE_PATIENCE,
        open_patience: float = OPEN_PATIENCE,
    ) -> None:
        self._key = nacl.signing.VerifyKey(bytes.fromhex(public_key))
        self._answers = answers
        self._parse = parse
        self._note = note
        self.wall_clock = wall_clock
        self._monotonic = monotonic
        self._clock_warned_at: float | None = None
        self._answer_patience = answer_patience
        self._body_patience = body_patience
        self._note_patience = note_patience
        self._open_patience = open_patience
        self._adapter = _RespondingAdapter(answers)
        # Interactions given to this process within SEEN_KEPT, by id, and when: a replay to
        # this process is refused without a round trip, and still while the database cannot
        # say.
        self._seen: collections.OrderedDict[int, float] = collections.OrderedDict()
        # Notes in the database still under way (kept from the garbage collector: one the
        # request stopped waiting for goes on).
        self._notes_under_way: set[asyncio.Future[frozenset[int]]] = set()
        # The batch the requests of this pass of the event loop add their notes to.
        self._next_batch: tuple[dict[int, float], asyncio.Future[frozenset[int]]] | None = None
        self.answering = False  # from open() (the bot is set up) until close() (it stops)
        # Set at the first open() or close(): until then the bot is starting, and a request
        # waits for it (OPEN_PATIENCE); from then on one that finds it closed is answered 503.
        self._started = asyncio.Event()

    def open(self) -> None:
        """Interactions are answered from now on."""
        self.answering = True
        self._started.set()

    def close(self) -> None:
        """No new interactions: each is answered 503 from now on, and those waiting for the
        bot to start too."""
        self.answering = False
        self._started.set()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            # Over the application's client_max_size: 413. aiohttp's own patience covers the
            # headers, not a body that trickles in.
            async with asyncio.timeout(self._body_patience):
                body = await request.read()
            read_at = asyncio.get_running_loop().time()
        except TimeoutError:
            log.debug("closed a request to %s whose body took over %g s", PATH, self._body_patience)
            response = web.Response(status=408, text="the request's body came too slowly\n")
            response.force_close()
            return response
        except ConnectionResetError:  # the client went away mid-body: nobody to answer
            log.debug("a request to %s was dropped by its client mid-body", PATH)
            response = web.Response(status=400, text="the request's body was cut off\n")
            response.force_close()
            return response
        refusal = self._refusal(request, body)
        if refusal is not None:
            log.debug("refused a request to %s: %s", PATH, refusal)
            return web.Response(status=401, text="invalid request signature\n")
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return web.Response(status=400, text="not JSON\n")
        # type() rather than isinstance(): true is an int to Python, and equal to a PING's 1.
        if not isinstance(data, dict) or type(data.get("type")) is not int:
            return web.Response(status=400, text="not an interaction\n")
        if data["type"] == _PING:
            return web.Response(body=_PONG, content_type=_JSON)
        interaction_id = _snowflake(data.get("id"))
        if interaction_id is None:
            return web.Response(status=400, text="not an interaction\n")
        if not self.answering:
            if not self._started.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout_at(read_at + self._open_patience):
                        await self._started.wait()
            if not self.answering:
                return web.Response(status=503, text="not serving interactions now\n")
        signed_at = int(request.headers["X-Signature-Timestamp"])  # _refusal checked it
        if not await self._first_sight(interaction_id, signed_at):
            log.debug("refused interaction %s: it was sent before", interaction_id)
            return web.Response(status=401, text="interaction already received\n")
        responding = self._answers.respond(interaction_id, read_at)
        if responding is None:  # unreachable after _first_sight, but never answer twice
            return web.Response(status=401, text="interaction already received\n")
        try:
            return await self._answered(request, data, responding, read_at)
        finally:
            self._answers.responded(responding)

    def _refusal(self, request: web.Request, body: bytes) -> str | None:
        """Why the request is not Discord's, if it is not: what it lacks or fails."""
        signature = request.headers.get("X-Signature-Ed25519", "")
        timestamp = request.headers.get("X-Signature-Timestamp", "")
        if not signature or not timestamp:
            return "unsigned"
        try:
            self._key.verify(timestamp.encode() + body, bytes.fromhex(signature))
        except (nacl.exceptions.CryptoError, ValueError, UnicodeEncodeError):
            return "a signature that does not match"
        if not (timestamp.isascii() and timestamp.isdigit()) or len(timestamp) > _MOST_DIGITS:
            return "a timestamp that is no number of seconds"
        ahead = self.wall_clock() - int(timestamp)
        if abs(ahead) > STALE_AFTER:
            self._clock_seems_off(ahead)
            return f"a timestamp more than {STALE_AFTER:g} s from this host's clock"
        return None

    def _clock_seems_off(self, ahead: float) -> None:
        """A request Discord signed came with a timestamp ``ahead`` seconds behind this host's
        clock (negative: ahead of it): a WARNING at most every :data:`CLOCK_WARNING_EVERY`."""
        now = self._monotonic()
        warned_at = self._clock_warned_at
        if warned_at is not None and now - warned_at < CLOCK_WARNING_EVERY:
            return
        self._clock_warned_at = now
        log.warning(
            "refused a request Discord signed %.0f s %s this host's clock (more than %g s):"
            " if every interaction is refused so, this host's clock is off (keep it"
            " synchronised, e.g. by NTP); a replay of an old request is refused so too",
            abs(ahead),
            "behind" if ahead > 0 else "ahead of",
            STALE_AFTER,
        )

    async def _first_sight(self, interaction_id: int, signed_at: int) -> bool:
        """Whether no worker was given this interaction before: this process's memory first,
        then the database, which decides across workers (see the module for when it cannot
        say in time)."""
        now = self.wall_clock()
        seen = self._seen
        while seen and next(iter(seen.values())) < now - SEEN_KEPT:
            seen.popitem(last=False)
        if interaction_id in seen:
            return False
        seen[interaction_id] = now
        batch = self._batch_of(interaction_id, float(signed_at))
        # Waited for beside, not cancelled: a query cancelled on a hung server waits for the
        # server to take the cancellation (asyncpg), which is the wait this is to avoid.
        await asyncio.wait({batch}, timeout=self._note_patience)
        if not batch.done():
            error: BaseException = TimeoutError(f"no answer within {self._note_patience:g} s")
        else:
            try:
                return interaction_id in batch.result()
            except Exception as failed:  # whatever failed, the handlers meet it and answer it
                error = failed
        log.warning(
            "could not note interaction %s in the database (%r): going on; sent again, only "
            "this worker would refuse it",
            interaction_id,
            error,
        )
        return True

    def _batch_of(self, interaction_id: int, signed_at: float) -> asyncio.Future[frozenset[int]]:
        """The note of an interaction, made with those of the other requests read in the same
        pass of the event loop: one transaction (and one round trip) for them all. Made once
        a request, the notes were about a tenth of a click's CPU on PostgreSQL at saturation."""
        if self._next_batch is None or self._next_batch[1].done():  # (done: cancelled unstarted)
            notes: dict[int, float] = {}
            batch: asyncio.Future[frozenset[int]] = asyncio.ensure_future(self._noted(notes))
            self._notes_under_way.add(batch)
            batch.add_done_callback(self._note_done)
            self._next_batch = (notes, batch)
        notes, batch = self._next_batch
        notes[interaction_id] = signed_at
        return batch

    async def _noted(self, notes: dict[int, float]) -> frozenset[int]:
        # A task's first step runs at the loop's next pass: the requests of this one add
        # their notes to ``notes`` until then.
        self._next_batch = None
        return await self._note(tuple(notes.items()))

    def _note_done(self, note: asyncio.Future[frozenset[int]]) -> None:
        """A batch of notes ended, maybe after its interactions went on without it (or their
        requests were gone): a failure then was the database's, which the interactions'
        handlers met too."""
        self._notes_under_way.discard(note)
        if not note.cancelled() and note.exception() is not None:
            log.debug("a note of an interaction failed: %r", note.exception())

    def forget_before(self) -> float:
        """The signing time before which noted interactions may be forgotten (by the clock of
        this worker): a request signed then is refused as stale now by every worker whose
        clock is within STALE_AFTER of this one's."""
        return self.wall_clock() - SEEN_KEPT

    async def _answered(
        self, request: web.Request, data: dict[str, Any], responding: Responding, read_at: float
    ) -> web.StreamResponse:
        # The tasks discord.py starts for the interaction inherit this context: their
        # autocomplete answers go to this request too.
        adapter = async_context.set(self._adapter)
        try:
            read = self._parse(data)
        finally:
            async_context.reset(adapter)
        if not read:  # bot.events logged it
            # Discord shows the member that it failed now rather than in 3 s.
            return web.Response(status=400, text="the interaction could not be read\n")
        patience = read_at + self._answer_patience - asyncio.get_running_loop().time()
        try:
            body = await asyncio.wait_for(asyncio.shield(responding.body), max(patience, 0.0))
        except TimeoutError:
            body = None
        if body is None:
            responding.give_up()
            log.warning(
                "interaction %s got no first answer within %g s",
                responding.interaction_id,
                self._answer_patience,
            )
            return web.Response(status=503, text="no answer in time\n")
        response = web.Response(body=body, content_type=_JSON)
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError as error:
            log.warning(
                "could not answer interaction %s: Discord hung up (%s)",
                responding.interaction_id,
                error,
            )
            responding.delivered.set_result(False)
            return response
        responding.delivered.set_result(True)
        return response
