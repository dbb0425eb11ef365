"""``POST /interactions``: the interactions Discord POSTs to ``python -m bot serve`` (its
Interactions Endpoint URL), answered on the bot's HTTP port (:mod:`bot.health`).

Each request is checked before anything reads it: its body no larger than
:data:`bot.health.MAX_REQUEST_BODY` (aiohttp refuses a larger one with 413 before reading it)
and sent whole within :data:`bot.health.REQUEST_PATIENCE` (a body trickled in slower is
answered 408 and its connection closed); its ``X-Signature-Ed25519`` the application's Ed25519
signature (``DISCORD_PUBLIC_KEY``, checked with PyNaCl) of its ``X-Signature-Timestamp`` and
raw body; that timestamp within :data:`STALE_AFTER` seconds of this host's clock; its
interaction not one this process was already given. Any of those failing is answered 401 and
nothing else happens (one DEBUG line: anyone can send them, and Discord itself sends badly
signed ones when the URL is saved). A body that is not an interaction's JSON is answered 400.

A PING is answered with a PONG. Any other interaction goes where the gateway's
``INTERACTION_CREATE`` goes (discord.py's parser table, with :mod:`bot.fast_clicks` in front),
so the same handlers answer it; the request waits for the first answer, which
:meth:`bot.answers.Answers.first` hands it (:class:`bot.answers.Responding`), and writes it as
its response. Handlers defer within Discord's 3 s as over the gateway (``Answer.in_time``); an
interaction no handler takes (a click discord.py drops) gets a 503 after
:data:`ANSWER_PATIENCE`, and Discord shows the user that it failed, as over the gateway.

discord.py answers autocompletes itself (``InteractionResponse.autocomplete``), through its
webhook adapter: the adapter of the tasks an interaction POSTed here starts hands its choices to
the waiting request instead (:class:`_RespondingAdapter`). The adapter's context variable
(``discord.webhook.async_.async_context``) and ``create_interaction_response`` are private API
of discord.py's, checked by ``tests/test_bot_endpoint.py``.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
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
# How long a request waits for its interaction's first answer: Discord's own deadline (a
# handler defers long before, at bot.answers.DEFER_AFTER).
ANSWER_PATIENCE = 3.0
_PING = 1
_PONG = orjson.dumps({"type": 1})
_JSON = "application/json"
_AUTOCOMPLETE_RESULT = 8


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
    ``INTERACTION_CREATE``."""

    def __init__(
        self,
        public_key: str,
        answers: Answers,
        parse: Callable[[Any], None],
        *,
        wall_clock: Callable[[], float] = time.time,
        answer_patience: float = ANSWER_PATIENCE,
        body_patience: float = REQUEST_PATIENCE,
    ) -> None:
        self._key = nacl.signing.VerifyKey(bytes.fromhex(public_key))
        self._answers = answers
        self._parse = parse
        self._wall_clock = wall_clock
        self._answer_patience = answer_patience
        self._body_patience = body_patience
        self._adapter = _RespondingAdapter(answers)
        # Interactions given to this process within the staleness window, by id: one sent
        # again (a replayed request) is refused.
        self._seen: collections.OrderedDict[int, float] = collections.OrderedDict()
        self.open = False  # set once the bot is set up, cleared when it stops

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            # Over the application's client_max_size: 413. aiohttp's own patience covers the
            # headers, not a body that trickles in.
            async with asyncio.timeout(self._body_patience):
                body = await request.read()
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
        if not isinstance(data, dict) or not isinstance(data.get("type"), int):
            return web.Response(status=400, text="not an interaction\n")
        if data["type"] == _PING:
            return web.Response(body=_PONG, content_type=_JSON)
        try:
            interaction_id = int(data["id"])
        except (KeyError, TypeError, ValueError):
            return web.Response(status=400, text="not an interaction\n")
        if not self.open:
            return web.Response(status=503, text="not serving interactions now\n")
        if not self._first_sight(interaction_id):
            log.debug("refused interaction %s: it was sent before", interaction_id)
            return web.Response(status=401, text="interaction already received\n")
        responding = self._answers.respond(interaction_id)
        if responding is None:  # unreachable after _first_sight, but never answer twice
            return web.Response(status=401, text="interaction already received\n")
        try:
            return await self._answered(request, data, responding)
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
        if not (timestamp.isascii() and timestamp.isdigit()):
            return "a timestamp that is no number of seconds"
        if abs(self._wall_clock() - int(timestamp)) > STALE_AFTER:
            return f"a timestamp more than {STALE_AFTER:g} s from this host's clock"
        return None

    def _first_sight(self, interaction_id: int) -> bool:
        now = self._wall_clock()
        seen = self._seen
        while seen and next(iter(seen.values())) < now - 2 * STALE_AFTER:
            seen.popitem(last=False)
        if interaction_id in seen:
            return False
        seen[interaction_id] = now
        return True

    async def _answered(
        self, request: web.Request, data: dict[str, Any], responding: Responding
    ) -> web.StreamResponse:
        # The tasks discord.py starts for the interaction inherit this context: their
        # autocomplete answers go to this request too.
        adapter = async_context.set(self._adapter)
        try:
            self._parse(data)
        finally:
            async_context.reset(adapter)
        try:
            body = await asyncio.wait_for(asyncio.shield(responding.body), self._answer_patience)
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
