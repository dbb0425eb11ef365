"""The documentation holds together: every relative link in the README, ``docs/`` and the
tests' and benchmarks' READMEs leads to a file of the repository (and to a heading there, when
it names one), every setting ``bot/config.py`` reads is in ``docs/operating.md``'s table
and in ``.env.example``, every table the migrations make is in its "What the bot stores", and
every ``/ttt`` command is in ``docs/playing.md``'s table of commands, and CI runs the README's
test command."""

from __future__ import annotations

import ast
import itertools
import re
import sqlite3
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from discord import app_commands
from markdown_it import MarkdownIt
from markdown_it.token import Token

from bot.cogs.ttt import TicTacToeCog
from bot.domain import size_name
from bot.i18n import ALL_LANGUAGES, language
from bot.render.help import HELP_TEXT, help_message
from bot.storage.migrations import migration_files
from bot.storage.sql import QMARK
from game.board import Board
from game.variants import GAME_SIZES, is_ultimate
from tests.test_env_file import named_settings

REPO = Path(__file__).resolve().parent.parent
PAGES = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "tests" / "README.md",
    REPO / "bench" / "README.md",
]
OPERATING = REPO / "docs" / "operating.md"
# Read by compose.yaml, not by the bot: the table and .env.example name them all the same.
COMPOSE_ONLY = {"POSTGRES_PASSWORD", "TTT_DOMAIN"}
_SETTING = re.compile(r"[A-Z][A-Z0-9_]*")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:")

_MARKDOWN = MarkdownIt("commonmark").enable("table")


def tokens(page: Path) -> list[Token]:
    return _MARKDOWN.parse(page.read_text(encoding="utf-8"))


def inline_text(token: Token) -> str:
    """An inline token's text as shown: code spans' text without their backticks, no markup."""
    return "".join(child.content for child in token.children or [] if child.content)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, every character but letters, digits,
    marks, spaces, hyphens and underscores dropped, spaces made hyphens."""
    kept = (
        char
        for char in heading.lower()
        if char.isalnum() or char in " -_" or unicodedata.category(char).startswith("M")
    )
    return "".join(kept).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of ``page``'s headings; a repeated one gets ``-1``, ``-2``... as on GitHub."""
    found: set[str] = set()
    seen: Counter[str] = Counter()
    parsed = tokens(page)
    for opening, inline in itertools.pairwise(parsed):
        if opening.type != "heading_open":
            continue
        base = slug(inline_text(inline))
        found.add(f"{base}-{seen[base]}" if seen[base] else base)
        seen[base] += 1
    return found


def links(page: Path) -> list[str]:
    """The targets of ``page``'s links, code spans and blocks excluded."""
    return [
        str(child.attrs["href"])
        for token in tokens(page)
        for child in token.children or []
        if child.type == "link_open"
    ]


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    """``page``'s relative links that lead to no file under ``root``, or to no heading of
    the page they name."""
    broken = []
    # Each page linked to is parsed once, not once a link: the documents' 62 links to
    # headings parsed their pages again each time (the check of every page took 1.75 s of
    # CPU, 0.6 s now).
    headings: dict[Path, set[str]] = {}
    for target in links(page):
        if _SCHEME.match(target):
            continue  # a web address: not ours to check
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.is_relative_to(root) or not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix != ".md":
            broken.append(f"{target}: no such heading")
        elif anchor:
            if resolved not in headings:
                headings[resolved] = anchors(resolved)
            if anchor not in headings[resolved]:
                broken.append(f"{target}: no such heading")
    return broken


def test_every_relative_link_leads_to_a_file_and_heading_of_the_repository() -> None:
    found = {page.relative_to(REPO).as_posix(): broken_links(page) for page in PAGES}
    assert {page: broken for page, broken in found.items() if broken} == {}
    pages = {"docs/playing.md", "docs/server-settings.md", "docs/operating.md", "docs/design.md"}
    assert pages <= set(links(REPO / "README.md"))


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    """The check above can fail: links to a missing file, to a file outside the repository
    and to a heading that its page lacks are named, and not the links that resolve (a heading
    with code in it included), nor web addresses, nor code."""
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "outside.md").write_text("# Outside\n", encoding="utf-8")
    page = root / "page.md"
    page.write_text(
        "# The `/metrics` port (2026-11-27)\n\n"
        "[ok](#the-metrics-port-2026-11-27) [gone](#nowhere) [file](missing.md) "
        "[out](../outside.md) [web](https://example.com/x.md) `[code](missing.md)`\n",
        encoding="utf-8",
    )
    assert broken_links(page, root) == [
        "#nowhere: no such heading",
        "missing.md: no such file",
        "../outside.md: no such file",
    ]
    (root / "missing.md").write_text("# Here\n", encoding="utf-8")
    assert broken_links(page, root) == ["#nowhere: no such heading", "../outside.md: no such file"]


