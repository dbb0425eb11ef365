"""The buttons' custom_ids, and the ``DynamicItem`` classes that route a click by its custom_id.

Every custom_id format is one :class:`IdFormat`: the ``DynamicItem`` template that routes a click
and the ids :mod:`bot.render` puts on buttons both come from it, so they cannot drift apart.
discord.py routes a click to the class whose template matches, so buttons keep working after a
restart and no View is kept per game. The callbacks only hand the click to the cog (found by
name, typed by :class:`ClickHandler`): the rules are checked against the stored game.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol, Self, cast

import discord
from discord.ext import commands

from bot.cycles import empty_view, release_interaction

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
# Ultimate tic-tac-toe's first step, when the player may play in any open small board: the
# board picked (0..8, row-major), or "all" to show the boards again, at the ply drawn.
PICK_ID = IdFormat("pick", ("game", ROW_ID), ("ply", _SMALL), ("board", "[0-8]|all"))
# A board's controls: Resign, Rematch, and Review (``ttt:review:<game>``, since the review).
GAME_ACTION_ID = IdFormat(("action", "resign|rematch|review"), ("game", ROW_ID))
CHALLENGE_ID = IdFormat("challenge", ("challenge", ROW_ID), ("action", "accept|decline|withdraw"))
# The answers to a question asked once (see bot.privacy): whose data or which server's, and
# when it was asked (epoch seconds), so that an old question found later deletes nothing.
_ASKED = ("asked", r"[0-9]{1,12}")
FORGET_ID = IdFormat("forget", ("member", ROW_ID), _ASKED, ("action", "confirm|cancel"))
ERASE_ID = IdFormat("erase", ("guild", ROW_ID), _ASKED, ("action", "confirm|cancel"))
# The daily puzzle's cells (privately, to one member): its day (YYYYMMDD, UTC) and id (so that
# a message drawn before the pool changed is not answered on another position), the attempts of
# the day counted when it was drawn (so that the attempt it ends counts once), the solver's
# moves so far (a cell a character, see encode_moves) and the cell; and its "Try again".
_DAY = ("day", r"[0-9]{8}")
_PUZZLE = ("puzzle", r"[0-9a-z][0-9a-z-]{0,31}")
_MOVES = ("moves", r"[0-9a-o]{0,12}")
PUZZLE_ID = IdFormat("puzzle", _DAY, _PUZZLE, ("tries", r"[0-9]{1,6}"), _MOVES, ("cell", _SMALL))
PUZZLE_AGAIN_ID = IdFormat("puzzle", _DAY, _PUZZLE, "again")
# Puzzle cells drawn before they carried the tries: they count nothing, and say where the
# puzzle is now.
LEGACY_PUZZLE_ID = IdFormat("puzzle", _DAY, _PUZZLE, _MOVES, ("cell", _SMALL))
# A drill's cells: the drill and the answers it had taken when asked (so that an answer counts
# once), and the cell; "Next drill"; and a review's "Practise this" for its game.
DRILL_ID = IdFormat("drill", ("drill", ROW_ID), ("answers", r"[0-9]{1,6}"), ("cell", _SMALL))
DRILL_NEXT_ID = IdFormat("drill", "next")
PRACTISE_ID = IdFormat("practise", ("game", ROW_ID))
# A tournament's announcement: Join and Leave.
TOURNAMENT_ID = IdFormat("tournament", ("tournament", ROW_ID), ("action", "join|leave"))
ID_FORMATS = (
    CELL_ID,
    LEGACY_CELL_ID,
    PICK_ID,
    GAME_ACTION_ID,
    CHALLENGE_ID,
    FORGET_ID,
    ERASE_ID,
    PUZZLE_ID,
    PUZZLE_AGAIN_ID,
    LEGACY_PUZZLE_ID,
    DRILL_ID,
    DRILL_NEXT_ID,
    PRACTISE_ID,
    TOURNAMENT_ID,
)
# The cells of a puzzle's line as custom_id characters: one each, up to 5x5's 25 cells.
_MOVE_DIGITS = "0123456789abcdefghijklmno"


def encode_moves(moves: Iterable[int]) -> str:
    """Cells as one character each.

    >>> encode_moves([0, 9, 24]), decode_moves("09o")
    ('09o', (0, 9, 24))
    """
    return "".join(_MOVE_DIGITS[cell] for cell in moves)


def decode_moves(text: str) -> tuple[int, ...]:
    """The cells :func:`encode_moves` wrote; a character it never writes raises ValueError."""
    cells = tuple(_MOVE_DIGITS.find(digit) for digit in text)
    if -1 in cells:
        raise ValueError(f"{text!r} is not a line of cells")
    return cells


def encode_day(day: datetime.date) -> str:
    return day.strftime("%Y%m%d")


def decode_day(text: str) -> datetime.date:
    """The day :func:`encode_day` wrote; ValueError for no date (a hand-made 20261399)."""
    return datetime.datetime.strptime(text, "%Y%m%d").date()


COG_NAME = "TicTacToe"


class ClickHandler(Protocol):
    """What answers the clicks these buttons route: the ``TicTacToe`` cog."""

    async def cell_clicked(
        self, interaction: discord.Interaction[Any], game_id: int, ply: int | None, cell: int
    ) -> None: ...

    async def pick_clicked(
        self, interaction: discord.Interaction[Any], game_id: int, ply: int, board: int | None
    ) -> None: ...

    async def resign_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None: ...

    async def rematch_clicked(
        self, interaction: discord.Interaction[Any], game_id: int
    ) -> None: ...

    async def review_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None: ...

    async def challenge_clicked(
        self, interaction: discord.Interaction[Any], challenge_id: int, action: str
    ) -> None: ...

    async def forget_clicked(
        self, interaction: discord.Interaction[Any], member_id: int, asked_at: int, action: str
    ) -> None: ...

    async def erase_clicked(
        self, interaction: discord.Interaction[Any], guild_id: int, asked_at: int, action: str
    ) -> None: ...

    async def puzzle_clicked(
        self,
        interaction: discord.Interaction[Any],
        day: str,
        puzzle: str,
        tries: int,
        moves: str,
        cell: int,
    ) -> None: ...

    async def legacy_puzzle_clicked(self, interaction: discord.Interaction[Any]) -> None: ...

    async def puzzle_again_clicked(
        self, interaction: discord.Interaction[Any], day: str, puzzle: str
    ) -> None: ...

    async def drill_clicked(
        self, interaction: discord.Interaction[Any], drill_id: int, answers: int, cell: int
    ) -> None: ...

    async def drill_next_clicked(self, interaction: discord.Interaction[Any]) -> None: ...

    async def practise_clicked(
        self, interaction: discord.Interaction[Any], game_id: int
    ) -> None: ...

    async def tournament_clicked(
        self, interaction: discord.Interaction[Any], tournament_id: int, action: str
    ) -> None: ...


def click_handler(interaction: discord.Interaction[Any]) -> ClickHandler:
    """The cog that answers a click, found as discord.py finds cogs: by name."""
    bot = cast(commands.Bot, interaction.client)  # these buttons are only registered on one
    handler = bot.get_cog(COG_NAME)
    if handler is None:  # pragma: no cover - the cog is loaded before the gateway connects
        raise RuntimeError(f"the {COG_NAME} cog is not loaded")
    return cast(ClickHandler, handler)


class _Routed(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"(?!)"):
    """A button discord.py routes to by its custom_id's fields. Never registered itself (its
    template matches nothing): each subclass names its own template and what it calls."""

    def __init__(self, fields: Mapping[str, str], button: discord.ui.Button[Any]) -> None:
        super().__init__(button)
        self.fields = fields

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> Self:
        # Each template is only ever put on buttons.
        assert isinstance(item, discord.ui.Button)
        return cls(match.groupdict(), item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        try:
            await self.clicked(click_handler(interaction), interaction)
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
    release_interaction(interaction)


class CellButton(_Routed, template=CELL_ID.template):
    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        game, ply, cell = int(fields["game"]), int(fields["ply"]), int(fields["cell"])
        await handler.cell_clicked(interaction, game, ply, cell)


class LegacyCellButton(_Routed, template=LEGACY_CELL_ID.template):
    """A cell of a board drawn before cell buttons named their ply."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        await handler.cell_clicked(interaction, int(fields["game"]), None, int(fields["cell"]))


