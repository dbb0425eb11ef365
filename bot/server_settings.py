"""A server's settings: what its admins chose, the defaults, and who may change them.

Where games may be started, who may play and end games, the turn and challenge timeouts, the
language of what the channel sees, how many live games a member may be in, the cooldown
between one member's challenges, the default board size, whether the leaderboard has seasons,
and the channel where a season's end is announced. Each is stored as one row
(``guild_settings``: its value as text, who changed it last and when) and read again by
every command that needs it, so that a change applies at once in every process sharing the
database. A game keeps the turn timeout it started with.

Pure domain, as :mod:`bot.service` is: ids and values, no Discord. The cog turns options into
ids (and checks that they are the server's own); here they are checked against the rules
and stored, and refusals are :class:`~bot.domain.UserError` sentences.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.clock import Clock
from bot.config import MAX_TIMEOUT, MIN_TIMEOUT
from bot.domain import (
    OUTSIDE_SERVERS,
    Actor,
    Listed,
    UserError,
    Verbatim,
    check_size,
    half_width,
)
from bot.i18n import ALL_LANGUAGES, N_
from bot.marks import DEFAULT_MARKS, TAKEN, CustomEmoji, parse_mark
from bot.seasons import SeasonLength
from bot.storage.base import DatabaseUnavailableError, Storage, StoredSetting
from game import DEFAULT_SIZE, Mark

log = logging.getLogger(__name__)

# The most channels (and categories) and roles a server may list: every one is checked on each
# start, and the settings message shows them all.
MAX_LISTED = 25
# The most live games a member may be limited to: beyond it, a limit is no limit.
MAX_GAMES_LIMIT = 100
# The longest cooldown between one member's challenges.
MAX_COOLDOWN = 24 * 3600.0


# Every settings command refuses to run outside servers (Discord offers them in servers only).
OUTSIDE = N_("Settings belong to a server: use this command in one.")
# The database failed after a setting of the command was saved: not "nothing was done".
SETTINGS_MAYBE_SAVED = N_(
    "The database failed while saving, so I can't tell whether every change went through: "
    "`/ttt-settings show` shows what is set now."
)


class Setting(StrEnum):
    """A server setting, by the key it is stored under."""

    CHANNELS = "channels"
    PLAYER_ROLES = "player_roles"
    MODERATOR_ROLE = "moderator_role"
    TURN_TIMEOUT = "turn_timeout"
    CHALLENGE_TIMEOUT = "challenge_timeout"
    LANGUAGE = "language"
    MAX_GAMES = "max_games"
    COOLDOWN = "cooldown"
    SIZE = "size"
    MARK_X = "mark_x"
    MARK_O = "mark_o"
    THREADS = "threads"
    SEASONS = "seasons"
    ANNOUNCEMENTS = "announcements"


@dataclass(frozen=True, slots=True)
class Change:
    """Who changed a setting last (a member's id), and when (epoch seconds)."""

    by: int
    at: float


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """One server's settings; each field's default is the bot's behaviour without settings.

    ``channels``: the channels and categories where games may be started, empty for all;
    ``player_roles``: the roles one of which a member needs to play, empty for everyone;
    ``moderator_role``: a role whose members may ``/ttt end`` games, besides those who can
    manage messages; the timeouts in seconds (None: the bot's own); ``language``: a catalogue
    code for what the channel sees (None: the server's Discord locale); ``max_games``: live
    games a member may be in at once; ``cooldown``: seconds between one member's challenges;
    ``size``: the board ``/ttt start`` and ``/ttt vs-ai`` use when none is picked;
    ``mark_x``, ``mark_o``: the emoji shown for each side (:mod:`bot.marks`; None: the bot's);
    ``threads``: each game against the bot and each accepted challenge gets a thread of its
    own off the channel, so that a channel holds many games at once; ``seasons``: how long the
    leaderboard's seasons last (:mod:`bot.seasons`); ``announcements``: the channel where each
    season's top three are announced when it ends (None: nothing is announced).
    """

    channels: frozenset[int] = frozenset()
    player_roles: frozenset[int] = frozenset()
    moderator_role: int | None = None
    turn_timeout: float | None = None
    challenge_timeout: float | None = None
    language: str | None = None
    max_games: int | None = None
    cooldown: float | None = None
    size: int | None = None
    mark_x: str | None = None
    mark_o: str | None = None
    threads: bool = False
    seasons: SeasonLength = SeasonLength.MONTHLY
    announcements: int | None = None
    changes: Mapping[Setting, Change] = field(default_factory=dict, compare=False)

    def board(self, picked: int | None) -> int:
        """The board size a command means: ``picked`` if a size was picked, else the
        server's default (new games, tournaments, stats and the leaderboard alike)."""
        chosen = picked if picked is not None else (self.size or DEFAULT_SIZE)
        check_size(chosen)
        return chosen

    def allows_games_in(self, place: Collection[int]) -> bool:
        """Whether games may start in a channel, given it and its parents (a thread's channel,
        a channel's category): the list names one of them, or there is no list."""
        return not self.channels or not self.channels.isdisjoint(place)

    def lets_play(self, member: Actor) -> bool:
        return not self.player_roles or not self.player_roles.isdisjoint(member.roles)

    def require_player(self, member: Actor) -> None:
        """Refuse ``member`` a new game, or a tournament's entry, where the server's games
        are for some roles only."""
        if not self.lets_play(member):
            raise UserError(
                "Games in this server are for members with {}: ask a moderator for one.",
                self.roles_to_play,
            )

    @property
    def roles_to_play(self) -> Listed:
        """The roles that may play, as mentions (shown privately: nobody is pinged), any of
        them."""
        return Listed(tuple(Verbatim(f"<@&{role}>") for role in sorted(self.player_roles)))

    def lets_end_games(self, member: Actor) -> bool:
        return member.manages_messages or (
            self.moderator_role is not None and self.moderator_role in member.roles
        )


DEFAULTS = ServerSettings()


def _ids(value: Any) -> frozenset[int]:
    if not isinstance(value, list) or not all(
        isinstance(item, int) and not isinstance(item, bool) and item > 0 for item in value
    ):
        raise ValueError(f"not a list of ids: {value!r}")
    return frozenset(value)


def _id(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"not an id: {value!r}")
    return value


def _seconds(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"not a number of seconds: {value!r}")
    return float(value)


def _count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"not a count: {value!r}")
    return value


