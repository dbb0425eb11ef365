"""The benchmarks still run (their figures are read by people, not asserted: machines are noisy)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

# Each runs a benchmark for real, in a process of its own: seconds to tens of seconds.
pytestmark = pytest.mark.slow


def run_bench(module: str, *arguments: str, timeout: float = 120) -> str:
    """What ``python -m module arguments`` printed, once it exited 0."""
    result = subprocess.run(
        [sys.executable, "-m", module, *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_engine_benchmark_runs_and_reports_every_figure() -> None:
    stdout = run_bench(
        "bench.engine",
        *("--rounds", "1", "--naive-runs", "1", "--positions", "10"),
        *("--timed-games", "1", "--reviews", "2", "--drill-games", "3"),
    )
    for figure in ("one-time cost", "every position: median", "p99", "speed-up on the empty"):
        assert figure in stdout
    for figure in ("empty 5x5 board proven a draw", "minimax on 5x5, its", "5x5 review"):
        assert figure in stdout
    assert "a bare interpreter's whole run (python -c pass" in stdout
    for size in (3, 4, 5):
        assert f"drill answers, {size}x{size}: every move of the" in stdout
    assert "549,945 nodes" in stdout  # the baseline really searched the whole tree


def test_moves_benchmark_runs_and_reports_every_figure() -> None:
    stdout = run_bench("bench.moves", "--seconds", "0.3", "--channels", "2")
    for figure in ("yardstick: a round trip", "one channel at a time", "2 channels at once"):
        assert figure in stdout
    moves_per_second = int(stdout.split("2 channels at once: ")[1].split(" ")[0].replace(",", ""))
    assert moves_per_second > 0  # games were really played


def test_load_benchmark_runs_every_bot_and_reports_every_figure() -> None:
    table = run_bench(
        "bench.bot_load",
        *("--seconds", "1", "--warmup", "0.5", "--in-flight", "4"),
        *("--idle-settle", "0", "--idle-seconds", "0.5"),
        *("--rate", "20", "--live-games", "20", "--raw-board", "--scrape-rate", "10"),
        *("--http-workers", "2"),
        timeout=180,
    )
    for figure in ("interactions/s", "latency p50", "bot CPU ms", "errors", "stall", "RSS"):
        assert figure in table
    assert "the bare bot's throughput" in table
    assert "against the bare bot's board" in table
    assert "tttbot over HTTP, 2 workers (SQLite on disk): " in table  # its ratio to the bare bot
    errors = table.split("| errors (unanswered in 3 s, or not an edit) / overruns | ")[1]
    tttbot, http, raw, board, bare = errors.split("\n")[0].rstrip(" |").split(" | ")
    for bot in (tttbot, http, raw, board, bare):
        assert bot.startswith("0 / "), bot  # every interaction answered, and well
    broken = table.split("| Discord's rules broken (an answer late or twice, a bad request...) | ")
    assert broken[1].split("\n")[0] == "0 | 0 | 0 | 0 | 0 |"
    # Both workers' idle memory, and the master's.
    memory = table.split("| RSS idle MB | ")[1].split(" | ")[1]
    assert re.fullmatch(r"[0-9.]+ \(master [0-9.]+; workers [0-9.]+, [0-9.]+\)", memory), memory
    idle_cpu = table.split("| CPU idle ms a second | ")[1].split("\n")[0].rstrip(" |").split(" | ")
    assert len(idle_cpu) == 5
    assert re.fullmatch(r"[0-9.]+ \(master [0-9.]+; workers [0-9.]+, [0-9.]+\)", idle_cpu[1])
    # tttbot's /metrics scraped meanwhile: every scrape answered (the bare bots have none).
    scrapes = table.split("| a /metrics scrape meanwhile: p50 / p99 ms (failed or over 3 s) |")
    row = scrapes[1].split("\n")[0]
    tttbot, http, raw, board, bare = (cell.strip() for cell in row.split("|")[:-1])
    assert tttbot.endswith(" (0)"), tttbot
    assert http.endswith(" (0)"), http
    assert (raw, board, bare) == ("", "", "")


def test_load_benchmark_over_rounds_sums_each_bot_up() -> None:
    out = run_bench(
        "bench.bot_load",
        *("--seconds", "0.5", "--warmup", "0.3", "--in-flight", "2", "--rate", "10"),
        *("--idle-settle", "0", "--idle-seconds", "0.2"),
        *("--live-games", "0", "--scrape-rate", "0", "--rounds", "2"),
        timeout=180,
    )
    assert "round 1 of 2" in out
    assert "round 2 of 2" in out
    summary = out.split("over 2 rounds, the median [lowest-highest]:")[1]
    header = "| figure | tttbot (SQLite on disk) | bare discord.py, a board | bare discord.py |"
    assert header in summary

    def cells(label: str) -> list[str]:
        row = summary.split(f"| {label} | ")[1].split("\n")[0]
        return [cell.strip() for cell in row.rstrip(" |").split(" | ")]

    spread = r"([0-9,.]+) \[([0-9,.]+)-([0-9,.]+)\]"
    for label in ("saturation: interactions/s", "saturation: bot CPU ms per interaction"):
        for cell in cells(label):
            found = re.fullmatch(spread, cell)
            assert found is not None, (label, cell)
            median, low, high = (float(value.replace(",", "")) for value in found.groups())
            assert 0 < low <= median <= high, (label, cell)
    for cell in cells("idle: bot CPU ms a second"):  # at 10 ms a tick, 0.2 s may show none
        assert re.fullmatch(spread, cell) is not None, cell
    # Each round's ratio is against that round's own bare bot: the bare bot's own is 1.
    assert cells("ratio to the bare bot of its round")[-1] == "1.00 [1.00-1.00]"
    assert cells("errors and Discord's rules broken, all rounds") == ["0", "0", "0"]


def test_ultimate_load_benchmark_plays_both_loads_and_reports_every_figure() -> None:
    out = run_bench(
        "bench.ultimate_load",
        *("--games", "2", "--quiet-channels", "2", "--rate", "5"),
        *("--seconds", "1.5", "--warmup", "0.5", "--ramp", "0.5"),
        timeout=180,
    )

    def cells(label: str) -> list[str]:
        row = out.split(f"| {label} | ")[1].split("\n")[0]
        return [cell.strip() for cell in row.rstrip(" |").split(" | ")]

    assert "| figure | quiet channels alone | beside 2 ultimate games |" in out
    quiet_alone, quiet_beside = cells(
        "quiet: errors (unanswered in 3 s, or not an edit) / overruns"
    )
    for errors in (quiet_alone, quiet_beside):
        assert errors.startswith("0 / "), errors  # every quiet click answered in 3 s, and well
    for label in (
        "quiet: latency p50 / p95 / p99 / slowest ms",
        "longest event-loop stall ms / the same less the loop's wait for a CPU",
        "CPU, share of a core: bot process",
        "CPU, share of a core: this driver (and the server)",
    ):
        assert len(cells(label)) == 2, label
    assert "quiet latency beside the games, against alone (p50 / p95 / p99): " in out
    # The ultimate games were played, to the final edit, through the worker processes.
    assert int(cells("moves (a cell and the bot's answer)")[0]) > 0
    assert cells("ultimate errors (unanswered in 3 s, refused, or unfinished in 60 s)") == ["0"]
    workers_alone, workers_beside = cells("CPU, share of a core: engine workers")
    assert (workers_alone, workers_beside != "0%") == ("0%", True), workers_beside
    for label in (
        "a move to its final edit: p50 / p95 / p99 / slowest ms",
        "a click's first answer: p50 / p95 / p99 / slowest ms",
        "clicks deferred (first answered, then edited)",
    ):
        assert label in out


def test_ladder_benchmark_prints_every_table_and_repeats_on_two_processes() -> None:
    arguments = ("--sizes", "3", "5", "--games", "4", "--seed", "7")
    alone = run_bench("bench.ladder", *arguments)
    for heading in ("## 3x3, 3 in a row: 4 games", "## 5x5, 4 in a row: 4 games", "Expected per"):
        assert heading in alone
    assert "casual's skill 0.3;" in alone
    assert alone.count("| **casual** |") == 5  # sides and levels at each size, and exact 3x3

    def tables(output: str) -> list[str]:
        return [line for line in output.splitlines() if line.startswith("|")]

    assert tables(run_bench("bench.ladder", *arguments, "--jobs", "2")) == tables(alone)


def test_seasons_benchmark_runs_and_reports_every_figure() -> None:
    stdout = run_bench("bench.seasons", "--games", "20", "--members", "4")
    assert "stored 20 games between 4 members in 2026-11" in stdout
    for figure in ("yardstick: the all-time table", "the season's table, median of 7"):
        assert figure in stdout
    assert "reading its 20 games" in stdout


def test_tournament_message_benchmark_runs_and_reports_every_size() -> None:
    stdout = run_bench("bench.tournament_message", "--runs", "1", "--players", "12", "20")
    assert "yardstick: one 3x3 board drawn" in stdout
    for players, rounds in ((12, 4), (20, 5)):
        assert f"{players} players, {rounds} rounds: standings and message" in stdout


def test_tournament_benchmark_runs_and_reports_every_figure() -> None:
    stdout = run_bench(
        "bench.tournament", *("--players", "12", "20", "--repeats", "1", "--long-rounds", "9")
    )
    assert "yardstick: networkx matching over every pair of 64 players" in stdout
    for row in ("| 12 | 1 of 4 |", "| 12 | 3 of 4 |", "| 20 | 1 of 5 |", "| 20 | 5 of 5 |"):
        assert row in stdout
    assert "| 20 | 9 of 9 (set by hand) |" in stdout
    assert "standings of 20 players after 8 rounds, median: " in stdout


def test_ultimate_benchmark_runs_and_reports_every_figure() -> None:
    out = run_bench(
        "bench.ultimate",
        *("--positions", "5", "--games", "2", "--seconds", "0.02", "--nodes", "300"),
        *("--uct-games", "1", "--uct-playouts", "50"),
        *("--mcts-games", "2", "--mcts-seconds", "0.02"),
        *("--reviews", "1", "--review-nodes", "100"),
    )
    assert "yardstick: one random playout from the empty board" in out
    assert "minimax's move over 5 positions from real games (budget 0.02 s): median" in out
    for row in ("casual against random", "smart against casual", "minimax against smart"):
        assert f"| {row} | " in out
    assert "| minimax against textbook UCT, 50 playouts a move (1 games" in out
    assert "minimax's move over the same positions at 300 nodes: median" in out
    assert "| minimax against random | " in out
    assert "MCTS against alpha-beta, 0.02 s of CPU a move each, games 0-1 (" in out
    assert "hint (100 nodes), " in out
    assert "review (100 nodes a position) of a " in out
    assert "review, CPU a move: median " in out
