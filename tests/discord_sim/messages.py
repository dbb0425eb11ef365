"""Messages: how the sim creates, edits and deletes them, and the MESSAGE_* events the bot's
sessions get for them (subject to intents, and to whether the bot can see the channel).
"""

from __future__ import annotations

import time

from . import limits
from .models import (
    FLAG_COMPONENTS_V2,
    FLAG_EPHEMERAL,
    FLAG_LOADING,
    FLAG_SUPPRESS_EMBEDS,
    FLAG_SUPPRESS_NOTIFICATIONS,
    JSON,
    InteractionRecord,
    SimChannel,
    SimMessage,
    SimUser,
    copy_json,
)
from .wire import (
    INTENT_DIRECT_MESSAGES,
    INTENT_GUILD_MESSAGES,
    INTENT_MESSAGE_CONTENT,
    THREAD_ARCHIVED,
    Fail,
    error_reply,
)
from .world import WorldMixin

EDITABLE_FLAGS = FLAG_SUPPRESS_EMBEDS
CREATE_FLAGS = FLAG_SUPPRESS_EMBEDS | FLAG_SUPPRESS_NOTIFICATIONS | FLAG_COMPONENTS_V2


class MessagesMixin(WorldMixin):
    """Creating, editing and deleting messages, and dispatching their events."""

    def _store_message(self, msg: SimMessage) -> SimMessage:
        self._messages[msg.id] = msg
        self._channel_messages.setdefault(msg.channel.id, []).append(msg)
        return msg

    def _new_message(
        self,
        channel: SimChannel,
        author: SimUser,
        body: JSON,
        files: list[JSON],
        *,
        interaction: InteractionRecord | None = None,
        extra_flags: int = 0,
    ) -> SimMessage:
        flags = int(body.get("flags") or 0) & (CREATE_FLAGS | FLAG_EPHEMERAL) | extra_flags
        if interaction is None:
            flags &= ~FLAG_EPHEMERAL
        msg = SimMessage(
            id=self.snowflakes.next(),
            channel=channel,
            author=author,
            content=str(body.get("content") or ""),
            embeds=body.get("embeds") or [],
            components=body.get("components") or [],
            flags=flags,
            allowed_mentions=body.get("allowed_mentions"),
            attachments=self._attachments(files),
            tts=bool(body.get("tts")),
        )
        reference = body.get("message_reference")
        if isinstance(reference, dict) and reference.get("message_id"):
            msg.reference_id = int(reference["message_id"])
            msg.type = 19
        if interaction is not None:
            msg.interaction = interaction
            msg.webhook_id = self.application_id
            msg.application_id = self.application_id
            msg.type = 20 if interaction.type == 2 else msg.type
            if msg.ephemeral:
                msg.interaction_user = interaction.user
        if not msg.ephemeral and not msg.loading:
            msg.pinged = limits.pinged_users(msg.mentioned_user_ids(), msg.allowed_mentions)
        if not msg.ephemeral:
            channel.archived = False  # a new message in an archived thread reopens it
            channel.last_message_id = msg.id
            channel.message_count += 1
        return self._store_message(msg)

    def _attachments(self, files: list[JSON]) -> list[JSON]:
        out = []
        for index, file in enumerate(files):
            out.append(
                {
                    "id": str(self.snowflakes.next()),
                    "filename": file["filename"],
                    "size": file["size"],
                    "url": f"{self.base_url}/_sim/attachments/{index}/{file['filename']}",
                    "proxy_url": f"{self.base_url}/_sim/attachments/{index}/{file['filename']}",
                    "content_type": file.get("content_type"),
                }
            )
        return out

    @staticmethod
    def _created(body: JSON, files: list[JSON]) -> JSON:
        """A new message's body as Discord validates it (uploaded files count as content)."""
        return {**body, "attachments": list(body.get("attachments") or []) + files}

    @staticmethod
    def _merged(msg: SimMessage, body: JSON, files: list[JSON] | None = None) -> JSON:
        """The message as it would look after applying the PATCH ``body``."""
        state: JSON = {
            "content": msg.content,
            "embeds": msg.embeds,
            "components": msg.components,
            "flags": msg.flags,
            "attachments": msg.attachments,
        }
        for key in ("content", "embeds", "components", "attachments"):
            if key in body:
                state[key] = (
                    body[key] if body[key] is not None else ([] if key != "content" else "")
                )
        if "flags" in body and body["flags"] is not None:
            sent = int(body["flags"])
            # An edit may set the components-v2 flag (discord.js's MessageEditOptions: only
            # SuppressEmbeds and IsComponentsV2 can be set by an edit) but never clear it
            # (Discord's component reference; see limits.py).
            state["flags"] = (
                msg.flags & ~EDITABLE_FLAGS | sent & EDITABLE_FLAGS | sent & FLAG_COMPONENTS_V2
            )
            state["cleared_flags"] = msg.flags & FLAG_COMPONENTS_V2 & ~sent
        state["allowed_mentions"] = body.get("allowed_mentions")
        if files:
            state["attachments"] = list(state["attachments"]) + files
        return state

    def _apply_edit(
        self, msg: SimMessage, body: JSON, files: list[JSON], *, fill: bool = False
    ) -> None:
        """Apply a PATCH. ``fill`` completes a deferred "thinking" message, which Discord
        shows as a new message rather than as an edit; like any edit it pings nobody."""
        if msg.channel.archived and not msg.ephemeral:
            # Discord refuses to change a message of an archived thread until a new message
            # (or an unarchive) reopens it.
            raise Fail(error_reply(400, THREAD_ARCHIVED, "Thread is archived"))
        state = self._merged(msg, body)
        if not fill:
            msg.edits.append(msg.retire_version())
            msg.edited_at = time.time()
        msg.content = str(state["content"] or "")
        msg.embeds = state["embeds"]
        msg.components = state["components"]
        msg.flags = int(state["flags"]) & ~FLAG_LOADING
        if "attachments" in body or files:
            kept = [
                a
                for a in msg.attachments
                if any(str(a["id"]) == str(b.get("id")) for b in body.get("attachments") or [])
            ]
            msg.attachments = kept + self._attachments(files)
        if "allowed_mentions" in body:
            msg.allowed_mentions = body["allowed_mentions"]

    async def _dispatch_message_event(
        self, event: str, msg: SimMessage, data: JSON | None = None
    ) -> None:
        if msg.ephemeral or not self.bot_reaches(msg.channel):
            return
        guild = msg.channel.guild
        intent = INTENT_GUILD_MESSAGES if guild else INTENT_DIRECT_MESSAGES
        for session in self.live_sessions():
            if not session.covers(guild) or not session.intents & intent:
                continue
            payload = copy_json(data) if data is not None else msg.payload()
            can_read = (
                session.intents & INTENT_MESSAGE_CONTENT
                or msg.author is self.bot_user
                or guild is None
                or self.bot_user.id in msg.mentioned_user_ids()
            )
            if event != "MESSAGE_DELETE" and not can_read:
                # Without the privileged intent Discord blanks what other users wrote.
                payload.update(content="", embeds=[], components=[], attachments=[])
            await session.dispatch(event, payload)

    async def _mark_deleted(self, msg: SimMessage) -> None:
        msg.deleted = True
        if not msg.ephemeral:
            msg.channel.message_count = max(0, msg.channel.message_count - 1)
        data: JSON = {"id": str(msg.id), "channel_id": str(msg.channel.id)}
        if msg.channel.guild is not None:
            data["guild_id"] = str(msg.channel.guild.id)
        await self._dispatch_message_event("MESSAGE_DELETE", msg, data)
