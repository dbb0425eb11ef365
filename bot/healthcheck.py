"""``python -m bot.healthcheck``: exit 0 if the bot running beside it is connected to Discord.

The bot touches ``TTT_HEARTBEAT_FILE`` every 15 s while its gateway connection is up and
removes it when it stops; this reads the file's age. Docker's ``HEALTHCHECK`` runs it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bot.clock import SystemClock

# Four missed beats: a reconnect or a busy moment is not yet "unhealthy".
STALE_AFTER = 60.0


def check(path: str | None, now: float) -> tuple[bool, str]:
    """Whether the bot is connected, and a line saying why."""
    if not path:
        return False, "TTT_HEARTBEAT_FILE is not set: the bot writes no heartbeat"
    try:
        age = now - Path(path).stat().st_mtime
    except FileNotFoundError:
        return False, "not connected: no heartbeat (starting, stopped, or not connected yet)"
    if age > STALE_AFTER:
        return False, f"not connected: the last heartbeat is {age:.0f} s old"
    return True, f"connected: heartbeat {age:.0f} s ago"


def main() -> int:
    healthy, line = check(os.environ.get("TTT_HEARTBEAT_FILE"), SystemClock().now())
    print(f"tttbot: {line}")
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
