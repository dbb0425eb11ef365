"""The simulator's state: users, guilds, channels, messages and interaction records.

Everything here is plain data plus the JSON shapes Discord puts on the wire for it. The
objects are what tests read (``sim.messages(channel)``, ``ix.message.buttons()``), so
they keep what the bot sent verbatim (``components`` and ``embeds`` are the raw JSON)
and add only what Discord itself would add (ids, timestamps, author, flags).
"""

# ruff: noqa: ASYNC109 -- ``timeout=`` on the waits is the documented test API.

from __future__ import annotations

import copy
import datetime as dt
import functools
import marshal
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from .core import SimCore

JSON = dict[str, Any]
J = TypeVar("J")

DISCORD_EPOCH_MS = 1420070400000


def copy_json(value: J) -> J:
    """A deep copy of JSON data (dicts, lists, strings, numbers, booleans, None). ``marshal``
    copies it in C, about five times faster than ``copy.deepcopy``."""
    data: Any = value
    try:
        return cast("J", marshal.loads(marshal.dumps(data)))
    except ValueError:  # not plain JSON data after all
        return copy.deepcopy(value)


# Message flag bits the simulator interprets.
FLAG_SUPPRESS_EMBEDS = 1 << 2
FLAG_EPHEMERAL = 1 << 6
FLAG_LOADING = 1 << 7
FLAG_SUPPRESS_NOTIFICATIONS = 1 << 12
FLAG_COMPONENTS_V2 = 1 << 15

# Permission bits the simulator checks itself.
PERM_ADMINISTRATOR = 1 << 3
PERM_VIEW_CHANNEL = 1 << 10
PERM_SEND_MESSAGES = 1 << 11
PERM_MANAGE_MESSAGES = 1 << 13
PERM_USE_APPLICATION_COMMANDS = 1 << 31
PERM_MANAGE_THREADS = 1 << 34
PERM_CREATE_PUBLIC_THREADS = 1 << 35
PERM_SEND_MESSAGES_IN_THREADS = 1 << 38
ALL_PERMISSIONS = (1 << 53) - 1

# What an ordinary member of a fresh guild may do (the @everyone role): chat, react,
# embed, attach, use app commands, voice; no moderation bits such as manage_messages.
DEFAULT_MEMBER_PERMISSIONS = 311455763521
# The bot's own role: the member defaults, which is what a typical invite grants.
DEFAULT_BOT_PERMISSIONS = DEFAULT_MEMBER_PERMISSIONS
# What an app may do where only a user installed it (no bot member to hold permissions):
# answer with messages that embed, attach, mention and use external emojis, through the
# interaction (Discord's "user-installed apps" permission set).
USER_APP_PERMISSIONS = (1 << 14) | (1 << 15) | (1 << 17) | (1 << 18)

# Interaction contexts (where a command was used) and installation types (who installed the
# app for it): Discord's numbers.
CONTEXT_GUILD = 0
CONTEXT_BOT_DM = 1
CONTEXT_PRIVATE_CHANNEL = 2
GUILD_INSTALL = 0
USER_INSTALL = 1

CHANNEL_TEXT = 0
CHANNEL_DM = 1
CHANNEL_GROUP_DM = 3
CHANNEL_CATEGORY = 4
CHANNEL_NEWS = 5
CHANNEL_PUBLIC_THREAD = 11

_MENTION_RE = re.compile(r"<@!?(\d+)>")


class SimError(AssertionError):
    """Base of the simulator's errors; an AssertionError so pytest reports it as a failure."""


class SimUsageError(SimError):
    """A test asked for something Discord would not let a user do (unknown command, bad option,
    clicking a button that is not on the message, ...)."""


class SimTimeout(SimError):
    """The bot did not do what a wait expected within its timeout."""


class SimClientDied(SimError):
    """The discord.py client's connect() task ended while the test expected it to run."""


class SimInteractionLost(SimTimeout):
    """The interaction was queued for a gateway session that was then invalidated instead of
    resumed: as on Discord, it never reaches the bot (the user sees "interaction failed")."""


