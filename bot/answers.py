"""How an interaction is answered: its one answer state, and its answers through discord.py.

Discord takes one first answer per interaction within 3 s (a message, an edit of the clicked
message, or a deferral), then edits and follow-ups through its token. What became of that first
answer is kept in one :class:`AnswerState` per interaction, made by whichever path sees the
interaction first: :mod:`bot.fast_clicks`, which answers plain clicks from the gateway payload
and hands on the rest with the state, or :meth:`Answers.begin` for everything discord.py
routes. A failed answer is judged by one rule, :func:`judge`, on both paths.
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

from bot import i18n, render
from bot.i18n import Language

log = logging.getLogger(__name__)

T = TypeVar("T")

# Discord refuses a first answer that arrives more than 3 s after the interaction was sent;
# one still unanswered this long into its handling is deferred (see Answer.in_time()).
DEFER_AFTER = 1.5
# What answering through Discord can fail with: an HTTP error, a dropped connection, a timeout.
ANSWER_FAILURES = (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError)
UNKNOWN_INTERACTION = 10062  # Discord's error code for an interaction it no longer knows
# discord.py routes an interaction it is handed within a few turns of the event loop.
HAND_ON_PATIENCE = 5.0


class First(enum.Enum):
    """What became of an interaction's first answer."""

    NONE = enum.auto()  # none sent yet, or Discord refused one without taking it
    SHOWN = enum.auto()  # a message, or an edit of the clicked one: later answers follow up
    DEFERRED = enum.auto()  # a click deferred: its answer edits the clicked message
    THINKING = enum.auto()  # a command deferred: "thinking..." until its answer replaces it
    UNSURE = enum.auto()  # its connection dropped: Discord may have taken it
    GONE = enum.auto()  # Discord no longer knows the interaction: nothing more goes through


class Failure(enum.Enum):
    """How an answer failed, by :func:`judge`."""

    UNSURE = enum.auto()  # no status came back: it may have been taken
    GONE = enum.auto()  # "Unknown interaction": too late, or never known
    REFUSED = enum.auto()  # any other status: not taken, and may be sent again


def judge(status: int | None, code: int | None) -> Failure:
    """The one rule for a failed answer, on both paths: no status, unsure; a 404 with
    Discord's code 10062, gone; anything else, refused."""
    if status is None:
        return Failure.UNSURE
    if status == 404 and code == UNKNOWN_INTERACTION:
        return Failure.GONE
    return Failure.REFUSED


def judge_error(error: BaseException) -> Failure:
    """:func:`judge` of what discord.py raised: an HTTP error has a status, anything else
    (a dropped connection, a timeout) has none."""
    if isinstance(error, discord.HTTPException):
        return judge(error.status, error.code)
    return Failure.UNSURE


@dataclass(eq=False)
class AnswerState:
    """One interaction's answer, as far as it got, on whichever path it is answered."""

    interaction_id: int
    token: str
    received_at: float  # the event loop's time when the bot first saw it
    first: First = First.NONE
    # An answer was tried: a deferral no longer goes out (it would cross or follow it).
    tried: bool = False
    # The first answer tried, while it may yet have arrived (UNSURE), and the message Discord,
    # asked, said it showed.
    first_message: render.Message | None = None
    acknowledged: int | None = None
    # What the bot began for it before handing it on (a move, a rematch), under way or done.
    work: asyncio.Future[Any] | None = None
    shown_games: set[int] = field(default_factory=set)  # the games its answers showed
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one answer at a time
    taken: asyncio.Event = field(default_factory=asyncio.Event)  # handed on, and taken

    def failed(self, failure: Failure, message: render.Message) -> None:
        """Note how a first answer, ``message``, failed. Refused, it was not taken: the next
        answer is a first again (and may be a deferral)."""
        if failure is Failure.REFUSED:
            return
        self.tried = True
        self.first = First.UNSURE if failure is Failure.UNSURE else First.GONE
        self.first_message = message

    async def resume(self, start: Callable[[], Awaitable[T]]) -> T:
        """The work begun for this interaction before it was handed on, or ``start()``'s:
        either way it is done once."""
        if self.work is not None:
            return cast(T, await self.work)
        return await start()


class Answers:
    """The answer states of this process's interactions: those handed on from the gateway
    payload wait here for discord.py to route their interaction."""

    def __init__(self, *, defer_after: float = DEFER_AFTER) -> None:
        self.defer_after = defer_after
        self._handed_on: dict[int, AnswerState] = {}

    @property
    def handed_on(self) -> Mapping[int, AnswerState]:
        """States handed on and not yet taken: each is taken as discord.py routes it."""
        return self._handed_on

    async def hand_on(self, state: AnswerState, parse: Callable[[], None]) -> None:
        """Leave ``state`` for :meth:`begin` and let discord.py ``parse`` the interaction;
        returns once its handler took it, so that it counts as in flight all along."""
        self._handed_on[state.interaction_id] = state
        parse()
        try:
            await asyncio.wait_for(state.taken.wait(), HAND_ON_PATIENCE)
        except TimeoutError:
            log.error(
                "discord.py did not route interaction %s to its handler", state.interaction_id
            )
            self._handed_on.pop(state.interaction_id, None)

    def begin(self, interaction: discord.Interaction[Any]) -> Answer:
        """Answering ``interaction``: with the state it was handed on with, if it was."""
        state = self._handed_on.pop(interaction.id, None)
        if state is None:
            loop = asyncio.get_running_loop()
            state = AnswerState(interaction.id, interaction.token, loop.time())
        else:
            state.taken.set()
        return Answer(interaction, state, self.defer_after)


