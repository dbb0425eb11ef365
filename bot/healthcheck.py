"""``python -m bot.healthcheck``: exit 0 if the bot running beside it is ready.

With ``TTT_HTTP_PORT`` set, it asks the bot's ``/readyz`` (every shard connected, the database
answering: :mod:`bot.health`). Without it, it reads the age of ``TTT_HEARTBEAT_FILE``, which
the bot touches every 15 s while its gateway connection is up and removes when it stops.
Docker's ``HEALTHCHECK`` runs it. Anything else (no setting, no file, a stale or future-dated
one, a path that cannot be a file, a port that does not answer 200) is one line and exit 1:
Docker takes any other code as unhealthy too, and 2 is reserved.
"""

from __future__ import annotations

import os
import stat
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from dotenv import load_dotenv

from bot.clock import SystemClock
from bot.config import ConfigError, Settings, http_url

# Four missed beats: a reconnect or a busy moment is not yet "unhealthy".
STALE_AFTER = 60.0
# A heartbeat this far ahead of the clock is not a heartbeat of now (a wrong clock, a file
# touched by hand); a little ahead is the file system's timestamps rounding up.
AHEAD_AT_MOST = 2.0
# /readyz waits at most 1 s for the database; Docker's HEALTHCHECK gives the command 5 s.
READYZ_PATIENCE = 3.0
# A bot listening on every address is asked on the loopback one.
_ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def check(path: str | None, now: float) -> tuple[bool, str]:
    """Whether the bot is connected, by its heartbeat file, and a line saying why."""
    if not path:
        return False, "TTT_HEARTBEAT_FILE is not set: the bot writes no heartbeat"
    try:
        found = Path(path).stat()
    except FileNotFoundError:
        return False, "not connected: no heartbeat (starting, stopped, or not connected yet)"
    except OSError as error:  # a path under a regular file, one too long, no permission...
        reason = error.strerror or type(error).__name__
        return False, f"TTT_HEARTBEAT_FILE cannot be a file: {reason.lower()}"
    if not stat.S_ISREG(found.st_mode):
        return False, "TTT_HEARTBEAT_FILE names something other than a file (a directory?)"
    age = now - found.st_mtime
    if age < -AHEAD_AT_MOST:
        return False, f"not connected: the heartbeat is dated {-age:.0f} s ahead of the clock"
    if age > STALE_AFTER:
        return False, f"not connected: the last heartbeat is {age:.0f} s old"
    return True, f"connected: heartbeat {max(age, 0.0):.0f} s ago"


def readyz_url(host: str, port: int) -> str:
    return http_url(_ANY_ADDRESS.get(host, host), port, "/readyz")


def ask_ready(url: str) -> tuple[bool, str]:
    """Whether the bot's ``/readyz`` at ``url`` says ready, and a line saying why."""
    try:
        with urllib.request.urlopen(url, timeout=READYZ_PATIENCE) as response:
            return True, response.read().decode(errors="replace").strip()
    except urllib.error.HTTPError as error:  # 503: the bot said why
        return False, error.read().decode(errors="replace").strip() or f"HTTP {error.code}"
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return False, f"not ready: {url} did not answer: {reason}"


def health(env: Mapping[str, str], now: float) -> tuple[bool, str]:
    try:
        settings = Settings.from_env({**env, "DISCORD_TOKEN": "unused"})
    except ConfigError as error:
        return False, str(error)
    if settings.http_port is not None:
        return ask_ready(readyz_url(settings.http_host, settings.http_port))
    return check(settings.heartbeat_file, now)


def main() -> int:
    load_dotenv(Path.cwd() / ".env")  # as python -m bot reads its settings
    healthy, line = health(os.environ, SystemClock().now())
    print(f"tttbot: {line}")
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
