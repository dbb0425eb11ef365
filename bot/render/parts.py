"""The pieces every message is made of, shared by the modules of :mod:`bot.render`: the
:class:`Message` payload and its classic or components-v2 frame (:func:`panel`), buttons and
their rows, the cell buttons of a position and its emoji grid, and names and times as shown.

A classic message holds at most 5 rows of 5 buttons: enough for a 3x3 or 4x4 board and its
control row, not for 5x5's 25 cells and control. Every message about a game too large for that
(its challenge, its board, the board once retired) is a components-v2 message from the start:
Discord would not let it turn back into a classic one, and keeping one form per game means no
edit ever has to change it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import discord

from bot.i18n import N_, Language
from bot.marks import DEFAULT_MARKS, button_emoji
from bot.storage.base import GameRecord, is_forgotten
from game import Board, Mark, cell_name

MARK_EMOJI = DEFAULT_MARKS  # the bot's own marks; a server may choose others (bot.marks)
WINNING_EMOJI = {Mark.X: "❎", Mark.O: "🅾️"}
EMPTY_EMOJI = "⬜"
CORNER_EMOJI = "⬛"
COLUMN_EMOJI = ["🇦", "🇧", "🇨", "🇩", "🇪", "🇫", "🇬", "🇭", "🇮"]
ROW_EMOJI = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣"]

LIVE_COLOUR = discord.Colour.blurple()
OVER_COLOUR = discord.Colour.dark_grey()
WIN_COLOUR = discord.Colour.green()

NO_PINGS = discord.AllowedMentions.none()

# A components-v2 message's footer: its last line, as small text.
LAYOUT_FOOTER = "-# {}"
# How each board size is named in the size choices and messages.
SIZE_LABELS = {
    3: N_("3\N{MULTIPLICATION SIGN}3 (3 in a row)"),
    4: N_("4\N{MULTIPLICATION SIGN}4 (4 in a row)"),
    5: N_("5\N{MULTIPLICATION SIGN}5 (4 in a row)"),
    9: N_("ultimate (nine small boards)"),
}
# A classic message's limit: 5 action rows.
CLASSIC_ROWS = 5
# Discord's limits on a message's text, in characters (code points, as Discord counts them): an
# embed's description, and the text displays of a components-v2 message, all together.
EMBED_DESCRIPTION_LIMIT = 4096
LAYOUT_TEXT_LIMIT = 4000

# Discord's component types and the message flag of a components-v2 message.
ACTION_ROW, BUTTON, TEXT_DISPLAY, CONTAINER = 1, 2, 10, 17
COMPONENTS_V2 = 1 << 15

# How each action's button looks: its label, emoji and style. A board's controls (Resign while
# live, Rematch and Review once over) and a challenge's answers.
ACTIONS: Mapping[str, tuple[str, str | None, discord.ButtonStyle]] = {
    "resign": (N_("Resign"), "🏳️", discord.ButtonStyle.danger),
    "rematch": (N_("Rematch"), "🔁", discord.ButtonStyle.primary),
    "review": (N_("Review"), "🔍", discord.ButtonStyle.secondary),
    "accept": (N_("Accept"), None, discord.ButtonStyle.success),
    "decline": (N_("Decline"), None, discord.ButtonStyle.secondary),
    "withdraw": (N_("Withdraw"), None, discord.ButtonStyle.danger),
}

JSON = dict[str, Any]


def uses_layout(size: int) -> bool:
    """Whether a game on ``size``x``size`` shows as a components-v2 message: when its cells
    and its control row are more rows than a classic message holds."""
    return size + 1 > CLASSIC_ROWS


class _Components(discord.ui.View):
    """What discord.py is handed for a message's components: a View that is only their JSON.
    Finished from the start, so discord.py stores nothing for it: clicks are routed by the
    ``DynamicItem`` classes of :mod:`bot.components`, and no View is kept per message."""

    def __init__(self, components: list[JSON], *, layout: bool) -> None:
        super().__init__(timeout=None)
        self._components = components
        self._layout = layout
        self.stop()

    def to_components(self) -> list[JSON]:
        return self._components

    def has_components_v2(self) -> bool:
        return self._layout


@dataclass(frozen=True, slots=True)
class Message:
    """One message: its text, embed and components as Discord's API takes them. A
    components-v2 one (``layout``) has only its components: neither content nor embed."""

    content: str | None = None
    embed: discord.Embed | None = None
    components: list[JSON] = dataclasses.field(default_factory=list)
    layout: bool = False
    allowed_mentions: discord.AllowedMentions = NO_PINGS
    # A board with a server's own emoji on its buttons: what to send if Discord refuses them.
    fallback: MarksFallback | None = None

    def payload(self) -> JSON:
        """The message as the JSON of a new message or an edit (which replaces content,
        embeds and components alike), as discord.py writes it from :meth:`edit_kwargs`."""
        payload: JSON = {"components": self.components}
        if self.layout:
            payload["flags"] = COMPONENTS_V2
        else:
            payload["content"] = self.content
            payload["embeds"] = [self.embed.to_dict()] if self.embed is not None else []
        payload["allowed_mentions"] = self.allowed_mentions.to_dict()
        return payload

    def send_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``send_message``/``followup.send``/``channel.send``."""
        kwargs: dict[str, Any] = {"allowed_mentions": self.allowed_mentions}
        if self.content is not None:
            kwargs["content"] = self.content
        if self.embed is not None:
            kwargs["embed"] = self.embed
        if self.components or self.layout:
            kwargs["view"] = _Components(self.components, layout=self.layout)
        return kwargs

    def edit_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for an edit: replaces content, embed and components alike."""
        view = _Components(self.components, layout=self.layout)
        if self.layout:
            # A components-v2 message never had content or embeds: nothing to clear, and
            # Discord refuses them beside the layout.
            return {"view": view, "allowed_mentions": self.allowed_mentions}
        return {
            "content": self.content,
            "embeds": [self.embed] if self.embed is not None else [],
            "view": view,
            "allowed_mentions": self.allowed_mentions,
        }


@dataclass(frozen=True, slots=True)
class MarksFallback:
    """A game's board drawn with its server's custom emoji for a mark (``emoji_ids``), and
    ``message``, the same board with the bot's own marks: what the game plays on with once
    Discord refuses the emoji (deleted since the game started)."""

    game_id: int
    guild_id: int
    emoji_ids: tuple[int, ...]
    message: Message


def plain_text(content: str) -> Message:
    """A message of text alone."""
    return Message(content=content)


@functools.lru_cache(maxsize=4096)  # every board shows both names again
def escape(name: str) -> str:
    """A member's name made safe to show: no markdown, no mentions."""
    # escape_mentions breaks only @everyone, @here and user and role mentions; Discord also
    # draws <#channel>, </command:id>, <t:time> and <:emoji:id>. A zero-width space after each
    # "<", as escape_mentions puts one after "@", shows the name as typed.
    mentions_broken = discord.utils.escape_mentions(name).replace("<", "<\u200b")
    return discord.utils.escape_markdown(mentions_broken)


