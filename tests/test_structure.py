"""The shape of the code, stated as tests so that it stays: what each package may import, and
where."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ONE_PROCESS_FILES, FilesInOneProcess

REPO = Path(__file__).resolve().parent.parent


def modules(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def imports(package: str) -> Iterator[tuple[str, ast.Import | ast.ImportFrom]]:
    """Every import statement in ``package``, with where it stands."""
    for path in modules(package):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield f"{path.relative_to(REPO)}:{node.lineno}", node


def imported_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return [alias.name for alias in node.names]


@pytest.mark.slow  # a Python process of its own
def test_importing_the_domain_loads_no_database_driver() -> None:
    """``bot.storage`` is the contract; only opening a database loads its driver."""
    code = (
        "import sys, bot.storage, bot.service, bot.render, bot.results; "
        "print(sorted(m for m in ('aiosqlite', 'sqlite3', 'asyncpg') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert result.stdout.strip() == "[]"


# The one place allowed to import by name inside a function: the engine's modules imported on
# first use (game/lazy.py says why), and only by importlib.import_module.
IMPORTS_ON_FIRST_USE = ("game/lazy.py", "importlib.import_module")


def imports_by_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Call]:
    """Calls in ``function`` that import a module by name: ``importlib.import_module(...)``,
    ``import_module(...)``, ``__import__(...)``."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            if called.split(".")[-1] in ("import_module", "__import__"):
                yield node


@pytest.mark.parametrize("package", ["bot", "game", "tournament"])
def test_no_module_imports_inside_a_function(package: str) -> None:
    """What a module needs is written at its top: no import statement inside a function, and no
    import by name either, but for the engine's one documented mechanism."""
    found = []
    for path in modules(package):
        where = str(path.relative_to(REPO))
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found.append(f"{where}:{node.lineno} in {function.name}")
            for call in imports_by_name(function):
                if (where, ast.unparse(call.func)) != IMPORTS_ON_FIRST_USE:
                    found.append(f"{where}:{call.lineno} in {function.name}: by name")
    assert found == []


def test_the_engine_imports_by_name_in_one_place_only() -> None:
    """The exception above is real and single: game/lazy.py imports by name, nothing else does
    (so the allowance cannot go stale unnoticed)."""
    where, called = IMPORTS_ON_FIRST_USE
    found = [
        (str(path.relative_to(REPO)), ast.unparse(call.func))
        for path in modules("game") + modules("tournament") + modules("bot")
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for call in imports_by_name(function)
    ]
    assert found == [(where, called)]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def bot_imports() -> dict[str, set[str]]:
    """Each module of ``bot``, and the modules of ``bot`` it imports by name (``from bot
    import render`` imports ``bot.render``), ``TYPE_CHECKING`` imports included."""
    names = {module_name(path) for path in modules("bot")}
    graph: dict[str, set[str]] = {}
    for path in modules("bot"):
        found = graph.setdefault(module_name(path), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in names)
            elif isinstance(node, ast.ImportFrom) and node.module in names:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    found.add(submodule if submodule in names else node.module)
    return graph


def test_no_import_circle_in_the_bot() -> None:
    graph = bot_imports()
    circles = []
    for start in graph:
        # Every path back to ``start``, depth first.
        stack = [(start, [start])]
        while stack:
            module, path = stack.pop()
            for imported in graph.get(module, ()):
                if imported == start:
                    circles.append(" -> ".join([*path, start]))
                elif imported not in path:
                    stack.append((imported, [*path, imported]))
    assert circles == []


def test_every_bot_module_has_its_line_in_the_design_doc() -> None:
    design = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(bot/[a-z0-9_/]+(?:\.py|/))` \|", design, flags=re.MULTILINE))
    files = {
        str(path.relative_to(REPO))
        for path in modules("bot")
        if path.name != "__init__.py" and "migrations" not in path.parts
    }
    assert files - listed == set(), "not in docs/design.md's table of bot/"
    assert {name for name in listed if name.endswith(".py")} - files == set(), "no such file"


def test_type_checking_imports_only_annotate_the_bot_class() -> None:
    found = []
    for path in modules("bot"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
                continue
            for statement in node.body:
                if not isinstance(statement, ast.Import | ast.ImportFrom):
                    continue  # e.g. a mypy-only proof that a class meets a Protocol
                names = [alias.name for alias in statement.names]
                if imported_names(statement) != ["bot.client"] or names != ["TTTBot"]:
                    found.append(f"{path.relative_to(REPO)}:{statement.lineno}: {names}")
    assert found == []


def test_the_engine_imports_nothing_from_discord_a_database_or_the_bot() -> None:
    forbidden = ("discord", "aiosqlite", "sqlite3", "asyncpg", "bot")
    found = [
        f"{where}: {name}"
        for where, node in imports("game")
        for name in imported_names(node)
        if name.split(".")[0] in forbidden
    ]
    assert found == []


def test_the_tournament_engine_imports_nothing_from_discord_a_database_or_the_bot() -> None:
    forbidden = ("discord", "aiosqlite", "sqlite3", "asyncpg", "bot")
    found = [
        f"{where}: {name}"
        for where, node in imports("tournament")
        for name in imported_names(node)
        if name.split(".")[0] in forbidden
    ]
    assert modules("tournament")  # the package is where the test looks
    assert found == []


def test_benchmarks_import_nothing_from_the_tests_but_the_local_discord_server() -> None:
    # The local Discord-compatible server is a tool of its own (python -m tests.discord_sim);
    # the load benchmark drives the bot through it. Fixtures and test helpers stay out.
    found = [
        f"{where}: {name}"
        for where, node in imports("bench")
        for name in imported_names(node)
        if name.split(".")[0] == "tests" and not name.startswith("tests.discord_sim")
    ]
    assert found == []


def test_the_files_meant_for_one_process_are_handed_out_whole() -> None:
    """Each file of conftest.ONE_PROCESS_FILES is one unit of work for pytest-xdist (its
    tests in one process, its fixture made once), every other test a unit of its own, and a
    group of xdist's own mark still a group, should pytest-xdist's mark work again."""
    assert all((REPO / path).is_file() for path in ONE_PROCESS_FILES)
    scheduler = FilesInOneProcess.__new__(FilesInOneProcess)  # its scopes need no workers
    for path in ONE_PROCESS_FILES:
        assert scheduler._split_scope(f"{path}::test_a[1]") == path
        assert scheduler._split_scope(f"{path}::test_b") == path
    other = "tests/test_engine_board.py::test_a"
    assert scheduler._split_scope(other) == other
    assert scheduler._split_scope(f"{other}@shared") == "shared"
