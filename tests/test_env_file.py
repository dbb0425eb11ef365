""".env.example as an operator uses it: copied to .env and given to ``docker run --env-file``
(or compose's ``env_file``) on top of the image's own environment, where a ``KEY=`` left empty
replaces what the Dockerfile set. The bot started in that environment must be healthy."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import Settings
from tests.bot_processes import bot_env, bot_process
from tests.discord_sim import DiscordSim

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / ".env.example"
# A setting as the example names it: set (``KEY=value``) or left out (``# KEY=value``).
_NAMED = re.compile(r"^#? ?([A-Z][A-Z0-9_]*)=")
# The image's own folders, as its settings name them.
_IMAGE_FOLDER = re.compile(r"/(data|tmp)/")


def env_file(path: Path) -> dict[str, str]:
    """The variables ``docker run --env-file`` reads from ``path``: ``KEY=VALUE`` lines, the
    value as written (an empty one included); blank lines and ``#`` comments skipped."""
    variables = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, _, value = stripped.partition("=")
        variables[key] = value
    return variables


def image_env() -> dict[str, str]:
    """What the Dockerfile's last stage sets with ``ENV`` (continued lines joined)."""
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    last_stage = dockerfile[dockerfile.rindex("\nFROM ") :]
    joined = last_stage.replace("\\\n", " ")
    variables = {}
    for line in joined.splitlines():
        if line.startswith("ENV "):
            for pair in line.removeprefix("ENV ").split():
                key, _, value = pair.partition("=")
                variables[key] = value
    return variables


def healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.healthcheck"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def named_settings() -> set[str]:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    return {match[1] for line in lines if (match := _NAMED.match(line))}


def test_the_example_leaves_what_the_image_sets_alone() -> None:
    image = image_env()
    assert {"DATABASE_URL", "TTT_HEARTBEAT_FILE"} <= set(image)
    overridden = {key: value for key, value in env_file(EXAMPLE).items() if key in image}
    assert overridden == {}, "the example would replace the image's own settings"


def test_the_example_names_every_setting_and_an_empty_one_means_its_default() -> None:
    named = named_settings()
    assert {
        "DISCORD_TOKEN",
        "DATABASE_URL",
        "DATABASE_POOL_SIZE",
        "TTT_GUILD_ID",
        "TTT_TURN_TIMEOUT",
        "TTT_CHALLENGE_TIMEOUT",
        "LOG_LEVEL",
        "DISCORD_LOG_LEVEL",
        "LOG_FORMAT",
        "DISCORD_API_BASE_URL",
        "DISCORD_GATEWAY_URL",
        "SHARD_COUNT",
        "SHARD_IDS",
        "TTT_HEARTBEAT_FILE",
        "TTT_HTTP_PORT",
        "TTT_HTTP_HOST",
        "TTT_HTTP_IDLE_TIMEOUT",
        "POSTGRES_PASSWORD",
    } <= named
    token = {"DISCORD_TOKEN": "a-token"}
    for empty in ("", "  "):
        blank = dict.fromkeys(named - {"DISCORD_TOKEN"}, empty)
        assert Settings.from_env({**blank, **token}) == Settings.from_env(token)


@pytest.mark.slow  # a real python -m bot process
async def test_the_image_with_the_example_file_is_healthy(sim: DiscordSim, tmp_path: Path) -> None:
    """The image's environment with the example's on top, and what an operator fills in (the
    token; here also the local Discord server's address). The image's absolute paths (/data,
    /tmp) are moved into this test's folder, so that tests running at once never share them."""
    operator = {
        "DISCORD_TOKEN": sim.token,
        "DISCORD_API_BASE_URL": sim.api_base_url,
        "DISCORD_GATEWAY_URL": sim.gateway_url,
    }
    environment = {**image_env(), **env_file(EXAMPLE), **operator}
    del environment["PATH"]  # the image's virtual environment; this test runs in its own
    for key, value in environment.items():
        environment[key] = _IMAGE_FOLDER.sub(lambda found: f"{tmp_path}{found[0]}", value, count=1)
    (tmp_path / "data").mkdir()
    (tmp_path / "tmp").mkdir()
    heartbeat = Path(environment["TTT_HEARTBEAT_FILE"])
    async with bot_process(sim, tmp_path, **environment):
        for _ in range(200):  # the file is no sim event: poll it, for up to 10 s
            if await asyncio.to_thread(heartbeat.exists):
                break
            await asyncio.sleep(0.05)
        check = await asyncio.to_thread(healthcheck, bot_env(sim, tmp_path, **environment))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("tttbot: connected")
    assert (tmp_path / "data" / "tttbot.sqlite3").exists()