def _mark(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a mark: {value!r}")
    parse_mark(value)
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"not on or off: {value!r}")
    return value


def _season_length(value: Any) -> SeasonLength:
    if not isinstance(value, str):
        raise ValueError(f"not a season's length: {value!r}")
    return SeasonLength(value)


def _language(value: Any) -> str:
    if value not in ALL_LANGUAGES:
        raise ValueError(f"not a language of the bot's: {value!r}")
    return str(value)


# How each setting's stored JSON becomes its value (ValueError for one no bot wrote).
_DECODERS = {
    Setting.CHANNELS: _ids,
    Setting.PLAYER_ROLES: _ids,
    Setting.MODERATOR_ROLE: _id,
    Setting.TURN_TIMEOUT: _seconds,
    Setting.CHALLENGE_TIMEOUT: _seconds,
    Setting.LANGUAGE: _language,
    Setting.MAX_GAMES: _count,
    Setting.COOLDOWN: _seconds,
    Setting.SIZE: _count,
    Setting.MARK_X: _mark,
    Setting.MARK_O: _mark,
    Setting.THREADS: _flag,
    Setting.SEASONS: _season_length,
    Setting.ANNOUNCEMENTS: _id,
}


def decode(guild_id: int, rows: Iterable[StoredSetting]) -> ServerSettings:
    """The settings ``rows`` store. A row this bot cannot read (an unknown key, a value it
    would never write) counts as its default, with a warning: a server's games must not stop
    over one bad row."""
    values: dict[str, Any] = {}
    changes: dict[Setting, Change] = {}
    for row in rows:
        try:
            setting = Setting(row.key)
            if row.value is not None:
                decoded = _DECODERS[setting](json.loads(row.value))
                values[setting.value] = (
                    sorted(decoded) if isinstance(decoded, frozenset) else decoded
                )
        except ValueError as error:
            log.warning("guild %s: ignoring its setting %r: %s", guild_id, row.key, error)
            continue
        changes[setting] = Change(row.changed_by, row.changed_at)
    for listed in (Setting.CHANNELS, Setting.PLAYER_ROLES):
        if listed.value in values:
            values[listed.value] = frozenset(values[listed.value])
    return ServerSettings(**values, changes=changes)


def encode(value: object) -> str | None:
    """A setting's value as stored: JSON, lists of ids sorted; None for the default."""
    if value is None:
        return None
    if isinstance(value, frozenset):
        value = sorted(value)
    return json.dumps(value)


