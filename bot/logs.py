"""The bot's logs: discord.py's text format (``LOG_FORMAT=text``), or one JSON object a line
(``LOG_FORMAT=json``) carrying, for a line about an interaction, the interaction's fields.

The fields of the interaction being handled live in a context variable, set where its
handling begins (:meth:`bot.client.TTTBot.handling`, :mod:`bot.fast_clicks`): asyncio gives
each task a copy of its context, so every line logged while it is handled, by the bot or by
discord.py, carries them, and no other task's lines do.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import discord
import orjson

from bot.config import Settings
from bot.metrics import InteractionKind, kind_of

# One line per interaction handled (its kind, what it asked for, how it ended and how fast):
# INFO with LOG_FORMAT=json, for machines; with text only at LOG_LEVEL=DEBUG, so that text
# logs at INFO read as before.
INTERACTIONS = "bot.interactions"
REDACTED = "<redacted>"
# discord.py's text format, as it writes it without colours.
TEXT_FORMAT = "[{asctime}] [{levelname:<8}] {name}: {message}"
TEXT_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


@dataclass(frozen=True, slots=True)
class InteractionFields:
    """What a log line says of the interaction it is about. Ids are strings, as Discord
    writes them: a snowflake is beyond what a JSON reader's doubles hold exactly."""

    id: int
    kind: InteractionKind
    name: str  # the command (``/ttt move``) or the button's action (``cell``)
    guild_id: int | None
    channel_id: int | None
    shard: int

    def as_json(self) -> dict[str, Any]:
        return {
            "interaction_id": str(self.id),
            "kind": self.kind.value,
            ("command" if self.kind is not InteractionKind.COMPONENT else "button"): self.name,
            "guild_id": None if self.guild_id is None else str(self.guild_id),
            "channel_id": None if self.channel_id is None else str(self.channel_id),
            "shard": self.shard,
        }


_CURRENT: ContextVar[InteractionFields | None] = ContextVar("tttbot_interaction", default=None)


@contextlib.contextmanager
def about(fields: InteractionFields) -> Iterator[None]:
    """Lines logged inside are about this interaction."""
    token = _CURRENT.set(fields)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def shard_of(guild_id: int | None, shard_count: int | None) -> int:
    """The shard Discord sends a guild's events to; DMs and group DMs come on shard 0."""
    if guild_id is None or not shard_count:
        return 0
    return (guild_id >> 22) % shard_count


def button_action(custom_id: str) -> str:
    """What a button does, from its custom_id (``ttt:cell:12:3:4`` is ``cell``)."""
    parts = custom_id.split(":")
    return parts[1] if len(parts) > 1 and parts[0] == "ttt" else "unknown"


def fields_of(interaction: discord.Interaction[Any], shard_count: int | None) -> InteractionFields:
    """The fields of an interaction discord.py built."""
    kind = kind_of(interaction.type.value)
    data: Mapping[str, Any] = interaction.data or {}
    if kind is InteractionKind.COMPONENT:
        name = button_action(str(data.get("custom_id", "")))
    else:
        command = interaction.command
        name = f"/{command.qualified_name}" if command is not None else f"/{data.get('name', '?')}"
    return InteractionFields(
        interaction.id,
        kind,
        name,
        interaction.guild_id,
        interaction.channel_id,
        shard_of(interaction.guild_id, shard_count),
    )


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the interaction's
    fields when the line is about one, an interaction's ``outcome`` and ``latency_ms`` when
    given as ``extra``, and the traceback as ``exception``. ``secrets`` (the token) never
    appear: they are replaced wherever they would."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = tuple(secret for secret in secrets if secret)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, tz=dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = _CURRENT.get()
        if fields is not None:
            entry.update(fields.as_json())
        for key in ("outcome", "latency_ms"):
            value = record.__dict__.get(key)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        line = orjson.dumps(entry, default=str).decode()
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        return line


def configure(settings: Settings) -> None:
    """One handler on the root logger, in the format ``LOG_FORMAT`` names (text in colour only
    on a terminal); ``LOG_LEVEL`` for the bot (and everything else), ``DISCORD_LOG_LEVEL`` for
    discord.py, whose DEBUG logs whole gateway payloads, interaction tokens included: the
    bot's own DEBUG must not turn that on."""
    level = min(settings.log_level, settings.discord_log_level)
    root = logging.getLogger()
    # Under gunicorn a worker inherits its master's handler (gunicorn_logging): lines would
    # be written twice.
    for old in list(root.handlers):
        root.removeHandler(old)
    if settings.log_format == "json":
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter([settings.token]))
        root.addHandler(handler)
    elif sys.stderr.isatty():
        discord.utils.setup_logging(level=level, root=True)  # in colour, for a person
    else:
        # discord.py colours its lines when it finds /.dockerenv, terminal or not: what a log
        # collector reads must not carry the escape codes.
        plain = logging.Formatter(TEXT_FORMAT, TEXT_DATE_FORMAT, style="{")
        discord.utils.setup_logging(formatter=plain, level=level, root=True)
    logging.getLogger().setLevel(settings.log_level)
    logging.getLogger("discord").setLevel(settings.discord_log_level)
    as_text = settings.log_format != "json" and settings.log_level > logging.DEBUG
    logging.getLogger(INTERACTIONS).setLevel(logging.WARNING if as_text else logging.NOTSET)


def gunicorn_logging(settings: Settings) -> dict[str, Any]:
    """gunicorn's ``logconfig_dict`` (:mod:`bot.gunicorn_conf`): its lines, the master's and
    the workers' (``gunicorn.error``, ``gunicorn.access``), go up to one handler on the root
    logger that writes them to stderr as :func:`configure` writes the bot's (JSON, or
    discord.py's text format without colours), and that a worker's :func:`configure` then
    replaces. Which of gunicorn's lines are written is still its ``--log-level``'s say."""
    if settings.log_format == "json":
        formatter: dict[str, Any] = {"()": JsonFormatter, "secrets": [settings.token]}
    else:
        formatter = {
            "()": logging.Formatter,
            "fmt": TEXT_FORMAT,
            "datefmt": TEXT_DATE_FORMAT,
            "style": "{",
        }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"tttbot": formatter},
        "handlers": {
            "tttbot": {
                "class": "logging.StreamHandler",
                "formatter": "tttbot",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"level": settings.log_level, "handlers": ["tttbot"]},
        # gunicorn's own handlers taken off: its lines go up to the root's.
        "loggers": {
            name: {"handlers": [], "propagate": True}
            for name in ("gunicorn.error", "gunicorn.access")
        },
    }
