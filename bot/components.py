"""The message components, as ``DynamicItem``s: each ``custom_id`` names what it acts on.

``ttt:cell:<game>:<cell>``, ``ttt:resign:<game>``, ``ttt:rematch:<game>`` and
``ttt:challenge:<challenge>:<accept|decline|withdraw>``. discord.py routes a click to the class
whose template matches, so buttons keep working after a restart and no View is kept per game.
The callbacks only hand the click to the cog: the rules are checked against the stored game.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol, cast

import discord

if TYPE_CHECKING:
    from bot.client import TTTBot

PREFIX = "ttt"


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


class CellButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"ttt:cell:(?P<game>[0-9]{1,20}):(?P<cell>[0-9]{1,2})",
):
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
            custom_id=f"{PREFIX}:cell:{game_id}:{cell}",
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
        assert isinstance(item, discord.ui.Button)
        return cls(int(match["game"]), int(match["cell"]), item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _handler(interaction).cell_clicked(interaction, self.game_id, self.cell)


GAME_ACTIONS = {
    "resign": ("Resign", "🏳️", discord.ButtonStyle.danger),
    "rematch": ("Rematch", "🔁", discord.ButtonStyle.primary),
}


class GameButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"ttt:(?P<action>resign|rematch):(?P<game>[0-9]{1,20})",
):
    """The board's fourth row: **Resign** while the game is live, **Rematch** once it is over."""

    def __init__(
        self, game_id: int, action: str, button: discord.ui.Button[Any] | None = None
    ) -> None:
        label, emoji, style = GAME_ACTIONS[action]
        super().__init__(
            button
            or discord.ui.Button(
                custom_id=f"{PREFIX}:{action}:{game_id}",
                label=label,
                emoji=emoji,
                style=style,
                row=3,
            )
        )
        self.game_id = game_id
        self.action = action

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> GameButton:
        assert isinstance(item, discord.ui.Button)
        return cls(int(match["game"]), match["action"], item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        handler = _handler(interaction)
        if self.action == "resign":
            await handler.resign_clicked(interaction, self.game_id)
        else:
            await handler.rematch_clicked(interaction, self.game_id)


CHALLENGE_LABELS = {
    "accept": ("Accept", discord.ButtonStyle.success),
    "decline": ("Decline", discord.ButtonStyle.secondary),
    "withdraw": ("Withdraw", discord.ButtonStyle.danger),
}


class ChallengeButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"ttt:challenge:(?P<challenge>[0-9]{1,20}):(?P<action>accept|decline|withdraw)",
):
    def __init__(
        self, challenge_id: int, action: str, button: discord.ui.Button[Any] | None = None
    ) -> None:
        label, style = CHALLENGE_LABELS[action]
        super().__init__(
            button
            or discord.ui.Button(
                custom_id=f"{PREFIX}:challenge:{challenge_id}:{action}", label=label, style=style
            )
        )
        self.challenge_id = challenge_id
        self.action = action

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> ChallengeButton:
        assert isinstance(item, discord.ui.Button)
        return cls(int(match["challenge"]), match["action"], item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _handler(interaction).challenge_clicked(interaction, self.challenge_id, self.action)


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    CellButton,
    GameButton,
    ChallengeButton,
)
