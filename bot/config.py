"""Settings from the environment (and a ``.env`` file), each checked with a one-line error.

Every setting is documented in ``.env.example``; the token is never logged or printed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

DEFAULT_SQLITE_FILE = "tttbot.sqlite3"
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


class ConfigError(Exception):
    """A setting is missing or malformed; the message is one line naming it."""


# The health and metrics port listens on the loopback interface unless told otherwise: it
# says how busy the bot is, which is nobody else's business.
DEFAULT_HTTP_HOST = "127.0.0.1"

SQLITE = "sqlite"
POSTGRESQL = "postgresql"
DEFAULT_POSTGRES_PORT = 5432
DEFAULT_POOL_SIZE = 10
MAX_POOL_SIZE = 100


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """Where the database is: a SQLite file (or ``:memory:``), or a PostgreSQL database.

    ``DatabaseUrl(path)`` is a SQLite file. For PostgreSQL, ``url`` is the whole URL as given
    (the driver reads it, query options included); it holds the password, so it stays out of
    ``repr`` and only :meth:`describe` goes into logs and messages.
    """

    path: str = ""
    scheme: str = SQLITE
    url: str = field(default="", repr=False)
    host: str = ""
    port: int = DEFAULT_POSTGRES_PORT
    database: str = ""
    user: str = ""
    pool_size: int = DEFAULT_POOL_SIZE  # PostgreSQL's connections per process

    def describe(self) -> str:
        """A form fit for logs and error messages: never the password."""
        if self.scheme == POSTGRESQL:
            host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
            return f"postgresql database {self.database} on {host}:{self.port}"
        return f"sqlite file {self.path}"


def parse_database_url(value: str | None) -> DatabaseUrl:
    """Read ``DATABASE_URL``: empty means a SQLite file in the working directory.

    >>> parse_database_url(None).path
    'tttbot.sqlite3'
    >>> parse_database_url("sqlite:///data/games.db").path
    'data/games.db'
    >>> parse_database_url("sqlite:////var/lib/tttbot.db").path
    '/var/lib/tttbot.db'
    >>> parse_database_url("postgresql://ttt:secret@db.internal:5433/tttbot").describe()
    'postgresql database tttbot on db.internal:5433'
    """
    if value is None or not value.strip():
        return DatabaseUrl(DEFAULT_SQLITE_FILE)
    text = value.strip()
    scheme, sep, rest = text.partition("://")
    if not sep or not scheme:
        raise ConfigError(
            "DATABASE_URL is not a URL: use sqlite:///path/to/file.sqlite3, "
            "postgresql://user:password@host:port/database (or leave it unset)"
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
        return _postgres_url(text)
    raise ConfigError(
        f"DATABASE_URL has an unknown scheme {scheme!r}: use sqlite:///path/to/file.sqlite3 or "
        "postgresql://user:password@host:port/database"
    )


_POSTGRES_EXAMPLE = "postgresql://user:password@host:port/database"


def _postgres_url(text: str) -> DatabaseUrl:
    # Messages quote the host and database at most: the password must never be echoed.
    parts = urlsplit(text)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # urlsplit's own check: a port that is not a number from 0 to 65535
        raise ConfigError(
            f"DATABASE_URL has a port that is not a number from 1 to 65535: use {_POSTGRES_EXAMPLE}"
        ) from None
    if not host:
        raise ConfigError(f"DATABASE_URL names no PostgreSQL host: use {_POSTGRES_EXAMPLE}")
    if port == 0:
        raise ConfigError(
            f"DATABASE_URL has a port that is not a number from 1 to 65535: use {_POSTGRES_EXAMPLE}"
        )
    database = unquote(parts.path.removeprefix("/"))
    if not database or "/" in database:
        raise ConfigError(
            f"DATABASE_URL names no PostgreSQL database after the host: use {_POSTGRES_EXAMPLE}"
        )
    return DatabaseUrl(
        scheme=POSTGRESQL,
        # The driver knows postgresql:// and postgres:// alike; one spelling keeps it simple.
        url=POSTGRESQL + text[text.index("://") :],
        host=host,
        port=port or DEFAULT_POSTGRES_PORT,
        database=database,
        user=unquote(parts.username or ""),
    )


# Plain ASCII digits: float() and int() also read fullwidth and other Unicode digits, which no
# one types on purpose into a configuration file.
_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")
MIN_TIMEOUT = 10.0
MAX_TIMEOUT = 7 * 24 * 3600.0


def _seconds(
    env: Mapping[str, str], name: str, default: float, span: tuple[float, float, str], like: str
) -> float:
    """Setting ``name``, a number of seconds within ``span`` (lowest, highest, and the two said
    in words); ``default`` if unset."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not _SECONDS.fullmatch(raw):
        raise ConfigError(f"{name} must be a number of seconds, like {like}, not {raw!r}")
    lowest, highest, said = span
    if not lowest <= float(raw) <= highest:
        raise ConfigError(f"{name} must be between {said}, not {raw}")
    return float(raw)


