"""Board clicks answered straight from the gateway payload: the bot's hot path.

Clicks on a board are most of what the bot answers: a cell, and Rematch when a game is over.
For each, discord.py builds an ``Interaction`` with its ``Message`` (an embed and ten buttons),
rebuilds a ``View`` from that message to route the click to its ``DynamicItem``, and parses the
message Discord sends back with the answer: about 0.4 ms of CPU a click, as much as the move
itself (``bench/README.md``). Here the few fields a click needs are read from the payload, the
move (or the rematch) is played through the service, and the board :mod:`bot.render` draws is
sent as the JSON discord.py would send: the clicked message edited for a move, a new message
for a rematch.

Only the plain case is answered here: a cell or Rematch on a board, in a server channel the
bot can see and write in, played without error within the deferral deadline, the answer
accepted by Discord. Everything else goes on through discord.py as if this module had not
looked: the payload to discord.py's own parser, with the interaction's
:class:`~bot.answers.AnswerState` (the move or the rematch under way or refused, an answer
whose connection dropped) handed on through :meth:`bot.answers.Answers.hand_on`, so the
handler that discord.py routes it to goes on from there.

discord.py has no public hook before it builds an interaction: this replaces the
``INTERACTION_CREATE`` entry of its parser table (``ConnectionState.parsers``), private API that
``tests/test_bot_fast_clicks.py`` checks on every run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import discord

from bot import events, logs, render
from bot.answers import Answers, AnswerState, Kind
from bot.boards import Boards, may_write
from bot.components import CELL_ID, GAME_ACTION_ID
from bot.domain import Actor
from bot.events import Parser
from bot.metrics import InteractionKind
from bot.service import Clicked, GameService, MoveResult, Started
from bot.storage.base import DatabaseUnavailableError, GameRecord

log = logging.getLogger(__name__)

_COMPONENT_INTERACTION = 3
_BUTTON = 2
_GUILD_CONTEXT = 0
_GUILD_INSTALL = "0"  # authorizing_integration_owners' key for an app installed in a server
_THREAD_TYPES = frozenset(
    kind.value
    for kind in (
        discord.ChannelType.news_thread,
        discord.ChannelType.public_thread,
        discord.ChannelType.private_thread,
    )
)


@dataclass(frozen=True, slots=True)
class BoardClick:
    """A click this module answers: who clicked a button of which game's board."""

    interaction_id: int
    token: str
    game_id: int
    user: Actor
    clicked: Clicked


@dataclass(frozen=True, slots=True)
class CellClick(BoardClick):
    """A cell played: the board is edited in place."""

    ply: int
    cell: int


@dataclass(frozen=True, slots=True)
class RematchClick(BoardClick):
    """Rematch on a finished board: the new game's board is a new message."""


def board_click(data: Mapping[str, Any]) -> CellClick | RematchClick | None:
    """The click an ``INTERACTION_CREATE`` payload carries, if it is one answered here: a cell
    or Rematch button on the board of the game it names, in a server channel the bot
    can see and write in (elsewhere only the interaction's token reaches the channel). None
    for anything else, malformed payloads included: discord.py and the cog answer those."""
    try:
        return _board_click(data)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _board_click(data: Mapping[str, Any]) -> CellClick | RematchClick | None:
    inner = data["data"]
    if (
        data["type"] != _COMPONENT_INTERACTION
        or inner["component_type"] != _BUTTON
        or data.get("context") != _GUILD_CONTEXT
    ):
        return None
    custom_id = inner["custom_id"]
    cell = CELL_ID.parse(custom_id)
    fields = cell or GAME_ACTION_ID.parse(custom_id)
    guild_id = data.get("guild_id")
    if fields is None or guild_id is None or (cell is None and fields["action"] != "rematch"):
        return None
    if (data.get("authorizing_integration_owners") or {}).get(_GUILD_INSTALL) != guild_id:
        return None
    if not _reaches_channel(data):
        return None
    message = data["message"]
    game_id = int(fields["game"])
    # As discord.py routes a click: only to a button the message has. And as the cog checks:
    # only on the board of the game the button names.
    if render.board_game_id_in(message) != game_id or custom_id not in _custom_ids(
        message["components"]
    ):
        return None
    member = data["member"]
    user = member["user"]
    name = member.get("nick") or user.get("global_name") or user["username"]
    common: dict[str, Any] = {
        "interaction_id": int(data["id"]),
        "token": str(data["token"]),
        "game_id": game_id,
        "user": Actor(
            int(user["id"]),
            str(name),
            is_bot=bool(user.get("bot", False)),
            roles=frozenset(int(role) for role in member.get("roles") or ()),
        ),
        "clicked": Clicked(int(data["channel_id"]), int(message["id"])),
    }
    if cell is None:
        return RematchClick(**common)
    return CellClick(**common, ply=int(cell["ply"]), cell=int(cell["cell"]))


def _reaches_channel(data: Mapping[str, Any]) -> bool:
    """:func:`bot.boards.reaches_channel` for a server channel, read from the payload."""
    allowed = discord.Permissions(int(data["app_permissions"]))
    in_thread = (data.get("channel") or {}).get("type") in _THREAD_TYPES
    return may_write(allowed, in_thread=in_thread)


