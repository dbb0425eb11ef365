"""Settings: every one read from the environment, every mistake a one-line message."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from bot.clock import SystemClock
from bot.config import ConfigError, Settings, parse_database_url
from bot.storage.connect import open_storage
from bot.storage.migrations import migration_files
from bot.storage.sqlite import SqliteStorage

TOKEN = "test-token-do-not-log"
# Digits int() and float() read, but that nobody types into a configuration file on purpose.
FULLWIDTH_300 = "\uff13\uff10\uff10"
FULLWIDTH_123 = "\uff11\uff12\uff13"


def settings(**env: str) -> Settings:
    return Settings.from_env({"DISCORD_TOKEN": TOKEN, **env})


def test_defaults() -> None:
    loaded = settings()
    assert loaded.token == TOKEN
    assert loaded.database.path == "tttbot.sqlite3"
    assert loaded.api_base_url is None
    assert loaded.gateway_url is None
    assert loaded.guild_id is None
    assert loaded.turn_timeout == 300
    assert loaded.challenge_timeout == 120
    assert loaded.log_level == logging.INFO
    assert loaded.discord_log_level == logging.INFO
    assert loaded.http_idle_timeout == 5


def test_every_setting_is_read() -> None:
    loaded = settings(
        DATABASE_URL="sqlite:///data/games.sqlite3",
        DISCORD_API_BASE_URL="http://127.0.0.1:8080/api/v10",
        DISCORD_GATEWAY_URL="ws://127.0.0.1:8080/",
        TTT_GUILD_ID="123456789012345678",
        TTT_TURN_TIMEOUT="60",
        TTT_CHALLENGE_TIMEOUT="30.5",
        LOG_LEVEL="debug",
        DISCORD_LOG_LEVEL="warning",
        TTT_HTTP_IDLE_TIMEOUT="620",
    )
    assert loaded.database.path == "data/games.sqlite3"
    assert loaded.api_base_url == "http://127.0.0.1:8080/api/v10"
    assert loaded.gateway_url == "ws://127.0.0.1:8080/"
    assert loaded.guild_id == 123456789012345678
    assert loaded.turn_timeout == 60
    assert loaded.challenge_timeout == 30.5
    assert loaded.log_level == logging.DEBUG
    assert loaded.discord_log_level == logging.WARNING
    assert loaded.http_idle_timeout == 620


def test_the_token_never_shows_in_a_repr() -> None:
    assert TOKEN not in repr(settings())


@pytest.mark.parametrize("token", ["", "   "])
def test_a_missing_token_is_named(token: str) -> None:
    with pytest.raises(ConfigError, match="DISCORD_TOKEN is not set"):
        Settings.from_env({"DISCORD_TOKEN": token})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TTT_TURN_TIMEOUT": "soon"}, "TTT_TURN_TIMEOUT must be a number of seconds"),
        ({"TTT_CHALLENGE_TIMEOUT": "-5"}, "TTT_CHALLENGE_TIMEOUT must be a number of seconds"),
        ({"TTT_TURN_TIMEOUT": "1e-9"}, "TTT_TURN_TIMEOUT must be a number of seconds"),
        ({"TTT_TURN_TIMEOUT": FULLWIDTH_300}, "TTT_TURN_TIMEOUT must be a number of seconds"),
        ({"TTT_TURN_TIMEOUT": "9.5"}, "TTT_TURN_TIMEOUT must be between 10 seconds and 7 days"),
        ({"TTT_CHALLENGE_TIMEOUT": "604801"}, "TTT_CHALLENGE_TIMEOUT must be between 10"),
        ({"TTT_GUILD_ID": "my-server"}, "TTT_GUILD_ID must be a server id"),
        ({"TTT_GUILD_ID": FULLWIDTH_123}, "TTT_GUILD_ID must be a server id"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL must be one of"),
        ({"DISCORD_LOG_LEVEL": "CHATTY"}, "DISCORD_LOG_LEVEL must be one of"),
        ({"DISCORD_TOKEN": "abc\ndef"}, "DISCORD_TOKEN contains spaces, line breaks"),
        ({"DISCORD_TOKEN": "abc def"}, "DISCORD_TOKEN contains spaces, line breaks"),
        ({"DISCORD_API_BASE_URL": "127.0.0.1:8080"}, "DISCORD_API_BASE_URL must be a http"),
        ({"DISCORD_GATEWAY_URL": "http://127.0.0.1/"}, "DISCORD_GATEWAY_URL must be a ws"),
        ({"TTT_HTTP_IDLE_TIMEOUT": "forever"}, "TTT_HTTP_IDLE_TIMEOUT must be a number of sec"),
        ({"TTT_HTTP_IDLE_TIMEOUT": "0.5"}, "TTT_HTTP_IDLE_TIMEOUT must be between 1 and 3600 sec"),
        ({"TTT_HTTP_IDLE_TIMEOUT": "3601"}, "TTT_HTTP_IDLE_TIMEOUT must be between 1 and 3600 sec"),
    ],
)
def test_malformed_settings_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        settings(**env)
    assert "\n" not in str(caught.value)


def test_timeouts_of_10_seconds_and_of_7_days_are_accepted() -> None:
    """Issue 8's range is inclusive at both ends; just outside it is refused (above)."""
    for name in ("TTT_TURN_TIMEOUT", "TTT_CHALLENGE_TIMEOUT"):
        shortest, longest = settings(**{name: "10"}), settings(**{name: "604800"})
        field = name.removeprefix("TTT_").lower()
        assert (getattr(shortest, field), getattr(longest, field)) == (10.0, 604800.0)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://user:secret@/ttt", "names no PostgreSQL host"),
        ("postgresql://user:secret@db", "names no PostgreSQL database"),
        ("postgresql://user:secret@db/", "names no PostgreSQL database"),
        ("postgres://user:secret@db:port/ttt", "port that is not a number from 1 to 65535"),
        ("postgres://user:secret@db:70000/ttt", "port that is not a number from 1 to 65535"),
        ("postgres://user:secret@db:0/ttt", "port that is not a number from 1 to 65535"),
        ("mysql://db/ttt", "unknown scheme 'mysql'"),
        ("tttbot.sqlite3", "is not a URL"),
        ("sqlite://", "has no file path"),
        ("sqlite:///", "has no file path"),
    ],
)
def test_database_urls_that_cannot_work_are_refused(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_database_url(url)
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "PostgreSQL"])
def test_postgres_urls_are_read(scheme: str) -> None:
    url = parse_database_url(f"{scheme}://ttt:s%40cret@db.example:6543/games?sslmode=require")
    assert (url.scheme, url.host, url.port, url.database, url.user) == (
        "postgresql",
        "db.example",
        6543,
        "games",
        "ttt",
    )
    # The driver gets the whole URL (its options too), under the one scheme it knows best.
    assert url.url == "postgresql://ttt:s%40cret@db.example:6543/games?sslmode=require"
    assert url.describe() == "postgresql database games on db.example:6543"
    assert "cret" not in repr(url)
    assert "cret" not in repr(settings(DATABASE_URL=url.url))
    assert parse_database_url("postgres://db/ttt").port == 5432
    assert parse_database_url("postgres://[::1]/ttt").describe() == (
        "postgresql database ttt on [::1]:5432"
    )


