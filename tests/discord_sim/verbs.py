"""The verbs that play a user's part (``slash``, ``autocomplete``, ``click``, ``select``,
``submit_modal``, ``send_message``): each builds the interaction Discord would send, checked
against what the user could do, delivers it to the right gateway session and waits for the
bot's answer.

In HTTP mode (``sim.interactions_url`` set) an interaction is POSTed there instead, signed as
Discord signs it (Ed25519 over ``X-Signature-Timestamp`` and the raw body, with
``sim.signing_key``; ``sim.public_key`` is the application's public key), and the response's
JSON is read as the interaction's callback, with the same checks (:meth:`_http_answer`): the
3 s deadline counts to when the response was read. A response other than 200 is no answer, as
for Discord: the verb raises ``SimTimeout`` saying what came back; so is a 200 whose
Content-Type is not ``application/json``, a rule broken as well. A connection the endpoint
refuses or drops (its worker killed) is no answer either: the verb raises aiohttp's error, and
the record's ``dropped`` names it. ``post_signed`` sends any
body (signed or not, with any timestamp) and returns what the bot answered, ``ping`` a PING,
``verify_endpoint`` what Discord checks when the URL is saved (a PONG, a forgery refused).
"""

# ruff: noqa: ASYNC109 -- ``timeout=`` on the verbs is the documented test API.

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import nacl.signing
import orjson

from . import limits
from .commands import Resolver, build_command_data, check_can_invoke, find_command
from .gateway import GatewayMixin
from .messages import MessagesMixin
from .models import (
    DEFAULT_BOT_PERMISSIONS,
    GUILD_INSTALL,
    JSON,
    PERM_USE_APPLICATION_COMMANDS,
    PERM_VIEW_CHANNEL,
    USER_APP_PERMISSIONS,
    InteractionRecord,
    SimChannel,
    SimGuild,
    SimInteractionLost,
    SimMember,
    SimMessage,
    SimTimeout,
    SimUsageError,
    SimUser,
)
from .wire import Session

# Discord's requests to an Interactions Endpoint URL name it so.
DISCORD_USER_AGENT = "Discord-Interactions/1.0 (+https://discord.com)"
# The only Content-Type of a response the sim reads (its parameters, such as a charset, aside):
# Discord also reads multipart/form-data, for a response with files, which no bot here sends.
RESPONSE_CONTENT_TYPE = "application/json"


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    """What the bot's endpoint answered a POST: its status, raw body and content type."""

    status: int
    body: bytes
    content_type: str

    def json(self) -> Any:
        return orjson.loads(self.body)