class PickButton(_Routed, template=PICK_ID.template):
    """An ultimate game's small board picked, or the boards shown again (see
    :mod:`bot.render.ultimate`)."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        board = None if fields["board"] == "all" else int(fields["board"])
        await handler.pick_clicked(interaction, int(fields["game"]), int(fields["ply"]), board)


class GameButton(_Routed, template=GAME_ACTION_ID.template):
    """The board's controls: **Resign** while the game is live, **Rematch** and **Review**
    once it is over."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        game_id = int(self.fields["game"])
        match self.fields["action"]:
            case "resign":
                await handler.resign_clicked(interaction, game_id)
            case "rematch":
                await handler.rematch_clicked(interaction, game_id)
            case _:
                await handler.review_clicked(interaction, game_id)


class ChallengeButton(_Routed, template=CHALLENGE_ID.template):
    """**Accept**, **Decline** or **Withdraw** on a challenge message."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        await handler.challenge_clicked(interaction, int(fields["challenge"]), fields["action"])


class ForgetButton(_Routed, template=FORGET_ID.template):
    """**Delete my data** or **Cancel** under ``/ttt forget-me``'s question."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        member, asked = int(fields["member"]), int(fields["asked"])
        await handler.forget_clicked(interaction, member, asked, fields["action"])