def test_the_pool_size_is_read_and_checked() -> None:
    assert settings().database.pool_size == 10
    assert settings(DATABASE_POOL_SIZE="1").database.pool_size == 1
    pg = settings(DATABASE_URL="postgresql://u:pw@db/ttt", DATABASE_POOL_SIZE=" 100 ")
    assert (pg.database.scheme, pg.database.pool_size) == ("postgresql", 100)
    for bad in ("0", "101", "-1", "ten", "2.5", FULLWIDTH_123, "1e2"):
        with pytest.raises(ConfigError) as caught:
            settings(DATABASE_POOL_SIZE=bad)
        assert str(caught.value) == (
            f"DATABASE_POOL_SIZE must be a whole number from 1 to 100, not {bad!r}"
        )


@pytest.mark.slow  # a real python -m bot process
def test_keeping_finished_games_is_off_unless_set_then_read_and_checked(tmp_path: Path) -> None:
    assert settings().keep_finished_games_days is None
    assert settings(TTT_KEEP_FINISHED_GAMES_DAYS="").keep_finished_games_days is None
    assert settings(TTT_KEEP_FINISHED_GAMES_DAYS=" 90 ").keep_finished_games_days == 90
    assert settings(TTT_KEEP_FINISHED_GAMES_DAYS="36500").keep_finished_games_days == 36_500
    for bad in ("0", "-1", "30d", "1.5", "36501", FULLWIDTH_123):
        with pytest.raises(ConfigError) as caught:
            settings(TTT_KEEP_FINISHED_GAMES_DAYS=bad)
        assert str(caught.value) == (
            "TTT_KEEP_FINISHED_GAMES_DAYS must be a whole number of days from 1 to 36500, "
            f"not {bad!r}"
        )
    # The bot stops with that one line, before it opens (or creates) the database.
    result = run_bot({"DISCORD_TOKEN": TOKEN, "TTT_KEEP_FINISHED_GAMES_DAYS": "0"}, tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "tttbot: TTT_KEEP_FINISHED_GAMES_DAYS must be a whole number of days from 1 to 36500, "
        "not '0'"
    ]
    assert not (tmp_path / "tttbot.sqlite3").exists()


