"""The message components, as ``DynamicItem``s: each ``custom_id`` names what it acts on.

Every custom_id format is one :class:`IdFormat`: the ``DynamicItem`` template that routes a click
and the ids put on buttons both come from it, so they cannot drift apart. discord.py routes a
click to the class whose template matches, so buttons keep working after a restart and no View
is kept per game. The callbacks only hand the click to the cog: the rules are checked against
the stored game.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

import discord

if TYPE_CHECKING:
    from bot.client import TTTBot

PREFIX = "ttt"
ROW_ID = r"[0-9]{1,20}"  # a game's or a challenge's id


class IdFormat:
    """One shape of ``custom_id``: ``ttt`` and then literal parts and named fields, joined by
    ``:``. A field is ``(name, regex)``.

    >>> CELL_ID.build(game=40, cell=4)
    'ttt:cell:40:4'
    >>> CELL_ID.parse("ttt:cell:40:4")
    {'game': '40', 'cell': '4'}
    """

    def __init__(self, *parts: str | tuple[str, str]) -> None:
        self._parts = (PREFIX, *parts)
        self.template = ":".join(
            re.escape(part) if isinstance(part, str) else f"(?P<{part[0]}>{part[1]})"
            for part in self._parts
        )
        self._pattern = re.compile(self.template)

    def build(self, **values: object) -> str:
        """The custom_id with ``values`` in its fields; a value the template would not match
        raises ValueError, so a button can never carry an id that routes nowhere."""
        custom_id = ":".join(
            part if isinstance(part, str) else str(values[part[0]]) for part in self._parts
        )
        if self._pattern.fullmatch(custom_id) is None:
            raise ValueError(f"{values} do not make a custom_id of the form {self.template}")
        return custom_id

    def parse(self, custom_id: str) -> Mapping[str, str] | None:
        """The fields of ``custom_id``, or None if it is not of this form."""
        match = self._pattern.fullmatch(custom_id)
        return None if match is None else match.groupdict()


CELL_ID = IdFormat("cell", ("game", ROW_ID), ("cell", r"[0-9]{1,2}"))
GAME_ACTION_ID = IdFormat(("action", "resign|rematch"), ("game", ROW_ID))
CHALLENGE_ID = IdFormat("challenge", ("challenge", ROW_ID), ("action", "accept|decline|withdraw"))
ID_FORMATS = (CELL_ID, GAME_ACTION_ID, CHALLENGE_ID)


class ClickHandler(Protocol):
    async def cell_clicked(
        self, interaction: discord.Interaction[Any], game_id: int, cell: int
    ) -> None: ...

    async def resign_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None: ...

    async def rematch_clicked(
        self, interaction: discord.Interaction[Any], game_id: int
    ) -> None: ...

    async def challenge_clicked(
        self, interaction: discord.Interaction[Any], challenge_id: int, action: str
    ) -> None: ...


def _handler(interaction: discord.Interaction[Any]) -> ClickHandler:
    bot = cast("TTTBot", interaction.client)
    return bot.click_handler


def _button(item: discord.ui.Item[Any]) -> discord.ui.Button[Any]:
    # Each template is only ever put on buttons.
    assert isinstance(item, discord.ui.Button)
    return item


class CellButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=CELL_ID.template):
    def __init__(self, game_id: int, cell: int, button: discord.ui.Button[Any]) -> None:
        super().__init__(button)
        self.game_id = game_id
        self.cell = cell

    @classmethod
    def make(
        cls,
        game_id: int,
        cell: int,
        *,
        row: int,
        label: str | None,
        emoji: str | None,
        style: discord.ButtonStyle,
        disabled: bool,
    ) -> CellButton:
        button: discord.ui.Button[Any] = discord.ui.Button(
            custom_id=CELL_ID.build(game=game_id, cell=cell),
            label=label,
            emoji=emoji,
            style=style,
            disabled=disabled,
            row=row,
        )
        return cls(game_id, cell, button)

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> CellButton:
        return cls(int(match["game"]), int(match["cell"]), _button(item))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _handler(interaction).cell_clicked(interaction, self.game_id, self.cell)


GAME_ACTIONS = {
    "resign": ("Resign", "🏳️", discord.ButtonStyle.danger),
    "rematch": ("Rematch", "🔁", discord.ButtonStyle.primary),
}


class GameButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=GAME_ACTION_ID.template):
    """The board's fourth row: **Resign** while the game is live, **Rematch** once it is over."""

    def __init__(
        self, game_id: int, action: str, button: discord.ui.Button[Any] | None = None
    ) -> None:
        if button is None:
            label, emoji, style = GAME_ACTIONS[action]
            custom_id = GAME_ACTION_ID.build(action=action, game=game_id)
            button = discord.ui.Button(
                custom_id=custom_id, label=label, emoji=emoji, style=style, row=3
            )
        super().__init__(button)
        self.game_id = game_id
        self.action = action

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> GameButton:
        return cls(int(match["game"]), match["action"], _button(item))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        handler = _handler(interaction)
        if self.action == "resign":
            await handler.resign_clicked(interaction, self.game_id)
        else:
            await handler.rematch_clicked(interaction, self.game_id)


CHALLENGE_ACTIONS = {
    "accept": ("Accept", discord.ButtonStyle.success),
    "decline": ("Decline", discord.ButtonStyle.secondary),
    "withdraw": ("Withdraw", discord.ButtonStyle.danger),
}


class ChallengeButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=CHALLENGE_ID.template
):
    def __init__(
        self, challenge_id: int, action: str, button: discord.ui.Button[Any] | None = None
    ) -> None:
        if button is None:
            label, style = CHALLENGE_ACTIONS[action]
            custom_id = CHALLENGE_ID.build(challenge=challenge_id, action=action)
            button = discord.ui.Button(custom_id=custom_id, label=label, style=style)
        super().__init__(button)
        self.challenge_id = challenge_id
        self.action = action

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> ChallengeButton:
        return cls(int(match["challenge"]), match["action"], _button(item))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _handler(interaction).challenge_clicked(interaction, self.challenge_id, self.action)


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    CellButton,
    GameButton,
    ChallengeButton,
)