# A duration's units as members write them in the languages the bot speaks (matched without
# regard to case): the English letters its hints show, and each language's own words and
# abbreviations ("1j" in French, "2 Std." in German, "1時間30分" in Japanese). No spelling
# means one unit in one language and another in the next.
_UNIT_SPELLINGS = {
    86400: "d day days j jour jours t tag tage día días dia dias 日",
    3600: "h hr hrs hour hours heure heures std stunde stunden hora horas 時間",
    60: "m mn min mins minute minutes minuto minutos minuten 分",
    1: "s sec secs second seconds seconde secondes sek sekunde sekunden seg segundo segundos 秒",
}
_UNIT_SECONDS = {
    spelling: seconds
    for seconds, spellings in _UNIT_SPELLINGS.items()
    for spelling in spellings.split()
}
# The longest spelling first, so that "min" is not read as "m" and "in".
_DURATION_PART = re.compile(
    r"(\d+(?:[.,]\d+)?)(?:("
    + "|".join(map(re.escape, sorted(_UNIT_SECONDS, key=len, reverse=True)))
    + r")\.?)?",
    re.IGNORECASE,
)
# What may join two parts: "1 heure et 30 minutes", "1 Stunde und 30 Minuten", "1h, 30m".
_JOINER = re.compile(r"(?:and|et|und|y|e|,|&)(?=\d)", re.IGNORECASE)
# A number left without a unit after one that has one counts in the next smaller unit, as
# "1h30" and "2m30" are meant (a number alone, in seconds).
_NEXT_SMALLER = {0: 1, 86400: 3600, 3600: 60, 60: 1}


def parse_duration(text: str) -> float:
    """Seconds in a duration as people type them: ``90``, ``90s``, ``5m``, ``1h30m``, ``2d``
    (a number alone is seconds; after a unit, the next smaller one: ``1h30``), with the units
    of every language the bot speaks (``1j``, ``2 Std.``, ``1,5 h``, ``1 heure et 30 minutes``,
    ``1時間30分``), in full-width characters too (:func:`half_width`). ValueError for anything
    else."""
    compact = half_width(text).strip().replace(" ", "")
    if not compact:
        raise ValueError("an empty duration")
    seconds, position, last_unit = 0.0, 0, 0
    while position < len(compact):
        part = _DURATION_PART.match(compact, position)
        if part is None:
            raise ValueError(f"{text!r} is not a duration")
        number, spelling = part.groups()
        if spelling is not None:
            last_unit = _UNIT_SECONDS[spelling.lower()]
        elif part.end() < len(compact) or last_unit not in _NEXT_SMALLER:
            raise ValueError(f"{text!r} is not a duration")  # "5.5.5", "30s5"
        else:
            last_unit = _NEXT_SMALLER[last_unit]
        seconds += float(number.replace(",", ".")) * last_unit
        position = part.end()
        if spelling is not None and (joiner := _JOINER.match(compact, position)):
            position = joiner.end()
    return seconds


