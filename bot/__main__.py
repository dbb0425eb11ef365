"""``python -m bot``: read the settings, set up logging (:mod:`bot.logs`), run the bot until
stopped: over the gateway, or (``python -m bot serve``) answering the interactions Discord
POSTs to its HTTP port."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import resource
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import aiohttp
import discord
from dotenv import load_dotenv

from bot import invite, logs
from bot.client import TTTBot, point_at
from bot.clock import SystemClock
from bot.config import POSTGRESQL, ConfigError, Settings, database_from_env, require_serving
from bot.storage.backup import backup_sqlite
from bot.storage.sqlite_to_postgres import copy_sqlite_to_postgres

log = logging.getLogger("bot")


def fail(message: str, code: int = 1) -> int:
    print(f"tttbot: {message}", file=sys.stderr)
    return code


async def run(bot: TTTBot, token: str) -> None:
    # SIGTERM (docker stop, systemd) and Ctrl-C stop the bot in order: no new interactions,
    # those in flight finished, storage closed.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows' loop
            loop.add_signal_handler(signum, stop.set)
    freezing = asyncio.create_task(freeze_after_start(bot))
    try:
        if bot.over_http:
            await bot.serve_interactions(token, stop)
        else:
            await bot.serve(token, stop)
    finally:
        freezing.cancel()
    log.info("stopped")


def open_files_as_allowed() -> None:
    """Raise this process's limit of open files to the most it is allowed (its hard limit):
    each connection to the HTTP port holds one, and a process out of them accepts none and
    opens none (to Discord, to the database). systemd gives a service 1,024 and allows far
    more; asyncio watches its sockets with epoll, which has no limit of its own."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == hard:
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as error:  # a hard limit the kernel will not give (macOS)
        log.debug("kept the open files limit at %d: %s", soft, error)
        return
    log.debug("raised the open files limit from %d to %d", soft, hard)


async def freeze_after_start(bot: TTTBot) -> None:
    """Once started, move what start-up made (modules, the solver's table, discord.py's
    state) out of the garbage collector's sight: full collections then look at what
    interactions create only, instead of stalling the loop for tens of milliseconds."""
    await bot.until_answering()
    gc.collect()
    gc.freeze()


def migrate_sqlite_to_postgres(sqlite_path: str) -> int:
    """Copy a SQLite database into the empty PostgreSQL database DATABASE_URL names."""
    try:
        target = database_from_env(os.environ)
    except ConfigError as error:
        return fail(str(error), 2)
    if target.scheme != POSTGRESQL:
        return fail(
            "DATABASE_URL must name the PostgreSQL database to copy into, like "
            "postgresql://user:password@host:port/database",
            2,
        )
    try:
        report = asyncio.run(copy_sqlite_to_postgres(Path(sqlite_path), target, SystemClock()))
    except ConfigError as error:
        return fail(str(error))
    print(f"tttbot: {report}")
    return 0


def back_up(backup_path: str) -> int:
    """Write a consistent copy of the SQLite database DATABASE_URL names, the bot running or
    not; a PostgreSQL database is pg_dump's to back up."""
    try:
        database = database_from_env(os.environ)
    except ConfigError as error:
        return fail(str(error), 2)
    if database.scheme == POSTGRESQL:
        return fail(
            f"DATABASE_URL names {database.describe()}: back it up with pg_dump, as"
            " docs/operating.md says (Backups)",
            2,
        )
    try:
        report = backup_sqlite(database, Path(backup_path))
    except ConfigError as error:
        return fail(str(error))
    print(f"tttbot: {report}")
    return 0


def print_invite_link(settings: Settings) -> int:
    """``python -m bot invite``: ask Discord which application DISCORD_TOKEN is, and print the
    link that adds it to a server."""
    point_at(settings)
    where = settings.api_base_url or "discord.com"
    try:
        application = asyncio.run(invite.fetch_application(settings.token))
    except discord.LoginFailure:
        return fail(invite.REJECTED_TOKEN)
    except discord.HTTPException as error:
        return fail(f"Discord at {where} did not say which application DISCORD_TOKEN is: {error}")
    except TimeoutError:
        return fail(f"cannot reach Discord at {where}: no answer in {invite.PATIENCE:.0f} s")
    except (aiohttp.ClientError, OSError) as error:
        return fail(f"cannot reach Discord at {where}: {error}")
    print(invite.invite_link(application.id))
    return 0


