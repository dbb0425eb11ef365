"""The player `.ci/image` drives the built image with, through the local Discord server's control
API (``python -m tests.discord_sim``; its routes are listed in ``tests/discord_sim/__main__.py``).

    python .ci/image_game.py wait      --control URL     # a bot connected, /ttt registered
    python .ci/image_game.py play      --control URL --out FILE
    python .ci/image_game.py row       --expect FILE --sqlite DB | --got LINE | --print-game
    python .ci/image_game.py check     --control URL --expect FILE
    python .ci/image_game.py listeners --port N          # who listens on a TCP port here

``play`` has alice play one 3x3 game against ``minimax`` to its end, clicking the first free cell
each turn, and checks every answer on the way; it writes what a later ``check`` must see again:
the game's review and alice's stats. ``check`` asks for both again (after the bot restarted on the
same database) and compares them word for word. Any failed check prints one line and exits 1.

Standard library only (it runs on the CI venv's Python, but needs nothing from it).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

JSON = dict[str, Any]
USER = "alice"
CHANNEL = "general"
LEVEL = "minimax"
STATS_FIELD = f"Against the bot ({LEVEL})"
MARKS = {"❌": "X", "⭕": "O"}
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
# A call answers once the bot responded; the sim itself gives up on the bot after 5 s.
CALL_TIMEOUT = 30.0


class Failed(Exception):
    """A check that did not hold: one line saying what was expected and what came."""


def fail(message: str) -> NoReturn:
    raise Failed(message)


def call(control: str, method: str, route: str, body: JSON | None = None) -> JSON:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{control}/{route}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=CALL_TIMEOUT) as reply:
            answer: JSON = json.load(reply)
    except urllib.error.HTTPError as error:
        fail(f"{method} /_sim/{route} {body}: HTTP {error.code}: {error.read().decode()[:500]}")
    return answer


def slash(control: str, command: str, **options: Any) -> JSON:
    body = {"user": USER, "channel": CHANNEL, "command": command, "options": options}
    return call(control, "POST", "slash", body)


def click(control: str, message: JSON, custom_id: str) -> JSON:
    return call(
        control, "POST", "click", {"user": USER, "message": message["id"], "custom_id": custom_id}
    )


def answered(record: JSON, what: str, response_type: int, *, ephemeral: bool) -> JSON:
    """The message of an interaction the bot answered as expected (4: a new message; 7: the
    clicked message edited)."""
    if record["response_type"] != response_type or record["message"] is None:
        fail(f"{what}: answered with type {record['response_type']}, not {response_type}: {record}")
    if bool(record["ephemeral"]) != ephemeral:
        fail(f"{what}: ephemeral is {record['ephemeral']}, expected {ephemeral}")
    message: JSON = record["message"]
    return message


def buttons(message: JSON) -> list[JSON]:
    found: list[JSON] = []
    for row in message.get("components") or []:
        found.extend(c for c in row.get("components") or [] if c.get("type") == 2)
    return found


def cells(message: JSON, game: int | None = None) -> list[JSON]:
    """The cell buttons (``ttt:cell:<game>:<ply>:<cell>``) in cell order; 9 of them."""
    found = [b for b in buttons(message) if str(b.get("custom_id", "")).startswith("ttt:cell:")]
    if len(found) != 9:
        fail(f"not a 3x3 board: {len(found)} cell buttons in {buttons(message)}")
    for index, button in enumerate(found):
        parts = button["custom_id"].split(":")
        if len(parts) != 5 or parts[4] != str(index) or (game and parts[2] != str(game)):
            fail(f"cell button {index} of game {game} has custom_id {button['custom_id']!r}")
    return found


def marks(message: JSON) -> list[str]:
    """Each cell's mark as shown (X, O, or . for an empty one)."""
    return [MARKS.get((b.get("emoji") or {}).get("name", ""), ".") for b in cells(message)]


def is_live(message: JSON) -> bool:
    return any(b.get("custom_id", "").startswith("ttt:resign:") for b in buttons(message))


def winner(shown: list[str]) -> str | None:
    for a, b, c in LINES:
        if shown[a] != "." and shown[a] == shown[b] == shown[c]:
            return shown[a]
    return None


def embed(message: JSON, what: str) -> JSON:
    embeds = message.get("embeds") or []
    if len(embeds) != 1:
        fail(f"{what}: {len(embeds)} embeds, not 1; the answer says {message.get('content')!r}")
    found: JSON = embeds[0]
    return found


