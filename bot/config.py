"""Settings from the environment (and a ``.env`` file), each checked with a one-line error.

Every setting is documented in ``.env.example``; the token is never logged or printed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_SQLITE_FILE = "tttbot.sqlite3"
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


class ConfigError(Exception):
    """A setting is missing or malformed; the message is one line naming it."""


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """Where the database is: a SQLite file (or ``:memory:``)."""

    path: str

    def describe(self) -> str:
        """A form fit for logs and error messages."""
        return f"sqlite file {self.path}"


def parse_database_url(value: str | None) -> DatabaseUrl:
    """Read ``DATABASE_URL``: empty means a SQLite file in the working directory.

    >>> parse_database_url(None).path
    'tttbot.sqlite3'
    >>> parse_database_url("sqlite:///data/games.db").path
    'data/games.db'
    >>> parse_database_url("sqlite:////var/lib/tttbot.db").path
    '/var/lib/tttbot.db'
    """
    if value is None or not value.strip():
        return DatabaseUrl(DEFAULT_SQLITE_FILE)
    text = value.strip()
    scheme, sep, rest = text.partition("://")
    if not sep or not scheme:
        raise ConfigError(
            "DATABASE_URL is not a URL: use sqlite:///path/to/file.sqlite3 (or leave it unset)"
        )
    scheme = scheme.lower()
    if scheme == "sqlite":
        # sqlite:///relative/path and sqlite:////absolute/path, as SQLAlchemy spells them.
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(
                "DATABASE_URL has no file path: use sqlite:///relative/path or "
                "sqlite:////absolute/path"
            )
        return DatabaseUrl(rest[1:])
    if scheme in ("postgres", "postgresql"):
        raise ConfigError(
            "DATABASE_URL asks for PostgreSQL, which is not supported yet: "
            "use sqlite:///path/to/file.sqlite3 or leave DATABASE_URL unset"
        )
    raise ConfigError(
        f"DATABASE_URL has an unknown scheme {scheme!r}: use sqlite:///path/to/file.sqlite3"
    )


# Plain ASCII digits: float() and int() also read fullwidth and other Unicode digits, which no
# one types on purpose into a configuration file.
_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")
MIN_TIMEOUT = 10.0
MAX_TIMEOUT = 7 * 24 * 3600.0


def _timeout(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not _SECONDS.fullmatch(raw):
        raise ConfigError(f"{name} must be a number of seconds, like 300, not {raw!r}")
    seconds = float(raw)
    if not MIN_TIMEOUT <= seconds <= MAX_TIMEOUT:
        raise ConfigError(
            f"{name} must be between {MIN_TIMEOUT:.0f} seconds and 7 days "
            f"({MAX_TIMEOUT:.0f}), not {raw}"
        )
    return seconds


def _log_level(env: Mapping[str, str], name: str) -> int:
    level_name = env.get(name, "").strip().upper() or "INFO"
    if level_name not in LOG_LEVELS:
        raise ConfigError(f"{name} must be one of {', '.join(LOG_LEVELS)}, not {level_name!r}")
    return logging.getLevelNamesMapping()[level_name]


def _heartbeat_file(env: Mapping[str, str]) -> str | None:
    raw = env.get("TTT_HEARTBEAT_FILE", "").strip()
    if not raw:
        return None
    if not Path(raw).parent.is_dir():
        raise ConfigError(f"TTT_HEARTBEAT_FILE: the folder of {raw} does not exist")
    return raw


def _url(env: Mapping[str, str], name: str, schemes: tuple[str, ...]) -> str | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in schemes or not parts.netloc:
        example = f"{schemes[0]}://127.0.0.1:8080/"
        raise ConfigError(
            f"{name} must be a {' or '.join(schemes)} URL like {example}, not {raw!r}"
        )
    return raw


@dataclass(frozen=True, slots=True)
class Settings:
    token: str = field(repr=False)
    database: DatabaseUrl
    api_base_url: str | None = None
    gateway_url: str | None = None
    guild_id: int | None = None
    turn_timeout: float = 300.0
    challenge_timeout: float = 120.0
    log_level: int = logging.INFO
    discord_log_level: int = logging.INFO
    heartbeat_file: str | None = None  # written while connected, for health checks

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Check every setting; the first problem raises :class:`ConfigError`."""
        token = env.get("DISCORD_TOKEN", "").strip()
        if not token:
            raise ConfigError(
                "DISCORD_TOKEN is not set: put the bot's token in the environment or in .env "
                "(see .env.example)"
            )
        if not token.isascii() or not token.isprintable() or " " in token:
            # It travels in an HTTP header, where a newline or a space would break the request.
            raise ConfigError(
                "DISCORD_TOKEN contains spaces, line breaks or other characters no token has: "
                "copy it again from the developer portal"
            )
        guild_raw = env.get("TTT_GUILD_ID", "").strip()
        guild_id = None
        if guild_raw:
            if not (guild_raw.isascii() and guild_raw.isdigit()) or not 0 < int(guild_raw) < 2**64:
                raise ConfigError(f"TTT_GUILD_ID must be a server id (digits), not {guild_raw!r}")
            guild_id = int(guild_raw)
        return cls(
            token=token,
            database=parse_database_url(env.get("DATABASE_URL")),
            api_base_url=_url(env, "DISCORD_API_BASE_URL", ("http", "https")),
            gateway_url=_url(env, "DISCORD_GATEWAY_URL", ("ws", "wss")),
            guild_id=guild_id,
            turn_timeout=_timeout(env, "TTT_TURN_TIMEOUT", 300.0),
            challenge_timeout=_timeout(env, "TTT_CHALLENGE_TIMEOUT", 120.0),
            log_level=_log_level(env, "LOG_LEVEL"),
            discord_log_level=_log_level(env, "DISCORD_LOG_LEVEL"),
            heartbeat_file=_heartbeat_file(env),
        )
