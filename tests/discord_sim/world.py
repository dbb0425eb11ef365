"""World building: users, guilds, roles, members, channels, threads and DMs, the app's
installations, and where the bot itself reaches.
"""

from __future__ import annotations

from collections.abc import Iterable

import discord

from .core import SimCore
from .models import (
    CHANNEL_DM,
    CHANNEL_GROUP_DM,
    CHANNEL_PUBLIC_THREAD,
    CHANNEL_TEXT,
    CONTEXT_BOT_DM,
    CONTEXT_GUILD,
    CONTEXT_PRIVATE_CHANNEL,
    DEFAULT_BOT_PERMISSIONS,
    GUILD_INSTALL,
    PERM_VIEW_CHANNEL,
    USER_INSTALL,
    SimChannel,
    SimEmoji,
    SimGuild,
    SimMember,
    SimRole,
    SimUsageError,
    SimUser,
)


class WorldMixin(SimCore):
    """Building the world the bot sees: users, guilds, members, channels."""

    def add_user(self, name: str, *, bot: bool = False, global_name: str | None = None) -> SimUser:
        user = SimUser(self.snowflakes.next(), name, bot=bot, global_name=global_name)
        self.users[user.id] = user
        return user

    def add_guild(
        self,
        name: str,
        *,
        id: int | None = None,
        shard: tuple[int, int] | None = None,
        owner: SimUser | None = None,
        bot_permissions: int | discord.Permissions = DEFAULT_BOT_PERMISSIONS,
        with_bot: bool = True,
        commands_scope: bool = True,
    ) -> SimGuild:
        """A guild the bot is a member of (``with_bot=False``: one it is not in, where only
        users who installed the app can use it). ``shard=(shard_id, shard_count)`` picks an
        id that ``(id >> 22) % shard_count`` routes to that shard. Without ``owner`` a user
        named "owner" is created; the owner has every permission. ``commands_scope=False``:
        the guild added the bot without the applications.commands scope."""
        if id is None:
            id = self.snowflakes.for_shard(*shard) if shard else self.snowflakes.next()
        if owner is None:
            owner = self.add_user("owner")
        guild = SimGuild(id, name, owner.id, commands_scope=commands_scope)
        self.guilds[guild.id] = guild
        self.add_member(guild, owner)
        if with_bot:
            bot_role = self.add_role(guild, self.bot_user.name, permissions=bot_permissions)
            self.add_member(guild, self.bot_user, roles=[bot_role])
        return guild

    def install_for_user(self, user: SimUser) -> None:
        """``user`` installs the app to their account: its commands that allow user installs
        then work in their DMs, group DMs and guilds the bot is not in."""
        self.user_installs.add(user.id)

    def add_role(
        self, guild: SimGuild, name: str, *, permissions: int | discord.Permissions = 0
    ) -> SimRole:
        value = permissions.value if isinstance(permissions, discord.Permissions) else permissions
        role = SimRole(self.snowflakes.next(), guild, name, int(value), position=len(guild.roles))
        guild.roles.append(role)
        self.roles[role.id] = role
        return role

    def add_emoji(self, guild: SimGuild, name: str, *, animated: bool = False) -> SimEmoji:
        """A custom emoji of ``guild``."""
        emoji = SimEmoji(self.snowflakes.next(), guild, name, animated)
        guild.emojis.append(emoji)
        self.emojis[emoji.id] = emoji
        return emoji

    def delete_emoji(self, emoji: SimEmoji) -> None:
        """As a server's admin deleting it: messages may no longer use it."""
        emoji.guild.emojis.remove(emoji)
        del self.emojis[emoji.id]

    def add_member(
        self,
        guild: SimGuild,
        user: SimUser,
        *,
        permissions: int | discord.Permissions | None = None,
        roles: Iterable[SimRole] = (),
        nick: str | None = None,
    ) -> SimMember:
        """Make ``user`` a member. ``permissions`` are granted on top of @everyone's
        (ordinary member permissions, no moderation) through a personal role."""
        member = SimMember(user, guild, list(roles), nick=nick)
        if permissions is not None:
            member.roles.append(self.add_role(guild, f"perms:{user.name}", permissions=permissions))
        guild.members[user.id] = member
        return member

    def remove_member(self, guild: SimGuild, user: SimUser) -> None:
        """``user`` leaves ``guild`` (for the bot: the server removed it). Say so before the
        client connects: the sim sends no GUILD_DELETE."""
        if guild.members.pop(user.id, None) is None:
            raise SimUsageError(f"{user.name} is not a member of {guild.name}")

    def add_channel(
        self,
        guild: SimGuild,
        name: str,
        *,
        type: int = CHANNEL_TEXT,
        category: SimChannel | None = None,
    ) -> SimChannel:
        """A channel of ``guild`` (``type`` 4 for a category), in ``category`` if given."""
        position = sum(1 for c in guild.channels if not c.is_thread)
        channel = SimChannel(
            self.snowflakes.next(), name, type, guild, parent=category, position=position
        )
        guild.channels.append(channel)
        self.channels[channel.id] = channel
        return channel

    def deny(self, channel: SimChannel, user: SimUser, permissions: int) -> None:
        """The server's admins deny ``user`` (the bot too) ``permissions`` in ``channel`` (a
        permission overwrite; 0 takes it away), from now on: threads under it deny them too.
        Interactions there carry the permissions left (``app_permissions`` for the bot), and
        the bot's requests meet them."""
        if channel.guild is None:
            raise SimUsageError("permission overwrites are for guild channels")
        if permissions:
            channel.denied[user.id] = permissions
        else:
            channel.denied.pop(user.id, None)

    def delete_channel(self, channel: SimChannel) -> None:
        """An admin deletes ``channel`` of a guild, and its threads with it: the bot's
        requests there get 404 Unknown Channel. The sim sends no CHANNEL_DELETE."""
        if channel.guild is None or self.channels.get(channel.id) is not channel:
            raise SimUsageError(f"{channel!r} is no guild channel of the sim's")
        guild = channel.guild
        for gone in [c for c in guild.channels if c is channel or c.parent is channel]:
            if gone is not channel and not gone.is_thread:
                continue  # a category's channels outlive it
            guild.channels.remove(gone)
            del self.channels[gone.id]

    def add_thread(
        self, parent: SimChannel, name: str, *, owner: SimUser | None = None
    ) -> SimChannel:
        """A public thread (type 11) under ``parent``; it appears in GUILD_CREATE's threads."""
        if parent.guild is None:
            raise SimUsageError("threads need a guild channel as parent")
        owner_id = (owner or self.bot_user).id
        thread = SimChannel(
            self.snowflakes.next(),
            name,
            CHANNEL_PUBLIC_THREAD,
            parent.guild,
            parent=parent,
            owner_id=owner_id,
        )
        parent.guild.channels.append(thread)
        self.channels[thread.id] = thread
        return thread

    def dm_channel(self, user: SimUser) -> SimChannel:
        """The DM channel between the bot and ``user`` (created on first use)."""
        for channel in self.channels.values():
            if channel.type == CHANNEL_DM and channel.recipient is user:
                return channel
        channel = SimChannel(self.snowflakes.next(), user.name, CHANNEL_DM, recipient=user)
        self.channels[channel.id] = channel
        return channel

    def group_dm(self, name: str, *users: SimUser) -> SimChannel:
        """A group DM (type 3) of ``users``, the first its owner; the bot is not in it."""
        return self._private_channel(name, CHANNEL_GROUP_DM, users)

    def private_dm(self, first: SimUser, second: SimUser) -> SimChannel:
        """The DM between two users (type 1); the bot is not in it."""
        return self._private_channel(f"{first.name}-{second.name}", CHANNEL_DM, (first, second))

    def _private_channel(self, name: str, kind: int, users: tuple[SimUser, ...]) -> SimChannel:
        if len(users) < 2 or any(user.bot for user in users):
            raise SimUsageError("a group DM or a DM between users needs two or more users")
        channel = SimChannel(
            self.snowflakes.next(), name, kind, recipients=users, owner_id=users[0].id
        )
        self.channels[channel.id] = channel
        return channel

    def bot_reaches(self, channel: SimChannel) -> bool:
        """Whether the bot itself can see ``channel``: a channel of a guild it is a member of
        (with View Channel), or its own DM with a user. Elsewhere only interactions reach it."""
        if channel.guild is None:
            return channel.recipient is not None
        bot = self._bot_member(channel.guild)
        return bot is not None and bool(self.channel_permissions(bot, channel) & PERM_VIEW_CHANNEL)

    def context_of(self, channel: SimChannel) -> int:
        """The interaction context Discord reports for ``channel``."""
        if channel.guild is not None:
            return CONTEXT_GUILD
        return CONTEXT_BOT_DM if channel.recipient is not None else CONTEXT_PRIVATE_CHANNEL

    def _installs_for(self, user: SimUser, channel: SimChannel) -> dict[int, str]:
        """The installations of the app that reach ``user`` in ``channel``, as Discord's
        ``authorizing_integration_owners``: the guild's install (``"0"`` in the bot's DM),
        and the user's own."""
        owners: dict[int, str] = {}
        if channel.guild is not None and self._bot_member(channel.guild) is not None:
            owners[GUILD_INSTALL] = str(channel.guild.id)
        elif channel.guild is None and channel.recipient is not None:
            owners[GUILD_INSTALL] = "0"
        if user.id in self.user_installs:
            owners[USER_INSTALL] = str(user.id)
        return owners