def test_shards_are_read() -> None:
    assert (settings().shard_count, settings().shard_ids) == (None, None)
    assert (settings(SHARD_COUNT="4").shard_count, settings(SHARD_COUNT="4").shard_ids) == (
        4,
        None,
    )
    assert settings(SHARD_COUNT="2", SHARD_IDS="1").shard_ids == (1,)
    assert settings(SHARD_COUNT="16", SHARD_IDS="0, 1").shard_ids == (0, 1)
    assert settings(SHARD_COUNT="16", SHARD_IDS="4-7,12").shard_ids == (4, 5, 6, 7, 12)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SHARD_COUNT": "0"}, "SHARD_COUNT must be a whole number of shards from 1 to 100000"),
        ({"SHARD_COUNT": "two"}, "SHARD_COUNT must be a whole number of shards"),
        ({"SHARD_COUNT": FULLWIDTH_123}, "SHARD_COUNT must be a whole number of shards"),
        ({"SHARD_IDS": "0"}, "SHARD_IDS needs SHARD_COUNT"),
        ({"SHARD_COUNT": "2", "SHARD_IDS": "2"}, "SHARD_IDS names shard 2, but SHARD_COUNT 2"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "0-9999999"}, "SHARD_IDS names shard 9999999"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "0,0"}, "SHARD_IDS names a shard twice"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "0-2,1"}, "SHARD_IDS names a shard twice"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "3-1"}, "SHARD_IDS has a range that runs backwards"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "0;1"}, "SHARD_IDS must be shard numbers like 0,1"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "-1"}, "SHARD_IDS must be shard numbers like 0,1"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "1,"}, "SHARD_IDS must be shard numbers like 0,1"),
    ],
)
def test_shard_mistakes_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        settings(**env)
    assert "\n" not in str(caught.value)


def test_sqlite_urls_follow_the_usual_slashes() -> None:
    assert parse_database_url("sqlite:///games.db").path == "games.db"
    assert parse_database_url("sqlite:////srv/ttt/games.db").path == "/srv/ttt/games.db"
    assert parse_database_url("  ").path == "tttbot.sqlite3"


