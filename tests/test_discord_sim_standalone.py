"""``python -m tests.discord_sim`` serves on its own, and a bot process can use it."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import discord
import pytest
import yarl

from tests.discord_sim.demo_client import DemoClient

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
async def standalone() -> AsyncIterator[dict[str, str]]:
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "tests.discord_sim", "--port", "0"),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    values: dict[str, str] = {}
    try:
        while "READY" not in values:
            line = await asyncio.wait_for(proc.stdout.readline(), 20)
            assert line, "the sim exited before printing DISCORD_SIM_READY"
            key, _, value = line.decode().strip().partition("=")
            values[key.removeprefix("DISCORD_SIM_")] = value
        yield values
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)
    assert proc.returncode == 0


async def test_standalone_prints_urls_that_answer(standalone: dict[str, str]) -> None:
    api, gateway, token = standalone["API_BASE"], standalone["GATEWAY_URL"], standalone["TOKEN"]
    assert api.startswith("http://127.0.0.1:")
    assert api.endswith("/api/v10")
    assert gateway.startswith("ws://127.0.0.1:")
    assert {"GUILD_ID", "CHANNEL_ID", "ALICE_ID", "BOB_ID", "APPLICATION_ID"} <= standalone.keys()
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{api}/users/@me", headers={"Authorization": f"Bot {token}"}) as reply:
            assert reply.status == 200
            assert reply.headers["Content-Type"] == "application/json"
            assert (await reply.json())["id"] == standalone["APPLICATION_ID"]
        async with http.get(f"{api}/users/@me", headers={"Authorization": "Bot wrong"}) as reply:
            assert reply.status == 401
        async with http.ws_connect(gateway) as ws:
            hello = await ws.receive_json(timeout=5)
            assert hello["op"] == 10
            assert hello["d"]["heartbeat_interval"] > 0


async def test_a_bot_driven_through_the_control_api(standalone: dict[str, str]) -> None:
    saved = (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    discord.http.Route.BASE = standalone["API_BASE"]
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(standalone["GATEWAY_URL"])
    client = DemoClient(guild_ready_timeout=0.05)
    try:
        await client.login(standalone["TOKEN"])
        task = asyncio.create_task(client.connect())
        await asyncio.wait_for(client.wait_until_ready(), 10)
        control = standalone["API_BASE"].removesuffix("/api/v10") + "/_sim"
        async with aiohttp.ClientSession() as http:
            body = {
                "user": "alice",
                "channel": "general",
                "command": "ttt start",
                "options": {"opponent": "@bob"},
            }
            async with http.post(f"{control}/slash", json=body) as reply:
                assert reply.status == 200
                record = await reply.json()
            async with http.get(f"{control}/state") as reply:
                state = await reply.json()
    finally:
        await client.close()
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
    await task
    assert record["response_type"] == 4
    assert (
        record["message"]["content"]
        == f"<@{standalone['ALICE_ID']}> vs <@{standalone['BOB_ID']}> (easy)"
    )
    assert state["violations"] == []
    assert state["unknown_routes"] == []
    assert [m["content"] for m in state["messages"][standalone["CHANNEL_ID"]]] == [
        record["message"]["content"]
    ]
