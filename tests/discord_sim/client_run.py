"""Running a discord.py client against the sim: ``sim.running(client)`` (see
:meth:`DiscordSim.running`) points discord.py at it, logs in, waits until the client is ready
with its guilds cached, and reports a client task that died.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING, Generic, TypeVar

import discord
import yarl

from .models import SimClientDied, SimError, SimTimeout
from .wire import INTENT_GUILDS

if TYPE_CHECKING:
    from .server import DiscordSim

ClientT = TypeVar("ClientT", bound=discord.Client)


class ClientRun(Generic[ClientT]):
    """``async with sim.running(client)``: see :meth:`DiscordSim.running`."""

    def __init__(
        self,
        sim: DiscordSim,
        client: ClientT,
        *,
        timeout: float,
        ready_delay: float,
        token: str | None,
    ) -> None:
        self.sim = sim
        self.token = sim.token if token is None else token
        self.client = client
        self.timeout = timeout
        self.ready_delay = ready_delay
        self.task: asyncio.Task[None] | None = None
        self._saved: tuple[str, yarl.URL] | None = None
        self._reported = False

    def raise_if_died(self) -> None:
        task = self.task
        if task is None or not task.done() or self._reported:
            return
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._reported = True
            raise SimClientDied(f"the client's connect() task died: {exc!r}") from exc
        if not self.client.is_closed():
            self._reported = True
            raise SimClientDied("the client's connect() task returned while the client was open")

    async def __aenter__(self) -> ClientT:
        gateway_cls = discord.gateway.DiscordWebSocket
        self._saved = (discord.http.Route.BASE, gateway_cls.DEFAULT_GATEWAY)
        discord.http.Route.BASE = self.sim.api_base_url
        gateway_cls.DEFAULT_GATEWAY = yarl.URL(self.sim.gateway_url)
        state = self.client._connection
        state.guild_ready_timeout = min(state.guild_ready_timeout, self.ready_delay)
        try:
            await self.client.login(self.token)
            self.task = asyncio.create_task(self.client.connect(), name="discord-sim-client")
            self.task.add_done_callback(lambda _: self.sim._notify())
            self.sim._clients.append(self)
            await self._wait_ready()
        except BaseException:
            await self._shutdown(suppress=True)
            raise
        return self.client

    async def _wait_ready(self) -> None:
        assert self.task is not None
        ready = asyncio.ensure_future(self.client.wait_until_ready())
        try:
            done, _ = await asyncio.wait(
                {ready, self.task}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            ready.cancel()
        self.raise_if_died()
        if self.task.done():
            raise SimClientDied("the client's connect() task ended before the client was ready")
        if not done:
            raise SimTimeout(self.sim._timeout_message("the client to become ready", self.timeout))
        # discord.py may fire on_ready before it has parsed the last GUILD_CREATEs when they
        # arrive after guild_ready_timeout; a ping round trip proves they are handled.
        sessions = [s for s in self.sim.live_sessions() if s.conn is not None]
        for session in sessions:
            await self.sim._barrier(session, self.timeout)
        missing = [
            gid
            for session in sessions
            if session.intents & INTENT_GUILDS
            for gid in session.guild_ids
            if (g := self.client.get_guild(gid)) is None or g.unavailable
        ]
        if missing:
            raise SimError(f"the client is ready but has not cached guild(s) {missing}")

    async def _shutdown(self, *, suppress: bool) -> BaseException | None:
        error: BaseException | None = None
        try:
            await self.client.close()
            if self.task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(self.task), self.timeout)
                except asyncio.CancelledError:
                    pass
                except Exception as exc:
                    error = exc
        finally:
            if self._saved is not None:
                discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = (
                    self._saved
                )
                self._saved = None
            if self in self.sim._clients:
                self.sim._clients.remove(self)
        if error is not None and not suppress and not self._reported:
            raise SimClientDied(f"the client's connect() task failed: {error!r}") from error
        return error

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._shutdown(suppress=exc is not None)
