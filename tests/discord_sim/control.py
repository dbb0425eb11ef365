"""The control API under ``/_sim``: a small JSON API for driving a sim that runs in its own
process (``python -m tests.discord_sim``; the routes are listed in ``__main__``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from aiohttp import web

from .models import JSON, InteractionRecord, SimError, SimUsageError
from .verbs import VerbsMixin
from .wire import Reply, write_reply


class ControlMixin(VerbsMixin):
    """The ``/_sim`` routes, and the summaries of state they answer with."""

    async def _control(self, request: web.Request) -> web.StreamResponse:
        """A small JSON API for driving a sim that runs in its own process."""
        try:
            body = await self._control_body(request)
            status, reply = await self._control_call(request.method, request.path, body)
        except SimUsageError as exc:
            status, reply = 400, {"error": type(exc).__name__, "message": str(exc)}
        except SimError as exc:
            status, reply = 409, {"error": type(exc).__name__, "message": str(exc)}
        return await write_reply(request, status, reply)

    # What each POST route cannot do without.
    _REQUIRED: ClassVar[Mapping[str, frozenset[str]]] = {
        "/_sim/slash": frozenset({"user", "channel", "command"}),
        "/_sim/click": frozenset({"user", "message", "custom_id"}),
        "/_sim/autocomplete": frozenset({"user", "channel", "command", "focused"}),
    }

    async def _control_body(self, request: web.Request) -> JSON:
        if not request.can_read_body:
            return {}
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise SimUsageError("the body must be a JSON object")
        missing = sorted(self._REQUIRED.get(request.path, frozenset()) - body.keys())
        if request.method == "POST" and missing:
            raise SimUsageError(f"missing field(s) {missing}")
        return body

    async def _control_call(self, method: str, path: str, body: JSON) -> Reply:
        if (method, path) == ("GET", "/_sim/state"):
            return 200, self.state_summary()
        if path == "/_sim/faults":
            return self._control_faults(method, body)
        if method != "POST":
            return 404, {"error": "unknown control route"}
        timeout = body.get("timeout")
        if path == "/_sim/slash":
            user = self._user(body["user"])
            ix = await self.slash(
                user,
                body["channel"],
                body["command"],
                options=self._control_options(body),
                timeout=timeout,
            )
            return 200, self.record_summary(ix)
        if path == "/_sim/click":
            ix = await self.click(
                self._user(body["user"]), body["message"], body["custom_id"], timeout=timeout
            )
            return 200, self.record_summary(ix)
        if path == "/_sim/autocomplete":
            choices = await self.autocomplete(
                self._user(body["user"]),
                body["channel"],
                body["command"],
                focused=body["focused"],
                options=self._control_options(body),
                timeout=timeout,
            )
            return 200, {"choices": choices}
        if path == "/_sim/drop":
            await self.drop_connection(timeout=timeout)
            return 200, {"resumed": True}
        if path == "/_sim/gateway/close":
            resumable = bool(body.get("resumable", True))
            await self.close_gateway(
                resumable=resumable,
                code=body.get("code"),
                shard_id=body.get("shard_id"),
                wait=bool(body.get("wait", True)),
                timeout=timeout,
            )
            return 200, {"resumable": resumable, "identifies": self.identifies}
        return 404, {"error": "unknown control route"}

    _FAULT_FIELDS = frozenset(
        {"route", "status", "body", "rate_limit", "global", "reset", "delay", "reply_delay"}
        | {"count", "skip"}
    )

    def _control_faults(self, method: str, body: JSON) -> Reply:
        if method == "GET":
            return 200, self.faults_summary()
        if method == "DELETE":
            self.faults.clear()
            return 200, self.faults_summary()
        if method != "POST":
            return 404, {"error": "unknown control route"}
        unknown = sorted(set(body) - self._FAULT_FIELDS)
        if unknown:
            raise SimUsageError(
                f"unknown fault field(s) {unknown}; known: {sorted(self._FAULT_FIELDS)}"
            )
        options = {k: v for k, v in body.items() if k != "global"}
        fault = self.faults.add(**options, global_=bool(body.get("global", False)))
        return 200, fault.summary()

    def faults_summary(self) -> JSON:
        return {
            "pending": [f.summary() for f in self.faults.pending],
            "injected": [i.summary() for i in self.faults.injected],
        }

    def _control_options(self, body: JSON) -> dict[str, Any]:
        # JSON cannot carry SimUser objects: "@name" stands for a user, "#name" for a channel.
        out: dict[str, Any] = {}
        for key, value in (body.get("options") or {}).items():
            if isinstance(value, str) and value.startswith("@"):
                value = self._user(value[1:])
            elif isinstance(value, str) and value.startswith("#"):
                value = self._channel(value[1:])
            out[key] = value
        return out

    def record_summary(self, ix: InteractionRecord) -> JSON:
        return {
            "id": str(ix.id),
            "type": ix.type,
            "response_type": ix.response_type,
            "rejected": ix.rejected,
            "ephemeral": ix.ephemeral,
            "latency": ix.latency,
            "message": ix.message.payload() if ix.message else None,
            "choices": ix.choices,
        }

    def state_summary(self) -> JSON:
        return {
            "api_base_url": self.api_base_url,
            "gateway_url": self.gateway_url,
            "application_id": str(self.application_id),
            "guilds": [
                {
                    "id": str(g.id),
                    "name": g.name,
                    "channels": [c.payload() for c in g.channels],
                    "members": [m.payload() for m in g.members.values()],
                }
                for g in self.guilds.values()
            ],
            "sessions": [
                {
                    "id": s.id,
                    "shard": s.shard,
                    "connected": s.conn is not None,
                    "resumes": s.resumes,
                }
                for s in self.live_sessions()
            ],
            "messages": {
                str(cid): [m.payload() | {"deleted": m.deleted} for m in msgs]
                for cid, msgs in self._channel_messages.items()
            },
            "commands": {
                "global": self._global_commands,
                **{str(g): c for g, c in self._guild_commands.items()},
            },
            "interactions": [self.record_summary(ix) for ix in self.interactions],
            "violations": self.violations,
            "unknown_routes": self.unknown_routes,
            "faults": self.faults_summary(),
        }
