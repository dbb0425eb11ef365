"""The gateway: the websocket at ``/``, IDENTIFY, RESUME and member requests, and the verbs
that drop, reconnect, close or refuse the bot's sockets.

* Gateway sessions outlive their sockets: dispatches sent while a socket is down are kept
  and replayed on RESUME, like Discord does; a session invalidated instead loses them.
* Before each INTERACTION_CREATE on a connected socket the sim sends a WebSocket ping (an
  RFC 6455 control frame, not a gateway payload) and waits for its pong (``_barrier``).
  aiohttp answers a ping inside ``receive()``, which discord.py calls only once it has
  handled the frame before, so the pong proves the client processed everything sent earlier
  (READY, GUILD_CREATE, MESSAGE_CREATE...), and the round trip lets the continuations of HTTP
  replies written before run: e.g. a View stored under the message id that ``send_message``
  returned, which a click right after would otherwise race. It used to be a gateway
  heartbeat request (op 1), whose answer goes through discord.py's gateway limiter (110
  sends a minute, under Discord's 120): some 110 interactions a minute stalled the client
  for a minute. A pong passes no such limit.
"""

# ruff: noqa: ASYNC109 -- ``timeout=`` on the verbs is the documented test API.

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time

import aiohttp
import orjson
from aiohttp import web

from . import faults
from .core import SimCore
from .models import JSON, SimGuild, SimUsageError, iso
from .wire import INTENT_GUILD_PRESENCES, INTENT_GUILDS, Connection, Session

# Close codes: 4000 "Unknown error" is Discord's "reconnect and resume"; 1000 and 1001 from
# the client end its session for good.
CLOSE_UNKNOWN_ERROR = 4000