class Answer:
    """An interaction being answered through discord.py, with its :class:`AnswerState`."""

    def __init__(
        self, interaction: discord.Interaction[Any], state: AnswerState, defer_after: float
    ) -> None:
        self.interaction = interaction
        self.state = state
        self._defer_after = defer_after

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
        out ``defer_after`` seconds after it arrived (a locked database, a slow or
        rate-limited Discord), it is deferred, and the answers below then finish it with an
        edit or a follow-up."""
        loop = asyncio.get_running_loop()
        # A timer, not a sleeping task: most interactions are answered long before it fires.
        deferring: list[asyncio.Task[None]] = []
        timer = loop.call_at(
            self.state.received_at + self._defer_after,
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
            # An answer that was tried and failed is not retried as a deferral: Discord
            # refused it (too late, or gone), or it may have arrived after all.
            if state.first is not First.NONE or state.tried:
                return
            command = self.interaction.type is discord.InteractionType.application_command
            try:
                # A command shows "thinking..." until its answer replaces it; a click keeps
                # its message as it is until the answer edits it.
                await self.interaction.response.defer(thinking=command)
            except ANSWER_FAILURES as error:
                log.warning("could not defer interaction %s: %s", state.interaction_id, error)
                return
            state.first = First.THINKING if command else First.DEFERRED

    async def post(self, message: render.Message, *, ephemeral: bool = False) -> int | None:
        """Answer with a new message (public: a board, a challenge, stats; or for the user
        alone); the id of the message shown, or None if it could not be shown (logged:
        whatever it shows is already saved, and the caller or the sweeper shows it another
        way). A first answer that may have arrived with this same message is that message."""
        state, interaction = self.state, self.interaction
        async with state.lock:
            state.tried = True
            first: bool | None = None
            try:
                first = await self._first_answer_due()
                if first is None:
                    return None
                if state.acknowledged is not None and _same(message, state.first_message):
                    return state.acknowledged
                kwargs = message.send_kwargs()
                if first:
                    callback = await interaction.response.send_message(
                        **kwargs, ephemeral=ephemeral
                    )
                    state.first = First.SHOWN
                    return callback.message_id
                if state.first is First.THINKING:
                    if not ephemeral:
                        edited = await interaction.edit_original_response(**message.edit_kwargs())
                        state.first = First.SHOWN
                        return edited.id
                    # Discord fills a deferred command's public "thinking..." with its first
                    # follow-up, ephemeral or not: it goes first, so the answer stays private.
                    await interaction.delete_original_response()
                    state.first = First.SHOWN
                sent = await interaction.followup.send(**kwargs, ephemeral=ephemeral, wait=True)
                return sent.id
            except ANSWER_FAILURES as error:
                log.warning("could not answer interaction %s: %s", state.interaction_id, error)
                if first and self._failed_first(error, message):
                    # Asked now, so that the message is not posted again by whoever handles
                    # this.
                    return await self._acknowledged_after_all()
                return None

    async def update(self, message: render.Message) -> bool:
        """Answer a click by editing the message it is on; False if that failed (logged)."""
        state, interaction = self.state, self.interaction
        async with state.lock:
            state.tried = True
            first: bool | None = None
            try:
                first = await self._first_answer_due()
                if first is None:
                    return False
                if first:
                    await interaction.response.edit_message(**message.edit_kwargs())
                    state.first = First.SHOWN
                else:  # deferred or answered: the original response is the clicked message
                    await interaction.edit_original_response(**message.edit_kwargs())
            except ANSWER_FAILURES as error:
                log.warning(
                    "could not update message of interaction %s: %s", state.interaction_id, error
                )
                if first:
                    self._failed_first(error, message)
                return False
        return True

    async def tell(self, sentence: str) -> None:
        """``sentence`` for the user alone."""
        await self.post(render.plain_text(sentence), ephemeral=True)

    async def _first_answer_due(self) -> bool | None:
        """True if the next answer is the interaction's first; False if it has one (the next
        goes as a follow-up, or edits it); None if that cannot be known: a first answer
        dropped with its connection, which Discord says it does not have. Left unanswered
        then, rather than risk answering twice."""
        match self.state.first:
            case First.NONE:
                return True
            case First.GONE:
                return None
            case First.UNSURE:
                return None if await self._acknowledged_after_all() is None else False
        return False

    def _failed_first(self, error: BaseException, message: render.Message) -> bool:
        """Note how a first answer, ``message``, failed; whether it may have reached Discord
        all the same."""
        failure = judge_error(error)
        self.state.failed(failure, message)
        return failure is Failure.UNSURE

    async def _acknowledged_after_all(self) -> int | None:
        """After a first answer whose connection dropped, the message Discord has of it, if
        any."""
        state = self.state
        try:
            message = await self.interaction.original_response()
        except ANSWER_FAILURES:
            return None
        log.info("the answer to interaction %s went through after all", state.interaction_id)
        state.first, state.acknowledged = First.SHOWN, message.id
        return message.id


def _same(message: render.Message, tried: render.Message | None) -> bool:
    return tried is not None and (tried is message or tried.payload() == message.payload())
