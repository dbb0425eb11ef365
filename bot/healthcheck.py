"""``python -m bot.healthcheck``: exit 0 if the bot running beside it is connected to Discord.

The bot touches ``TTT_HEARTBEAT_FILE`` every 15 s while its gateway connection is up and
removes it when it stops; this reads the file's age. Docker's ``HEALTHCHECK`` runs it. Anything
else (no setting, no file, a stale or future-dated one, a path that cannot be a file) is one
line and exit 1: Docker takes any other code as unhealthy too, and 2 is reserved.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from bot.clock import SystemClock

# Four missed beats: a reconnect or a busy moment is not yet "unhealthy".
STALE_AFTER = 60.0
# A heartbeat this far ahead of the clock is not a heartbeat of now (a wrong clock, a file
# touched by hand); a little ahead is the file system's timestamps rounding up.
AHEAD_AT_MOST = 2.0


def check(path: str | None, now: float) -> tuple[bool, str]:
    """Whether the bot is connected, and a line saying why."""
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


def main() -> int:
    healthy, line = check(os.environ.get("TTT_HEARTBEAT_FILE"), SystemClock().now())
    print(f"tttbot: {line}")
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
