"""The REST handlers for the bot's identity, its application commands, and channels, messages,
users and guilds. Each takes the ``Call`` and the route's path parameters and returns a
``Reply`` (or raises ``Fail`` with one); ``server.py`` routes to them.
"""

from __future__ import annotations

from . import limits
from .messages import MessagesMixin
from .models import (
    CHANNEL_NEWS,
    CHANNEL_PUBLIC_THREAD,
    CHANNEL_TEXT,
    JSON,
    PERM_CREATE_PUBLIC_THREADS,
    PERM_MANAGE_MESSAGES,
    PERM_MANAGE_THREADS,
    PERM_SEND_MESSAGES,
    PERM_SEND_MESSAGES_IN_THREADS,
    PERM_VIEW_CHANNEL,
    SimChannel,
    SimGuild,
    SimMessage,
    SimUser,
    copy_json,
    iso,
)
from .wire import (
    CANNOT_EDIT_OTHERS,
    INVALID_FORM_BODY,
    MAX_ACTIVE_THREADS,
    MISSING_ACCESS,
    MISSING_PERMISSIONS,
    UNKNOWN_CHANNEL,
    UNKNOWN_COMMAND,
    UNKNOWN_EMOJI,
    UNKNOWN_GUILD,
    UNKNOWN_MEMBER,
    UNKNOWN_MESSAGE,
    UNKNOWN_USER,
    Call,
    Fail,
    Reply,
    error_reply,
)


