"""How an interaction is answered: its one answer state, its first answer, and the rest.

Discord takes one first answer per interaction within 3 s of sending it (a message, an edit of
the clicked message, or a deferral), then edits and follow-ups through its token for 15
minutes. What became of the first answer is kept in one :class:`AnswerState` per interaction,
made by whichever path sees the interaction first: :mod:`bot.fast_clicks`, which answers plain
clicks from the gateway payload and hands on the rest with their state, or
:meth:`Answers.begin` for everything discord.py routes.

Both paths send first answers through :meth:`Answers.first`, which judges a failed one by one
rule (:func:`judge`) and sends a lost one again while Discord's deadline allows: Discord refuses
a second first answer (400, code 40060), so sending again never shows anything twice, and that
refusal says the first one arrived. Past the deadline, Discord is asked what it has
(``GET @original``), and nothing more is sent if it has nothing. Edits and follow-ups go
through discord.py.

An interaction POSTed to ``python -m bot serve`` (:mod:`bot.endpoint`) is answered first in
that request's HTTP response instead: :meth:`Answers.first` hands the same callback body to the
request waiting for it (:class:`Responding`). There is no lost answer to send again there: a
response Discord hung up on is gone, and a new message's id is asked of Discord afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import aiohttp
import discord
import orjson

from bot import i18n, render
from bot.i18n import Language
from bot.metrics import InteractionKind, Metrics, Outcome, kind_of

log = logging.getLogger(__name__)

T = TypeVar("T")

# Discord refuses a first answer that arrives more than 3 s after the interaction was sent;
# one still unanswered this long after the bot saw it is deferred (see Answer.in_time()).
DEFER_AFTER = 1.5
# No first answer is sent again later than this after the bot saw the interaction: what is
# left of Discord's 3 s covers the way there.
LAST_TRY_AFTER = 2.5
# The first wait before sending a lost first answer again; each next wait is twice as long.
RETRY_AFTER = 0.1
# What answering through Discord can fail with: an HTTP error, a dropped connection, a timeout.
ANSWER_FAILURES = (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError)
# Discord's error codes: an interaction it no longer knows, and one already answered.
UNKNOWN_INTERACTION = 10062
ALREADY_ANSWERED = 40060
# A message Discord refuses as malformed; among its reasons, a custom emoji on a button that no
# longer exists (BUTTON_COMPONENT_INVALID_EMOJI, "Invalid emoji").
INVALID_FORM_BODY = 50035
INVALID_EMOJI = "Invalid emoji"
EPHEMERAL = 1 << 6  # the message flag
# discord.py routes an interaction it is handed within a few turns of the event loop.
HAND_ON_PATIENCE = 5.0
# Beyond Discord's 3 s for a first answer, an answer still on its way may yet have arrived.
ANSWER_TIMEOUT = aiohttp.ClientTimeout(total=10)
# Discord makes the message an HTTP response shows once it has read the response: asking for
# its id right after may come too soon. The first wait before asking again, doubled each time.
ORIGINAL_RETRY_AFTER = 0.05
ORIGINAL_TRIES = 5
# The longest wait a 429 to that question is waited out for, each time: the handler (and the
# game it answers for) is held meanwhile.
ORIGINAL_LIMIT_PATIENCE = 2.0


class Kind(enum.IntEnum):
    """A first answer: the interaction callback types the bot sends."""

    MESSAGE = 4  # a new message
    THINKING = 5  # a command deferred: "thinking..." until its answer replaces it
    DEFERRED = 6  # a click deferred: its message stays as it is until the answer edits it
    UPDATE = 7  # the clicked message edited


class First(enum.Enum):
    """What became of an interaction's first answer."""

    NONE = enum.auto()  # none was taken yet
    SHOWN = enum.auto()  # a message, or an edit of the clicked one: later answers follow up
    DEFERRED = enum.auto()  # a click deferred: its answer edits the clicked message
    THINKING = enum.auto()  # a command deferred: its answer replaces "thinking..."
    UNSURE = enum.auto()  # its connection dropped: Discord may have taken it
    GONE = enum.auto()  # Discord no longer knows the interaction: nothing more goes through