def size_label(size: int, lang: Language) -> str:
    """A board size with its rule, as the size choices put it: 4, 4, and "in a row"."""
    return lang.gettext(SIZE_LABELS[size])


def mark_emoji(game: GameRecord, mark: Mark) -> str:
    """The emoji ``game`` shows for ``mark``: its server's choice when it started, or the
    bot's own."""
    return (game.mark_x if mark is Mark.X else game.mark_o) or MARK_EMOJI[mark]


# Who a forgotten member (/ttt forget-me) is shown as, in the games and challenges they were in.
FORGOTTEN_MEMBER = N_("a deleted member")


def member(user_id: int, name: str | None, lang: Language) -> str:
    """A member's name in bold; a forgotten member's placeholder in italics, translated."""
    if is_forgotten(user_id):
        return f"*{lang._(FORGOTTEN_MEMBER)}*"
    return f"**{escape(name or '')}**"


def player(game: GameRecord, mark: Mark, lang: Language) -> str:
    name = member(game.player_id(mark), game.player_name(mark), lang)
    return f"{mark_emoji(game, mark)} {name}"


def timestamp(epoch: float, style: str = "R") -> str:
    return f"<t:{int(epoch)}:{style}>"


def fit_lines(lines: Sequence[str], room: int, more: Callable[[int], str]) -> str:
    """``lines`` one under the other within ``room`` characters: all of them if they fit, else
    as many as fit from the first, then ``more(how many were left out)`` on a line of its own,
    within ``room`` too. Every text that grows with what a server holds (names, standings,
    moves) is cut here, never mid-line, so that Discord never refuses it for its length."""
    return _fit(lines, "\n", room, more)


def fit_items(items: Sequence[str], room: int, more: Callable[[int], str], lang: Language) -> str:
    """:func:`fit_lines` for a list in one line, its ``items`` separated by ``lang``'s commas
    (an open list: "a, b, c, and 3 more" is said by ``more``)."""
    return _fit(items, lang.comma, room, more)