def stats_value(control: str) -> str:
    """alice's record against minimax, as ``/ttt stats`` shows it (``0 W · 1 L · 0 D``)."""
    message = answered(slash(control, "ttt stats"), "/ttt stats", 4, ephemeral=False)
    fields = [f for f in embed(message, "/ttt stats").get("fields", []) if f["name"] == STATS_FIELD]
    if len(fields) != 1:
        fail(f"/ttt stats shows no single {STATS_FIELD!r} field: {embed(message, 'stats')}")
    value: str = fields[0]["value"]
    return value


def review(control: str, game: int | None) -> JSON:
    options = {} if game is None else {"game": game}
    message = answered(slash(control, "ttt review", **options), "/ttt review", 4, ephemeral=True)
    found = embed(message, "/ttt review")
    return {"title": found.get("title"), "description": found.get("description")}


def no_violations(control: str) -> None:
    """The sim checks each of the bot's API calls against Discord's documented rules."""
    state = call(control, "GET", "state")
    violations, unknown = state["violations"], state["unknown_routes"]
    if violations or unknown:
        fail(f"the sim saw violations {violations}, unknown routes {unknown}")


def wait(control: str, timeout: float) -> str:
    """Until one gateway session is connected and the guild's /ttt command is registered."""
    deadline = time.monotonic() + timeout
    state: JSON = {}
    while time.monotonic() < deadline:
        state = call(control, "GET", "state")
        connected = [s for s in state["sessions"] if s["connected"]]
        guild_commands = [
            c
            for key, registered in state["commands"].items()
            if key != "global"
            for c in registered
        ]
        if len(connected) == 1 and any(c.get("name") == "ttt" for c in guild_commands):
            return f"session {connected[0]['id']} connected, /ttt registered in the guild"
        time.sleep(0.5)
    fail(f"no bot connected with /ttt registered within {timeout:.0f} s: {state.get('sessions')}")


def play(control: str, out: Path) -> str:
    before = stats_value(control)
    if before != "0 W · 0 L · 0 D":
        fail(f"a fresh database, yet alice's stats against {LEVEL} are {before!r}")
    start = slash(control, "ttt vs-ai", difficulty=LEVEL)
    board = answered(start, f"/ttt vs-ai difficulty:{LEVEL}", 4, ephemeral=False)
    first = cells(board)
    game = int(first[0]["custom_id"].split(":")[2])
    footer = embed(board, "the board").get("footer", {}).get("text", "")
    if not footer.startswith(f"Game #{game} "):
        fail(f"the board's footer says {footer!r}, not Game #{game}")
    if marks(board) != ["."] * 9 or any(b.get("disabled") for b in first):
        fail(f"a new board that is not empty and open: {first}")
    moves: list[int] = []
    shown = marks(board)
    for _ in range(5):  # X moves at most five times on a 3x3 board
        if not is_live(board):
            break
        free = [i for i, b in enumerate(cells(board, game)) if not b.get("disabled")]
        if not free:
            fail(f"a live board with no free cell: {shown}")
        cell = free[0]
        record = click(control, board, cells(board, game)[cell]["custom_id"])
        board = answered(record, f"a click on cell {cell}", 7, ephemeral=False)
        now = marks(board)
        added = [i for i in range(9) if now[i] != shown[i]]
        if any(shown[i] != "." for i in added) or now[cell] != "X":
            fail(f"after a click on {cell} the board went from {shown} to {now}")
        bot_moves = [i for i in added if i != cell]
        if len(bot_moves) > 1 or any(now[i] != "O" for i in bot_moves):
            fail(f"after a click on {cell} the bot's answer went from {shown} to {now}")
        moves.append(cell)
        moves.extend(bot_moves)
        shown = now
    if is_live(board):
        fail(f"the game is not over after five moves of X: {shown}")
    if not all(b.get("disabled") for b in cells(board, game)):
        fail("a finished board with cells still open")
    won = winner(shown)
    text = embed(board, "the final board").get("description", "")
    said = "wins with" if won else "It's a draw."
    if said not in text:
        fail(f"the final board ({shown}, winner {won}) does not say {said!r}: {text!r}")
    if won == "X":
        fail(f"{LEVEL} lost to first-free-cell moves: {shown}")
    after = stats_value(control)
    expected = f"0 W · {1 if won else 0} L · {0 if won else 1} D"
    if after != expected:
        fail(f"after the game alice's stats against {LEVEL} are {after!r}, not {expected!r}")
    shown_review = review(control, None)
    if shown_review["title"] != f"Review of game #{game}":
        fail(f"/ttt review of the last game is titled {shown_review['title']!r}")
    described = str(shown_review["description"])
    if len(described.partition("\n\n")[2].splitlines()) != len(moves):
        fail(f"the review does not show {len(moves)} moves: {described!r}")
    no_violations(control)
    result = {"game": game, "moves": moves, "winner": won, "stats": after, "review": shown_review}
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return (
        f"game #{game} played: moves {moves}, {'won by ' + won if won else 'a draw'}; stats {after}"
    )