@functools.lru_cache(maxsize=4096)  # the same message and member times, in every payload
def iso(ts: float) -> str:
    """Discord's timestamp format (ISO 8601 with microseconds and an explicit UTC offset)."""
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).isoformat()


def snowflake_time(snowflake: int) -> float:
    """Unix time in seconds encoded in a snowflake."""
    return ((snowflake >> 22) + DISCORD_EPOCH_MS) / 1000.0


class SnowflakeFactory:
    """Unique, increasing snowflakes carrying the time of ``clock`` (the sim's: the wall clock
    plus what a test advanced it by).

    discord.py derives ``Interaction.expires_at`` and ``created_at`` from the id, so ids must
    carry the clock, not a counter; an interaction made after ``advance_clock`` is as young as
    the sim's clock says.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._last = 0

    def next(self) -> int:
        now_ms = int(self._clock() * 1000)
        candidate = (now_ms - DISCORD_EPOCH_MS) << 22
        self._last = max(candidate, self._last + 1)
        return self._last

    def for_shard(self, shard_id: int, shard_count: int) -> int:
        """A fresh id whose ``(id >> 22) % shard_count`` is ``shard_id`` (for guild ids)."""
        base = self.next() >> 22
        ts = base + (shard_id - base) % shard_count
        self._last = max(self._last, ts << 22)
        return ts << 22


@dataclass(eq=False)
class SimUser:
    id: int
    name: str
    bot: bool = False
    global_name: str | None = None
    locale: str = "en-US"  # the language of their Discord client: interactions' ``locale``

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"

    def payload(self) -> JSON:
        return {
            "id": str(self.id),
            "username": self.name,
            "discriminator": "0",
            "global_name": self.global_name,
            "avatar": None,
            "bot": self.bot,
            "system": False,
            "public_flags": 0,
        }

    def __repr__(self) -> str:
        return f"<SimUser {self.name} id={self.id}{' bot' if self.bot else ''}>"


@dataclass(eq=False)
class SimEmoji:
    """A server's custom emoji: usable by the bot in any message while the bot is in that
    server and the emoji exists."""

    id: int
    guild: SimGuild
    name: str
    animated: bool = False

    @property
    def text(self) -> str:
        """As a message writes it."""
        return f"<{'a' if self.animated else ''}:{self.name}:{self.id}>"

    def payload(self) -> JSON:
        return {
            "id": str(self.id),
            "name": self.name,
            "roles": [],
            "require_colons": True,
            "managed": False,
            "animated": self.animated,
            "available": True,
        }


@dataclass(eq=False)
class SimRole:
    id: int
    guild: SimGuild
    name: str
    permissions: int
    position: int = 0

    @property
    def mention(self) -> str:
        return f"<@&{self.id}>"

    def payload(self) -> JSON:
        return {
            "id": str(self.id),
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "icon": None,
            "unicode_emoji": None,
            "flags": 0,
        }

    def __repr__(self) -> str:
        return f"<SimRole {self.name} id={self.id}>"


@dataclass(eq=False)
class SimMember:
    user: SimUser
    guild: SimGuild
    roles: list[SimRole] = field(default_factory=list)
    joined_at: float = field(default_factory=time.time)
    nick: str | None = None

    @property
    def id(self) -> int:
        return self.user.id

    @property
    def permissions(self) -> int:
        """Guild-wide permissions: @everyone plus every role, everything for owner or admin."""
        if self.guild.owner_id == self.user.id:
            return ALL_PERMISSIONS
        value = self.guild.everyone.permissions
        for role in self.roles:
            value |= role.permissions
        if value & PERM_ADMINISTRATOR:
            return ALL_PERMISSIONS
        return value

    def has(self, bits: int) -> bool:
        return self.permissions & bits == bits

    def payload(self, *, with_user: bool = True, with_permissions: bool = False) -> JSON:
        data: JSON = {
            "roles": [str(r.id) for r in self.roles],
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "joined_at": iso(self.joined_at),
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "pending": False,
            "flags": 0,
            "communication_disabled_until": None,
        }
        if with_user:
            data["user"] = self.user.payload()
        if with_permissions:
            data["permissions"] = str(self.permissions)
        return data

    def __repr__(self) -> str:
        return f"<SimMember {self.user.name} of {self.guild.name}>"


@dataclass(eq=False)
class SimChannel:
    id: int
    name: str
    type: int = CHANNEL_TEXT
    guild: SimGuild | None = None
    parent: SimChannel | None = None
    position: int = 0
    recipient: SimUser | None = None  # the user of a DM with the bot
    # The users of a group DM, or of a DM between two users: channels the bot is not in.
    recipients: tuple[SimUser, ...] = ()
    owner_id: int | None = None
    created_at: float = field(default_factory=time.time)
    archived: bool = False  # a thread's: no edits until a new message reopens it
    # A permission overwrite per member: the bits denied to them here (a thread has its
    # parent's too). An owner's or an administrator's permissions ignore them, as Discord's do.
    denied: dict[int, int] = field(default_factory=dict)
    last_message_id: int | None = None  # its newest message (ephemeral ones aside)
    message_count: int = 0  # a thread's messages, as Discord counts them

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"

    @property
    def is_thread(self) -> bool:
        return self.type in (10, 11, 12)

    def has_user(self, user: SimUser) -> bool:
        """Whether ``user`` is in this DM or group DM (always False for guild channels)."""
        return user is self.recipient or user in self.recipients

    def payload(self, *, with_guild_id: bool = True) -> JSON:
        data: JSON = {"id": str(self.id), "type": self.type, "name": self.name, "flags": 0}
        if self.type in (CHANNEL_DM, CHANNEL_GROUP_DM):
            users = (self.recipient,) if self.recipient is not None else self.recipients
            data.update(recipients=[user.payload() for user in users], last_message_id=None)
            if self.type == CHANNEL_DM:
                data["name"] = None
            else:
                data.update(owner_id=str(self.owner_id or users[0].id), icon=None)
            return data
        data.update(
            position=self.position,
            parent_id=str(self.parent.id) if self.parent else None,
            topic=None,
            nsfw=False,
            rate_limit_per_user=0,
            last_message_id=None if self.last_message_id is None else str(self.last_message_id),
            permission_overwrites=[],
        )
        if with_guild_id and self.guild is not None:
            data["guild_id"] = str(self.guild.id)
        if self.is_thread:
            data.update(
                owner_id=str(self.owner_id or 0),
                message_count=self.message_count,
                member_count=1,
                total_message_sent=self.message_count,
                thread_metadata={
                    "archived": self.archived,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": iso(self.created_at),
                    "locked": False,
                    "create_timestamp": iso(self.created_at),
                },
            )
            for key in ("topic", "permission_overwrites", "position"):
                data.pop(key)
        return data

    def __repr__(self) -> str:
        return f"<SimChannel #{self.name} id={self.id} type={self.type}>"


@dataclass(eq=False)
class SimGuild:
    id: int
    name: str
    owner_id: int
    locale: str = "en-US"  # the server's language: interactions' ``guild_locale``
    everyone: SimRole = field(init=False)
    roles: list[SimRole] = field(default_factory=list)
    channels: list[SimChannel] = field(default_factory=list)
    members: dict[int, SimMember] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    # Commands this server shows to every member whatever their default_member_permissions
    # (Server Settings > Integrations lets its admins do so): a bot must check again.
    shown_to_everyone: set[str] = field(default_factory=set)
    emojis: list[SimEmoji] = field(default_factory=list)
    # Whether the app was added with the applications.commands scope. Without it (a bot
    # invited with the bot scope alone) Discord refuses the app's commands for this guild
    # (403 Missing Access) and shows its commands to nobody here.
    commands_scope: bool = True
    # Discord's limit on a server's active (unarchived) threads; a test may lower it.
    max_active_threads: int = 1000

    def __post_init__(self) -> None:
        # Discord gives the @everyone role the guild's own id.
        self.everyone = SimRole(self.id, self, "@everyone", DEFAULT_MEMBER_PERMISSIONS, 0)
        self.roles.insert(0, self.everyone)

    def shard_id(self, shard_count: int) -> int:
        return (self.id >> 22) % shard_count

    def member(self, user: SimUser | int) -> SimMember | None:
        uid = user if isinstance(user, int) else user.id
        return self.members.get(uid)

    def payload(self) -> JSON:
        """The guild object without the GUILD_CREATE-only lists."""
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": str(self.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "premium_progress_bar_enabled": False,
            "preferred_locale": self.locale,
            "features": [],
            "roles": [r.payload() for r in self.roles],
            "emojis": [emoji.payload() for emoji in self.emojis],
            "stickers": [],
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "vanity_url_code": None,
            "application_id": None,
            "max_members": 500000,
            "max_video_channel_users": 25,
            "incidents_data": None,
        }

    def __repr__(self) -> str:
        return f"<SimGuild {self.name} id={self.id}>"


@dataclass(frozen=True)
class MessageVersion:
    """A message as it was before an edit."""

    content: str
    embeds: list[JSON]
    components: list[JSON]
    flags: int
    allowed_mentions: JSON | None
    edited_at: float | None

    @property
    def text(self) -> str:
        return message_text(self.content, self.components)


def message_text(content: str, components: list[JSON]) -> str:
    """What a person reads as a message's text: its content, then the content of its text
    displays (a components-v2 message has no content: its text is all in them)."""
    shown = [
        comp["content"]
        for comp in walk_components(components)
        if comp.get("type") == 10 and isinstance(comp.get("content"), str)
    ]
    return "\n".join(part for part in (content, *shown) if part)


@dataclass(eq=False)
class SimMessage:
    """A message as Discord keeps it.

    Its ``embeds``, ``components``, ``attachments`` and ``allowed_mentions`` are never changed in
    place: an edit replaces them with the lists of the request, which was parsed for that request
    alone. So payloads, the edit history and the request log share them rather than copy them:
    copying took a fifth of the load benchmark's driver's time (by profile), CPU taken from the
    bot it measures.
    """

    id: int
    channel: SimChannel
    author: SimUser
    content: str = ""
    embeds: list[JSON] = field(default_factory=list)
    components: list[JSON] = field(default_factory=list)
    flags: int = 0
    allowed_mentions: JSON | None = None
    attachments: list[JSON] = field(default_factory=list)
    tts: bool = False
    type: int = 0
    created_at: float = field(default_factory=time.time)
    edited_at: float | None = None
    edits: list[MessageVersion] = field(default_factory=list)
    deleted: bool = False
    # Who may see it when ephemeral, and the interaction that produced it, if any.
    interaction_user: SimUser | None = None
    interaction: InteractionRecord | None = field(default=None, repr=False)
    webhook_id: int | None = None
    application_id: int | None = None
    reference_id: int | None = None
    # Users the message notified when created (mentions filtered by allowed_mentions).
    pinged: list[int] = field(default_factory=list)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & FLAG_EPHEMERAL)

    @property
    def loading(self) -> bool:
        return bool(self.flags & FLAG_LOADING)

    @property
    def guild(self) -> SimGuild | None:
        return self.channel.guild

    @property
    def text(self) -> str:
        return message_text(self.content, self.components)

    def mentioned_user_ids(self) -> list[int]:
        # Mentions in a text display notify as in content (Discord's component reference:
        # they "ping and send notifications based on" the message's allowed_mentions).
        # Only a components-v2 message has text displays: a classic one's text is its content.
        text = self.text if self.flags & FLAG_COMPONENTS_V2 else self.content
        return [int(m) for m in _MENTION_RE.findall(text)]

    def iter_components(self) -> Iterator[JSON]:
        """Every component, depth first, in display order."""
        yield from walk_components(self.components)

    def buttons(self) -> list[JSON]:
        """The buttons in row order, as sent (``custom_id``, ``label``, ``emoji``, ``style``,
        ``disabled`` ...), with ``disabled`` defaulted to False."""
        out = []
        for comp in self.iter_components():
            if comp.get("type") == 2:
                button = dict(comp)
                button.setdefault("disabled", False)
                out.append(button)
        return out

    def button(self, custom_id: str) -> JSON:
        for button in self.buttons():
            if button.get("custom_id") == custom_id:
                return button
        raise KeyError(custom_id)

    def retire_version(self) -> MessageVersion:
        """The message as it stands, for its history, as an edit is about to replace it."""
        return MessageVersion(
            content=self.content,
            embeds=self.embeds,
            components=self.components,
            flags=self.flags,
            allowed_mentions=self.allowed_mentions,
            edited_at=self.edited_at,
        )

    def payload(self) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "channel_id": str(self.channel.id),
            "type": self.type,
            "content": self.content,
            "author": self.author.payload(),
            "embeds": self.embeds,
            "components": self.components,
            "attachments": self.attachments,
            "flags": self.flags,
            "timestamp": iso(self.created_at),
            "edited_timestamp": iso(self.edited_at) if self.edited_at else None,
            "tts": self.tts,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "pinned": False,
        }
        if self.channel.guild is not None:
            data["guild_id"] = str(self.channel.guild.id)
        if self.webhook_id is not None:
            data["webhook_id"] = str(self.webhook_id)
        if self.application_id is not None:
            data["application_id"] = str(self.application_id)
        if self.reference_id is not None:
            data["message_reference"] = {
                "type": 0,
                "message_id": str(self.reference_id),
                "channel_id": str(self.channel.id),
            }
        ix = self.interaction
        if ix is not None:
            data["interaction_metadata"] = {
                "id": str(ix.id),
                "type": ix.type,
                "user": ix.user.payload(),
                "authorizing_integration_owners": dict(ix.owners or {}),
            }
            if ix.type == 2 and ix.name:
                data["interaction"] = {
                    "id": str(ix.id),
                    "type": ix.type,
                    "name": ix.name,
                    "user": ix.user.payload(),
                }
        guild = self.channel.guild
        for uid in self.mentioned_user_ids():
            member = guild.member(uid) if guild else None
            if member is not None:
                mention = member.user.payload()
                mention["member"] = member.payload(with_user=False)
                data["mentions"].append(mention)
        return data

    def __repr__(self) -> str:
        extra = " ephemeral" if self.ephemeral else ""
        extra += " deleted" if self.deleted else ""
        return f"<SimMessage id={self.id} in #{self.channel.name}{extra} content={self.content!r}>"


def walk_components(components: list[JSON]) -> Iterator[JSON]:
    """Every component of a message, nested ones (rows, containers, sections) included."""
    for comp in components:
        yield comp
        children = comp.get("components")
        if isinstance(children, list):
            yield from walk_components(children)
        for key in ("component", "accessory"):
            child = comp.get(key)
            if isinstance(child, dict):
                yield from walk_components([child])


@dataclass(frozen=True)
class RequestRecord:
    """One REST call the bot made, as the sim answered it."""

    method: str
    path: str
    status: int
    body: Any
    # "METHOD /template" as the sim names the route (None for a route it does not serve).
    route: str | None = None
    # The injected fault's kind ("rate_limit", "status", "reset-before", "reset-after",
    # "delay"), if one hit this request; after a reset ``status`` is what the sim decided
    # (0 if it never looked) and the client got no reply.
    fault: str | None = None
    # HTTP mode: an interaction's answer the bot gave as the response to the sim's POST,
    # recorded as the callback it stands for (not a request the bot made).
    http_response: bool = False


@dataclass(eq=False)
class InteractionRecord:
    """One interaction the sim sent and everything the bot did in answer to it.

    ``response_type`` is the callback type of the bot's first answer (4 message, 5 deferred
    message, 6 deferred update, 7 update message, 8 autocomplete choices, 9 modal); ``message``
    is the message that answer created or updated; ``followups`` lists every message sent
    through the interaction webhook (after a type 5 defer, the first followup fills the
    deferred message, so ``followups[0] is message``).
    """

    sim: SimCore = field(repr=False)
    id: int
    token: str
    type: int
    user: SimUser
    channel: SimChannel
    guild: SimGuild | None
    name: str | None = None
    custom_id: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    payload: JSON = field(default_factory=dict, repr=False)
    source_message: SimMessage | None = field(default=None, repr=False)
    sent_at: float | None = None
    responded_at: float | None = None
    response_type: int | None = None
    response_data: JSON | None = field(default=None, repr=False)
    rejected: str | None = None
    message: SimMessage | None = field(default=None, repr=False)
    followups: list[SimMessage] = field(default_factory=list, repr=False)
    choices: list[JSON] | None = None
    modal: JSON | None = field(default=None, repr=False)
    original_edits: int = 0
    callbacks: int = 0
    # Its first answer was applied but its connection reset before the bot heard so: one
    # more first answer is refused with 40060 as Discord refuses it, and is no violation.
    answer_unheard: bool = False
    # The gateway shard the INTERACTION_CREATE went to (0 for an unsharded client), the
    # session and the sequence number it was dispatched with.
    shard_id: int | None = None
    # In HTTP mode, the endpoint (the worker) it was POSTed to.
    endpoint: str | None = None
    session_id: str | None = field(default=None, repr=False)
    seq: int | None = field(default=None, repr=False)
    # Queued for a session that was invalidated instead of resumed: it never reaches the bot.
    lost: bool = False
    # In HTTP mode, why its POST got no response at all: the endpoint refused the connection
    # or dropped it (a worker killed while it held the request), as "ErrorName: text".
    dropped: str | None = None
    # authorizing_integration_owners: the installations that authorized it ("0" guild, "1"
    # user), set when the payload is built.
    owners: dict[str, str] | None = field(default=None, repr=False)

    @property
    def created_at(self) -> float:
        return snowflake_time(self.id)

    @property
    def answered(self) -> bool:
        return self.response_type is not None

    @property
    def latency(self) -> float | None:
        """Seconds between sending INTERACTION_CREATE and receiving the first callback."""
        if self.sent_at is None or self.responded_at is None:
            return None
        return self.responded_at - self.sent_at

    @property
    def ephemeral(self) -> bool:
        if self.message is not None and self.response_type in (4, 5):
            return self.message.ephemeral
        flags = (self.response_data or {}).get("flags") or 0
        return bool(int(flags) & FLAG_EPHEMERAL)

    @property
    def content(self) -> str | None:
        return None if self.message is None else self.message.content

    @property
    def embeds(self) -> list[JSON]:
        return [] if self.message is None else self.message.embeds

    @property
    def components(self) -> list[JSON]:
        return [] if self.message is None else self.message.components

    @property
    def done(self) -> bool:
        """True once the response is final: immediately for types 4, 7, 8 and 9; after the
        deferred message was filled for 5; after an edit of @original or a followup for 6."""
        if self.response_type is None:
            return False
        if self.response_type == 5:
            return self.message is not None and not self.message.loading
        if self.response_type == 6:
            return self.original_edits > 0 or bool(self.followups)
        return True

    async def wait_done(self, timeout: float | None = None) -> InteractionRecord:
        await self.sim.wait_for(lambda: self.done, timeout=timeout, what=f"{self.describe()} done")
        return self

    async def wait_followups(
        self, count: int = 1, timeout: float | None = None
    ) -> list[SimMessage]:
        await self.sim.wait_for(
            lambda: len(self.followups) >= count,
            timeout=timeout,
            what=f"{count} followup(s) to {self.describe()}",
        )
        return self.followups

    def describe(self) -> str:
        kinds = {2: "slash", 3: "click", 4: "autocomplete", 5: "modal submit"}
        what = self.name if self.type in (2, 4) else self.custom_id
        opts = "".join(f" {k}={v!r}" for k, v in self.options.items())
        return f"{kinds.get(self.type, self.type)} {what!r}{opts} by {self.user.name}"

    def __repr__(self) -> str:
        return (
            f"<InteractionRecord {self.describe()} id={self.id} response_type={self.response_type}>"
        )