def test_github_heading_anchors() -> None:
    assert slug("Quick start (Python 3.11 or newer)") == "quick-start-python-311-or-newer"
    assert slug("5\N{MULTIPLICATION SIGN}5: exact") == "55-exact"
    assert slug("The Rematch's round trips (2026-11-26)") == "the-rematchs-round-trips-2026-11-26"
    assert slug("bench.ladder") == "benchladder"


def config_settings() -> set[str]:
    """The environment variables ``bot/config.py`` reads: each a string naming a setting that
    a call gets beside the environment (``env.get("NAME")``, ``_timeout(env, "NAME", ...)``)."""
    tree = ast.parse((REPO / "bot" / "config.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        reads_env = any(isinstance(arg, ast.Name) and arg.id == "env" for arg in node.args)
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            reads_env |= node.func.value.id == "env" and node.func.attr == "get"
        if reads_env:
            names.update(
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
                and _SETTING.fullmatch(arg.value)
            )
    return names


def settings_table(page: Path) -> set[str]:
    """The first column of ``page``'s table headed ``variable | default | meaning``."""
    parsed = tokens(page)
    rows: list[list[str]] = []
    for token in parsed:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(inline_text(token))
        elif token.type == "table_close" and rows:
            if rows[0] == ["variable", "default", "meaning"]:
                return {row[0] for row in rows[1:]}
            rows = []
    raise AssertionError(f"{page.name} has no settings table")


def test_every_setting_the_bot_reads_is_in_the_operators_table_and_the_example() -> None:
    read = config_settings()
    assert {"DISCORD_TOKEN", "DATABASE_URL", "TTT_KEEP_FINISHED_GAMES_DAYS", "SHARD_IDS"} <= read
    assert len(read) >= 17
    table = settings_table(OPERATING)
    assert read - table == set(), "read by bot/config.py, not in docs/operating.md's table"
    assert table - read == COMPOSE_ONLY, "in docs/operating.md's table, read by nobody"
    assert named_settings() == read | COMPOSE_ONLY, ".env.example names other settings"


def section(page: Path, heading: str) -> str:
    """The text of ``page``'s level-2 section ``heading``, its subsections included."""
    text = page.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end == -1 else text[start:end]


def migrated_tables() -> set[str]:
    """The tables SQLite's migrations leave (PostgreSQL's make the same: the storage contract
    runs on both)."""
    db = sqlite3.connect(":memory:")
    try:
        for _, script in migration_files("sqlite"):
            db.executescript(script)
        rows = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
        ).fetchall()
    finally:
        db.close()
    return {name for (name,) in rows}


def test_every_table_is_in_what_the_bot_stores() -> None:
    """The page promises members every table and column that holds their data: a new table
    must be named there, holding member data or not (``tournaments`` was left out once)."""
    tables = migrated_tables()
    assert {"games", "tournaments", "leases"} <= tables
    named = set(re.findall(r"`([a-z_]+)`", section(OPERATING, "What the bot stores")))
    assert tables - named == set(), "made by a migration, not in docs/operating.md's list"


# Tables a deletion writes that hold no member's id or name, nor a server's id: which game or
# challenge holds a channel, the token of a channel's latest interaction, a table's game.
NO_IDS = {"channel_occupants", "reply_routes", "tournament_games"}


def test_the_vacuum_that_clears_deleted_data_names_every_table_a_deletion_writes() -> None:
    """On PostgreSQL what forget-me and a server's erase deleted stays in dead rows until the
    VACUUM FULL operating.md gives: it must name every table they update or delete from
    (``tournaments`` was left out once, ``season_announcements``, a server's id, too)."""
    found = re.search(r"`VACUUM FULL ([a-z_, ]+)`", section(OPERATING, "What the bot stores"))
    assert found is not None
    vacuumed = set(found.group(1).split(", "))
    writes = [
        *QMARK.anonymise_games,
        *QMARK.anonymise_challenges,
        QMARK.anonymise_settings,
        *QMARK.delete_member_stats,
        *QMARK.delete_member_practice,
        QMARK.save_tournament,  # forget-me rewrites the documents naming the member
        QMARK.free_guild_channels,
        QMARK.drop_guild_routes,
        QMARK.delete_guild_challenges,
        QMARK.delete_guild_games,
        *QMARK.delete_guild_stats,
        QMARK.delete_guild_drills,
        QMARK.unlink_guild_puzzles,
        QMARK.delete_guild_seasons,
        *QMARK.delete_guild_tournaments,
    ]
    written = {re.findall(r"^(?:UPDATE|DELETE FROM) (\w+)", write)[0] for write in writes}
    assert {"games", "guild_settings", "season_announcements"} <= written
    assert written - NO_IDS - vacuumed == set(), "not in operating.md's VACUUM FULL"


def command_names(command: app_commands.Command[Any, Any, Any] | app_commands.Group) -> list[str]:
    """A command's full name, or each of a group's commands' (``ttt tournament leave``)."""
    if isinstance(command, app_commands.Group):
        return [name for inner in command.commands for name in command_names(inner)]
    return [command.qualified_name]


def test_every_ttt_command_is_in_the_players_table() -> None:
    """docs/playing.md's Commands table is every command in full (the README says so):
    ``/ttt tournament leave`` was left out once. A row may name a group's commands together
    (`` `/ttt tournament start`, `pause` ``)."""
    firsts = [
        line.split("|")[1]
        for line in section(REPO / "docs" / "playing.md", "Commands").splitlines()
        if line.startswith("| `/")
    ]
    names = [
        name for command in TicTacToeCog.__cog_app_commands__ for name in command_names(command)
    ]
    assert "ttt tournament leave" in names
    missing = []
    for name in names:
        parent, _, leaf = name.rpartition(" ")
        alone = re.compile(rf"`/{re.escape(name)}[` ]")
        if not any(
            alone.search(first) or (f"`/{parent} " in first and f"`{leaf}`" in first)
            for first in firsts
        ):
            missing.append(name)
    assert missing == []


def test_the_readme_is_a_front_door() -> None:
    """What a newcomer reads first stays short; the rest is in docs/."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200


def test_ci_runs_the_readmes_test_command_and_the_linters() -> None:
    """.ci/run is the README's test command, step by step in its order (the venv made and
    activated, the package installed, pytest), then the linters over every package; and .env,
    where the token lives, stays out of git."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Run the tests.*?```sh\n(.*?)\n```", readme, re.DOTALL)
    assert block is not None
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    position = 0
    for step in block[1].split(" && "):
        # The whole step, not a longer command it begins (pytest given a -m "not slow").
        found = re.compile(re.escape(step) + r"(?= && |\n)").search(ci, position)
        assert found is not None, f"{step!r} is not in .ci/run after the steps before it"
        position = found.end()
    for linter in (
        "ruff check .",
        "ruff format --check .",
        "mypy --strict game tournament bot tests bench",
    ):
        assert f"\n{linter}\n" in ci[position:]
    assert ".env" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_help_names_each_commands_optional_options_as_the_command_has_them() -> None:
    """`/ttt leaderboard [size]` went without the season it also takes: every command help
    writes with its options in brackets names exactly its optional ones, in order."""
    commands = {
        command.qualified_name: command
        for top in TicTacToeCog.__cog_app_commands__
        for command in (top.walk_commands() if isinstance(top, app_commands.Group) else [top])
    }
    written = re.findall(r"`/(ttt [a-z-]+)((?: \[[a-z-]+\])+)`", HELP_TEXT)
    assert {name for name, _ in written} >= {"ttt stats", "ttt leaderboard", "ttt review"}
    for name, options in written:
        command = commands[name]
        assert isinstance(command, app_commands.Command), name
        optional = [f"[{p.name}]" for p in command.parameters if not p.required]
        assert options.split() == optional, name


