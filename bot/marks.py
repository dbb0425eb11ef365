"""What a player's mark can look like: one Unicode emoji, or one of a server's custom emoji.

A server's admins may choose the marks its games show for X and O (``/ttt-settings marks``),
on the buttons and in the grid. Each is kept as text, as Discord writes it in a message
(``❌``, ``<:cross:123>``, ``<a:spin:456>``); here it is parsed, checked to be exactly one
emoji, and turned into what a button's ``emoji`` field takes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import emoji

from game import Mark

# The marks of a game whose server chose none.
DEFAULT_MARKS = {Mark.X: "❌", Mark.O: "⭕"}
# Marks a board already shows for something else: an empty cell, the grid's corner.
TAKEN = frozenset({"⬜", "⬛"})
# How Discord writes a custom emoji in a message: <:name:id>, or <a:name:id> if animated.
_CUSTOM = re.compile(r"<(?P<animated>a?):(?P<name>[A-Za-z0-9_]{2,32}):(?P<id>[0-9]{15,21})>")


@dataclass(frozen=True, slots=True)
class CustomEmoji:
    """A server's own emoji, by its id."""

    id: int
    name: str
    animated: bool = False

    @property
    def text(self) -> str:
        return f"<{'a' if self.animated else ''}:{self.name}:{self.id}>"


def parse_mark(text: str) -> str | CustomEmoji:
    """The mark ``text`` names: one Unicode emoji (returned as it is, without the spaces
    around it), or one custom emoji. ValueError for anything else: words, two emoji, an emoji
    with text around it."""
    stripped = text.strip()
    custom = _CUSTOM.fullmatch(stripped)
    if custom is not None:
        return CustomEmoji(int(custom["id"]), custom["name"], animated=bool(custom["animated"]))
    if emoji.is_emoji(stripped):
        return stripped
    raise ValueError(f"{text!r} is not one emoji")


def button_emoji(mark: str) -> dict[str, object]:
    """A mark as a button's ``emoji`` field takes it (a new dict each time: it goes into a
    payload)."""
    return dict(_button_emoji(mark))


# Every board draws each of its buttons' marks: parse each mark once.
@functools.lru_cache(maxsize=1024)
def _button_emoji(mark: str) -> tuple[tuple[str, object], ...]:
    parsed = parse_mark(mark)
    if isinstance(parsed, CustomEmoji):
        return (("id", str(parsed.id)), ("name", parsed.name), ("animated", parsed.animated))
    return (("name", parsed),)


def custom_emoji_id(mark: str) -> int | None:
    """The id of a custom emoji mark; None for a Unicode one."""
    parsed = parse_mark(mark)
    return parsed.id if isinstance(parsed, CustomEmoji) else None