class GatewayMixin(SimCore):
    """Gateway sockets and sessions, and the verbs that disturb them."""

    # New gateway connections still to refuse (refuse_gateway), and with what status.
    _gateway_refusals = 0
    _gateway_refusal_status = 502

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self._gateway_refusals:
            self._gateway_refusals -= 1
            status = self._gateway_refusal_status
            self.faults.record(
                faults.Injected(
                    None,
                    "gateway",
                    "GET",
                    "/",
                    "GATEWAY",
                    status,
                    False,
                    time.monotonic(),
                    detail=f"refused {status}",
                )
            )
            self._notify()
            return web.Response(status=status, text="the gateway refused the connection")
        # autoping off: the sim must see the pongs that answer its ordering pings.
        ws = web.WebSocketResponse(autoping=False, max_msg_size=0)
        await ws.prepare(request)
        conn = Connection(request, ws)
        self._connections.add(conn)
        try:
            await conn.send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}})
            async for msg in ws:
                if msg.type is aiohttp.WSMsgType.PING:
                    with contextlib.suppress(ConnectionError, RuntimeError):
                        await ws.pong(msg.data)
                    continue
                if msg.type is aiohttp.WSMsgType.PONG:
                    with contextlib.suppress(ValueError):
                        conn.pong = max(conn.pong, int(msg.data.decode()))
                        self._notify()
                    continue
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    continue
                try:
                    frame = orjson.loads(msg.data)
                except ValueError:
                    await conn.close(4002, "Error while decoding payload.")
                    break
                await self._gateway_frame(conn, frame)
        finally:
            self._connections.discard(conn)
            session = conn.session
            if session is not None and session.conn is conn:
                session.conn = None
                if not conn.dropped and ws.close_code in (1000, 1001):
                    # A deliberate close ends the session; Discord refuses to resume it.
                    self._end_session(session, session.sent_seq)
            self._notify()
        return ws

    async def _gateway_frame(self, conn: Connection, frame: JSON) -> None:
        op = frame.get("op")
        data = frame.get("d")
        if op == 1:
            await conn.send({"op": 11})
            if conn.session is not None:
                conn.session.heartbeats += 1
                self._notify()
        elif op == 2:
            await self._identify(conn, data or {})
        elif op == 6:
            await self._resume(conn, data or {})
        elif op == 8:
            await self._request_members(conn, data or {})
        elif op in (3, 4):
            pass  # presence and voice state updates change nothing the sim models
        else:
            await conn.close(4001, "Unknown opcode.")

    async def _identify(self, conn: Connection, data: JSON) -> None:
        if data.get("token") != self.token:
            await conn.close(4004, "Authentication failed.")
            return
        if conn.session is not None:
            await conn.close(4005, "Already authenticated.")
            return
        raw_shard = data.get("shard")
        shard: tuple[int, int] | None = None
        if raw_shard is not None:
            shard_id, count = int(raw_shard[0]), int(raw_shard[1])
            if not 0 <= shard_id < count:
                await conn.close(4010, "Invalid shard.")
                return
            shard = (shard_id, count)
        for old in self.live_sessions():
            if old.conn is None and old.shard == shard:
                # A fresh IDENTIFY for a shard whose session is down abandons that session;
                # what was queued for it never arrives.
                self._end_session(old, old.sent_seq)
        session = Session(secrets.token_hex(16), shard, int(data.get("intents") or 0), [])
        session.guild_ids = [
            g.id for g in self.guilds.values() if g.member(self.bot_user) and session.covers(g)
        ]
        self.sessions[session.id] = session
        session.conn = conn
        conn.session = session
        self.identifies += 1
        ready: JSON = {
            "v": 10,
            "user": {**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "flags": 0},
            "guilds": [{"id": str(gid), "unavailable": True} for gid in session.guild_ids],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.application_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "user_settings": {},
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "auth": {},
        }
        if shard is not None:
            ready["shard"] = list(shard)
        await session.dispatch("READY", ready)
        # GUILD_CREATE belongs to the GUILDS intent: without it the guilds stay unavailable,
        # which an interactions-only client copes with (interactions carry what it needs).
        if session.intents & INTENT_GUILDS:
            for gid in session.guild_ids:
                await session.dispatch(
                    "GUILD_CREATE", self._guild_create(self.guilds[gid], session.intents)
                )
        self._notify()

    def _guild_create(self, guild: SimGuild, intents: int) -> JSON:
        bot = guild.member(self.bot_user)
        members = list(guild.members.values())
        if not intents & INTENT_GUILD_PRESENCES:
            # Without the presences intent Discord only sends the bot's own member here;
            # the rest arrive through member chunking (GUILD_MEMBERS intent).
            members = [m for m in members if m.user is self.bot_user]
        data = guild.payload()
        data.update(
            joined_at=iso(bot.joined_at if bot else guild.created_at),
            large=False,
            unavailable=False,
            lazy=True,
            member_count=len(guild.members),
            channels=[c.payload(with_guild_id=False) for c in guild.channels if not c.is_thread],
            threads=[c.payload() for c in guild.channels if c.is_thread],
            members=[m.payload() for m in members],
            voice_states=[],
            presences=[],
            stage_instances=[],
            guild_scheduled_events=[],
            soundboard_sounds=[],
            embedded_activities=[],
        )
        return data

    async def _resume(self, conn: Connection, data: JSON) -> None:
        if data.get("token") != self.token:
            await conn.close(4004, "Authentication failed.")
            return
        session = self.sessions.get(str(data.get("session_id")))
        seq = int(data.get("seq") or 0)
        if session is not None and not session.ended and not session.resumable:
            self._end_session(session, seq)
        if session is None or session.ended:
            await conn.send({"op": 9, "d": False})
            return
        if session.conn is not None and session.conn is not conn:
            old = session.conn
            old.session = None
            old.abort()
        session.conn = conn
        conn.session = session
        for frame in session.history:
            if frame["s"] > seq and await conn.send(frame):
                session.sent_seq = max(session.sent_seq, frame["s"])
        session.resumes += 1
        await session.dispatch("RESUMED", {})
        self._notify()

    def _end_session(self, session: Session, delivered: int) -> None:
        """End ``session`` for good; interactions dispatched to it after sequence number
        ``delivered`` never reached the client, and are lost as on Discord."""
        session.ended = True
        for record in self.interactions:
            if (
                record.session_id == session.id
                and record.seq is not None
                and record.seq > delivered
                and not record.answered
            ):
                record.lost = True
        self._notify()

    async def _request_members(self, conn: Connection, data: JSON) -> None:
        session = conn.session
        if session is None:
            await conn.close(4003, "Not authenticated.")
            return
        raw = data.get("guild_id")
        guild_ids = raw if isinstance(raw, list) else [raw]
        query = str(data.get("query") or "").lower()
        limit = int(data.get("limit") or 0)
        wanted = {int(u) for u in data.get("user_ids") or []}
        for gid in guild_ids:
            guild = self.guilds.get(int(str(gid)))
            if guild is None:
                continue
            members = [
                m
                for m in guild.members.values()
                if (not wanted or m.user.id in wanted) and m.user.name.lower().startswith(query)
            ]
            if limit:
                members = members[:limit]
            chunk: JSON = {
                "guild_id": str(guild.id),
                "members": [m.payload() for m in members],
                "chunk_index": 0,
                "chunk_count": 1,
                "not_found": [str(u) for u in wanted - {m.user.id for m in members}],
            }
            if data.get("nonce") is not None:
                chunk["nonce"] = data["nonce"]
            await session.dispatch("GUILD_MEMBERS_CHUNK", chunk)

    async def _barrier(self, session: Session, timeout: float) -> None:
        """Ping the session's socket and wait for the pong: once it comes the client has
        handled every frame sent before (see the module docstring). Returns early if the
        socket goes away meanwhile: what is sent next then waits for the RESUME, in order."""
        conn = session.conn
        if conn is None:
            return
        number = next(self._ping_numbers)
        if not await conn.ping(number):
            return
        await self.wait_for(
            lambda: conn.pong >= number or session.conn is not conn,
            timeout,
            what="the client to answer a websocket ping (is its event loop blocked?)",
        )

    async def drop_connection(
        self, *, shard_id: int | None = None, wait: bool = True, timeout: float | None = None
    ) -> None:
        """Abort the bot's gateway socket(s) without a close frame, as a network failure
        would; with ``wait``, return once each session has been RESUMEd."""
        targets = [
            s
            for s in self.live_sessions()
            if s.conn is not None and (shard_id is None or s.shard_id == shard_id)
        ]
        if not targets:
            raise SimUsageError("drop_connection(): no connected gateway session to drop")
        before = {s.id: s.resumes for s in targets}
        for session in targets:
            conn = session.conn
            assert conn is not None
            session.conn = None
            conn.abort()
        self._notify()
        if wait:
            await self.wait_for(
                lambda: all(s.resumes > before[s.id] for s in targets),
                timeout,
                what="the client to RESUME after drop_connection()",
            )

    async def request_reconnect(
        self, *, shard_id: int | None = None, wait: bool = True, timeout: float | None = None
    ) -> None:
        """Send op 7 RECONNECT; with ``wait``, return once each session has been RESUMEd."""
        targets = [
            s
            for s in self.live_sessions()
            if s.conn is not None and (shard_id is None or s.shard_id == shard_id)
        ]
        if not targets:
            raise SimUsageError("request_reconnect(): no connected gateway session")
        before = {s.id: s.resumes for s in targets}
        for session in targets:
            assert session.conn is not None
            await session.conn.send({"op": 7, "d": None})
        if wait:
            await self.wait_for(
                lambda: all(s.resumes > before[s.id] for s in targets),
                timeout,
                what="the client to RESUME after a RECONNECT request",
            )

    def refuse_gateway(self, count: int, *, status: int = 502) -> None:
        """Answer the next ``count`` gateway connections with HTTP ``status`` instead of the
        websocket, as Discord's edge does during an incident: the client's reconnections
        fail (a ``WSServerHandshakeError`` in discord.py, which tries again after a pause)
        until they are used up. Each is recorded as a gateway fault (``refused 502``)."""
        if count < 1 or not 400 <= status < 600:
            raise SimUsageError("refuse_gateway(): a count of 1 or more, and a 4xx or 5xx status")
        self._gateway_refusals, self._gateway_refusal_status = count, status

    async def close_gateway(
        self,
        *,
        resumable: bool = True,
        code: int | None = None,
        shard_id: int | None = None,
        wait: bool = True,
        timeout: float | None = None,
    ) -> None:
        """Close the bot's gateway socket(s) as Discord does.

        ``resumable=True``: a close frame with ``code`` (4000 "Unknown error" by default);
        the client RESUMEs and gets what was dispatched meanwhile. ``resumable=False``: the
        session is invalidated. Without ``code`` that is op 9 INVALID_SESSION (``d=false``)
        on the open socket; with one (e.g. 4009 "Session timed out") the socket is closed
        with it and the client's RESUME gets op 9. Either way the client IDENTIFYs afresh,
        and interactions dispatched to the old session that it had not received are lost
        (the verb raises :class:`SimInteractionLost`). With ``wait`` this returns once each
        session was resumed, or replaced by a new READY one.
        """
        targets = [
            s
            for s in self.live_sessions()
            if s.conn is not None and (shard_id is None or s.shard_id == shard_id)
        ]
        if not targets:
            raise SimUsageError("close_gateway(): no connected gateway session")
        before = {s.id: (s.resumes, s.created) for s in targets}
        for session in targets:
            conn = session.conn
            assert conn is not None
            if not resumable and code is None:
                await conn.send({"op": 9, "d": False})
                self._end_session(session, session.sent_seq)
                detail = "INVALID_SESSION d=false"
            else:
                session.resumable = resumable
                session.conn = None
                conn.dropped = True
                close_code = CLOSE_UNKNOWN_ERROR if code is None else code
                # Not awaited: the close handshake needs the client, which must not be able
                # to stall this call, and dispatches after it already queue for the RESUME.
                task = asyncio.create_task(conn.close(close_code, "closed by the sim"))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
                detail = f"close {close_code}" + ("" if resumable else ", then INVALID_SESSION")
            self.faults.record(
                faults.Injected(
                    None,
                    "gateway",
                    "GATEWAY",
                    f"shard {session.shard_id}",
                    "GATEWAY",
                    None,
                    False,
                    time.monotonic(),
                    detail=detail,
                )
            )
        self._notify()
        if not wait:
            return

        def settled() -> bool:
            for old in targets:
                resumes, created = before[old.id]
                if resumable:
                    if old.resumes <= resumes:
                        return False
                elif not any(
                    s.conn is not None and s.shard == old.shard and s.created > created
                    for s in self.live_sessions()
                ):
                    return False
            return True

        await self.wait_for(
            settled,
            timeout,
            what="the client to "
            + ("RESUME" if resumable else "IDENTIFY afresh")
            + " after close_gateway()",
        )

    async def dispatch_raw(self, event: str, data: JSON, *, guild: SimGuild | None = None) -> None:
        """Send an arbitrary dispatch to every live session covering ``guild`` (all if None),
        e.g. to test how a bot copes with an event the sim does not model."""
        for session in self.live_sessions():
            if guild is None or session.covers(guild):
                await session.dispatch(event, data)
        self._notify()
