"""The REST handlers of interactions: the initial response (callback) with Discord's rules for
it (once, within the deadline, a type valid for the interaction), and the webhook routes of
an interaction token (followups, @original and other messages, 15 minutes of life).
"""

from __future__ import annotations

from . import limits
from .messages import MessagesMixin
from .models import (
    FLAG_COMPONENTS_V2,
    FLAG_EPHEMERAL,
    FLAG_LOADING,
    JSON,
    InteractionRecord,
    SimMessage,
    copy_json,
)
from .wire import (
    ALREADY_ACKNOWLEDGED,
    INVALID_WEBHOOK_TOKEN,
    UNKNOWN_INTERACTION,
    UNKNOWN_MESSAGE,
    UNKNOWN_WEBHOOK,
    Call,
    Fail,
    Reply,
    error_reply,
)

INTERACTION_TOKEN_LIFETIME = 15 * 60.0
# Which callback types Discord accepts for each interaction type.
ALLOWED_CALLBACKS = {2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}


class InteractionRestMixin(MessagesMixin):
    """REST: interaction callbacks and the interaction-token webhooks."""

    def _expired(self, record: InteractionRecord) -> bool:
        return self.now() - record.created_at > INTERACTION_TOKEN_LIFETIME

    def _expired_reply(self, record: InteractionRecord, what: str) -> Reply:
        age = (self.now() - record.created_at) / 60
        self._violation(
            f"{what} for {record.describe()} {age:.1f} min after the interaction; "
            "interaction tokens expire after 15 min"
        )
        return error_reply(401, INVALID_WEBHOOK_TOKEN, "Invalid Webhook Token")

    def _callback_reply(
        self, record: InteractionRecord, call: Call, cb_type: int, shown: SimMessage | None = None
    ) -> Reply:
        """The callback's answer: nothing, unless the bot asked for the interaction's callback
        resource (``with_response``), with the message ``shown`` as it now stands. Built only
        when asked for: a load test's driver would otherwise spend its CPU, which the bot under
        test competes for, on answers nobody reads."""
        if not call.flag("with_response"):
            return 204, None
        msg = record.message
        resource: JSON = {"type": cb_type}
        if shown is not None:
            resource["message"] = shown.payload()
        return 200, {
            "interaction": {
                "id": str(record.id),
                "type": record.type,
                "activity_instance_id": None,
                "response_message_id": str(msg.id) if msg else None,
                "response_message_loading": bool(msg and msg.loading),
                "response_message_ephemeral": bool(msg and msg.ephemeral),
            },
            "resource": resource,
        }

    async def _callback(self, call: Call, interaction_id: str, token: str) -> Reply:
        record = self._ix_by_id.get(int(interaction_id))
        if record is None or record.token != token:
            self._violation(f"interaction callback for unknown interaction {interaction_id}")
            return error_reply(404, UNKNOWN_INTERACTION, "Unknown interaction")
        body = call.body if isinstance(call.body, dict) else {}
        cb_type = body.get("type")
        data = body.get("data") or {}
        context = f"response to {record.describe()}"
        record.callbacks += 1
        if record.answered and record.answer_unheard:
            record.answer_unheard = False  # once: the refusal told the bot
            return error_reply(
                400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged."
            )
        if record.answered and record.rejected != "invalid":
            self._violation(
                f"{context}: the interaction was answered twice "
                f"(first with type {record.response_type}, then with type {cb_type})"
            )
            return error_reply(
                400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged."
            )
        # The deadline is Discord's: what counts is when the callback reached it (after any
        # injected network delay), not how long the sim then takes to answer.
        now = call.arrived
        record.responded_at = now
        record.response_type = cb_type if isinstance(cb_type, int) else -1
        record.response_data = data
        record.rejected = None
        if record.sent_at is not None and now - record.sent_at > self.response_deadline:
            record.rejected = "late"
            self._violation(
                f"{context}: first answered {now - record.sent_at:.2f} s after the interaction "
                f"was sent; Discord allows {self.response_deadline} s"
            )
            return error_reply(404, UNKNOWN_INTERACTION, "Unknown interaction")
        if cb_type not in ALLOWED_CALLBACKS.get(record.type, set()) or (
            cb_type in (6, 7) and record.source_message is None
        ):
            record.rejected = "invalid"
            return self._reject(
                context,
                [f"callback type {cb_type!r} is not valid for interaction type {record.type}"],
            )
        problems: list[str]
        if cb_type == 4:
            problems = self._check_sent(self._created(data, call.files))
            if problems:
                record.rejected = "invalid"
                return self._reject(context, problems)
            record.message = self._new_message(
                record.channel, self.bot_user, data, call.files, interaction=record
            )
            await self._dispatch_message_event("MESSAGE_CREATE", record.message)
            return self._callback_reply(record, call, 4, record.message)
        if cb_type == 5:
            # "If you create a callback with the type DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE the
            # only valid message flag you may use is EPHEMERAL. If you'd like to create a
            # component based message with IS_COMPONENTS_V2 you must do that with the edit
            # original response endpoint" (discord-api-docs,
            # docs/interactions/receiving-and-responding.mdx, "Interaction Callback Data").
            sent_flags = int(data.get("flags") or 0)
            if sent_flags & ~FLAG_EPHEMERAL:
                record.rejected = "invalid"
                return self._reject(
                    context,
                    [
                        f"a deferred response (type 5) may set no flag but EPHEMERAL "
                        f"({FLAG_EPHEMERAL}); it set {sent_flags}"
                    ],
                )
            flags = FLAG_LOADING | sent_flags & FLAG_EPHEMERAL
            record.message = self._new_message(
                record.channel, self.bot_user, {}, [], interaction=record, extra_flags=flags
            )
            await self._dispatch_message_event("MESSAGE_CREATE", record.message)
            return self._callback_reply(record, call, 5, record.message)
        source = record.source_message
        if cb_type == 6:
            record.message = source
            return self._callback_reply(record, call, 6)
        if cb_type == 7:
            assert source is not None
            problems = self._check_sent(self._merged(source, data, call.files))
            if problems:
                record.rejected = "invalid"
                return self._reject(context, problems)
            self._apply_edit(source, data, call.files)
            record.message = source
            await self._dispatch_message_event("MESSAGE_UPDATE", source)
            return self._callback_reply(record, call, 7, source)
        if cb_type == 8:
            choices = data.get("choices")
            problems = limits.check_choices(choices)
            if problems:
                record.rejected = "invalid"
                return self._reject(context, problems)
            record.choices = list(choices or [])
            return self._callback_reply(record, call, 8)
        problems = limits.check_modal(data)
        if problems:
            record.rejected = "invalid"
            return self._reject(context, problems)
        record.modal = copy_json(data)
        return self._callback_reply(record, call, 9)

    def _webhook_record(
        self, app_id: str, token: str, what: str, *, probe: bool = False
    ) -> InteractionRecord:
        """The interaction behind a webhook token. ``probe``: a read that asks whether the
        interaction was answered (a bot whose callback connection dropped cannot know), which
        Discord answers with 404 rather than treating it as a mistake."""
        record = self._ix_by_token.get(token)
        if int(app_id) != self.application_id or record is None:
            self._violation(f"{what} to an unknown interaction webhook")
            raise Fail(error_reply(404, UNKNOWN_WEBHOOK, "Unknown Webhook"))
        if self._expired(record):
            raise Fail(self._expired_reply(record, what))
        if probe and (not record.answered or record.rejected):
            raise Fail(error_reply(404, UNKNOWN_MESSAGE, "Unknown Message"))
        if not record.answered or record.rejected:
            why = " (its initial response came too late)" if record.rejected == "late" else ""
            self._violation(
                f"{what} for {record.describe()} before the interaction was acknowledged{why}"
            )
            raise Fail(error_reply(404, UNKNOWN_WEBHOOK, "Unknown Webhook"))
        return record

    async def _followup(self, call: Call, app_id: str, token: str) -> Reply:
        record = self._webhook_record(app_id, token, "followup")
        body = call.body if isinstance(call.body, dict) else {}
        problems = self._check_sent(self._created(body, call.files))
        if problems:
            return self._reject(f"followup to {record.describe()}", problems)
        original = record.message
        if (
            record.response_type == 5
            and original is not None
            and original.loading
            and not original.deleted
        ):
            # The first followup after a "thinking" defer becomes the deferred message, and
            # keeps the ephemeral choice made when deferring.
            # Of the followup's flags only the components-v2 layout carries over.
            layout = int(body.get("flags") or 0) & FLAG_COMPONENTS_V2
            self._apply_edit(original, {**body, "flags": layout}, call.files, fill=True)
            msg = original
            await self._dispatch_message_event("MESSAGE_UPDATE", msg)
        else:
            msg = self._new_message(
                record.channel, self.bot_user, body, call.files, interaction=record
            )
            await self._dispatch_message_event("MESSAGE_CREATE", msg)
        record.followups.append(msg)
        if not call.flag("wait"):
            return 204, None
        return 200, msg.payload()

    def _webhook_message(self, record: InteractionRecord, message_id: str) -> SimMessage | None:
        if message_id == "@original":
            msg = record.message if record.response_type in (4, 5, 6, 7) else None
        else:
            candidates = [record.message, *record.followups]
            msg = next((m for m in candidates if m is not None and str(m.id) == message_id), None)
        return None if msg is None or msg.deleted else msg

    async def _get_webhook_message(
        self, call: Call, app_id: str, token: str, message_id: str
    ) -> Reply:
        record = self._webhook_record(app_id, token, f"GET message {message_id}", probe=True)
        msg = self._webhook_message(record, message_id)
        if msg is None:
            return error_reply(404, UNKNOWN_MESSAGE, "Unknown Message")
        return 200, msg.payload()

    async def _edit_webhook_message(
        self, call: Call, app_id: str, token: str, message_id: str
    ) -> Reply:
        record = self._webhook_record(app_id, token, f"edit of message {message_id}")
        msg = self._webhook_message(record, message_id)
        if msg is None:
            self._violation(
                f"edit of {message_id} for {record.describe()}: there is no such message"
            )
            return error_reply(404, UNKNOWN_MESSAGE, "Unknown Message")
        body = call.body if isinstance(call.body, dict) else {}
        problems = self._check_sent(self._merged(msg, body, call.files))
        if problems:
            return self._reject(f"edit of {message_id} for {record.describe()}", problems)
        self._apply_edit(msg, body, call.files, fill=msg.loading)
        if message_id == "@original":
            record.original_edits += 1
        await self._dispatch_message_event("MESSAGE_UPDATE", msg)
        return 200, msg.payload()

    async def _delete_webhook_message(
        self, call: Call, app_id: str, token: str, message_id: str
    ) -> Reply:
        record = self._webhook_record(app_id, token, f"delete of message {message_id}")
        msg = self._webhook_message(record, message_id)
        if msg is None:
            return error_reply(404, UNKNOWN_MESSAGE, "Unknown Message")
        await self._mark_deleted(msg)
        return 204, None