def _fit(parts: Sequence[str], separator: str, room: int, more: Callable[[int], str]) -> str:
    text = separator.join(parts)
    if len(text) <= room:
        return text
    # What ``more`` says may be longer for one part left out than for all (a plural form).
    reserve = len(separator) + max(len(more(1)), len(more(len(parts))))
    kept: list[str] = []
    used = 0
    for part in parts:
        used += len(part) + (len(separator) if kept else 0)
        if used + reserve > room:
            break
        kept.append(part)
    return separator.join([*kept, more(len(parts) - len(kept))])


# -- components -----------------------------------------------------------------------------


def button(
    custom_id: str,
    label: str | None,
    emoji: str | None,
    style: discord.ButtonStyle,
    *,
    disabled: bool = False,
) -> JSON:
    """A button; ``emoji`` as a message writes it (a Unicode emoji, or ``<:name:id>``)."""
    component: JSON = {"type": BUTTON, "style": style.value, "custom_id": custom_id}
    if label is not None:
        component["label"] = label
    if emoji is not None:
        component["emoji"] = button_emoji(emoji)
    component["disabled"] = disabled
    return component


def action_button(custom_id: str, action: str, lang: Language) -> JSON:
    label, emoji, style = ACTIONS[action]
    return button(custom_id, lang.gettext(label), emoji, style)


def button_row(buttons: Sequence[JSON]) -> JSON:
    return {"type": ACTION_ROW, "components": list(buttons)}


def text_display(content: str) -> JSON:
    return {"type": TEXT_DISPLAY, "content": content}


# -- a position's cells, and the frame -----------------------------------------------------


def grid(board: Board, marks: Mapping[Mark, str] = MARK_EMOJI, winning: Iterable[int] = ()) -> str:
    """``board`` in emoji, with its column letters and row numbers, the ``winning`` cells
    highlighted."""
    size, highlighted = board.size, frozenset(winning)
    lines = [" ".join([CORNER_EMOJI, *COLUMN_EMOJI[:size]])]
    for row in range(size):
        cells = []
        for column in range(size):
            cell = row * size + column
            mark = board[cell]
            if mark is None:
                cells.append(EMPTY_EMOJI)
            elif cell in highlighted and marks[mark] == MARK_EMOJI[mark]:
                cells.append(WINNING_EMOJI[mark])
            else:  # a server's own marks have no winning look: the buttons show the line
                cells.append(marks[mark])
        lines.append(" ".join([ROW_EMOJI[row], *cells]))
    return "\n".join(lines)


def cell_buttons(
    board: Board,
    custom_id: Callable[[int], str],
    *,
    playable: bool,
    styles: Mapping[int, discord.ButtonStyle],
    marks: Mapping[Mark, str] = MARK_EMOJI,
) -> list[JSON]:
    """``board``'s cells as buttons, in order: the free ones named and clickable while
    ``playable``, the taken ones showing their ``marks``; ``styles`` colours some (a winning
    line, the moves just played)."""
    size = board.size
    return [
        button(
            custom_id(cell),
            cell_name(cell, size) if mark is None else None,
            marks[mark] if mark is not None else None,
            styles.get(cell, discord.ButtonStyle.secondary),
            disabled=not playable or mark is not None,
        )
        for cell, mark in enumerate(board.cells)
    ]


def cell_rows(cells: list[JSON], size: int, controls: Sequence[JSON]) -> list[JSON]:
    """``cells`` in a row of buttons per board row, and the ``controls`` in a row after them
    (if any)."""
    rows = [button_row(cells[start : start + size]) for start in range(0, len(cells), size)]
    if controls:
        rows.append(button_row(controls))
    return rows


def panel(
    title: str, text: str, footer: str, colour: discord.Colour, rows: list[JSON], *, layout: bool
) -> Message:
    """A message of a title, a text, button ``rows`` and a footer: an embed with the rows
    under it, or with ``layout`` one components-v2 container holding them all (at most 36
    components for a 5x5 board and its control row, under Discord's 40)."""
    if not layout:
        embed = discord.Embed(title=title, description=text, colour=colour)
        embed.set_footer(text=footer)
        return Message(embed=embed, components=rows)
    inside = [
        text_display(f"### {title}\n{text}"),
        *rows,
        text_display(LAYOUT_FOOTER.format(footer)),
    ]
    container = {"type": CONTAINER, "accent_color": colour.value, "components": inside}
    return Message(components=[container], layout=True)