class RestMixin(MessagesMixin):
    """REST: identity, application commands, channels, messages, users and guilds."""

    # ------------------------------------------------------------------ REST: identity

    async def _get_me(self, call: Call) -> Reply:
        data = self.bot_user.payload()
        data.update(verified=True, mfa_enabled=False, flags=0, locale="en-US", email=None)
        return 200, data

    async def _get_application(self, call: Call) -> Reply:
        """The application, as both routes return it (Discord's spec: the same
        ``PrivateApplicationResponse``). ``verify_key`` is the public key interactions POSTed in
        HTTP mode are signed with, ``interactions_endpoint_url`` where they go (None: over the
        gateway); ``approximate_guild_count`` counts the guilds the bot is a member of,
        ``approximate_user_install_count`` the users who installed it;
        ``integration_types_config`` offers both installations (0 guild, 1 user)."""
        return 200, {
            "id": str(self.application_id),
            "name": self.bot_user.name,
            "description": "",
            "icon": None,
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": _spec_user(self.app_owner),
            "verify_key": self.public_key,
            "flags": 0,
            "flags_new": "0",
            "team": None,
            "bot": _spec_user(self.bot_user),
            "summary": "",
            "rpc_origins": [],
            "redirect_uris": [],
            "interactions_endpoint_url": self.interactions_url,
            "role_connections_verification_url": None,
            "integration_types_config": {"0": {}, "1": {}},
            "approximate_guild_count": sum(
                1 for guild in self.guilds.values() if guild.member(self.bot_user) is not None
            ),
            "approximate_user_install_count": len(self.user_installs),
            "approximate_user_authorization_count": 0,
            "explicit_content_filter": 0,
            "eligible_oauth2_scopes": [],
        }

    async def _get_gateway(self, call: Call) -> Reply:
        return 200, {"url": self.gateway_url.rstrip("/")}

    async def _get_gateway_bot(self, call: Call) -> Reply:
        return 200, {
            "url": (self.advertised_gateway_url or self.gateway_url).rstrip("/"),
            "shards": self.recommended_shards,
            "session_start_limit": {
                "total": 1000,
                "remaining": 1000,
                "reset_after": 0,
                "max_concurrency": 1,
            },
        }

    # ------------------------------------------------------------------ REST: commands

    def _command_scope(self, app_id: str, guild_id: str | None) -> list[JSON]:
        if int(app_id) != self.application_id:
            raise Fail(error_reply(403, MISSING_ACCESS, "Missing Access"))
        if guild_id is None:
            return self._global_commands
        guild = self.guilds.get(int(guild_id))
        # A guild the app is not in, or one that added it without applications.commands.
        if guild is None or guild.member(self.bot_user) is None or not guild.commands_scope:
            raise Fail(error_reply(403, MISSING_ACCESS, "Missing Access"))
        return self._guild_commands.setdefault(guild.id, [])

    def _stored_command(self, data: JSON, guild_id: str | None, existing: list[JSON]) -> JSON:
        out = copy_json(data)
        out.setdefault("type", 1)
        out.setdefault("description", "")
        perms = out.get("default_member_permissions")
        # Discord accepts an integer but always answers with a string.
        out["default_member_permissions"] = None if perms is None else str(perms)
        out.setdefault("nsfw", False)
        old = next(
            (c for c in existing if c["name"] == out["name"] and c["type"] == out["type"]), None
        )
        out["id"] = old["id"] if old else str(self.snowflakes.next())
        out["application_id"] = str(self.application_id)
        out["version"] = str(self.snowflakes.next())
        if guild_id is not None:
            out["guild_id"] = str(guild_id)
        return out

    async def _list_commands(self, call: Call, app_id: str, guild_id: str | None = None) -> Reply:
        scope = self._command_scope(app_id, guild_id)
        return 200, copy_json(scope)

    async def _put_commands(self, call: Call, app_id: str, guild_id: str | None = None) -> Reply:
        scope = self._command_scope(app_id, guild_id)
        problems = limits.check_commands(call.body, guild=guild_id is not None)
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        stored = [self._stored_command(c, guild_id, scope) for c in call.body]
        scope[:] = stored
        return 200, copy_json(stored)

    async def _post_command(self, call: Call, app_id: str, guild_id: str | None = None) -> Reply:
        scope = self._command_scope(app_id, guild_id)
        body = call.body if isinstance(call.body, dict) else {}
        problems = limits.check_command(body)
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        stored = self._stored_command(body, guild_id, scope)
        replaced = [i for i, c in enumerate(scope) if c["id"] == stored["id"]]
        if replaced:
            scope[replaced[0]] = stored
            return 200, copy_json(stored)
        scope.append(stored)
        return 201, copy_json(stored)

    def _find_command(self, app_id: str, ids: tuple[str, ...]) -> tuple[list[JSON], int]:
        guild_id, command_id = (ids[0], ids[1]) if len(ids) == 2 else (None, ids[0])
        scope = self._command_scope(app_id, guild_id)
        for index, command in enumerate(scope):
            if command["id"] == command_id:
                return scope, index
        raise Fail(error_reply(404, UNKNOWN_COMMAND, "Unknown application command"))

    async def _get_command(self, call: Call, app_id: str, *ids: str) -> Reply:
        scope, index = self._find_command(app_id, ids)
        return 200, copy_json(scope[index])

    async def _patch_command(self, call: Call, app_id: str, *ids: str) -> Reply:
        scope, index = self._find_command(app_id, ids)
        merged = {**scope[index], **(call.body or {})}
        problems = limits.check_command(merged)
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        merged["version"] = str(self.snowflakes.next())
        scope[index] = merged
        return 200, copy_json(merged)

    async def _delete_command(self, call: Call, app_id: str, *ids: str) -> Reply:
        scope, index = self._find_command(app_id, ids)
        del scope[index]
        return 204, None

    # ------------------------------------------------------------------ REST: channels & co

    def _visible_channel(self, channel_id: str) -> SimChannel:
        channel = self.channels.get(int(channel_id))
        if channel is None:
            raise Fail(error_reply(404, UNKNOWN_CHANNEL, "Unknown Channel"))
        if channel.guild is not None:
            bot = self._bot_member(channel.guild)
            if bot is None or not self.channel_permissions(bot, channel) & PERM_VIEW_CHANNEL:
                raise Fail(error_reply(403, MISSING_ACCESS, "Missing Access"))
        elif not self.bot_reaches(channel):
            # A group DM, or a DM between users: the bot is not a recipient.
            raise Fail(error_reply(403, MISSING_ACCESS, "Missing Access"))
        return channel

    def _channel_message(self, channel: SimChannel, message_id: str) -> SimMessage | None:
        msg = self._messages.get(int(message_id))
        if msg is None or msg.channel is not channel or msg.deleted or msg.ephemeral:
            return None
        return msg

    async def _get_channel(self, call: Call, channel_id: str) -> Reply:
        return 200, self._visible_channel(channel_id).payload()

    async def _start_thread(self, call: Call, channel_id: str) -> Reply:
        """Start a thread without a message: a public one (type 11) needs Create Public
        Threads in its text channel, and a server holds at most ``max_active_threads`` active
        threads (Discord's 1,000: 160006 "Maximum number of active threads reached"). The sim
        starts public threads only."""
        parent = self._visible_channel(channel_id)
        body = call.body if isinstance(call.body, dict) else {}
        if parent.guild is None or parent.type not in (CHANNEL_TEXT, CHANNEL_NEWS):
            return error_reply(400, INVALID_FORM_BODY, "Cannot start a thread here")
        if body.get("type") != CHANNEL_PUBLIC_THREAD:
            self._violation(f"{call.method} {call.path}: the sim starts public threads only")
            return error_reply(400, INVALID_FORM_BODY, "Invalid Form Body")
        bot = self._bot_member(parent.guild)
        if not self.channel_permissions(bot, parent) & PERM_CREATE_PUBLIC_THREADS:
            return error_reply(403, MISSING_PERMISSIONS, "Missing Permissions")
        name = str(body.get("name") or "")
        if not 1 <= len(name) <= 100:
            self._violation(f"{call.method} {call.path}: a thread's name is 1 to 100 characters")
            return error_reply(400, INVALID_FORM_BODY, "Invalid Form Body")
        guild = parent.guild
        active = sum(1 for c in guild.channels if c.is_thread and not c.archived)
        if active >= guild.max_active_threads:
            return error_reply(400, MAX_ACTIVE_THREADS, "Maximum number of active threads reached")
        thread = self.add_thread(parent, name, owner=self.bot_user)
        return 201, thread.payload()

    async def _delete_channel(self, call: Call, channel_id: str) -> Reply:
        """Delete a thread: Discord asks for Manage Threads, even of the thread's creator.
        (The sim deletes threads only.) It answers with the thread as it was."""
        thread = self._visible_channel(channel_id)
        if not thread.is_thread or thread.guild is None:
            self._violation(f"{call.method} {call.path}: the sim only deletes threads")
            return error_reply(400, INVALID_FORM_BODY, "Invalid Form Body")
        bot = self._bot_member(thread.guild)
        if not self.channel_permissions(bot, thread) & PERM_MANAGE_THREADS:
            return error_reply(403, MISSING_PERMISSIONS, "Missing Permissions")
        thread.guild.channels.remove(thread)
        del self.channels[thread.id]
        return 200, thread.payload()

    async def _active_threads(self, call: Call, guild_id: str) -> Reply:
        """The server's active (unarchived) threads the bot can see, newest first, and the
        bot's membership of those it is in (it joins those it opens)."""
        guild = self._bot_guild(guild_id)
        bot = self._bot_member(guild)
        threads = [
            c
            for c in reversed(guild.channels)
            if c.is_thread
            and not c.archived
            and self.channel_permissions(bot, c) & PERM_VIEW_CHANNEL
        ]
        members = [
            {
                "id": str(c.id),
                "user_id": str(self.bot_user.id),
                "join_timestamp": iso(c.created_at),
                "flags": 0,
            }
            for c in threads
            if c.owner_id == self.bot_user.id
        ]
        return 200, {"threads": [c.payload() for c in threads], "members": members}

    async def _modify_thread(self, call: Call, channel_id: str) -> Reply:
        """Archive or reopen a thread: its owner may, as may members who manage threads.
        (The sim modifies threads only.)"""
        thread = self._visible_channel(channel_id)
        body = call.body if isinstance(call.body, dict) else {}
        if not thread.is_thread or set(body) - {"archived"}:
            self._violation(f"{call.method} {call.path}: the sim only archives threads")
            return error_reply(400, INVALID_FORM_BODY, "Invalid Form Body")
        bot = self._bot_member(thread.guild)
        owns = thread.owner_id == self.bot_user.id
        if not owns and not self.channel_permissions(bot, thread) & PERM_MANAGE_THREADS:
            return error_reply(403, MISSING_PERMISSIONS, "Missing Permissions")
        thread.archived = bool(body.get("archived", thread.archived))
        return 200, thread.payload()

    async def _list_messages(self, call: Call, channel_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        limit = max(1, min(100, int(call.query.get("limit", "50"))))
        live = [m for m in self.messages(found) if not m.deleted and not m.ephemeral]
        return 200, [m.payload() for m in reversed(live[-limit:])]

    async def _create_message(self, call: Call, channel_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        channel = found
        bot = self._bot_member(channel.guild)
        need = PERM_SEND_MESSAGES_IN_THREADS if channel.is_thread else PERM_SEND_MESSAGES
        if channel.guild is not None and not self.channel_permissions(bot, channel) & need:
            return error_reply(403, MISSING_PERMISSIONS, "Missing Permissions")
        body = call.body if isinstance(call.body, dict) else {}
        problems = self._check_sent(self._created(body, call.files))
        if problems:
            return self._reject(f"{call.method} {call.path}", problems)
        msg = self._new_message(channel, self.bot_user, body, call.files)
        await self._dispatch_message_event("MESSAGE_CREATE", msg)
        return 200, msg.payload()

    async def _get_message(self, call: Call, channel_id: str, message_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        msg = self._channel_message(found, message_id)
        if msg is None:
            return error_reply(404, UNKNOWN_MESSAGE, "Unknown Message")
        return 200, msg.payload()

    async def _edit_message(self, call: Call, channel_id: str, message_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        msg = self._channel_message(found, message_id)
        if msg is None:
            return error_reply(404, UNKNOWN_MESSAGE, "Unknown Message")
        context = f"{call.method} {call.path}"
        if msg.author is not self.bot_user:
            self._violation(f"{context}: cannot edit a message authored by {msg.author.name}")
            return error_reply(
                403, CANNOT_EDIT_OTHERS, "Cannot edit a message authored by another user"
            )
        body = call.body if isinstance(call.body, dict) else {}
        problems = self._check_sent(self._merged(msg, body, call.files))
        if problems:
            return self._reject(context, problems)
        self._apply_edit(msg, body, call.files)
        await self._dispatch_message_event("MESSAGE_UPDATE", msg)
        return 200, msg.payload()

    async def _delete_message(self, call: Call, channel_id: str, message_id: str) -> Reply:
        found = self._visible_channel(channel_id)
        msg = self._channel_message(found, message_id)
        if msg is None:
            return error_reply(404, UNKNOWN_MESSAGE, "Unknown Message")
        bot = self._bot_member(found.guild)
        if msg.author is not self.bot_user and not (
            bot is not None and self.channel_permissions(bot, found) & PERM_MANAGE_MESSAGES
        ):
            return error_reply(403, MISSING_PERMISSIONS, "Missing Permissions")
        await self._mark_deleted(msg)
        return 204, None

    async def _create_dm(self, call: Call) -> Reply:
        body = call.body if isinstance(call.body, dict) else {}
        user = self.users.get(int(body.get("recipient_id", 0)))
        if user is None:
            return error_reply(404, UNKNOWN_USER, "Unknown User")
        return 200, self.dm_channel(user).payload()

    async def _get_user(self, call: Call, user_id: str) -> Reply:
        user = self.users.get(int(user_id))
        if user is None:
            return error_reply(404, UNKNOWN_USER, "Unknown User")
        return 200, user.payload()

    def _bot_guild(self, guild_id: str) -> SimGuild:
        guild = self.guilds.get(int(guild_id))
        if guild is None:
            raise Fail(error_reply(404, UNKNOWN_GUILD, "Unknown Guild"))
        if guild.member(self.bot_user) is None:
            raise Fail(error_reply(403, MISSING_ACCESS, "Missing Access"))
        return guild

    async def _get_guild(self, call: Call, guild_id: str) -> Reply:
        return 200, self._bot_guild(guild_id).payload()

    async def _get_guild_channels(self, call: Call, guild_id: str) -> Reply:
        guild = self._bot_guild(guild_id)
        return 200, [c.payload() for c in guild.channels if not c.is_thread]

    async def _get_guild_roles(self, call: Call, guild_id: str) -> Reply:
        return 200, [r.payload() for r in self._bot_guild(guild_id).roles]

    async def _get_guild_emoji(self, call: Call, guild_id: str, emoji_id: str) -> Reply:
        guild = self._bot_guild(guild_id)
        emoji = self.emojis.get(int(emoji_id)) if emoji_id.isdigit() else None
        if emoji is None or emoji.guild is not guild:
            return error_reply(404, UNKNOWN_EMOJI, "Unknown Emoji")
        return 200, emoji.payload()

    async def _get_member(self, call: Call, guild_id: str, user_id: str) -> Reply:
        member = self._bot_guild(guild_id).member(int(user_id))
        if member is None:
            return error_reply(404, UNKNOWN_MEMBER, "Unknown Member")
        return 200, member.payload()


def _spec_user(user: SimUser) -> JSON:
    """A user as the application object holds it (its owner, its bot)."""
    return {**user.payload(), "flags": 0, "primary_guild": None}