def check(control: str, expect: Path) -> str:
    saved = json.loads(expect.read_text(encoding="utf-8"))
    shown_review = review(control, saved["game"])
    if shown_review != saved["review"]:
        fail(f"/ttt review game:{saved['game']} now shows {shown_review}, was {saved['review']}")
    stats = stats_value(control)
    if stats != saved["stats"]:
        fail(f"alice's stats against {LEVEL} are now {stats!r}, were {saved['stats']!r}")
    no_violations(control)
    return f"game #{saved['game']} still there: the same review, stats {stats}"


def row(expect: Path, sqlite: Path | None, got: str | None) -> str:
    """The game's row of ``games`` (``status|winner|moves``, the moves as cell numbers) as
    read from an SQLite file (a stopped bot's: opened as immutable, so that nothing is
    written beside it) or as given, compared with the game played."""
    saved = json.loads(expect.read_text(encoding="utf-8"))
    wanted = f"finished|{saved['winner'] or ''}|{','.join(map(str, saved['moves']))}"
    if sqlite is not None:
        query = "SELECT status, coalesce(winner, ''), moves FROM games WHERE id = ?"
        connection = sqlite3.connect(f"file:{sqlite}?immutable=1", uri=True)
        try:
            rows = connection.execute(query, (saved["game"],)).fetchall()
        finally:
            connection.close()
        got = "\n".join("|".join(map(str, found)) for found in rows)
    if got != wanted:
        fail(f"the games row of game #{saved['game']} is {got!r}, not {wanted!r}")
    return f"game #{saved['game']}'s row: {got}"


def listeners(port: int) -> str:
    """The addresses listening on TCP ``port`` (``/proc/net/tcp`` and ``tcp6``), one a line."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.append(_address(address))
    return "\n".join(sorted(found))


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    # The kernel prints each 32-bit word in host (little-endian) order.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if len(words) == 4:
        return ".".join(str(b) for b in words)
    return ":".join(words[i : i + 2].hex() for i in range(0, 16, 2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=".ci/image_game.py", description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    control = argparse.ArgumentParser(add_help=False)
    control.add_argument("--control", required=True, help="http://127.0.0.1:PORT/_sim")
    expect = argparse.ArgumentParser(add_help=False)
    expect.add_argument("--expect", type=Path, required=True, help="what play wrote")
    verbs.add_parser("wait", parents=[control]).add_argument("--timeout", type=float, default=90)
    verbs.add_parser("play", parents=[control]).add_argument("--out", type=Path, required=True)
    rows = verbs.add_parser("row", parents=[expect])
    source = rows.add_mutually_exclusive_group(required=True)
    source.add_argument("--sqlite", type=Path, help="read it from this SQLite file")
    source.add_argument("--got", help="compare this status|winner|moves line")
    source.add_argument("--print-game", action="store_true", help="print the game's number")
    verbs.add_parser("check", parents=[control, expect])
    verbs.add_parser("listeners").add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    try:
        if args.verb == "wait":
            print(wait(args.control, args.timeout))
        elif args.verb == "play":
            print(play(args.control, args.out))
        elif args.verb == "row" and args.print_game:
            print(json.loads(args.expect.read_text(encoding="utf-8"))["game"])
        elif args.verb == "row":
            print(row(args.expect, args.sqlite, args.got))
        elif args.verb == "check":
            print(check(args.control, args.expect))
        else:
            print(listeners(args.port))
    except Failed as failure:
        print(f"image_game {args.verb}: FAILED: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