class EraseButton(_Routed, template=ERASE_ID.template):
    """**Delete this server's data** or **Cancel** under an admin's question."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        guild, asked = int(fields["guild"]), int(fields["asked"])
        await handler.erase_clicked(interaction, guild, asked, fields["action"])


class PuzzleButton(_Routed, template=PUZZLE_ID.template):
    """A cell of the daily puzzle, shown to one member."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        await handler.puzzle_clicked(
            interaction,
            fields["day"],
            fields["puzzle"],
            int(fields["tries"]),
            fields["moves"],
            int(fields["cell"]),
        )


class LegacyPuzzleButton(_Routed, template=LEGACY_PUZZLE_ID.template):
    """A cell of a daily puzzle drawn before cells carried the day's tries."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        await handler.legacy_puzzle_clicked(interaction)


class PuzzleAgainButton(_Routed, template=PUZZLE_AGAIN_ID.template):
    """**Try again** under a daily puzzle answered wrong."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        await handler.puzzle_again_clicked(interaction, self.fields["day"], self.fields["puzzle"])


class DrillButton(_Routed, template=DRILL_ID.template):
    """A cell of a drill, shown to its member."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        drill, answers, cell = int(fields["drill"]), int(fields["answers"]), int(fields["cell"])
        await handler.drill_clicked(interaction, drill, answers, cell)


class DrillNextButton(_Routed, template=DRILL_NEXT_ID.template):
    """**Next drill** under an answered drill."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        await handler.drill_next_clicked(interaction)


class PractiseButton(_Routed, template=PRACTISE_ID.template):
    """**Practise this** under a game's review."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        await handler.practise_clicked(interaction, int(self.fields["game"]))


class TournamentButton(_Routed, template=TOURNAMENT_ID.template):
    """**Join** or **Leave** on a tournament's announcement."""

    async def clicked(self, handler: ClickHandler, interaction: discord.Interaction[Any]) -> None:
        fields = self.fields
        await handler.tournament_clicked(interaction, int(fields["tournament"]), fields["action"])


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
    PickButton,
    GameButton,
    ChallengeButton,
    ForgetButton,
    EraseButton,
    PuzzleButton,
    PuzzleAgainButton,
    LegacyPuzzleButton,
    DrillButton,
    DrillNextButton,
    PractiseButton,
    TournamentButton,
)