# What a first answer of each kind, once taken, makes of the interaction.
_TAKEN = {
    Kind.MESSAGE: First.SHOWN,
    Kind.UPDATE: First.SHOWN,
    Kind.THINKING: First.THINKING,
    Kind.DEFERRED: First.DEFERRED,
}


class Failure(enum.Enum):
    """How an answer failed, by :func:`judge`."""

    UNSURE = enum.auto()  # no status came back: it may have been taken
    GONE = enum.auto()  # "Unknown interaction": too late, or never known
    ANSWERED = enum.auto()  # "already acknowledged": an earlier first answer was taken
    REFUSED = enum.auto()  # any other status: not taken


def refuses_emoji(status: int | None, code: int | None, errors: str) -> bool:
    """Whether Discord refused a message for a custom emoji on its buttons (one deleted since
    it was chosen): a 400 with code 50035 whose field ``errors`` (as text) say so."""
    return status == 400 and code == INVALID_FORM_BODY and INVALID_EMOJI in errors


# Told that Discord refused a game's board for a server's custom emoji: the game gives them up
# (bot.client.TTTBot.marks_refused) before the board goes again with the bot's own marks.
MarksRefused = Callable[[render.MarksFallback], Awaitable[None]]


async def sent_or_plain(
    message: render.Message,
    send: Callable[[render.Message], Awaitable[T]],
    refused: MarksRefused,
) -> T:
    """``send(message)`` through discord.py; if Discord refuses a server's custom emoji on
    the board, the same board with the bot's own marks, once ``refused`` was told."""
    try:
        return await send(message)
    except discord.HTTPException as error:
        fallback = message.fallback
        if fallback is None or not refuses_emoji(error.status, error.code, error.text):
            raise
        log.info("Discord refused the custom emoji of game %s: %s", fallback.game_id, error)
    await refused(fallback)
    return await send(fallback.message)


def judge(status: int | None, code: int | None) -> Failure:
    """The one rule for a failed answer, on both paths: no status, unsure; a 404 with
    Discord's code 10062, gone; a 400 with its code 40060, answered already; anything else,
    refused."""
    if status is None:
        return Failure.UNSURE
    if status == 404 and code == UNKNOWN_INTERACTION:
        return Failure.GONE
    if status == 400 and code == ALREADY_ANSWERED:
        return Failure.ANSWERED
    return Failure.REFUSED


@dataclass(eq=False)
class AnswerState:
    """One interaction's answer, as far as it got, on whichever path it is answered."""

    interaction_id: int
    token: str
    received_at: float  # the event loop's time when the bot first saw it
    label: InteractionKind = InteractionKind.COMPONENT  # its kind, as the metrics and logs name it
    first: First = First.NONE
    # Its first answer was a deferral (the answer itself came after), and how long after the
    # interaction's creation the first answer was taken, in seconds.
    deferred: bool = False
    latency: float | None = None
    # A mistake of the user's (refused) or a fault (failed), as the user was told.
    reported: Outcome | None = None
    # An answer was tried: a deferral no longer goes out (it would cross or follow it).
    tried: bool = False
    # The first answer sent last, taken or maybe taken, and the message it showed (once known).
    sent: tuple[Kind, render.Message | None] | None = None
    message_id: int | None = None
    # What the bot began for it before handing it on (a move, a rematch), under way or done.
    work: asyncio.Future[Any] | None = None
    shown_games: set[int] = field(default_factory=set)  # the games its answers showed
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one answer at a time
    taken: asyncio.Event = field(default_factory=asyncio.Event)  # handed on, and taken

    async def resume(self, start: Callable[[], Awaitable[T]]) -> T:
        """The work begun for this interaction before it was handed on, or ``start()``'s:
        either way it is done once."""
        if self.work is not None:
            return cast(T, await self.work)
        return await start()

    def outcome(self) -> Outcome:
        """How its handling ended, once it has: an answer that never got through is a
        failure, whatever it would have said."""
        if self.first in (First.NONE, First.UNSURE, First.GONE):
            return Outcome.FAILED
        if self.reported is not None:
            return self.reported
        return Outcome.DEFERRED if self.deferred else Outcome.ANSWERED

    def was_sent(self, kind: Kind, message: render.Message | None) -> bool:
        """Whether the first answer sent (taken, or maybe taken) was this one (or, for a
        board, the same with the bot's own marks: see :func:`sent_or_plain`)."""
        if self.sent is None or self.sent[0] is not kind:
            return False
        sent = self.sent[1]
        if sent is message:
            return True
        if sent is None or message is None:
            return False
        shown = [message, message.fallback.message] if message.fallback else [message]
        return any(sent.payload() == candidate.payload() for candidate in shown)


