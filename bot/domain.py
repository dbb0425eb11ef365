"""What the bot's services share: who acts, a refusal with its sentence, board sizes as
people name them, text as members type it, and the guild id that stands for every place
outside servers."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from bot.i18n import ENGLISH_LANGUAGE, Language, ListStyle
from bot.storage.base import ChallengeRecord, GameRecord
from game.ultimate import ULTIMATE
from game.variants import GAME_SIZES, is_ultimate

# Games outside servers (DMs, group DMs) all count under this guild id: a member's stats there
# are one record across every DM. No server has it, and it is on shard 0, as DMs are.
OUTSIDE_SERVERS = 0


class Verbatim(str):
    """A value for a refusal's sentence that is shown as it is, unescaped: a mention or a
    timestamp the bot wrote itself, never text a member typed."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Listed:
    """Values for one slot of a refusal's sentence, listed as its reader's language lists
    them: "random, casual, smart, or minimax", in Japanese "random、casual、smart、または
    minimax". Each is escaped as a name would be, unless it is :class:`Verbatim`."""

    items: tuple[str, ...]
    style: ListStyle = "or"

    def shown(self, lang: Language, escape: Callable[[str], str]) -> str:
        return lang.listing([escaped(item, escape) for item in self.items], self.style)

    def __str__(self) -> str:
        return self.shown(ENGLISH_LANGUAGE, str)


def escaped(name: str, escape: Callable[[str], str]) -> str:
    """``name`` as a sentence shows it: escaped for its medium unless :class:`Verbatim`."""
    return name if isinstance(name, Verbatim) else escape(name)


class UserError(Exception):
    """A failure the user caused: a sentence to show them.

    ``template`` is an English message of the catalogues (extracted from ``UserError(...)``
    calls). Member names and other values go in ``names`` and ``{}`` slots rather than into
    the text, so that whoever shows the sentence translates the template and escapes the names
    for its medium (:meth:`sentence`); ``str()`` fills them in as they are, in English, for logs
    and tests.

    ``changed`` is a game or challenge whose stored state this attempt did change as a side
    effect (a turn found to have timed out, a challenge found expired), so that the caller can
    show the new state.
    """

    def __init__(
        self,
        template: str,
        *names: str | Listed,
        changed: GameRecord | ChallengeRecord | None = None,
    ) -> None:
        super().__init__(template.format(*names))
        self.template = template
        self.names = names
        self.changed = changed

    def sentence(self, lang: Language, escape: Callable[[str], str]) -> str:
        return lang.gettext(self.template).format(
            *(
                name.shown(lang, escape) if isinstance(name, Listed) else escaped(name, escape)
                for name in self.names
            )
        )


@dataclass(frozen=True, slots=True)
class Actor:
    """Someone acting through Discord: a member (or the bot) with the name to show, and in a
    server their roles there and the permissions the settings ask about (in the channel they
    act in)."""

    id: int
    name: str
    is_bot: bool = False
    roles: frozenset[int] = frozenset()
    manages_messages: bool = False
    manages_server: bool = False


def half_width(text: str) -> str:
    """``text`` with the full-width letters, digits and signs a Japanese (or Chinese, Korean)
    input method types as the ASCII ones they stand for (Unicode's NFKC): a full-width B2 is
    ``B2``, a full-width 5m ``5m``. Such a member sees the same letters and digits, and
    expects them to be read the same."""
    return unicodedata.normalize("NFKC", text)


def size_name(size: int) -> str:
    """How a board size is named to people: 4 and a multiplication sign and 4; ultimate
    tic-tac-toe (stored as size 9, :mod:`game.variants`) by its name."""
    if is_ultimate(size):
        return ULTIMATE
    return f"{size}\N{MULTIPLICATION SIGN}{size}"


def check_size(size: int) -> None:
    if size not in GAME_SIZES:
        raise UserError("Pick a board size: {}.", Listed(tuple(map(size_name, GAME_SIZES))))