SYNC_HELP = "register the slash commands with Discord even if they did not change"


def arguments() -> argparse.ArgumentParser:
    """``python -m bot``'s command line."""
    parser = argparse.ArgumentParser(prog="python -m bot", description="Run the tic-tac-toe bot.")
    parser.add_argument("--sync", action="store_true", help=SYNC_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    migrate = commands.add_parser(
        "migrate-sqlite-to-postgres",
        help="copy a SQLite database into the empty PostgreSQL database DATABASE_URL names",
        description="Copy games, challenges, stats, ratings, settings, puzzle results, drills "
        "and tournaments from a SQLite database into the empty PostgreSQL database that "
        "DATABASE_URL names, keeping ids. "
        "The SQLite file is only read. Stop the bot first.",
    )
    migrate.add_argument("sqlite_path", metavar="SQLITE_PATH", help="the SQLite file to copy")
    backup = commands.add_parser(
        "backup",
        help="copy the SQLite database DATABASE_URL names to a new file, the bot running or not",
        description="Write a consistent copy of the SQLite database that DATABASE_URL names "
        "to BACKUP_PATH (a new file), while the bot runs or not: the database is only read. "
        "Back up PostgreSQL with pg_dump.",
    )
    backup.add_argument("backup_path", metavar="BACKUP_PATH", help="the new file to write")
    commands.add_parser(
        "invite",
        help="print the link that adds the bot to a server",
        description="Ask Discord which application DISCORD_TOKEN belongs to, and print the "
        "link that adds it to a server with the scopes and permissions the bot needs.",
    )
    serve = commands.add_parser(
        "serve",
        help="answer the interactions Discord POSTs to TTT_HTTP_PORT, without a gateway",
        description="Run the bot without a gateway connection: Discord POSTs each interaction "
        "to the application's Interactions Endpoint URL, which must lead to /interactions on "
        "TTT_HTTP_PORT; DISCORD_PUBLIC_KEY checks that they come from Discord.",
    )
    # After the command as well as before it; unset, it leaves the one before it alone.
    serve.add_argument("--sync", action="store_true", default=argparse.SUPPRESS, help=SYNC_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    # .env in the working directory (load_dotenv() alone looks beside this file instead);
    # the real environment wins over it.
    load_dotenv(Path.cwd() / ".env")
    if args.command == "migrate-sqlite-to-postgres":
        return migrate_sqlite_to_postgres(args.sqlite_path)
    if args.command == "backup":
        return back_up(args.backup_path)
    try:
        settings = Settings.from_env(os.environ)
    except ConfigError as error:
        return fail(str(error), 2)
    if args.command == "invite":
        return print_invite_link(settings)
    over_http = args.command == "serve"
    if over_http:
        try:
            require_serving(settings)
        except ConfigError as error:
            return fail(str(error), 2)
    logs.configure(settings)
    open_files_as_allowed()
    bot = TTTBot(settings, force_sync=args.sync, over_http=over_http)
    try:
        asyncio.run(run(bot, settings.token))
    except KeyboardInterrupt:
        log.info("stopped")
    except Exception as error:
        message = why_it_stopped(error, settings)
        if message is None:
            raise
        return fail(message)
    return 0


def why_it_stopped(error: BaseException, settings: Settings) -> str | None:
    """The one line that says why the bot could not start or run on, for the errors that are
    the operator's to fix (the token, the configuration, Discord out of reach); None for any
    other, a bug whose traceback is wanted. Shared with :mod:`bot.gunicorn_app`."""
    if isinstance(error, discord.LoginFailure):
        return invite.REJECTED_TOKEN
    if isinstance(error, discord.PrivilegedIntentsRequired):
        return "Discord refused the gateway intents the bot asked for"
    if isinstance(error, ConfigError):
        return str(error)
    if isinstance(error, aiohttp.ClientError | OSError):
        where = settings.api_base_url or "discord.com"
        return f"cannot reach Discord at {where}: {error}"
    return None


if __name__ == "__main__":
    sys.exit(main())
