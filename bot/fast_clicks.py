"""Cell clicks answered straight from the gateway payload: the bot's hot path.

A click on a board's cell is most of what the bot answers. For each, discord.py builds an
``Interaction`` with its ``Message`` (an embed and ten buttons), rebuilds a ``View`` from that
message to route the click to its ``DynamicItem``, and parses the message Discord sends back
with the answer: about 0.4 ms of CPU a click, as much as the move itself (``bench/README.md``).
Here the few fields a move needs are read from the payload, the move is played through the
service, and the new board is posted as JSON.

Only the plain case is answered here: a cell of a classic board, in a server channel the bot can
see and write in, played without error within ``DEFER_AFTER``, the answer accepted by Discord.
Everything else goes on through discord.py as if this module had not looked: the payload to
discord.py's own parser, and what was already done (the move, under way or refused; an answer
whose connection dropped) to the cog's ``cell_clicked`` through :meth:`FastCellClicks.take`,
so the rules of answering stay in :mod:`bot.respond`.

discord.py has no public hook before it builds an interaction: this replaces the
``INTERACTION_CREATE`` entry of its parser table (``ConnectionState.parsers``), private API that
``tests/test_bot_fast_clicks.py`` checks on every run.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
import discord
import orjson

from bot import render, respond
from bot.components import CELL_ID
from bot.service import Actor, Clicked, MoveResult

if TYPE_CHECKING:
    from bot.client import TTTBot

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
# Beyond Discord's 3 s for a first answer, an answer still on its way may yet have arrived: the
# click is handed on unsure, and asked about (bot.respond).
ANSWER_TIMEOUT = aiohttp.ClientTimeout(total=10)
# discord.py routes a click it is handed within a few turns of the event loop.
HAND_ON_PATIENCE = 5.0


@dataclass(frozen=True, slots=True)
class CellClick:
    """A click this module answers: who played which cell of which board."""

    interaction_id: int
    token: str
    game_id: int
    ply: int
    cell: int
    user: Actor
    clicked: Clicked


def cell_click(data: Mapping[str, Any]) -> CellClick | None:
    """The click an ``INTERACTION_CREATE`` payload carries, if it is one answered here: a cell
    button on the classic board of the game it names, in a server channel the bot can see and
    write in (elsewhere only the interaction's token reaches the channel). None for anything
    else, malformed payloads included: discord.py and the cog answer those."""
    try:
        return _cell_click(data)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _cell_click(data: Mapping[str, Any]) -> CellClick | None:
    inner = data["data"]
    if (
        data["type"] != _COMPONENT_INTERACTION
        or inner["component_type"] != _BUTTON
        or data.get("context") != _GUILD_CONTEXT
    ):
        return None
    custom_id = inner["custom_id"]
    fields = CELL_ID.parse(custom_id)
    guild_id = data.get("guild_id")
    if fields is None or guild_id is None:
        return None
    if (data.get("authorizing_integration_owners") or {}).get(_GUILD_INSTALL) != guild_id:
        return None
    if not _reaches_channel(data):
        return None
    message = data["message"]
    game_id = int(fields["game"])
    # As discord.py routes a click: only to a button the message has. And as the cog checks:
    # only on the board of the game the button names.
    if _board_game_id(message) != game_id or custom_id not in _custom_ids(message["components"]):
        return None
    member = data["member"]
    user = member["user"]
    name = member.get("nick") or user.get("global_name") or user["username"]
    return CellClick(
        interaction_id=int(data["id"]),
        token=str(data["token"]),
        game_id=game_id,
        ply=int(fields["ply"]),
        cell=int(fields["cell"]),
        user=Actor(int(user["id"]), str(name), is_bot=bool(user.get("bot", False))),
        clicked=Clicked(int(data["channel_id"]), int(message["id"])),
    )


def _reaches_channel(data: Mapping[str, Any]) -> bool:
    """:func:`bot.respond.reaches_channel` for a server channel, read from the payload."""
    allowed = discord.Permissions(int(data["app_permissions"]))
    in_thread = (data.get("channel") or {}).get("type") in _THREAD_TYPES
    return respond.may_write(allowed, in_thread=in_thread)


def _board_game_id(message: Mapping[str, Any]) -> int | None:
    """:func:`bot.render.board_game_id` of a classic message, read from the payload; None for
    a components-v2 one, which has no embeds."""
    embeds = message.get("embeds") or ()
    return render.game_in_footers(str((e.get("footer") or {}).get("text", "")) for e in embeds)


def _custom_ids(components: list[Mapping[str, Any]]) -> Iterator[str]:
    for component in components:
        if "custom_id" in component:
            yield component["custom_id"]
        yield from _custom_ids(component.get("components") or [])


@dataclass(frozen=True, slots=True)
class HandedOn:
    """How far this module got with a click it handed on to discord.py."""

    moving: asyncio.Future[MoveResult]  # the move, under way or done (or refused)
    received_at: float  # the event loop's time when the click arrived
    # An answer was sent and its connection dropped (Discord may have taken it), or Discord
    # refused it as an unknown interaction (too late): see bot.respond.note_first_answer_failed.
    answer_unsure: bool = False
    gone: bool = False
    taken: asyncio.Event = field(default_factory=asyncio.Event)


class _Answer(enum.Enum):
    SHOWN = enum.auto()
    # Discord answered with an error and did not take the answer: discord.py answers instead,
    # retrying as it does (a 5xx, a 429)...
    REFUSED = enum.auto()
    GONE = enum.auto()  # ...unless it no longer knows the interaction (too late)
    UNSURE = enum.auto()  # the connection dropped, or timed out: it may have taken it


class FastCellClicks:
    """Answers plain cell clicks before discord.py builds anything for them (see the module)."""

    def __init__(self, bot: TTTBot) -> None:
        self._bot = bot
        self._session: aiohttp.ClientSession | None = None
        self._parse: Callable[[Any], None] | None = None
        self._handed_on: dict[int, HandedOn] = {}
        self._answering: set[asyncio.Task[None]] = set()
        self.answered = 0  # clicks answered here, not handed on

    def install(self) -> None:
        """Put :meth:`_parse_interaction` in front of discord.py's parser of interactions."""
        parsers: dict[str, Callable[[Any], None]] = self._bot._connection.parsers
        self._parse = parsers["INTERACTION_CREATE"]
        self._session = aiohttp.ClientSession(
            timeout=ANSWER_TIMEOUT,
            headers={"User-Agent": self._bot.http.user_agent, "Content-Type": "application/json"},
        )
        parsers["INTERACTION_CREATE"] = self._parse_interaction

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def take(self, interaction_id: int) -> HandedOn | None:
        """What this module did with a click before handing it on, if it did."""
        handed_on = self._handed_on.pop(interaction_id, None)
        if handed_on is not None:
            handed_on.taken.set()
        return handed_on

    @property
    def handed_on(self) -> Mapping[int, HandedOn]:
        """Clicks handed on and not yet taken: the cog takes each as discord.py routes it."""
        return self._handed_on

    def _parse_interaction(self, data: Any) -> None:
        assert self._parse is not None
        click = cell_click(data)
        if click is None:
            self._parse(data)
            return
        task = asyncio.create_task(self._answer(click, data), name="ttt-fast-click")
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer(self, click: CellClick, data: Any) -> None:
        loop = asyncio.get_running_loop()
        received_at = loop.time()
        bot = self._bot
        async with bot.in_flight():
            moving = asyncio.ensure_future(
                bot.service.move_on_board(
                    click.game_id, click.user, click.cell, click.clicked, click.ply
                )
            )
            # Past DEFER_AFTER the click needs deferring, and a refusal a private sentence in
            # the user's language: discord.py's interaction and bot.respond do those.
            await asyncio.wait({moving}, timeout=respond.DEFER_AFTER)
            if not moving.done() or moving.cancelled() or moving.exception() is not None:
                await self._hand_on(data, HandedOn(moving, received_at))
                return
            result = moving.result()
            try:
                note = render.move_note(result.game, result.cell, result.ai_cell)
                board = render.board_payload(result.game, note)
                body = orjson.dumps({"type": 7, "data": board})
            except Exception:  # the cog draws it again, and reports what fails
                await self._hand_on(data, HandedOn(moving, received_at))
                return
            try:
                answer = await self._post(click, body)
            except Exception:
                log.exception("could not answer interaction %s", click.interaction_id)
                answer = _Answer.UNSURE  # it may have been sent: the next answer asks first
            if answer is not _Answer.SHOWN:
                handed_on = HandedOn(
                    moving,
                    received_at,
                    answer_unsure=answer is _Answer.UNSURE,
                    gone=answer is _Answer.GONE,
                )
                await self._hand_on(data, handed_on)
                return
            self.answered += 1
            try:
                await bot.click_handler.adopt_board(
                    result.game, click.clicked.message_id, reaches=True
                )
            except Exception:  # the move is saved and shown; only the older board may linger
                log.exception(
                    "could not make message %s the board of game %s",
                    click.clicked.message_id,
                    click.game_id,
                )

    async def _post(self, click: CellClick, body: bytes) -> _Answer:
        """Answer ``click`` by editing its message, as discord.py would (without asking
        Discord to send the message back: nothing reads it)."""
        assert self._session is not None
        route = f"/interactions/{click.interaction_id}/{click.token}/callback"
        url = discord.http.Route.BASE + route
        try:
            async with self._session.post(url, data=body) as response:
                if response.status < 300:
                    return _Answer.SHOWN
                log.warning(
                    "could not answer interaction %s: %s %s",
                    click.interaction_id,
                    response.status,
                    await response.text(),
                )
                return _Answer.GONE if response.status == 404 else _Answer.REFUSED
        except respond.ANSWER_FAILURES as error:
            log.warning("could not answer interaction %s: %r", click.interaction_id, error)
            return _Answer.UNSURE

    async def _hand_on(self, data: Any, handed_on: HandedOn) -> None:
        """Let discord.py build the interaction and route it to the cog's ``cell_clicked``,
        which takes ``handed_on`` (a click that passed :func:`cell_click` always gets there).
        Returns once it did, so that the click counts as in flight all along (shutdown waits
        for what is in flight)."""
        assert self._parse is not None
        click_id = int(data["id"])
        self._handed_on[click_id] = handed_on
        self._parse(data)
        try:
            await asyncio.wait_for(handed_on.taken.wait(), HAND_ON_PATIENCE)
        except TimeoutError:
            log.error("discord.py did not route click %s to its button", click_id)
            self._handed_on.pop(click_id, None)
