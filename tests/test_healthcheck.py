"""``python -m bot.healthcheck`` reads the heartbeat file's age, or asks the bot's ``/readyz``
when ``TTT_HTTP_PORT`` is set (the answers of a live bot: tests/test_bot_health.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.healthcheck import STALE_AFTER, check, health, readyz_url
from tests.postgres_cluster import free_port

REPO = Path(__file__).resolve().parent.parent


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


def test_a_heartbeat_dated_ahead_of_the_clock_is_not_healthy(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    beat.touch()
    os.utime(beat, (5000.0, 5000.0))
    assert check(str(beat), 5000.0 - 3600) == (
        False,
        "not connected: the heartbeat is dated 3600 s ahead of the clock",
    )
    # A second ahead is the file system rounding up, not a wrong clock.
    assert check(str(beat), 5000.0 - 1) == (True, "connected: heartbeat 0 s ago")


def test_a_path_that_is_no_file_is_not_healthy(tmp_path: Path) -> None:
    regular = tmp_path / "regular"
    regular.touch()
    assert check(str(tmp_path), 0.0) == (
        False,
        "TTT_HEARTBEAT_FILE names something other than a file (a directory?)",
    )
    assert check(str(regular / "beat"), 0.0) == (
        False,
        "TTT_HEARTBEAT_FILE cannot be a file: not a directory",
    )
    assert check("/" + "x" * 5000, 0.0) == (
        False,
        "TTT_HEARTBEAT_FILE cannot be a file: file name too long",
    )


@pytest.mark.parametrize(
    "path", ["directory", "under-a-file", "too-long", "ahead"], ids=lambda path: path
)
def test_the_command_says_one_line_and_exits_1(tmp_path: Path, path: str) -> None:
    regular = tmp_path / "regular"
    regular.touch()
    ahead = tmp_path / "ahead"
    ahead.touch()
    os.utime(ahead, (2e9, 2e9))
    paths = {
        "directory": str(tmp_path),
        "under-a-file": str(regular / "beat"),
        "too-long": "/" + "x" * 5000,
        "ahead": str(ahead),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot.healthcheck"],
        env={**os.environ, "TTT_HEARTBEAT_FILE": paths[path]},
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == ""
    assert len(done.stdout.splitlines()) == 1
    assert done.stdout.startswith("tttbot: ")


# -- with TTT_HTTP_PORT: the bot's /readyz ----------------------------------------------------


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:9100/readyz"),
        ("0.0.0.0", "http://127.0.0.1:9100/readyz"),  # listening everywhere: asked on loopback
        ("::", "http://[::1]:9100/readyz"),
        ("::1", "http://[::1]:9100/readyz"),
        ("bot.internal", "http://bot.internal:9100/readyz"),
    ],
)
def test_readyz_is_asked_where_the_bot_listens(host: str, url: str) -> None:
    assert readyz_url(host, 9100) == url


def test_a_port_nobody_answers_on_is_not_ready_in_one_line(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    beat = tmp_path / "beat"
    beat.touch()  # a fresh heartbeat does not count once the port is set
    healthy, line = health(
        {"TTT_HTTP_PORT": str(port), "TTT_HEARTBEAT_FILE": str(beat)}, now=beat.stat().st_mtime
    )
    assert not healthy
    assert line.startswith(f"not ready: http://127.0.0.1:{port}/readyz did not answer: ")
    assert "\n" not in line


def test_a_malformed_port_is_the_settings_line() -> None:
    assert health({"TTT_HTTP_PORT": "http"}, now=0.0) == (
        False,
        "TTT_HTTP_PORT must be a port number from 1 to 65535, not 'http'",
    )
