"""``python -m bot.healthcheck`` reads the heartbeat file's age."""

from __future__ import annotations

import os
from pathlib import Path

from bot.healthcheck import STALE_AFTER, check


def test_a_fresh_heartbeat_is_healthy(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    beat.touch()
    os.utime(beat, (1000.0, 1000.0))
    assert check(str(beat), 1000.0 + STALE_AFTER) == (True, "connected: heartbeat 60 s ago")


def test_a_stale_heartbeat_is_not(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    beat.touch()
    os.utime(beat, (1000.0, 1000.0))
    assert check(str(beat), 1000.0 + STALE_AFTER + 1) == (
        False,
        "not connected: the last heartbeat is 61 s old",
    )


def test_no_file_or_no_setting_is_not_healthy(tmp_path: Path) -> None:
    assert check(str(tmp_path / "missing"), 0.0)[0] is False
    assert check(None, 0.0) == (
        False,
        "TTT_HEARTBEAT_FILE is not set: the bot writes no heartbeat",
    )