def run_bot(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DISCORD_", "TTT_", "DATABASE_URL", "LOG_LEVEL"))
    }
    root = Path(__file__).resolve().parent.parent
    clean["PYTHONPATH"] = str(root)
    return subprocess.run(
        [sys.executable, "-m", "bot"],
        env={**clean, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.slow  # a real python -m bot process
def test_python_m_bot_without_a_token_exits_with_one_line(tmp_path: Path) -> None:
    result = run_bot({}, tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "tttbot: DISCORD_TOKEN is not set: put the bot's token in the environment or in .env "
        "(see .env.example)"
    ]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "tttbot.sqlite3").exists()  # nothing was created


@pytest.mark.slow  # a real python -m bot process
def test_python_m_bot_reads_dot_env_and_reports_a_broken_database_url(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        f"DISCORD_TOKEN={TOKEN}\nDATABASE_URL=postgresql://u:pw@h:x/db\n"
    )
    result = run_bot({}, tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "tttbot: DATABASE_URL has a port that is not a number from 1 to 65535: use "
        "postgresql://user:password@host:port/database"
    ]
    assert TOKEN not in result.stderr + result.stdout
    assert "pw" not in result.stderr


async def test_a_database_in_a_missing_folder_is_one_clear_error(tmp_path: Path) -> None:
    url = parse_database_url(f"sqlite:///{tmp_path / 'nowhere' / 'ttt.sqlite3'}")
    with pytest.raises(ConfigError, match=r"the folder of .* does not exist"):
        await open_storage(url, SystemClock())


async def test_a_sqlite_library_too_old_for_the_statements_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's sqlite3 uses the system's library, which may predate UPDATE ... RETURNING
    (3.35): the bot says so at start, not at the first move, and creates no file."""
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 31, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.31.1")
    path = tmp_path / "ttt.sqlite3"
    with pytest.raises(ConfigError) as caught:
        await open_storage(parse_database_url(f"sqlite:///{path}"), SystemClock())
    assert str(caught.value) == (
        "DATABASE_URL: this Python's SQLite library is 3.31.1; tttbot needs 3.35.0 or newer"
        " (or PostgreSQL)"
    )
    assert not path.exists()


async def test_a_file_that_is_not_a_database_is_one_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("this is not a database\n" * 100)
    with pytest.raises(ConfigError, match=r"cannot open sqlite file .*notes\.txt") as caught:
        await open_storage(parse_database_url(f"sqlite:///{junk}"), SystemClock())
    assert "\n" not in str(caught.value)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {file.name: file.read_bytes() for file in folder.iterdir()}


async def test_a_database_from_a_newer_bot_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "newer.sqlite3"
    storage = await SqliteStorage.open(str(path), SystemClock())
    await storage.set_setting("kept", "yes")
    await storage.close()
    newest = max(version for version, _ in migration_files("sqlite"))
    with closing(sqlite3.connect(path)) as db, db:  # what a later version's migration leaves
        db.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)", (newest + 1,)
        )
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError) as caught:
        await open_storage(parse_database_url(f"sqlite:///{path}"), SystemClock())
    assert str(caught.value) == (
        f"DATABASE_URL: refusing sqlite file {path}: its schema is version {newest + 1}, newer "
        f"than this bot's {newest}: a newer tttbot wrote it; run that version (the database "
        "was left unchanged)"
    )
    assert snapshot(tmp_path) == before


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` made read-only for this process, root included (root ignores mode bits, so it
    is also made immutable with ``chattr +i``)."""
    path.chmod(0o444)
    immutable = os.geteuid() == 0
    if immutable:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o644)


async def test_a_read_only_database_is_one_clear_error_at_start(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite3"
    storage = await SqliteStorage.open(str(path), SystemClock())
    await storage.close()
    with read_only(path), pytest.raises(ConfigError) as caught:
        await open_storage(parse_database_url(f"sqlite:///{path}"), SystemClock())
    assert str(caught.value) == (
        f"DATABASE_URL: cannot open sqlite file {path}: attempt to write a readonly database"
    )