def _custom_ids(components: list[Mapping[str, Any]]) -> Iterator[str]:
    for component in components:
        if "custom_id" in component:
            yield component["custom_id"]
        yield from _custom_ids(component.get("components") or [])


class FastClicks:
    """Answers plain board clicks before discord.py builds anything for them (see the
    module)."""

    def __init__(
        self,
        answers: Answers,
        in_flight: Callable[[], AbstractAsyncContextManager[None]],
        done: Callable[[AnswerState], None],
    ) -> None:
        self._answers = answers
        self._in_flight = in_flight
        self._done = done  # told how each click answered here ended
        self._service: GameService | None = None
        self._boards: Boards | None = None
        self._parse: Parser | None = None
        self._shard_count: Callable[[], int | None] = lambda: None
        self._answering: set[asyncio.Task[None]] = set()
        self.answered = 0  # clicks answered here, not handed on

    def install(
        self,
        parsers: dict[str, Parser],
        *,
        service: GameService,
        boards: Boards,
        shard_count: Callable[[], int | None],
    ) -> None:
        """Put :meth:`_parse_interaction` in front of discord.py's parser of interactions
        (``parsers``, its ``ConnectionState.parsers``)."""
        self._service, self._boards = service, boards
        self._shard_count = shard_count
        self._parse = parsers["INTERACTION_CREATE"]
        parsers["INTERACTION_CREATE"] = self._parse_interaction

    def _parse_interaction(self, data: Any) -> None:
        assert self._parse is not None
        click = board_click(data)
        if click is None:
            self._parse(data)
            return
        task = asyncio.create_task(self._answer(click, data), name="ttt-fast-click")
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    def _play(self, click: CellClick | RematchClick) -> Awaitable[MoveResult | Started]:
        assert self._service is not None
        if isinstance(click, CellClick):
            return self._service.move_on_board(
                click.game_id, click.user, click.cell, click.clicked, click.ply
            )
        return self._service.rematch(click.game_id, click.user, click.clicked)

    async def _answer(self, click: CellClick | RematchClick, data: Any) -> None:
        state = AnswerState(
            click.interaction_id, click.token, self._answers.seen_at(click.interaction_id)
        )
        guild_id = int(data["guild_id"])
        fields = logs.InteractionFields(
            click.interaction_id,
            InteractionKind.COMPONENT,
            "cell" if isinstance(click, CellClick) else "rematch",
            guild_id,
            click.clicked.channel_id,
            logs.shard_of(guild_id, self._shard_count()),
        )
        with logs.about(fields):
            await self._answer_here(click, data, state)

    async def _answer_here(
        self, click: CellClick | RematchClick, data: Any, state: AnswerState
    ) -> None:
        async with self._in_flight():
            state.work = work = asyncio.ensure_future(self._play(click))
            # Past the deferral deadline the click needs deferring, and a refusal a private
            # sentence in the user's language: discord.py's interaction and bot.answers do
            # those.
            await asyncio.wait({work}, timeout=self._answers.defer_after)
            if not work.done() or work.cancelled() or work.exception() is not None:
                await self._hand_on(state, data)
                return
            assert self._boards is not None
            try:
                game, note = await self._boards.as_stored_if_late(*_shown(work.result()))
                message = render.board_message(game, note)
            except Exception:  # the handler draws it again, and reports what fails
                await self._hand_on(state, data)
                return
            editing = isinstance(click, CellClick)
            async with state.lock:
                shown = await self._answers.first(
                    state, Kind.UPDATE if editing else Kind.MESSAGE, message
                )
            if not shown:
                await self._hand_on(state, data)
                return
            self.answered += 1
            self._done(state)
            message_id = click.clicked.message_id if editing else state.message_id
            if message_id is None:
                # Shown, but Discord did not say as what: as when discord.py's answer says
                # nothing, the game stays without a board until the sweeper posts one.
                log.warning("interaction %s was answered without a message", click.interaction_id)
                return
            # The game is saved and shown either way; only an older board may linger, until
            # a click on it or on this one adopts this one again.
            # When it became the board: a board posted since stays (see Boards.adopt_board).
            as_of = click.interaction_id if editing else message_id
            try:
                await self._boards.adopt_board(game, message_id, as_of, reaches=True)
                await self._boards.close_thread(game)
            except DatabaseUnavailableError as error:  # an outage, not a bug of the bot's
                log.warning(
                    "could not make message %s the board of game %s: %s",
                    message_id,
                    game.id,
                    error,
                )
            except Exception:
                log.exception("could not make message %s the board of game %s", message_id, game.id)

    async def _hand_on(self, state: AnswerState, data: Any) -> None:
        """Let discord.py build the interaction and route it to its handler, which goes on
        with ``state`` (a click that passed :func:`board_click` gets there, unless discord.py
        cannot read its payload)."""
        assert self._parse is not None
        parse = self._parse
        if not await self._answers.hand_on(
            state, lambda: events.read("INTERACTION_CREATE", parse, data)
        ):
            self._done(state)  # no handler will: counted as it stands


def _shown(result: MoveResult | Started) -> tuple[GameRecord, str | None]:
    """The game a click's answer shows, and the note above its board."""
    if isinstance(result, MoveResult):
        return result.game, render.move_note(result.game, result.cell, result.ai_cell)
    return result.game, render.move_note(result.game, None, result.ai_cell)
