"""``python -m bot`` as a real process, configured only by its environment, against the
simulator: what an operator does, from start to SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import discord
import pytest

from tests.bot_harness import text_of
from tests.bot_processes import ROOT, bot_process, run_bot
from tests.discord_sim import DiscordSim, InteractionRecord, SimChannel, SimError, SimUser

# Every test runs python -m bot as a real process: a second or more of CPU each, and SIGTERM
# under continuous traffic about ten seconds.
pytestmark = pytest.mark.slow


async def test_the_bot_process_plays_and_stops_cleanly_on_sigterm(
    sim: DiscordSim, tmp_path: Path
) -> None:
    s = sim.seed
    async with bot_process(sim, tmp_path) as bot:
        assert sim.commands() == []  # TTT_GUILD_ID: registered in that guild only
        assert [command["name"] for command in sim.commands(guild=s.guild)] == [
            "ttt",
            "ttt-settings",
        ]
        (session,) = [session for session in sim.sessions.values() if not session.ended]
        assert session.intents == discord.Intents.none().value  # interactions need no intent
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax", timeout=15)
        assert ix.message is not None
        assert "tttbot (minimax)" in text_of(ix.message)
        bot.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(bot.process.wait(), 20) == 0
    log = bot.log
    assert "Traceback" not in log
    assert sim.token not in log  # not even at DEBUG
    assert ix.token not in log  # LOG_LEVEL=DEBUG leaves discord.py's payload logs off
    assert "DEBUG" in log  # ...while the rest of DEBUG is on
    assert "WARNING" not in log  # a healthy start and stop warns of nothing
    assert (tmp_path / "bot.sqlite3").exists()


def at_least(items: list[InteractionRecord], count: int) -> bool:
    return len(items) >= count


async def test_sigterm_under_continuous_traffic_exits_promptly_and_cleanly(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """Interactions keep arriving while the bot stops: it must stop taking them, finish the
    ones in flight, close its database and exit 0, every time."""
    s = sim.seed
    answered: list[InteractionRecord] = []
    stopping = asyncio.Event()

    async def keep_playing(user: SimUser, channel: SimChannel) -> None:
        while not stopping.is_set():
            try:
                ix = await sim.slash(user, channel, "ttt vs-ai", difficulty="random", timeout=2)
                answered.append(ix)
                answered.append(await sim.slash(user, channel, "ttt resign", timeout=2))
            except SimError:
                return  # the bot stopped listening: an unanswered interaction is expected now

    for attempt in range(3):
        async with bot_process(sim, tmp_path) as bot:
            players = [
                asyncio.create_task(keep_playing(user, sim.add_channel(s.guild, f"c{attempt}{n}")))
                for n, user in enumerate((s.alice, s.bob, s.carol, s.moderator))
            ]
            await sim.wait_for(partial(at_least, answered, 8 * (attempt + 1)), timeout=20)
            bot.process.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(bot.process.wait(), 20)
            stopping.set()
            await asyncio.gather(*players)
            stopping.clear()
        assert code == 0, bot.log
        assert "Traceback" not in bot.log
        assert "Event loop is closed" not in bot.log
        assert "stopping: no new interactions" in bot.log
    # Everything the bot answered, it answered properly: a board, or a sentence.
    assert all(ix.response_type in (4, 7) for ix in answered)


async def test_discord_log_level_debug_shows_discord_py_payloads(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """The other side of the test above: the setting, not luck, keeps tokens out of the log."""
    s = sim.seed
    async with bot_process(sim, tmp_path, LOG_LEVEL="INFO", DISCORD_LOG_LEVEL="DEBUG") as bot:
        ix = await sim.slash(s.alice, s.channel, "ttt help", timeout=15)
        assert ix.ephemeral
    assert ix.token in bot.log


async def test_commands_are_synced_only_when_they_change_or_when_asked(
    sim: DiscordSim, tmp_path: Path
) -> None:
    def syncs() -> int:
        return sum(1 for r in sim.requests if r.method == "PUT" and r.path.endswith("/commands"))

    async with bot_process(sim, tmp_path):
        await sim.wait_for(lambda: syncs() == 1, timeout=15)
    async with bot_process(sim, tmp_path) as again:
        ix = await sim.slash(sim.seed.bob, sim.seed.channel, "ttt help", timeout=15)
        assert ix.ephemeral
        assert "commands unchanged since the last sync: not syncing" in again.log
    assert syncs() == 1
    async with bot_process(sim, tmp_path, "--sync"):
        await sim.wait_for(lambda: syncs() == 2, timeout=15)
    async with bot_process(sim, tmp_path, TTT_GUILD_ID=""):  # another scope: global
        await sim.wait_for(lambda: syncs() == 3, timeout=15)
        assert [command["name"] for command in sim.commands()] == ["ttt", "ttt-settings"]


async def test_a_rejected_token_is_one_line_and_a_failure(sim: DiscordSim, tmp_path: Path) -> None:
    code, out, err = await run_bot(
        sim, tmp_path, DISCORD_TOKEN="not-the-token", LOG_LEVEL="WARNING"
    )
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        "tttbot: Discord rejected DISCORD_TOKEN (401 Unauthorized): check the token, or reset "
        "it on the Bot page of the application in the developer portal and copy the new one"
    )
    assert "Traceback" not in err
    assert "not-the-token" not in out + err


async def test_a_server_the_bot_is_not_in_is_one_line_and_a_failure(
    sim: DiscordSim, tmp_path: Path
) -> None:
    stranger = 123456789012345678  # no guild of the sim's world
    code, _, err = await run_bot(
        sim,
        tmp_path,
        TTT_GUILD_ID=str(stranger),
        LOG_LEVEL="CRITICAL",
        DISCORD_LOG_LEVEL="CRITICAL",
    )
    assert code == 1
    application = f"the application tttbot (id {sim.application_id})"
    link = (
        f"https://discord.com/oauth2/authorize?client_id={sim.application_id}"
        "&permissions=309237664768&integration_type=0&scope=bot+applications.commands"
    )
    assert err.strip().splitlines() == [
        f"tttbot: TTT_GUILD_ID {stranger}: Discord refused to register the commands of "
        f"{application} there (403 Missing Access): it is not in that server; invite it with "
        f"{link} (if you invited another application, put that one's token in DISCORD_TOKEN)"
    ]


async def test_an_unreachable_discord_is_one_line_and_a_failure(tmp_path: Path) -> None:
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("DISCORD_", "TTT_"))
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        env={
            **env,
            "PYTHONPATH": str(ROOT),
            "DISCORD_TOKEN": "whatever",
            "DISCORD_API_BASE_URL": "http://127.0.0.1:9/api/v10",  # the discard port: refused
            "LOG_LEVEL": "CRITICAL",
            "DISCORD_LOG_LEVEL": "CRITICAL",
        },
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 1
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("tttbot: cannot reach Discord at http://127.0.0.1:9/api/v10")


def healthcheck(heartbeat: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.healthcheck"],
        env={**os.environ, "PYTHONPATH": str(ROOT), "TTT_HEARTBEAT_FILE": str(heartbeat)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


async def test_the_health_check_says_whether_the_bot_is_connected(
    sim: DiscordSim, tmp_path: Path
) -> None:
    heartbeat = tmp_path / "heartbeat"
    assert healthcheck(heartbeat).returncode == 1  # not started
    async with bot_process(sim, tmp_path, TTT_HEARTBEAT_FILE=str(heartbeat)) as bot:
        for _ in range(200):  # the file is no sim event: poll it, for up to 10 s
            if heartbeat.exists():
                break
            await asyncio.sleep(0.05)
        connected = healthcheck(heartbeat)
        assert connected.returncode == 0, connected.stdout
        assert connected.stdout.startswith("tttbot: connected")
        bot.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(bot.process.wait(), 20) == 0
    stopped = healthcheck(heartbeat)
    assert stopped.returncode == 1
    assert stopped.stdout == (
        "tttbot: not connected: no heartbeat (starting, stopped, or not connected yet)\n"
    )


async def test_sigterm_while_the_gateway_reconnects_still_exits(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """discord.py's shard swallows the cancellation while it identifies again (and it waits
    5 s before that): the shutdown must not wait for it forever."""
    async with bot_process(sim, tmp_path) as bot:
        await sim.close_gateway(resumable=False, wait=False)
        await asyncio.sleep(0.5)  # inside the 5 s wait before the new IDENTIFY
        bot.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(bot.process.wait(), 20) == 0, bot.log
    assert "Traceback" not in bot.log
