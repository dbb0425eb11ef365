"""The load benchmark's yardstick: a bare discord.py bot whose button only edits its message.

    python -m bench.bare_bot        # DISCORD_TOKEN, DISCORD_API_BASE_URL, DISCORD_GATEWAY_URL

It is built as tttbot is (``Intents.none()``, ``DynamicItem`` buttons, slash commands that post
them, no cache of its own) and does the least a game bot could: ``/start`` posts one button,
and each click edits the message with a counter and the same button. ``bench/bot_load.py`` runs
it and tttbot under the same load; the ratio of the two is what the benchmark reports.

``/board`` posts what a tttbot board carries, an embed and ten buttons (nine cells and a
control), and each click on a cell edits it with the same shape and no rules, no storage: a
second yardstick, which tells discord.py's cost for the message apart from the bot's own.
``/rawboard`` is that board with its clicks answered from the raw gateway payload, beside
discord.py rather than through it (``bench.bot_load --raw-board``): what such a path saves.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
from typing import Any

import aiohttp
import discord
import orjson
import yarl
from discord import app_commands

from bot.stalls import watch_stalls

BUTTON_TEMPLATE = r"bare:(?P<count>[0-9]+)"


class CounterButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=BUTTON_TEMPLATE):
    def __init__(self, count: int) -> None:
        super().__init__(
            discord.ui.Button(label=str(count), custom_id=f"bare:{count}"),
        )
        self.count = count

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> CounterButton:
        return cls(int(match["count"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.edit_message(
            content=f"clicked {self.count + 1} times", view=counter_view(self.count + 1)
        )


def counter_view(count: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(CounterButton(count))
    return view


CELL_TEMPLATE = r"bare:(?P<count>[0-9]+):(?P<cell>[0-8])"
CELL_NAMES = [f"{column}{row}" for row in "123" for column in "ABC"]


class CellButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=CELL_TEMPLATE):
    def __init__(self, count: int, cell: int) -> None:
        super().__init__(
            discord.ui.Button(
                label=CELL_NAMES[cell], custom_id=f"bare:{count}:{cell}", row=cell // 3
            )
        )
        self.count = count

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> CellButton:
        return cls(int(match["count"]), int(match["cell"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.edit_message(
            embed=board_embed(self.count + 1), view=board_view(self.count + 1)
        )


def board_embed(count: int) -> discord.Embed:
    grid = "\n".join(" ".join("⬜" for _ in range(3)) for _ in range(3))
    embed = discord.Embed(
        title="Tic-tac-toe",
        description=f"❌ **player** vs ⭕ **bare bot**\n\n{grid}\n\n{count} clicks so far.",
    )
    embed.set_footer(text=f"Game {count}")
    return embed


def board_view(count: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for cell in range(9):
        view.add_item(CellButton(count, cell))
    control = CounterButton(count)
    control.item.row = 3
    view.add_item(control)
    return view


RAW_PREFIX = "raw:"


def raw_board(count: int) -> dict[str, Any]:
    """``/rawboard``'s message as the JSON Discord takes: the bare board's embed and buttons,
    with ids discord.py routes nowhere (``raw:<count>:<cell>``)."""
    cells = [
        {"type": 2, "style": 2, "label": CELL_NAMES[cell], "custom_id": f"raw:{count}:{cell}"}
        for cell in range(9)
    ]
    rows = [{"type": 1, "components": cells[row * 3 : row * 3 + 3]} for row in range(3)]
    control = {"type": 2, "style": 2, "label": str(count), "custom_id": f"raw:{count}:9"}
    rows.append({"type": 1, "components": [control]})
    return {"embeds": [board_embed(count).to_dict()], "components": rows}


class BareBot(discord.Client):
    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.none())
        self.tree = app_commands.CommandTree(self)

        @self.tree.command(name="start", description="Post a button")
        async def start(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("clicked 0 times", view=counter_view(0))

        @self.tree.command(name="board", description="Post a board of ten buttons")
        async def board(interaction: discord.Interaction) -> None:
            await interaction.response.send_message(embed=board_embed(0), view=board_view(0))

        @self.tree.command(name="rawboard", description="The board, clicks answered raw")
        async def rawboard(interaction: discord.Interaction) -> None:
            await self._answer_raw(str(interaction.id), interaction.token, 4, 0)

        self._raw_answers: set[asyncio.Task[None]] = set()
        self._raw_session = aiohttp.ClientSession()

    def answer_clicks_raw(self) -> None:
        """Answer ``/rawboard``'s clicks from the gateway payload itself, before discord.py
        builds anything for them (no Interaction, Message or View): what a bot could save by
        bypassing discord.py's objects on its hot path. Private API, for measuring only."""
        parse = self._connection.parsers["INTERACTION_CREATE"]

        def parse_raw_first(data: dict[str, Any]) -> None:
            custom_id = str(data.get("data", {}).get("custom_id", ""))
            if data.get("type") != 3 or not custom_id.startswith(RAW_PREFIX):
                parse(data)
                return
            count = int(custom_id.split(":")[1]) + 1
            task = asyncio.create_task(self._answer_raw(data["id"], data["token"], 7, count))
            self._raw_answers.add(task)
            task.add_done_callback(self._raw_answers.discard)

        self._connection.parsers["INTERACTION_CREATE"] = parse_raw_first

    async def _answer_raw(self, interaction_id: str, token: str, kind: int, count: int) -> None:
        # Straight to the callback route, as discord.py's own answers go (not through the bot
        # token's rate limiter, which would queue every answer in one bucket).
        url = f"{discord.http.Route.BASE}/interactions/{interaction_id}/{token}/callback"
        async with self._raw_session.post(
            url,
            data=orjson.dumps({"type": kind, "data": raw_board(count)}),
            headers={"Content-Type": "application/json"},
        ) as response:
            response.raise_for_status()

    async def setup_hook(self) -> None:
        self.add_dynamic_items(CounterButton, CellButton)
        self.answer_clicks_raw()
        await self.tree.sync()

    async def close(self) -> None:
        await super().close()
        await self._raw_session.close()


async def run(token: str) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    # The same stall watcher as tttbot's, so that both pay for it and both report stalls.
    stalls = asyncio.create_task(watch_stalls())
    async with BareBot() as bot:
        await bot.login(token)
        gateway = asyncio.create_task(bot.connect())
        await stop.wait()
        gateway.cancel()
    stalls.cancel()


def main() -> None:
    discord.utils.setup_logging(level=logging.INFO, root=True)
    logging.getLogger("bot.stalls").setLevel(logging.DEBUG)
    discord.http.Route.BASE = os.environ["DISCORD_API_BASE_URL"].rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(os.environ["DISCORD_GATEWAY_URL"])
    asyncio.run(run(os.environ["DISCORD_TOKEN"]))


if __name__ == "__main__":
    main()
