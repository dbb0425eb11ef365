"""The Discord-compatible server: ``DiscordSim`` composes the parts (one mixin a module, see
the package docstring) and keeps its lifecycle and the HTTP plumbing.

* One aiohttp application serves REST under ``/api/v10``, the gateway websocket at ``/``
  (``gateway.py``) and a small control API under ``/_sim`` (``control.py``). REST routing
  is a table matched here rather than aiohttp's router, so that every miss, including a
  wrong method on a known path, gets Discord's 404 JSON and is recorded.
* Every reply is written (``prepare`` + ``write_eof``) *before* waiters are woken, so a test
  that returns from a wait and sends the next event cannot overtake a reply on the wire.
* REST faults (``faults.py``) are applied in ``_handle`` around the route handlers, so each
  handler stays unaware of them; a request counts as arriving when its injected delay ends.
* The mixins are plain base classes: a request costs no more calls than when this was one
  class.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import orjson
from aiohttp import web

from . import faults, openapi
from .client_run import ClientRun, ClientT
from .control import ControlMixin
from .models import JSON, InteractionRecord, RequestRecord
from .rest import RestMixin
from .rest_interactions import InteractionRestMixin
from .wire import API_PREFIX, Call, Fail, Reply, error_reply, write_reply

log = logging.getLogger("tests.discord_sim")

_CALLBACK_PATH = re.compile(r"/interactions/([0-9]+)/[^/]+/callback")


class DiscordSim(ControlMixin, RestMixin, InteractionRestMixin):
    """A small Discord: see the package docstring for the API."""

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.host = host
        self.port = int(self._runner.addresses[0][1])
        log.info("discord sim listening on %s", self.api_base_url)

    async def stop(self) -> None:
        pending = list(self._background)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for conn in list(self._connections):
            await conn.close(1001, "sim stopping")
        await self.close_http_client()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> DiscordSim:
        if self._runner is None:
            await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def running(
        self,
        client: ClientT,
        *,
        timeout: float = 10.0,
        ready_delay: float = 0.05,
        token: str | None = None,
    ) -> ClientRun[ClientT]:
        """``async with sim.running(client):`` logs ``client`` in against this sim, runs
        ``connect()`` as a task and waits until the client is ready with every guild cached.

        ``ready_delay`` caps discord.py's ``guild_ready_timeout`` (2 s by default): on_ready
        then fires that long after the last GUILD_CREATE instead of two seconds later.
        On exit the client is closed, the discord.py globals are restored, and an error that
        ended the client's task is raised. ``token`` overrides the token the client logs in
        with (``sim.token`` by default).
        """
        return ClientRun(self, client, timeout=timeout, ready_delay=ready_delay, token=token)

    async def _http_answer(self, record: InteractionRecord, body: Any, arrived: float) -> None:
        # Discord reads an HTTP response to an interaction as it reads a callback: the same
        # checks, and the same record (as the callback route's request) for tests to read.
        path = f"{API_PREFIX}/interactions/{record.id}/{record.token}/callback"
        call = Call("POST", path, {}, {}, body, [], arrived)
        spec_problems = self._spec_problems(call, path) if self.spec_checks else []
        status, reply = await self._callback(call, str(record.id), record.token)
        for problem in spec_problems:
            self._violation(problem)
        rel = path[len(API_PREFIX) :]
        self.requests.append(
            RequestRecord(
                "POST", rel, status, reply, self._route_name("POST", rel), http_response=True
            )
        )
        self._notify()

    # ------------------------------------------------------------------ HTTP plumbing

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/" and request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._gateway(request)
        if path.startswith("/_sim/"):
            return await self._control(request)
        rel = path[len(API_PREFIX) :] if path.startswith(API_PREFIX + "/") else None
        window = fault = None
        if rel is not None:
            window = self.faults.window(request.method, rel, time.monotonic())
            fault = None if window else self.faults.take(request.method, rel)
        if fault is not None and fault.delay:
            await asyncio.sleep(fault.delay)
        call = await self._read_call(request, time.monotonic())
        route = self._route_name(call.method, rel)
        # Checked before the handlers see the call, reported after their own checks.
        spec_problems = self._spec_problems(call, path) if self.spec_checks else []
        headers: dict[str, str] = {}
        applied = False
        kind = fault.kind if fault else None
        if rel is not None and window is not None:
            retry_after = window.until - call.arrived
            status, body, headers = faults.rate_limit_reply(route, retry_after, window.global_)
            kind = "rate_limit"
            self._injected(None, kind, call, rel, route, status, window=True)
        elif fault is None or fault.kind in ("delay", "reset"):
            if fault is not None and fault.reset == "before":
                return self._reset(request, call, fault, rel, route, spec_problems, None)
            status, body = await self._route(call)
            applied = 200 <= status < 300
        elif fault.rate_limit is not None:
            status, body, headers = faults.rate_limit_reply(route, fault.rate_limit, fault.global_)
        else:
            assert fault.status is not None
            status, body = faults.status_reply(fault.status, fault.body)
        for problem in spec_problems:
            self._violation(problem)
        if fault is not None and fault.reset == "after":
            return self._reset(request, call, fault, rel, route, (), (status, body))
        self.requests.append(
            RequestRecord(call.method, rel or call.path, status, body, route, kind)
        )
        if fault is not None and rel is not None:
            self._injected(fault, fault.kind, call, rel, route, status, applied=applied)
        if fault is not None and fault.reply_delay:
            await asyncio.sleep(fault.reply_delay)
        if fault is not None and fault.rate_limit is not None and rel is not None:
            # Discord counts retry_after from the moment it answered: opened before the reply
            # is written, since writing it may take a while on a busy machine, and a client
            # that waited retry_after from reading it must not meet the window still open.
            self.faults.open_window(call.method, rel, fault.rate_limit, fault.global_)
        response = await write_reply(request, status, body, headers)
        self._notify()
        return response

    def _reset(
        self,
        request: web.Request,
        call: Call,
        fault: faults.Fault,
        rel: str | None,
        route: str,
        spec_problems: Iterable[str],
        reply: Reply | None,
    ) -> web.StreamResponse:
        """Abort the connection instead of answering: ``reply`` is what the sim decided
        (the request was applied), None if it never looked at the request."""
        for problem in spec_problems:
            self._violation(problem)
        status, body = reply if reply is not None else (0, None)
        kind = f"reset-{fault.reset}"
        assert rel is not None
        answering = _CALLBACK_PATH.fullmatch(rel)
        if answering is not None and 200 <= status < 300:
            # Discord took the answer, but the bot never heard so: sending it again is how
            # it finds out (Discord refuses it with 40060).
            record = self._ix_by_id.get(int(answering[1]))
            if record is not None:
                record.answer_unheard = True
        self.requests.append(RequestRecord(call.method, rel, status, body, route, kind))
        self._injected(
            fault, "reset", call, rel, route, None, applied=200 <= status < 300, detail=kind
        )
        transport = request.transport
        if transport is not None:
            transport.abort()
        self._notify()
        # aiohttp cannot write this to the aborted transport and drops it quietly.
        return web.Response(status=500)

    def _injected(
        self,
        fault: faults.Fault | None,
        kind: faults.Kind,
        call: Call,
        rel: str,
        route: str,
        status: int | None,
        *,
        applied: bool = False,
        window: bool = False,
        detail: str = "",
    ) -> None:
        log.info("fault: %s on %s %s -> %s", kind, call.method, rel, status)
        self.faults.record(
            faults.Injected(
                fault,
                kind,
                call.method,
                rel,
                route,
                status,
                applied,
                time.monotonic(),
                window=window,
                detail=detail,
            )
        )

    def _route_name(self, method: str, rel: str | None) -> str:
        """ "METHOD /template" of the route serving the request, or "METHOD /path" if none."""
        if rel is not None:
            for route_method, template, pattern, _, _ in self._routes:
                if route_method == method and pattern.fullmatch(rel):
                    return f"{method} {template}"
        return f"{method} {rel}"

    async def _read_call(self, request: web.Request, arrived: float) -> Call:
        path = request.path
        body: Any = None
        files: list[JSON] = []
        if request.content_type.startswith("multipart/"):
            form = await request.post()
            for key, value in form.items():
                if key == "payload_json":
                    body = json.loads(str(value))
                elif isinstance(value, web.FileField):
                    data = value.file.read()
                    files.append(
                        {
                            "filename": value.filename,
                            "size": len(data),
                            "content_type": value.content_type,
                        }
                    )
        else:
            raw = await request.read()
            if raw:
                try:
                    body = orjson.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
        return Call(request.method, path, request.query, request.headers, body, files, arrived)

    @staticmethod
    def _spec_problems(call: Call, path: str) -> list[str]:
        """What in the request breaks Discord's OpenAPI spec (``path`` as requested). They
        are violations, but the reply is left to the hand-written checks: the spec is a
        preview that can be wrong, and a violation fails the test either way."""
        if not path.startswith(API_PREFIX + "/"):
            return [f"OpenAPI: {call.method} {path}: not under {API_PREFIX}"]
        problems = openapi.load().check(
            call.method,
            path[len(API_PREFIX) :],
            query=call.query.items(),
            body=call.body,
            content_type=call.headers.get("Content-Type", "application/json"),
        )
        return [str(problem) for problem in problems]

    def _build_routes(
        self,
    ) -> list[tuple[str, str, re.Pattern[str], Callable[..., Awaitable[Reply]], bool]]:
        """(method, template, regex, handler, needs the bot token). Templates name routes
        as Discord's spec does; a ``{..._token}`` is any segment, other parameters digits."""
        table: list[tuple[str, str, Callable[..., Awaitable[Reply]], bool]] = [
            ("GET", "/users/@me", self._get_me, True),
            ("GET", "/oauth2/applications/@me", self._get_application, True),
            ("GET", "/applications/@me", self._get_application, True),
            ("GET", "/gateway", self._get_gateway, False),
            ("GET", "/gateway/bot", self._get_gateway_bot, True),
            ("GET", "/applications/{application_id}/commands", self._list_commands, True),
            ("PUT", "/applications/{application_id}/commands", self._put_commands, True),
            ("POST", "/applications/{application_id}/commands", self._post_command, True),
            (
                "GET",
                "/applications/{application_id}/commands/{command_id}",
                self._get_command,
                True,
            ),
            (
                "PATCH",
                "/applications/{application_id}/commands/{command_id}",
                self._patch_command,
                True,
            ),
            (
                "DELETE",
                "/applications/{application_id}/commands/{command_id}",
                self._delete_command,
                True,
            ),
            (
                "GET",
                "/applications/{application_id}/guilds/{guild_id}/commands",
                self._list_commands,
                True,
            ),
            (
                "PUT",
                "/applications/{application_id}/guilds/{guild_id}/commands",
                self._put_commands,
                True,
            ),
            (
                "POST",
                "/applications/{application_id}/guilds/{guild_id}/commands",
                self._post_command,
                True,
            ),
            (
                "GET",
                "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
                self._get_command,
                True,
            ),
            (
                "PATCH",
                "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
                self._patch_command,
                True,
            ),
            (
                "DELETE",
                "/applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
                self._delete_command,
                True,
            ),
            (
                "POST",
                "/interactions/{interaction_id}/{interaction_token}/callback",
                self._callback,
                False,
            ),
            ("POST", "/webhooks/{webhook_id}/{webhook_token}", self._followup, False),
            (
                "GET",
                "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
                functools.partial(self._get_webhook_message, message_id="@original"),
                False,
            ),
            (
                "PATCH",
                "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
                functools.partial(self._edit_webhook_message, message_id="@original"),
                False,
            ),
            (
                "DELETE",
                "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
                functools.partial(self._delete_webhook_message, message_id="@original"),
                False,
            ),
            (
                "GET",
                "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
                self._get_webhook_message,
                False,
            ),
            (
                "PATCH",
                "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
                self._edit_webhook_message,
                False,
            ),
            (
                "DELETE",
                "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
                self._delete_webhook_message,
                False,
            ),
            ("GET", "/channels/{channel_id}", self._get_channel, True),
            ("PATCH", "/channels/{channel_id}", self._modify_thread, True),
            ("DELETE", "/channels/{channel_id}", self._delete_channel, True),
            ("POST", "/channels/{channel_id}/threads", self._start_thread, True),
            ("GET", "/channels/{channel_id}/messages", self._list_messages, True),
            ("POST", "/channels/{channel_id}/messages", self._create_message, True),
            ("GET", "/channels/{channel_id}/messages/{message_id}", self._get_message, True),
            ("PATCH", "/channels/{channel_id}/messages/{message_id}", self._edit_message, True),
            (
                "DELETE",
                "/channels/{channel_id}/messages/{message_id}",
                self._delete_message,
                True,
            ),
            ("POST", "/users/@me/channels", self._create_dm, True),
            ("GET", "/users/{user_id}", self._get_user, True),
            ("GET", "/guilds/{guild_id}", self._get_guild, True),
            ("GET", "/guilds/{guild_id}/channels", self._get_guild_channels, True),
            ("GET", "/guilds/{guild_id}/threads/active", self._active_threads, True),
            ("GET", "/guilds/{guild_id}/roles", self._get_guild_roles, True),
            ("GET", "/guilds/{guild_id}/emojis/{emoji_id}", self._get_guild_emoji, True),
            ("GET", "/guilds/{guild_id}/members/{user_id}", self._get_member, True),
        ]
        return [(m, t, _template_regex(t), h, auth) for m, t, h, auth in table]

    async def _route(self, call: Call) -> Reply:
        if not call.path.startswith(API_PREFIX + "/"):
            return self._unknown(call)
        rel = call.path[len(API_PREFIX) :]
        call.path = rel
        for method, _, pattern, handler, auth in self._routes:
            match = pattern.fullmatch(rel)
            if match is None or method != call.method:
                continue
            if auth and call.headers.get("Authorization") != f"Bot {self.token}":
                return error_reply(401, 0, "401: Unauthorized")
            try:
                return await handler(call, *match.groups())
            except Fail as fail:
                return fail.reply
        return self._unknown(call)

    def _unknown(self, call: Call) -> Reply:
        self.unknown_routes.append((call.method, call.path))
        log.warning("unknown route %s %s", call.method, call.path)
        return error_reply(404, 0, "404: Not Found")


def _template_regex(template: str) -> re.Pattern[str]:
    parts = []
    for segment in template.split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            parts.append(r"([^/]+)" if segment.endswith("_token}") else r"(\d+)")
        else:
            parts.append(re.escape(segment))
    return re.compile("/".join(parts))