class SettingsService:
    """Reads a server's settings and changes them for its admins: members who can manage the
    server (checked here again, since a server may show the command to others)."""

    def __init__(self, storage: Storage, clock: Clock) -> None:
        self._storage = storage
        self._clock = clock

    async def of(self, guild_id: int) -> ServerSettings:
        """``guild_id``'s settings, as stored now; outside servers, the defaults."""
        if guild_id == OUTSIDE_SERVERS:
            return DEFAULTS
        return decode(guild_id, await self._storage.guild_settings(guild_id))

    async def for_admin(self, guild_id: int, admin: Actor) -> ServerSettings:
        """``guild_id``'s settings as ``/ttt-settings show`` gives them: to members who can
        manage the server only, since they say who changed what and when."""
        if guild_id == OUTSIDE_SERVERS:
            raise UserError(OUTSIDE)
        if not admin.manages_server:
            raise UserError("Only members who can manage the server can see its settings.")
        return await self.of(guild_id)

    @staticmethod
    def as_stored(guild_id: int, rows: Iterable[StoredSetting]) -> ServerSettings:
        """``guild_id``'s settings from ``rows``, its stored settings read beside something
        else (:meth:`Storage.game_with_guild_settings`); outside servers, the defaults."""
        return DEFAULTS if guild_id == OUTSIDE_SERVERS else decode(guild_id, rows)

    # -- changes --------------------------------------------------------------------------

    async def add_channel(self, guild_id: int, admin: Actor, channel_id: int) -> ServerSettings:
        """Games may be started in ``channel_id`` (a channel or a category) too."""
        current = await self._admin(guild_id, admin)
        if channel_id in current.channels:
            raise UserError("Games can already be started in {}.", Verbatim(f"<#{channel_id}>"))
        if len(current.channels) >= MAX_LISTED:
            raise UserError(
                "Up to {} channels and categories can be listed: remove one first, or use a "
                "category.",
                str(MAX_LISTED),
            )
        return await self._store(guild_id, admin, Setting.CHANNELS, current.channels | {channel_id})

    async def remove_channel(self, guild_id: int, admin: Actor, channel_id: int) -> ServerSettings:
        current = await self._admin(guild_id, admin)
        if channel_id not in current.channels:
            raise UserError(
                "{} is not in the list of channels for games.", Verbatim(f"<#{channel_id}>")
            )
        left = current.channels - {channel_id}
        return await self._store(guild_id, admin, Setting.CHANNELS, left or None)

    async def add_player_role(self, guild_id: int, admin: Actor, role_id: int) -> ServerSettings:
        """Members with ``role_id`` may play too."""
        current = await self._admin(guild_id, admin)
        if role_id == guild_id:
            raise UserError(
                "Everyone has @everyone: to let everyone play, use "
                "`/ttt-settings players everyone`."
            )
        if role_id in current.player_roles:
            raise UserError("Members with {} can already play.", Verbatim(f"<@&{role_id}>"))
        if len(current.player_roles) >= MAX_LISTED:
            raise UserError("Up to {} roles can be listed: remove one first.", str(MAX_LISTED))
        roles = current.player_roles | {role_id}
        return await self._store(guild_id, admin, Setting.PLAYER_ROLES, roles)

    async def remove_player_role(self, guild_id: int, admin: Actor, role_id: int) -> ServerSettings:
        current = await self._admin(guild_id, admin)
        if role_id not in current.player_roles:
            raise UserError("{} is not one of the roles that may play.", Verbatim(f"<@&{role_id}>"))
        left = current.player_roles - {role_id}
        return await self._store(guild_id, admin, Setting.PLAYER_ROLES, left or None)

    async def set_moderator_role(self, guild_id: int, admin: Actor, role_id: int) -> ServerSettings:
        """Members with ``role_id`` may end games too."""
        await self._admin(guild_id, admin)
        if role_id == guild_id:
            raise UserError("Pick a role other than @everyone: ending games is for moderators.")
        return await self._store(guild_id, admin, Setting.MODERATOR_ROLE, role_id)

    async def set_timeouts(
        self, guild_id: int, admin: Actor, turn: str | None, challenge: str | None
    ) -> ServerSettings:
        """The turn and the challenge timeout, as typed (``90s``, ``5m``...); either may be
        left as it is."""
        await self._admin(guild_id, admin)
        if turn is None and challenge is None:
            raise UserError("Give a turn timeout, a challenge timeout, or both.")
        values = {
            setting: _timeout(text)
            for setting, text in (
                (Setting.TURN_TIMEOUT, turn),
                (Setting.CHALLENGE_TIMEOUT, challenge),
            )
            if text is not None
        }
        return await self._store_all(guild_id, admin, values)

    async def set_language(self, guild_id: int, admin: Actor, code: str) -> ServerSettings:
        await self._admin(guild_id, admin)
        if code not in ALL_LANGUAGES:
            raise UserError("Pick a language from the list.")
        return await self._store(guild_id, admin, Setting.LANGUAGE, code)

    async def set_limits(
        self, guild_id: int, admin: Actor, games: int | None, cooldown: str | None
    ) -> ServerSettings:
        """How many live games a member may be in, and the wait between one member's
        challenges (as typed); either may be left as it is."""
        await self._admin(guild_id, admin)
        if games is None and cooldown is None:
            raise UserError("Give a number of games, a cooldown, or both.")
        values: dict[Setting, object] = {}
        if games is not None:
            if not 1 <= games <= MAX_GAMES_LIMIT:
                raise UserError(
                    "A member can be limited to 1 to {} live games.", str(MAX_GAMES_LIMIT)
                )
            values[Setting.MAX_GAMES] = games
        if cooldown is not None:
            values[Setting.COOLDOWN] = _cooldown(cooldown)
        return await self._store_all(guild_id, admin, values)

    async def set_marks(
        self, guild_id: int, admin: Actor, x: str | None, o: str | None
    ) -> ServerSettings:
        """The emoji for X and for O, as typed (either may be left as it is): one Unicode
        emoji, or one of the server's custom emoji, which the caller has checked is the
        server's own."""
        current = await self._admin(guild_id, admin)
        if x is None and o is None:
            raise UserError("Give a mark for X, for O, or both.")
        chosen = {Setting.MARK_X: x, Setting.MARK_O: o}
        values = {setting: _parsed_mark(text) for setting, text in chosen.items() if text}
        shown_x = values.get(Setting.MARK_X, current.mark_x or DEFAULT_MARKS[Mark.X])
        shown_o = values.get(Setting.MARK_O, current.mark_o or DEFAULT_MARKS[Mark.O])
        if shown_x == shown_o:
            raise UserError("X and O need different marks: {} would be both.", shown_x)
        return await self._store_all(guild_id, admin, values)

    async def set_threads(self, guild_id: int, admin: Actor, on: bool) -> ServerSettings:
        """Games in threads of their own, or (off, the default) in the channel itself."""
        await self._admin(guild_id, admin)
        return await self._store(guild_id, admin, Setting.THREADS, on or None)

    async def set_seasons(
        self, guild_id: int, admin: Actor, length: SeasonLength
    ) -> ServerSettings:
        """Monthly seasons (the default), or none: the leaderboard is then all time."""
        await self._admin(guild_id, admin)
        stored = None if length is DEFAULTS.seasons else length.value
        return await self._store(guild_id, admin, Setting.SEASONS, stored)

    async def set_announcements(
        self, guild_id: int, admin: Actor, channel_id: int
    ) -> ServerSettings:
        """Announce each season's top three in ``channel_id`` (the caller has checked that it
        is the server's own) when the season ends."""
        await self._admin(guild_id, admin)
        return await self._store(guild_id, admin, Setting.ANNOUNCEMENTS, channel_id)

    async def set_size(self, guild_id: int, admin: Actor, size: int) -> ServerSettings:
        await self._admin(guild_id, admin)
        check_size(size)
        return await self._store(guild_id, admin, Setting.SIZE, size)

    async def reset(
        self, guild_id: int, admin: Actor, settings: Collection[Setting]
    ) -> ServerSettings:
        """``settings`` back to their defaults."""
        await self._admin(guild_id, admin)
        return await self._store_all(guild_id, admin, dict.fromkeys(settings))

    # -- helpers --------------------------------------------------------------------------

    async def _admin(self, guild_id: int, admin: Actor) -> ServerSettings:
        """The settings ``admin`` is about to change; refused outside servers, and to a member
        who cannot manage the server."""
        if guild_id == OUTSIDE_SERVERS:
            raise UserError(OUTSIDE)
        if not admin.manages_server:
            raise UserError("Only members who can manage the server can change its settings.")
        return await self.of(guild_id)

    async def _store(
        self, guild_id: int, admin: Actor, setting: Setting, value: object
    ) -> ServerSettings:
        return await self._store_all(guild_id, admin, {setting: value})

    async def _store_all(
        self, guild_id: int, admin: Actor, values: Mapping[Setting, object]
    ) -> ServerSettings:
        now = self._clock.now()
        written = False
        try:
            for setting, value in values.items():
                stored = StoredSetting(setting.value, encode(value), admin.id, now)
                await self._storage.change_guild_setting(guild_id, stored)
                written = True
            log.info(
                "guild %s: user %s set %s",
                guild_id,
                admin.id,
                ", ".join(f"{setting.value}={encode(value)}" for setting, value in values.items()),
            )
            return await self.of(guild_id)
        except DatabaseUnavailableError as error:
            if not written and error.nothing_written:
                raise
            # Each setting is its own statement: some of these may be saved already.
            log.warning("guild %s: the database failed while saving settings: %s", guild_id, error)
            raise UserError(SETTINGS_MAYBE_SAVED) from None


def _timeout(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise UserError(
            "{} is not a duration: write it like 90s, 5m, 2h or 1d.", text.strip()
        ) from None
    if not MIN_TIMEOUT <= seconds <= MAX_TIMEOUT:
        raise UserError("A timeout must be between 10 seconds and 7 days, not {}.", text.strip())
    return seconds


def _parsed_mark(text: str) -> str:
    """A mark as typed, as stored: one emoji, without the spaces around it."""
    try:
        parsed = parse_mark(text)
    except ValueError:
        raise UserError(
            "{} is not one emoji: give one emoji, or one of this server's own.", text.strip()
        ) from None
    mark = parsed.text if isinstance(parsed, CustomEmoji) else parsed
    if mark in TAKEN:
        raise UserError("{} already means something on the board: pick another emoji.", mark)
    return mark


def _cooldown(text: str) -> float | None:
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise UserError(
            "{} is not a duration: write it like 30s, 5m or 1h (0 for none).", text.strip()
        ) from None
    if seconds > MAX_COOLDOWN:
        raise UserError("A cooldown can be a day at most, not {}.", text.strip())
    return seconds or None