class VerbsMixin(GatewayMixin, MessagesMixin):
    """The user verbs, and the delivery of interactions to gateway sessions."""

    def _session_for(self, guild: SimGuild | None) -> Session | None:
        candidates = [s for s in self.live_sessions() if s.covers(guild)]
        if guild is not None and self._bot_member(guild) is not None:
            # A guild the bot is in goes to the session that has it; one it is not in (a
            # user-installed app's) only by the shard formula, as DMs go to shard 0.
            candidates = [s for s in candidates if guild.id in s.guild_ids]
        if not candidates:
            return None
        # Prefer a connected session, then the newest (an older one may belong to a client
        # that went away without closing).
        return max(candidates, key=lambda s: (s.conn is not None, s.created))

    def _new_record(
        self, kind: int, user: SimUser, channel: SimChannel, **fields: Any
    ) -> InteractionRecord:
        return InteractionRecord(
            sim=self,
            id=self.snowflakes.next(),
            token=f"ix.{secrets.token_urlsafe(24)}",
            type=kind,
            user=user,
            channel=channel,
            guild=channel.guild,
            **fields,
        )

    def _member_for(self, user: SimUser, channel: SimChannel) -> SimMember | None:
        if channel.guild is None:
            if not channel.has_user(user):
                raise SimUsageError(f"{user.name} is not in DM channel {channel.id}")
            return None
        if self.channels.get(channel.id) is not channel:
            raise SimUsageError(f"#{channel.name} was deleted")
        member = channel.guild.member(user)
        if member is None:
            raise SimUsageError(f"{user.name} is not a member of {channel.guild.name}")
        if not self.channel_permissions(member, channel) & PERM_VIEW_CHANNEL:
            raise SimUsageError(f"{user.name} cannot see #{channel.name}")
        return member

    def _interaction_payload(
        self, record: InteractionRecord, data: JSON, message: SimMessage | None = None
    ) -> JSON:
        channel, guild = record.channel, record.guild
        if record.owners is None:
            # A click or a modal is authorized by the installation behind the message it is
            # on; a message the bot posted itself, by the installations reaching this place.
            source = message.interaction if message is not None else None
            record.owners = (
                dict(source.owners)
                if source is not None and source.owners is not None
                else {str(k): v for k, v in self._installs_for(record.user, channel).items()}
            )
        if not record.owners:
            raise SimUsageError(
                f"the app is not installed where {record.user.name} is ({channel!r}): add the "
                "bot to the guild, or install_for_user()"
            )
        payload: JSON = {
            "id": str(record.id),
            "application_id": str(self.application_id),
            "type": record.type,
            "token": record.token,
            "version": 1,
            "data": data,
            "locale": record.user.locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": limits.ATTACHMENT_SIZE_LIMIT,
            "channel_id": str(channel.id),
            "authorizing_integration_owners": dict(record.owners),
            "context": self.context_of(channel),
        }
        if guild is not None:
            member = guild.member(record.user)
            assert member is not None
            channel_data = channel.payload()
            channel_data["permissions"] = str(self.channel_permissions(member, channel))
            bot = self._bot_member(guild)
            payload.update(
                guild_id=str(guild.id),
                guild_locale=guild.locale,
                guild={"id": str(guild.id), "locale": guild.locale, "features": []},
                member=member.payload(with_permissions=True),
                channel=channel_data,
                app_permissions=str(
                    self.channel_permissions(bot, channel) if bot else USER_APP_PERMISSIONS
                ),
            )
        else:
            payload.update(
                user=record.user.payload(),
                channel=channel.payload(),
                app_permissions=str(
                    DEFAULT_BOT_PERMISSIONS if self.bot_reaches(channel) else USER_APP_PERMISSIONS
                ),
            )
        if message is not None:
            payload["message"] = message.payload()
        record.payload = payload
        return payload

    async def post_signed(
        self,
        body: bytes,
        *,
        timestamp: str | None = None,
        signed_body: bytes | None = None,
        key: nacl.signing.SigningKey | None = None,
        signature: str | None = None,
        timeout: float | None = None,
        url: str | None = None,
    ) -> HttpAnswer:
        """POST ``body`` to ``url`` (the next endpoint, by default: :meth:`spread_over`) as
        Discord would: signed with ``key`` (``signing_key`` by default) over ``timestamp``
        (now, by default) and ``signed_body`` (``body`` itself by default); ``signature``
        sends that header as given (``""``: none, and no timestamp either)."""
        if url is None:
            url = self.next_endpoint()
        stamp = str(int(time.time())) if timestamp is None else timestamp
        headers = {"Content-Type": "application/json", "User-Agent": DISCORD_USER_AGENT}
        if signature is None:
            signer = key or self.signing_key
            message = stamp.encode() + (body if signed_body is None else signed_body)
            signature = signer.sign(message).signature.hex()
        if signature:
            headers["X-Signature-Ed25519"] = signature
            headers["X-Signature-Timestamp"] = stamp
        limit = self.interaction_timeout if timeout is None else timeout
        if self._http_client is None or self._http_client.closed:
            self._http_client = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    ssl=self.interactions_ssl, force_close=not self.interactions_keep_alive
                )
            )
        async with self._http_client.post(
            url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=limit)
        ) as response:
            raw = await response.read()
            return HttpAnswer(response.status, raw, response.content_type)

    async def ping(self) -> HttpAnswer:
        """A PING, as Discord sends when the endpoint URL is saved."""
        body = orjson.dumps({"id": str(self.snowflakes.next()), "type": 1, "version": 1})
        return await self.post_signed(body)

    async def verify_endpoint(self, url: str | None = None) -> list[str]:
        """What Discord checks of an endpoint when its URL is saved, and again from time to
        time (discord-api-docs, docs/interactions/overview.mdx, "Setting Up an Endpoint"): a
        PING acknowledged with a 200 whose valid Content-Type labels a PONG (``{"type": 1}``),
        and a request whose signature fails validation answered 401 ("we will remove your
        interactions URL" otherwise). Each failure is a violation; returns them."""
        if url is None:
            url = self.next_endpoint()
        problems: list[str] = []
        ping = orjson.dumps({"id": str(self.snowflakes.next()), "type": 1, "version": 1})
        pong = await self.post_signed(ping, url=url)
        if pong.status != 200:
            problems.append(f"a PING was answered with HTTP {pong.status}, not 200")
        elif pong.content_type != RESPONSE_CONTENT_TYPE:
            problems.append(f"a PING's answer has Content-Type {pong.content_type!r}")
        else:
            try:
                answer = pong.json()
            except orjson.JSONDecodeError:
                answer = pong.body.decode(errors="replace")
            if not isinstance(answer, dict) or answer.get("type") != 1:
                problems.append(f"a PING was answered with {answer!r}, not a PONG")
        forged = await self.post_signed(ping, key=nacl.signing.SigningKey.generate(), url=url)
        if forged.status != 401:
            problems.append(f"a PING with a signature that fails was answered {forged.status}")
        for problem in problems:
            self._violation(f"the Interactions Endpoint URL {url}: {problem}")
        return problems

    def drop_idle_http_connections(self) -> None:
        """Close the kept-alive connections to the endpoints that carry no request now, as a
        client that stopped sending closes its idle ones. A bot's port, stopping, waits for
        requests on idle connections while its clients still use it (bot/health.py): the
        harness drops them before it stops a bot, so that its teardown does not wait on a
        client that has nothing more to send (tests/test_bot_health.py tests that wait).
        aiohttp's connector has no public call for it: its ``_conns``, the idle ones."""
        client = self._http_client
        if client is None or client.closed or client.connector is None:
            return
        for idle in client.connector._conns.values():
            for connection, _ in idle:
                connection.close()
            idle.clear()

    async def close_http_client(self) -> None:
        if self._http_client is not None:
            await self._http_client.close()
            self._http_client = None

    async def _post_interaction(self, record: InteractionRecord, limit: float) -> None:
        """HTTP mode: the interaction POSTed, and the response read as its callback."""
        self.interactions.append(record)
        self._ix_by_id[record.id] = record
        self._ix_by_token[record.token] = record
        record.sent_at = time.monotonic()
        record.endpoint = self.next_endpoint()
        self._notify()
        try:
            answer = await self.post_signed(
                orjson.dumps(record.payload), timeout=limit, url=record.endpoint
            )
        except TimeoutError:
            raise SimTimeout(
                f"the bot's endpoint did not answer {record.describe()} within {limit} s"
            ) from None
        except aiohttp.ClientError as error:
            # Discord gets nothing to read either and shows the member that it failed; the
            # error goes on to the caller, which may want to tell a refusal from a drop.
            record.dropped = f"{type(error).__name__}: {error}"
            self._notify()
            raise
        arrived = time.monotonic()
        if self.lose_http_answers:
            raise SimTimeout(
                f"the bot's response to {record.describe()} was lost on its way "
                "(sim.lose_http_answers): for Discord, no answer"
            )
        if answer.status != 200:
            raise SimTimeout(
                f"the bot's endpoint answered {record.describe()} with HTTP {answer.status} "
                f"{answer.body[:200]!r}: for Discord, no answer"
            )
        if answer.content_type != RESPONSE_CONTENT_TYPE:
            # Discord reads a response by its Content-Type, as it reads a request: "You must
            # provide a valid Content-Type when responding to PINGs" (discord-api-docs,
            # docs/interactions/overview.mdx, "Acknowledging PING requests"), valid being
            # application/json, x-www-form-urlencoded or multipart/form-data (docs/Reference.mdx,
            # "HTTP API", "Content Type"). One it cannot read is no answer, and never one a bot
            # means to send.
            self._violation(
                f"response to {record.describe()}: Content-Type {answer.content_type!r}; "
                f"Discord reads {RESPONSE_CONTENT_TYPE!r}"
            )
            raise SimTimeout(
                f"the bot's endpoint answered {record.describe()} with Content-Type "
                f"{answer.content_type!r}: for Discord, no answer"
            )
        try:
            body = answer.json()
        except orjson.JSONDecodeError:
            body = answer.body.decode(errors="replace")
        await self._http_answer(record, body, arrived)

    async def _send_interaction(
        self, record: InteractionRecord, timeout: float | None
    ) -> InteractionRecord:
        limit = self.interaction_timeout if timeout is None else timeout
        if self.interactions_url is not None:
            await self._post_interaction(record, limit)
            await self.wait_for(
                lambda: record.answered, limit, what=f"the bot's response to {record.describe()}"
            )
            return record
        while True:
            # A connected session gets the interaction after the ordering ping; one whose
            # socket is down queues it for the RESUME, as Discord does.
            session = await self.wait_for(
                lambda: self._session_for(record.guild),
                limit,
                what=f"a gateway session covering {record.guild or 'DMs'} "
                f"to send {record.describe()}",
            )
            await self._barrier(session, limit)
            if not session.ended:  # else it was invalidated during the ping: pick again
                break
        self.interactions.append(record)
        self._ix_by_id[record.id] = record
        self._ix_by_token[record.token] = record
        record.sent_at = time.monotonic()
        record.shard_id = session.shard_id
        record.session_id = session.id
        # dispatch() numbers the frame before it awaits the socket, so the number is known
        # to _end_session even if the session ends while the frame is being written.
        record.seq = session.seq + 1
        await session.dispatch("INTERACTION_CREATE", record.payload)
        self._notify()
        hint = ""
        if record.type == 3:
            hint = (
                " (discord.py drops a click silently when no View is registered under that "
                "message id or custom_id)"
            )
        await self.wait_for(
            lambda: record.answered or record.lost,
            limit,
            what=f"the bot's response to {record.describe()}{hint}",
        )
        if not record.answered:
            raise SimInteractionLost(
                f"{record.describe()} was lost: it was queued for gateway session "
                f"{session.id}, which was invalidated instead of resumed, so the bot never "
                "received it (Discord does not carry events over to a new session)"
            )
        return record

    def _command_for(self, guild: SimGuild | None, name: str) -> JSON:
        root = name.split()[0] if name.split() else ""
        commands = self._guild_commands.get(guild.id, []) if guild else []
        command = find_command(commands, root) or find_command(self._global_commands, root)
        if command is None:
            known = [c["name"] for c in commands + self._global_commands if c.get("type", 1) == 1]
            where = f" in {guild.name}" if guild else ""
            raise SimUsageError(
                f"/{root} is not a registered slash command{where}; registered: {known} "
                "(did the bot call tree.sync()?)"
            )
        return command

    def _command_payload(
        self,
        kind: int,
        user: SimUser,
        channel: SimChannel | int | str,
        command: str,
        values: Mapping[str, Any],
        focused: str | None,
    ) -> InteractionRecord:
        chan = self._channel(channel)
        if user.bot:
            raise SimUsageError(f"{user.name} is a bot; bots cannot invoke application commands")
        member = self._member_for(user, chan)
        if (
            member is not None
            and not self.channel_permissions(member, chan) & PERM_USE_APPLICATION_COMMANDS
        ):
            raise SimUsageError(f"{user.name} lacks use_application_commands in #{chan.name}")
        definition = self._command_for(chan.guild, command)
        if chan.guild is not None and definition["name"] in chan.guild.shown_to_everyone:
            definition = {**definition, "default_member_permissions": None}
        installs = self._installs_for(user, chan)
        if chan.guild is not None and not chan.guild.commands_scope:
            # Added with the bot scope alone: the server's install offers no commands.
            installs.pop(GUILD_INSTALL, None)
        authorizing = check_can_invoke(
            definition, member, context=self.context_of(chan), installs=list(installs)
        )
        resolver = Resolver(
            guild=chan.guild,
            user_by_id=self.users.get,
            channel_by_id=self.channels.get,
            role_by_id=self.roles.get,
        )
        data = build_command_data(
            definition,
            command.split()[1:],
            values,
            resolver,
            channel_permissions=lambda c: self.channel_permissions(member, c),
            focused=focused,
        )
        record = self._new_record(
            kind, user, chan, name=" ".join(command.split()), options=dict(values)
        )
        record.owners = {str(kind): installs[kind] for kind in authorizing}
        self._interaction_payload(record, data)
        return record

    def command_interaction(
        self, user: SimUser, channel: SimChannel | int | str, command: str, /, **values: Any
    ) -> JSON:
        """The interaction ``slash`` would send, built but neither sent nor recorded: for a
        test that sends it some other way (``post_signed``)."""
        return self._command_payload(2, user, channel, command, values, None).payload

    async def slash(
        self,
        user: SimUser,
        channel: SimChannel | int | str,
        command: str,
        /,
        *,
        options: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        tamper: Callable[[JSON], None] | None = None,
        tamper_event: Callable[[JSON], None] | None = None,
        **kwargs: Any,
    ) -> InteractionRecord:
        """Invoke ``/command`` ("group sub" for subcommands) as ``user`` in ``channel`` and
        return once the bot sent its initial response. Options come from ``kwargs`` (or
        ``options`` for names that clash with the parameters here).

        ``tamper`` edits the interaction's ``data`` before it is sent, as a hand-made payload
        would (an option value that is no id, a user missing from ``resolved``...): Discord
        itself would never send it, so the bot must still answer it sensibly.
        ``tamper_event`` edits the whole INTERACTION_CREATE payload (a field in a shape
        Discord never sends).
        """
        values = {**(options or {}), **kwargs}
        record = self._command_payload(2, user, channel, command, values, None)
        if tamper is not None:
            tamper(record.payload["data"])
        if tamper_event is not None:
            tamper_event(record.payload)
        return await self._send_interaction(record, timeout)

    async def autocomplete(
        self,
        user: SimUser,
        channel: SimChannel | int | str,
        command: str,
        /,
        *,
        focused: str,
        options: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        tamper: Callable[[JSON], None] | None = None,
        **kwargs: Any,
    ) -> list[JSON]:
        """Ask the bot for autocomplete choices of option ``focused`` while the user has
        typed ``kwargs[focused]``; returns the choices (``[{"name", "value"}]``). ``tamper``
        edits the interaction's ``data`` before it is sent, as ``slash``'s does."""
        values = {**(options or {}), **kwargs}
        record = self._command_payload(4, user, channel, command, values, focused)
        if tamper is not None:
            tamper(record.payload["data"])
        await self._send_interaction(record, timeout)
        return list(record.choices or [])

    def _clickable(
        self,
        user: SimUser,
        message: SimMessage | int | str,
        custom_id: str,
        stale: bool = False,
    ) -> tuple[SimMessage, JSON]:
        msg = self._message_ref(message)
        if msg.deleted:
            raise SimUsageError(f"message {msg.id} was deleted; nothing to click")
        if msg.ephemeral and msg.interaction_user is not user:
            raise SimUsageError(f"message {msg.id} is ephemeral and not visible to {user.name}")
        component = next(
            (c for c in msg.iter_components() if c.get("custom_id") == custom_id), None
        )
        if stale:
            # A client that has not received the latest edits still shows an older version
            # and Discord accepts its click: take the button from any version where it was
            # enabled, newest first.
            versions = [msg.components, *(v.components for v in reversed(msg.edits))]
            component = next(
                (
                    c
                    for components in versions
                    for c in _walk(components)
                    if c.get("custom_id") == custom_id and not c.get("disabled")
                ),
                component,
            )
        if component is None:
            present = [c.get("custom_id") for c in msg.iter_components() if c.get("custom_id")]
            raise SimUsageError(
                f"message {msg.id} has no component with custom_id {custom_id!r}; it has {present}"
            )
        if component.get("disabled"):
            raise SimUsageError(f"component {custom_id!r} on message {msg.id} is disabled")
        return msg, component

    async def click(
        self,
        user: SimUser,
        message: SimMessage | int | str,
        custom_id: str,
        /,
        *,
        timeout: float | None = None,
        stale: bool = False,
        forged: bool = False,
        tamper_event: Callable[[JSON], None] | None = None,
    ) -> InteractionRecord:
        """Press the button ``custom_id`` on ``message`` as ``user``.

        ``stale=True`` presses it as a client still showing an older version of the message
        would: the button may since have been disabled or removed (the bot must cope).
        ``forged=True`` sends ``custom_id`` whether or not the message ever had it, as a
        hand-made request would. ``tamper_event`` edits the whole INTERACTION_CREATE payload
        (a field in a shape Discord never sends).
        """
        if forged:
            msg = self._message_ref(message)
            component = {"type": 2, "style": 2, "label": "forged", "custom_id": custom_id}
        else:
            msg, component = self._clickable(user, message, custom_id, stale)
        if component.get("type") != 2:
            raise SimUsageError(
                f"{custom_id!r} is not a button (type {component.get('type')}); use select()"
            )
        self._member_for(user, msg.channel)
        record = self._new_record(3, user, msg.channel, custom_id=custom_id, source_message=msg)
        data: JSON = {"custom_id": custom_id, "component_type": 2}
        if "id" in component:
            data["id"] = component["id"]
        payload = self._interaction_payload(record, data, msg)
        if forged:
            # The message as the hand-made request shows it carries the forged button.
            shown = payload["message"]
            shown["components"] = [*shown["components"], {"type": 1, "components": [component]}]
        if tamper_event is not None:
            tamper_event(payload)
        return await self._send_interaction(record, timeout)

    async def select(
        self,
        user: SimUser,
        message: SimMessage | int | str,
        custom_id: str,
        values: list[str],
        /,
        *,
        timeout: float | None = None,
    ) -> InteractionRecord:
        """Choose ``values`` in the string select menu ``custom_id`` on ``message``."""
        msg, component = self._clickable(user, message, custom_id)
        if component.get("type") != 3:
            raise SimUsageError(
                f"{custom_id!r} is not a string select (type {component.get('type')})"
            )
        allowed = [o["value"] for o in component.get("options", [])]
        lo, hi = component.get("min_values", 1), component.get("max_values", 1)
        if any(v not in allowed for v in values) or not lo <= len(values) <= hi:
            raise SimUsageError(
                f"select {custom_id!r}: {values} is not a valid pick from {allowed} ({lo}..{hi})"
            )
        self._member_for(user, msg.channel)
        record = self._new_record(
            3,
            user,
            msg.channel,
            custom_id=custom_id,
            source_message=msg,
            options={"values": values},
        )
        self._interaction_payload(
            record, {"custom_id": custom_id, "component_type": 3, "values": values}, msg
        )
        return await self._send_interaction(record, timeout)

    async def submit_modal(
        self,
        user: SimUser,
        shown: InteractionRecord,
        /,
        values: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        **kwargs: str,
    ) -> InteractionRecord:
        """Submit the modal the bot answered ``shown`` with, text inputs by custom_id."""
        modal = shown.modal
        if modal is None:
            raise SimUsageError(f"{shown.describe()} was not answered with a modal")
        given = {**(values or {}), **kwargs}
        inputs = {
            c["custom_id"]: c for c in _walk(modal.get("components") or []) if c.get("type") == 4
        }
        unknown = [k for k in given if k not in inputs]
        if unknown:
            raise SimUsageError(f"modal {modal.get('custom_id')!r} has no text input(s) {unknown}")
        for cid, comp in inputs.items():
            text = given.get(cid, "")
            if comp.get("required", True) and not text:
                raise SimUsageError(f"modal text input {cid!r} is required")
            if text and not comp.get("min_length", 0) <= len(text) <= comp.get("max_length", 4000):
                raise SimUsageError(
                    f"modal text input {cid!r}: length {len(text)} is out of bounds"
                )

        def submitted(component: JSON) -> JSON:
            if component.get("type") == 1:
                return {
                    "type": 1,
                    "components": [submitted(c) for c in component.get("components", [])],
                }
            if component.get("type") == 18:
                return {"type": 18, "component": submitted(component["component"])}
            if component.get("type") == 4:
                return {
                    "type": 4,
                    "custom_id": component["custom_id"],
                    "value": given.get(component["custom_id"], ""),
                }
            return {"type": component.get("type"), "custom_id": component.get("custom_id")}

        data = {
            "custom_id": modal["custom_id"],
            "components": [submitted(c) for c in modal.get("components") or []],
        }
        record = self._new_record(
            5,
            user,
            shown.channel,
            custom_id=modal["custom_id"],
            options=dict(given),
            source_message=shown.source_message,
        )
        self._member_for(user, shown.channel)
        self._interaction_payload(record, data, shown.source_message)
        return await self._send_interaction(record, timeout)

    async def submit_unopened_modal(
        self,
        user: SimUser,
        channel: SimChannel | int | str,
        custom_id: str,
        /,
        *,
        message: SimMessage | int | str | None = None,
        timeout: float | None = None,
    ) -> InteractionRecord:
        """Submit a modal ``custom_id`` (with no fields) that the bot never answered anything
        with, as a client still showing a form of an older version of the bot, or a hand-made
        request, would; ``message``: the message whose button opened it."""
        chan = self._channel(channel)
        msg = self._message_ref(message) if message is not None else None
        self._member_for(user, chan)
        record = self._new_record(5, user, chan, custom_id=custom_id, source_message=msg)
        self._interaction_payload(record, {"custom_id": custom_id, "components": []}, msg)
        return await self._send_interaction(record, timeout)

    async def send_message(
        self, user: SimUser, channel: SimChannel | int | str, content: str
    ) -> SimMessage:
        """A user posts ``content`` in ``channel``; the bot gets MESSAGE_CREATE if subscribed."""
        chan = self._channel(channel)
        self._member_for(user, chan)
        msg = self._new_message(chan, user, {"content": content}, [])
        await self._dispatch_message_event("MESSAGE_CREATE", msg)
        self._notify()
        return msg


def _walk(components: list[JSON]) -> list[JSON]:
    out: list[JSON] = []
    for comp in components:
        out.append(comp)
        out += _walk(comp.get("components") or [])
        if isinstance(comp.get("component"), dict):
            out += _walk([comp["component"]])
    return out
