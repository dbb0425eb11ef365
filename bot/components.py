"""The message components, as ``DynamicItem``s: each ``custom_id`` names what it acts on.

Every custom_id format is one :class:`IdFormat`: the ``DynamicItem`` template that routes a click
and the ids put on buttons both come from it, so they cannot drift apart. discord.py routes a
click to the class whose template matches, so buttons keep working after a restart and no View
is kept per game. The callbacks only hand the click to the cog: the rules are checked against
the stored game.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, cast

import discord

from bot.cycles import empty_view, release_response
from bot.i18n import ENGLISH_LANGUAGE, N_, Language
from bot.storage.base import GameRecord

if TYPE_CHECKING:
    from bot.client import TTTBot

PREFIX = "ttt"
ROW_ID = r"[0-9]{1,20}"  # a game's or a challenge's id


class IdFormat:
    """One shape of ``custom_id``: ``ttt`` and then literal parts and named fields, joined by
    ``:``. A field is ``(name, regex)``.

    >>> CELL_ID.build(game=40, ply=2, cell=4)
    'ttt:cell:40:2:4'
    >>> CELL_ID.parse("ttt:cell:40:2:4")
    {'game': '40', 'ply': '2', 'cell': '4'}
    """

    def __init__(self, *parts: str | tuple[str, str]) -> None:
        self._parts = (PREFIX, *parts)
        self.template = ":".join(
            re.escape(part) if isinstance(part, str) else f"(?P<{part[0]}>{part[1]})"
            for part in self._parts
        )
        self._pattern = re.compile(self.template)
        self._format = ":".join(
            part.replace("{", "{{").replace("}", "}}")
            if isinstance(part, str)
            else f"{{{part[0]}}}"
            for part in self._parts
        )

    def build(self, **values: object) -> str:
        """The custom_id with ``values`` in its fields; a value the template would not match
        raises ValueError, so a button can never carry an id that routes nowhere."""
        custom_id = self._format.format_map(values)
        if self._pattern.fullmatch(custom_id) is None:
            raise ValueError(f"{values} do not make a custom_id of the form {self.template}")
        return custom_id

    def parse(self, custom_id: str) -> Mapping[str, str] | None:
        """The fields of ``custom_id``, or None if it is not of this form."""
        match = self._pattern.fullmatch(custom_id)
        return None if match is None else match.groupdict()


_SMALL = r"[0-9]{1,2}"
# A cell button names the position it was drawn in (the ply: moves played so far), so that a
# click means exactly the position the player saw.
CELL_ID = IdFormat("cell", ("game", ROW_ID), ("ply", _SMALL), ("cell", _SMALL))
# Boards drawn before the ply was added: their clicks still play, on the current position.
LEGACY_CELL_ID = IdFormat("cell", ("game", ROW_ID), ("cell", _SMALL))
# A board's controls: Resign, Rematch, and Review (``ttt:review:<game>``, since the review).
GAME_ACTION_ID = IdFormat(("action", "resign|rematch|review"), ("game", ROW_ID))
CHALLENGE_ID = IdFormat("challenge", ("challenge", ROW_ID), ("action", "accept|decline|withdraw"))
ID_FORMATS = (CELL_ID, LEGACY_CELL_ID, GAME_ACTION_ID, CHALLENGE_ID)


# How an action's button looks: its label, emoji and style.
Look = tuple[str, str | None, discord.ButtonStyle]


class ClickHandler(Protocol):
    async def cell_clicked(
        self, interaction: discord.Interaction[Any], game_id: int, ply: int | None, cell: int
    ) -> None: ...

    async def resign_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None: ...

    async def rematch_clicked(
        self, interaction: discord.Interaction[Any], game_id: int
    ) -> None: ...

    async def review_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None: ...

    async def challenge_clicked(
        self, interaction: discord.Interaction[Any], challenge_id: int, action: str
    ) -> None: ...

    async def adopt_board(self, game: GameRecord, message_id: int, *, reaches: bool) -> None: ...


def _handler(interaction: discord.Interaction[Any]) -> ClickHandler:
    bot = cast("TTTBot", interaction.client)
    return bot.click_handler


class _Routed(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"(?!)"):
    """A button discord.py routes to by its custom_id's fields. Never registered itself (its
    template matches nothing): each subclass names its own template and reads its fields."""

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> Self:
        # Each template is only ever put on buttons.
        assert isinstance(item, discord.ui.Button)
        return cls.from_fields(match.groupdict(), item)

    @classmethod
    def from_fields(cls, fields: Mapping[str, str], button: discord.ui.Button[Any]) -> Self:
        raise NotImplementedError

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            await self.clicked(_handler(interaction), interaction)
        finally:
            _drop_cycles(self, interaction)

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        """Hand the click to ``handler``, which answers it."""
        raise NotImplementedError


def _drop_cycles(item: discord.ui.Item[Any], interaction: discord.Interaction[Any]) -> None:
    """Once a click is answered, break the cycles discord.py left (see :mod:`bot.cycles`): the
    View it rebuilt from the clicked message to route the click, and the interaction with its
    cached response. Nothing uses either afterwards: discord.py only logs what the callback
    raised."""
    if item.view is not None:
        empty_view(item.view)
    release_response(interaction)


class CellButton(_Routed, template=CELL_ID.template):
    def __init__(
        self, game_id: int, ply: int | None, cell: int, button: discord.ui.Button[Any]
    ) -> None:
        super().__init__(button)
        self.game_id = game_id
        self.ply = ply
        self.cell = cell

    @classmethod
    def make(
        cls,
        game_id: int,
        ply: int,
        cell: int,
        *,
        row: int | None,
        label: str | None,
        emoji: discord.PartialEmoji | None,
        style: discord.ButtonStyle,
        disabled: bool,
    ) -> CellButton:
        button: discord.ui.Button[Any] = discord.ui.Button(
            custom_id=CELL_ID.build(game=game_id, ply=ply, cell=cell),
            label=label,
            emoji=emoji,
            style=style,
            disabled=disabled,
            row=row,
        )
        return cls(game_id, ply, cell, button)

    @classmethod
    def from_fields(cls, fields: Mapping[str, str], button: discord.ui.Button[Any]) -> Self:
        return cls(int(fields["game"]), int(fields["ply"]), int(fields["cell"]), button)

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        await handler.cell_clicked(interaction, self.game_id, self.ply, self.cell)


class LegacyCellButton(CellButton, template=LEGACY_CELL_ID.template):
    """A cell of a board drawn before cell buttons named their ply."""

    @classmethod
    def from_fields(cls, fields: Mapping[str, str], button: discord.ui.Button[Any]) -> Self:
        return cls(int(fields["game"]), None, int(fields["cell"]), button)


class _ActionButton(_Routed, template=r"(?!)"):
    """A button whose custom_id is an ``action`` on one game or challenge: the shared part of
    :class:`GameButton` and :class:`ChallengeButton`. Never registered itself; each subclass
    names its own format, target field and actions."""

    id_format: ClassVar[IdFormat]
    target: ClassVar[str]  # the IdFormat field holding the row id
    actions: ClassVar[Mapping[str, Look]]

    def __init__(
        self,
        target_id: int,
        action: str,
        button: discord.ui.Button[Any] | None = None,
        *,
        row: int | None = None,
        lang: Language = ENGLISH_LANGUAGE,
    ) -> None:
        if button is None:
            custom_id, (label, emoji, style) = self.look(target_id, action, lang)
            button = discord.ui.Button(
                custom_id=custom_id, label=label, emoji=emoji, style=style, row=row
            )
        super().__init__(button)
        self.target_id = target_id
        self.action = action

    @classmethod
    def look(cls, target_id: int, action: str, lang: Language) -> tuple[str, Look]:
        """The custom_id of ``action`` on ``target_id``, and its look in ``lang``."""
        label, emoji, style = cls.actions[action]
        custom_id = cls.id_format.build(action=action, **{cls.target: target_id})
        return custom_id, (lang.gettext(label), emoji, style)

    @classmethod
    def from_fields(cls, fields: Mapping[str, str], button: discord.ui.Button[Any]) -> Self:
        return cls(int(fields[cls.target]), fields["action"], button)


class GameButton(_ActionButton, template=GAME_ACTION_ID.template):
    """The board's controls, in the row after the cells: **Resign** while the game is live,
    **Rematch** and **Review** once it is over."""

    id_format = GAME_ACTION_ID
    target = "game"
    actions: ClassVar[Mapping[str, Look]] = {
        "resign": (N_("Resign"), "🏳️", discord.ButtonStyle.danger),
        "rematch": (N_("Rematch"), "🔁", discord.ButtonStyle.primary),
        "review": (N_("Review"), "🔍", discord.ButtonStyle.secondary),
    }

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        match self.action:
            case "resign":
                await handler.resign_clicked(interaction, self.target_id)
            case "rematch":
                await handler.rematch_clicked(interaction, self.target_id)
            case _:
                await handler.review_clicked(interaction, self.target_id)


class ChallengeButton(_ActionButton, template=CHALLENGE_ID.template):
    """**Accept**, **Decline** or **Withdraw** on a challenge message."""

    id_format = CHALLENGE_ID
    target = "challenge"
    actions: ClassVar[Mapping[str, Look]] = {
        "accept": (N_("Accept"), None, discord.ButtonStyle.success),
        "decline": (N_("Decline"), None, discord.ButtonStyle.secondary),
        "withdraw": (N_("Withdraw"), None, discord.ButtonStyle.danger),
    }

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        await handler.challenge_clicked(interaction, self.target_id, self.action)


def walk(components: Iterable[discord.Component]) -> Iterator[discord.Component]:
    """Every component of a received message, nested ones too (a components-v2 message holds
    its buttons and text inside containers, rows and sections), depth first."""
    # A stack rather than nested generators: every click walks the message it was on.
    stack = list(components)
    stack.reverse()
    while stack:
        component = stack.pop()
        yield component
        accessory = getattr(component, "accessory", None)
        if accessory is not None:
            stack.append(accessory)
        stack.extend(reversed(getattr(component, "children", ())))


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    CellButton,
    LegacyCellButton,
    GameButton,
    ChallengeButton,
)