def _timeout(env: Mapping[str, str], name: str, default: float) -> float:
    span = (MIN_TIMEOUT, MAX_TIMEOUT, f"{MIN_TIMEOUT:.0f} seconds and 7 days ({MAX_TIMEOUT:.0f})")
    return _seconds(env, name, default, span, like="300")


_COUNT = re.compile(r"[0-9]+")


def _whole_number(env: Mapping[str, str], name: str, maximum: int, of: str = "") -> int | None:
    """Setting ``name``, a whole number from 1 to ``maximum`` (``of`` what); None if unset."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not _COUNT.fullmatch(raw) or not 1 <= int(raw) <= maximum:
        raise ConfigError(f"{name} must be a whole number{of} from 1 to {maximum}, not {raw!r}")
    return int(raw)


def _pool_size(env: Mapping[str, str]) -> int:
    size = _whole_number(env, "DATABASE_POOL_SIZE", MAX_POOL_SIZE)
    return DEFAULT_POOL_SIZE if size is None else size


def database_from_env(env: Mapping[str, str]) -> DatabaseUrl:
    """``DATABASE_URL`` with ``DATABASE_POOL_SIZE``: all that commands other than running the
    bot (which also needs its token) read."""
    return replace(parse_database_url(env.get("DATABASE_URL")), pool_size=_pool_size(env))


# A century: past it, a number of days is a typo rather than a retention.
MAX_KEEP_DAYS = 36_500


# Discord's own ceiling is far lower; this only keeps a typo from launching a million shards.
MAX_SHARD_COUNT = 100_000
_SHARD_LIST = re.compile(r"[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*")


def _shard_ids(env: Mapping[str, str], count: int | None) -> tuple[int, ...] | None:
    """``SHARD_IDS``: the shards this process runs, like ``0,1`` or ``0-3,8``."""
    raw = env.get("SHARD_IDS", "").replace(" ", "")
    if not raw:
        return None
    if count is None:
        raise ConfigError(
            "SHARD_IDS needs SHARD_COUNT, the number of shards all processes run together"
        )
    if not _SHARD_LIST.fullmatch(raw):
        raise ConfigError(f"SHARD_IDS must be shard numbers like 0,1 or 0-3, not {raw!r}")
    ids: list[int] = []
    for part in raw.split(","):
        first_text, _, last_text = part.partition("-")
        first, last = int(first_text), int(last_text or first_text)
        if last < first:
            raise ConfigError(f"SHARD_IDS has a range that runs backwards: {part!r}")
        if last >= count:
            raise ConfigError(
                f"SHARD_IDS names shard {last}, but SHARD_COUNT {count} numbers them "
                f"0 to {count - 1}"
            )
        ids.extend(range(first, last + 1))
    if len(set(ids)) != len(ids):
        raise ConfigError(f"SHARD_IDS names a shard twice: {raw!r}")
    return tuple(ids)


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


LOG_FORMATS = ("text", "json")


def _log_format(env: Mapping[str, str]) -> str:
    raw = env.get("LOG_FORMAT", "").strip().lower() or "text"
    if raw not in LOG_FORMATS:
        raise ConfigError(f"LOG_FORMAT must be text or json, not {raw!r}")
    return raw


def _http_port(env: Mapping[str, str]) -> int | None:
    """``TTT_HTTP_PORT``: where /livez, /readyz and /metrics are served; unset, nowhere."""
    raw = env.get("TTT_HTTP_PORT", "").strip()
    if not raw:
        return None
    if not _COUNT.fullmatch(raw) or not 1 <= int(raw) <= 65535:
        raise ConfigError(f"TTT_HTTP_PORT must be a port number from 1 to 65535, not {raw!r}")
    return int(raw)


def _http_host(env: Mapping[str, str]) -> str:
    raw = env.get("TTT_HTTP_HOST", "").strip() or DEFAULT_HTTP_HOST
    if not raw.isascii() or not raw.isprintable() or " " in raw or "/" in raw:
        raise ConfigError(
            f"TTT_HTTP_HOST must be an address to listen on, like 127.0.0.1 or 0.0.0.0, not {raw!r}"
        )
    return raw


# How long the HTTP port keeps an idle connection (TTT_HTTP_IDLE_TIMEOUT), by default and at
# most (aiohttp's own default is an hour).
DEFAULT_HTTP_IDLE_TIMEOUT = 5.0
MAX_HTTP_IDLE_TIMEOUT = 3600.0


def _http_idle_timeout(env: Mapping[str, str]) -> float:
    """``TTT_HTTP_IDLE_TIMEOUT``: seconds the HTTP port keeps a connection with nothing to do,
    which is also how long a client has to send a whole request."""
    span = (1.0, MAX_HTTP_IDLE_TIMEOUT, f"1 and {MAX_HTTP_IDLE_TIMEOUT:.0f} seconds")
    return _seconds(env, "TTT_HTTP_IDLE_TIMEOUT", DEFAULT_HTTP_IDLE_TIMEOUT, span, like="5")


def http_url(host: str, port: int, path: str) -> str:
    """``path`` on the HTTP port at ``host``:``port`` (TTT_HTTP_HOST, TTT_HTTP_PORT), as a
    URL: an IPv6 address goes in brackets."""
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}{path}"


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


PUBLIC_KEY_DIGITS = 64  # an Ed25519 public key: 32 bytes, in hexadecimal
_HEX = re.compile(r"[0-9a-fA-F]+")


def _public_key(env: Mapping[str, str]) -> str | None:
    """``DISCORD_PUBLIC_KEY``: the application's public key, which signs every interaction
    Discord POSTs to ``python -m bot serve``; unset, the gateway alone can be used."""
    raw = env.get("DISCORD_PUBLIC_KEY", "").strip()
    if not raw:
        return None
    if len(raw) != PUBLIC_KEY_DIGITS or not _HEX.fullmatch(raw):
        raise ConfigError(
            f"DISCORD_PUBLIC_KEY must be the {PUBLIC_KEY_DIGITS} hexadecimal digits of the "
            "application's Public Key (the General Information page of the developer portal), "
            f"not {len(raw)} characters{'' if _HEX.fullmatch(raw) else ' with non-hex ones'}"
        )
    return raw.lower()


def require_public_key(settings: Settings) -> None:
    """What answering Discord's interactions over HTTP needs, wherever the port comes from
    (``TTT_HTTP_PORT``, or gunicorn's ``--bind``): the public key that signs them."""
    if settings.public_key is None:
        raise ConfigError(
            "DISCORD_PUBLIC_KEY is not set: `python -m bot serve` needs the application's "
            "Public Key (the General Information page of the developer portal)"
        )


def require_serving(settings: Settings) -> None:
    """What ``python -m bot serve`` needs beyond the gateway mode's settings: the public key
    that signs Discord's requests, and the port they come to."""
    require_public_key(settings)
    if settings.http_port is None:
        raise ConfigError(
            "TTT_HTTP_PORT is not set: `python -m bot serve` answers Discord's interactions on "
            "it (at /interactions)"
        )


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
    # None: as many shards as Discord recommends, all in this process.
    shard_count: int | None = None
    # None: every one of the shard_count shards. Set when processes share the shards.
    shard_ids: tuple[int, ...] | None = None
    log_format: str = "text"  # or "json": one object a line (bot/logs.py)
    # Where /livez, /readyz and /metrics are served (bot/health.py); None: not at all.
    http_port: int | None = None
    http_host: str = DEFAULT_HTTP_HOST
    # How long that port keeps an idle connection (and gives a client to send a request).
    http_idle_timeout: float = DEFAULT_HTTP_IDLE_TIMEOUT
    # Days a finished game is kept after it ended, then removed by the sweeper; None: for good.
    keep_finished_games_days: int | None = None
    # The application's Ed25519 public key, in hex: `python -m bot serve` checks each request
    # Discord POSTs against it (bot/endpoint.py). None: not set (the gateway needs none).
    public_key: str | None = None

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
        shard_count = _whole_number(env, "SHARD_COUNT", MAX_SHARD_COUNT, " of shards")
        return cls(
            token=token,
            database=database_from_env(env),
            api_base_url=_url(env, "DISCORD_API_BASE_URL", ("http", "https")),
            gateway_url=_url(env, "DISCORD_GATEWAY_URL", ("ws", "wss")),
            guild_id=guild_id,
            turn_timeout=_timeout(env, "TTT_TURN_TIMEOUT", 300.0),
            challenge_timeout=_timeout(env, "TTT_CHALLENGE_TIMEOUT", 120.0),
            log_level=_log_level(env, "LOG_LEVEL"),
            discord_log_level=_log_level(env, "DISCORD_LOG_LEVEL"),
            heartbeat_file=_heartbeat_file(env),
            shard_count=shard_count,
            shard_ids=_shard_ids(env, shard_count),
            log_format=_log_format(env),
            http_port=_http_port(env),
            http_host=_http_host(env),
            http_idle_timeout=_http_idle_timeout(env),
            keep_finished_games_days=_whole_number(
                env, "TTT_KEEP_FINISHED_GAMES_DAYS", MAX_KEEP_DAYS, " of days"
            ),
            public_key=_public_key(env),
        )