def test_help_gives_the_cell_numbers_each_board_takes_whatever_the_servers_default() -> None:
    """Help said "numbers count the cells row by row from 1, so `1`-`9` on {default}": in a
    server whose default board is 4x4 it told members `1`-`9` (4x4 takes `1`-`16`), and on
    ultimate, which takes no numbers, `1`-`9` too. Every range it gives is what its board
    takes, in every language, whichever default the server chose."""
    squares = [size for size in GAME_SIZES if not is_ultimate(size)]
    for code in ALL_LANGUAGES:
        for default in GAME_SIZES:
            embed = help_message(language(code), default).embed
            assert embed is not None
            assert embed.description is not None
            text = embed.description
            for size in squares:
                last = size * size
                assert f"`1`-`{last}`" in text, (code, default, size)
                Board(size).play(str(last))  # the last number is a cell of that board
            if code == "en":
                stated = re.findall(r"`1`-`(\d+)` on (\S+?)[,)]", text)
                assert stated == [(str(s * s), size_name(s)) for s in squares], default


def test_a_size_options_description_names_the_default_it_takes() -> None:
    """Every size left out means the server's choice (/ttt-settings board-size): a new game's,
    the stats', the tables' and a tournament's; each size option says so."""
    commands = {
        command.qualified_name: command
        for top in TicTacToeCog.__cog_app_commands__
        for command in (top.walk_commands() if isinstance(top, app_commands.Group) else [top])
    }
    described = {
        name: str(parameter.description)
        for name, command in commands.items()
        if isinstance(command, app_commands.Command)
        for parameter in command.parameters
        if parameter.name == "size"
    }
    assert set(described) == {
        "ttt start",
        "ttt vs-ai",
        "ttt stats",
        "ttt leaderboard",
        "ttt tournament create",
    }
    assert all("the server's" in text for text in described.values()), described