@dataclass(eq=False)
class Responding:
    """An interaction POSTed to the bot's endpoint, whose HTTP response waits for its first
    answer: :meth:`Answers.first` hands it the callback body, the endpoint writes it and says
    whether Discord took it (its connection stayed open until the response was written)."""

    interaction_id: int
    # The event loop's time when the endpoint had read its request: when the bot first saw
    # the interaction, though the endpoint may hold it a while before anything acts on it.
    read_at: float
    # The first answer's callback JSON; None once the endpoint stopped waiting for one.
    body: asyncio.Future[bytes | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    delivered: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def hand(self, body: bytes) -> bool:
        """Give the waiting request its response; False if it no longer waits (or has one)."""
        if self.body.done():
            return False
        self.body.set_result(body)
        return True

    def give_up(self) -> None:
        """The endpoint answers without a first answer: one coming later finds it gone."""
        if not self.body.done():
            self.body.set_result(None)
        if not self.delivered.done():
            self.delivered.set_result(False)


@dataclass(frozen=True, slots=True)
class _Reply:
    """What Discord answered to a request: its status and JSON, or (no status) what failed."""

    status: int | None
    body: Any = None

    def __str__(self) -> str:
        return str(self.body) if self.status is None else f"{self.status} {self.body}"

    @property
    def code(self) -> int | None:
        code = self.body.get("code") if isinstance(self.body, dict) else None
        return code if isinstance(code, int) else None

    @property
    def retry_after(self) -> float:
        wait = self.body.get("retry_after") if isinstance(self.body, dict) else None
        return float(wait) if isinstance(wait, int | float) else RETRY_AFTER

    def message_id(self, *path: str) -> int | None:
        found = self.body
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        try:
            return int(found) if found is not None else None
        except (TypeError, ValueError):
            return None


class Answers:
    """This process's answering: first answers on both paths, and the answer states handed
    on from the gateway payload, waiting for discord.py to route their interaction."""

    def __init__(
        self,
        metrics: Metrics,
        marks_refused: MarksRefused,
        *,
        defer_after: float = DEFER_AFTER,
        last_try_after: float = LAST_TRY_AFTER,
    ) -> None:
        self.metrics = metrics
        self.marks_refused = marks_refused
        self.defer_after = defer_after
        self.last_try_after = last_try_after
        self._handed_on: dict[int, AnswerState] = {}
        self._responding: dict[int, Responding] = {}
        self._session: aiohttp.ClientSession | None = None
        self._application_id = 0

    def open(self, user_agent: str, application_id: int) -> None:
        """Ready to send first answers as the application ``application_id``."""
        self._application_id = application_id
        self._session = aiohttp.ClientSession(
            timeout=ANSWER_TIMEOUT,
            headers={"User-Agent": user_agent, "Content-Type": "application/json"},
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    # -- the two paths ----------------------------------------------------------------------

    @property
    def handed_on(self) -> Mapping[int, AnswerState]:
        """States handed on and not yet taken: each is taken as discord.py routes it."""
        return self._handed_on

    async def hand_on(self, state: AnswerState, parse: Callable[[], bool]) -> bool:
        """Leave ``state`` for :meth:`begin` and let discord.py ``parse`` the interaction;
        returns once its handler took it (so that it counts as in flight all along), or
        False if it never will."""
        self._handed_on[state.interaction_id] = state
        if not parse():
            self._handed_on.pop(state.interaction_id, None)
            return False
        try:
            await asyncio.wait_for(state.taken.wait(), HAND_ON_PATIENCE)
        except TimeoutError:
            log.error(
                "discord.py did not route interaction %s to its handler", state.interaction_id
            )
            self._handed_on.pop(state.interaction_id, None)
            return False
        return True

    def begin(self, interaction: discord.Interaction[Any]) -> Answer:
        """Answering ``interaction``: with the state it was handed on with, if it was."""
        state = self._handed_on.pop(interaction.id, None)
        if state is None:
            state = AnswerState(
                interaction.id,
                interaction.token,
                self.seen_at(interaction.id),
                kind_of(interaction.type.value),
            )
        else:
            state.taken.set()
        return Answer(interaction, state, self)

    # -- interactions POSTed to the endpoint ------------------------------------------------

    def respond(self, interaction_id: int, read_at: float) -> Responding | None:
        """The first answer to ``interaction_id``, whose request was read at ``read_at`` (the
        event loop's time), goes to that waiting HTTP request (until :meth:`responded`); None
        if one already waits for it (a request sent twice)."""
        if interaction_id in self._responding:
            return None
        responding = Responding(interaction_id, read_at)
        self._responding[interaction_id] = responding
        return responding

    def responding(self, interaction_id: int) -> Responding | None:
        """The HTTP request waiting for ``interaction_id``'s first answer, if one does."""
        return self._responding.get(interaction_id)

    def seen_at(self, interaction_id: int) -> float:
        """When this process first saw ``interaction_id`` (the event loop's time): its
        request's reading if it was POSTed to the endpoint, else now. Its deferral is due
        :attr:`defer_after` from then, however long the endpoint held it."""
        responding = self._responding.get(interaction_id)
        return asyncio.get_running_loop().time() if responding is None else responding.read_at

    def responded(self, responding: Responding) -> None:
        """The endpoint is done with ``responding``'s request."""
        responding.give_up()
        if self._responding.get(responding.interaction_id) is responding:
            del self._responding[responding.interaction_id]

    # -- first answers ----------------------------------------------------------------------

    async def first(
        self,
        state: AnswerState,
        kind: Kind,
        message: render.Message | None = None,
        *,
        ephemeral: bool = False,
    ) -> bool | None:
        """Answer first with ``message`` (a deferral: none) if the interaction has no first
        answer yet. True if it shows (sent now, or an earlier try of it arrived; a new
        message's id is then ``state.message_id`` if Discord said it); False if another first
        answer was taken, so this one goes as an edit or a follow-up; None if it cannot be
        shown: Discord refused it, forgot the interaction, or has nothing of an answer lost
        too late to send again. The caller holds ``state.lock``."""
        loop = asyncio.get_running_loop()
        due = state.first is First.NONE or (
            state.first is First.UNSURE and loop.time() <= state.received_at + self.last_try_after
        )
        if due and await self._send(state, kind, message, ephemeral=ephemeral) is None:
            return True
        if state.first is First.NONE or state.first is First.GONE:  # refused, or gone
            return None
        if state.first is First.UNSURE and not await self._arrived(state):
            return None
        shown = state.was_sent(kind, message)
        if shown and kind is Kind.MESSAGE and state.message_id is None:
            await self._arrived(state)  # its id
        return shown

    async def _send(
        self,
        state: AnswerState,
        kind: Kind,
        message: render.Message | None,
        *,
        ephemeral: bool,
    ) -> Failure | None:
        """Send a first answer, and again while the deadline allows if no status came back,
        or Discord asked to wait (a 429, within the deadline) or failed (a 5xx); a board
        refused for a server's custom emoji goes again at once with the bot's own marks. None
        if Discord took it, else how it failed; ``state`` notes either. An interaction POSTed
        to the endpoint gets it as its HTTP response instead (:meth:`_respond`)."""
        responding = self._responding.get(state.interaction_id)
        if responding is not None:
            return await self._respond(state, responding, kind, message, ephemeral=ephemeral)
        loop = asyncio.get_running_loop()
        last_try = state.received_at + self.last_try_after
        body = _callback(kind, message, ephemeral=ephemeral)
        route = f"/interactions/{state.interaction_id}/{state.token}/callback"
        url = discord.http.Route.BASE + route
        if kind is Kind.MESSAGE:
            url += "?with_response=true"  # the new message's id
        state.tried = True
        wait = RETRY_AFTER
        while True:
            earlier, state.sent = state.sent, (kind, message)
            reply = await self._request("POST", url, body)
            if reply.status is not None and reply.status < 300:
                self._taken(state, kind)
                state.message_id = reply.message_id("interaction", "response_message_id")
                return None
            log.warning("could not answer interaction %s: %s", state.interaction_id, reply)
            fallback = message.fallback if message is not None else None
            if fallback is not None and refuses_emoji(reply.status, reply.code, str(reply.body)):
                await self.marks_refused(fallback)
                message = fallback.message
                body = _callback(kind, message, ephemeral=ephemeral)
                continue
            failure = judge(reply.status, reply.code)
            if failure is Failure.UNSURE:
                state.first = First.UNSURE
            elif failure is Failure.GONE:
                state.first = First.GONE
            elif failure is Failure.ANSWERED:
                # An earlier first answer, whose connection dropped, arrived after all.
                state.sent = earlier or state.sent
                self._taken(state, state.sent[0])
                return failure
            status = reply.status or 0
            limited = status == 429
            if not (failure is Failure.UNSURE or limited or status >= 500):
                return failure
            pause = reply.retry_after if limited else wait
            if loop.time() + pause > last_try:
                if limited and state.first is First.NONE:
                    # Nothing can go through the interaction in time (a deferral would meet
                    # the same limit): it is as good as gone.
                    log.warning(
                        "interaction %s is rate limited past Discord's deadline",
                        state.interaction_id,
                    )
                    state.first = First.GONE
                return failure
            log.info(
                "sending the first answer to interaction %s again in %.2f s",
                state.interaction_id,
                pause,
            )
            await asyncio.sleep(pause)
            wait *= 2

    async def _respond(
        self,
        state: AnswerState,
        responding: Responding,
        kind: Kind,
        message: render.Message | None,
        *,
        ephemeral: bool,
    ) -> Failure | None:
        """The first answer as the HTTP response of the request ``responding`` waits on. Nothing
        is sent again: a response written whole was taken, and one Discord hung up on, or
        that came after the endpoint stopped waiting, is gone with the request.

        Discord's refusal of a response's content reaches nobody (the user is shown that the
        interaction failed). The one refusal the bot expects, a server's custom emoji deleted
        since its game started, is met by deferring a board drawn with custom emoji in the
        response: the board then goes through the webhook (:meth:`Answer.post`,
        :meth:`Answer.update`), where a refusal falls back to the bot's own marks. Returns
        :attr:`Failure.ANSWERED` then: another first answer was taken."""
        state.tried = True
        deferred = message is not None and message.fallback is not None
        if deferred:
            kind, message = (Kind.THINKING if kind is Kind.MESSAGE else Kind.DEFERRED), None
        state.sent = (kind, message)
        if not responding.hand(_callback(kind, message, ephemeral=ephemeral)) or not (
            await asyncio.shield(responding.delivered)
        ):
            log.warning(
                "could not answer interaction %s: its request was over", state.interaction_id
            )
            state.first = First.GONE
            return Failure.GONE
        self._taken(state, kind)
        if deferred:
            return Failure.ANSWERED
        if kind is Kind.MESSAGE and not ephemeral:  # a private message is never edited later
            state.message_id = await self._original_id(state)
        return None

    async def _original_id(self, state: AnswerState) -> int | None:
        """The id of the message an HTTP response made, as Discord says once it has made it."""
        route = f"/webhooks/{self._application_id}/{state.token}/messages/@original"
        wait = ORIGINAL_RETRY_AFTER
        for tries_left in reversed(range(ORIGINAL_TRIES)):
            reply = await self._request("GET", discord.http.Route.BASE + route)
            if reply.status == 200:
                return reply.message_id("id")
            # Asked again: not made yet (404), asked too often (429: after the wait Discord
            # gives, if longer), Discord failing or out of reach. Any other answer is final.
            status = reply.status
            if status is not None and status not in (404, 429) and status < 500:
                break
            if not tries_left or (status == 429 and reply.retry_after > ORIGINAL_LIMIT_PATIENCE):
                break
            await asyncio.sleep(max(wait, reply.retry_after) if status == 429 else wait)
            wait *= 2
        log.warning(
            "Discord did not say which message answered interaction %s: %s",
            state.interaction_id,
            reply,
        )
        return None

    def _taken(self, state: AnswerState, kind: Kind) -> None:
        """Discord took ``state``'s first answer, of ``kind`` (known now, if not at once)."""
        state.first = _TAKEN[kind]
        state.deferred = kind in (Kind.THINKING, Kind.DEFERRED)
        if state.latency is None:
            state.latency = self.metrics.answered(state.label, state.interaction_id)

    async def _arrived(self, state: AnswerState) -> bool:
        """After a first answer whose connection dropped, whether Discord has it (then its
        message is ``state.message_id``)."""
        route = f"/webhooks/{self._application_id}/{state.token}/messages/@original"
        reply = await self._request("GET", discord.http.Route.BASE + route)
        if reply.status != 200:
            log.info("the answer to interaction %s did not arrive: %s", state.interaction_id, reply)
            return False
        log.info("the answer to interaction %s went through after all", state.interaction_id)
        self._taken(state, state.sent[0] if state.sent else Kind.MESSAGE)
        state.message_id = reply.message_id("id")
        return True

    async def _request(self, method: str, url: str, body: bytes | None = None) -> _Reply:
        assert self._session is not None, "Answers.open() first"
        try:
            async with self._session.request(method, url, data=body) as response:
                raw = await response.read()
                status = response.status
        except ANSWER_FAILURES as error:
            return _Reply(None, repr(error))
        self.metrics.discord_answered(status)
        try:
            parsed = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            parsed = raw.decode(errors="replace")
        return _Reply(status, parsed)


def _callback(kind: Kind, message: render.Message | None, *, ephemeral: bool) -> bytes:
    """The JSON of a first answer of ``kind`` showing ``message`` (a deferral: none)."""
    callback: dict[str, Any] = {"type": kind.value}
    if message is not None:
        callback["data"] = data = message.payload()
        if ephemeral:
            data["flags"] = data.get("flags", 0) | EPHEMERAL
    return orjson.dumps(callback)


class Answer:
    """An interaction being answered: the interaction discord.py built, its
    :class:`AnswerState`, and its answers."""

    def __init__(
        self, interaction: discord.Interaction[Any], state: AnswerState, answers: Answers
    ) -> None:
        self.interaction = interaction
        self.state = state
        self._answers = answers

    @property
    def private_language(self) -> Language:
        """The language of what only the interaction's user sees: their Discord client's."""
        return i18n.for_locale(self.interaction.locale)

    @property
    def public_language(self) -> Language:
        """The language of what the channel sees: the server's; outside servers, the user's."""
        interaction = self.interaction
        return i18n.for_locale(interaction.guild_locale or interaction.locale)

    @contextlib.asynccontextmanager
    async def in_time(self) -> AsyncIterator[None]:
        """Handle the interaction knowing it will be answered in time: if no answer went
        out a while after it arrived (a locked database, a slow or rate-limited Discord), it
        is deferred, and the answers below then finish it with an edit or a follow-up."""
        loop = asyncio.get_running_loop()
        # A timer, not a sleeping task: most interactions are answered long before it fires.
        deferring: list[asyncio.Task[None]] = []
        timer = loop.call_at(
            self.state.received_at + self._answers.defer_after,
            lambda: deferring.append(asyncio.create_task(self._defer(), name="ttt-defer")),
        )
        try:
            yield
        finally:
            timer.cancel()
            for task in deferring:
                task.cancel()
            await asyncio.gather(*deferring, return_exceptions=True)

    async def _defer(self) -> None:
        state = self.state
        async with state.lock:
            # An answer already tried is not followed by a deferral: it was sent again as
            # long as the deadline allowed, and Discord either took it or never will.
            if state.first is not First.NONE or state.tried:
                return
            command = self.interaction.type is discord.InteractionType.application_command
            # A command shows "thinking..." until its answer replaces it; a click keeps its
            # message as it is until the answer edits it.
            await self._answers.first(state, Kind.THINKING if command else Kind.DEFERRED)

    async def post(self, message: render.Message) -> int | None:
        """Answer with a new public message (a board, a challenge, stats): its id, or None if
        it could not be shown or its id is not known (logged: whatever it shows is already
        saved, and the caller or the sweeper shows it another way)."""
        shown, message_id = await self._new_message(message, ephemeral=False)
        return message_id if shown else None

    async def whisper(self, message: render.Message) -> bool:
        """Answer with a new message for the user alone: whether it was shown (logged if
        not). Its id is not asked for: nothing edits a private message later, and over HTTP
        asking would cost a request to Discord."""
        shown, _ = await self._new_message(message, ephemeral=True)
        return shown

    async def _new_message(
        self, message: render.Message, *, ephemeral: bool
    ) -> tuple[bool, int | None]:
        """Whether ``message`` was shown as a new message, and its id if known."""
        state, interaction = self.state, self.interaction
        async with state.lock:
            first = await self._answers.first(state, Kind.MESSAGE, message, ephemeral=ephemeral)
            if first is not False:
                return bool(first), state.message_id
            try:
                if state.first is First.THINKING:
                    if not ephemeral:
                        edited = await self._sent(message, self._edit_original)
                        state.first = First.SHOWN
                        return True, edited.id
                    # Discord fills a deferred command's public "thinking..." with its first
                    # follow-up, ephemeral or not: it goes first, so the answer stays private.
                    await interaction.delete_original_response()
                    state.first = First.SHOWN
                sent = await self._sent(
                    message,
                    lambda shown: interaction.followup.send(
                        **shown.send_kwargs(), ephemeral=ephemeral, wait=True
                    ),
                )
            except ANSWER_FAILURES as error:
                log.warning("could not answer interaction %s: %s", state.interaction_id, error)
                return False, None
            return True, sent.id

    async def update(self, message: render.Message) -> bool:
        """Answer a click by editing the message it is on; False if that failed (logged)."""
        state = self.state
        async with state.lock:
            first = await self._answers.first(state, Kind.UPDATE, message)
            if first is not False:
                return bool(first)
            try:
                # Deferred or answered: the original response is the clicked message.
                await self._sent(message, self._edit_original)
            except ANSWER_FAILURES as error:
                log.warning(
                    "could not update message of interaction %s: %s", state.interaction_id, error
                )
                return False
            return True

    async def _sent(
        self, message: render.Message, send: Callable[[render.Message], Awaitable[T]]
    ) -> T:
        return await sent_or_plain(message, send, self._answers.marks_refused)

    async def _edit_original(self, message: render.Message) -> discord.InteractionMessage:
        return await self.interaction.edit_original_response(**message.edit_kwargs())

    async def tell(self, sentence: str) -> bool:
        """``sentence`` for the user alone; whether it was shown."""
        return await self.whisper(render.plain_text(sentence))
