"""A minimal discord.py client used by the simulator's own tests.

It exercises each kind of interaction response the sim serves: a plain reply, an ephemeral
reply, a thinking defer with followups, a View whose buttons edit their message in place,
a deferred update followed by an @original edit, autocomplete, a modal, and a few handlers
that break Discord's rules on purpose (answering twice, answering late).
``LayoutDemoClient`` adds ``/grid``, one components-v2 message (discord.py's ``LayoutView``)
holding a 5x5 board of buttons, a text display, a section and a control row.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import discord
from discord import app_commands


class CellButton(discord.ui.Button["BoardView"]):
    def __init__(self, index: int) -> None:
        super().__init__(label="\u200b", custom_id=f"cell:{index}", row=index // 3)
        self.index = index

    async def callback(self, interaction: discord.Interaction) -> None:
        self.disabled = True
        self.label = "X"
        await interaction.response.edit_message(content=f"played {self.index}", view=self.view)


class BoardView(discord.ui.View):
    def __init__(self) -> None:
        super().__init__(timeout=None)
        for index in range(9):
            self.add_item(CellButton(index))

    @discord.ui.button(label="Refresh", custom_id="refresh", row=3)
    async def refresh(
        self, interaction: discord.Interaction, button: discord.ui.Button[BoardView]
    ) -> None:
        await interaction.response.defer()
        await interaction.edit_original_response(content="refreshed")


class NameModal(discord.ui.Modal, title="Your name"):
    name: discord.ui.TextInput[NameModal] = discord.ui.TextInput(label="Name", custom_id="name")

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"hello {self.name.value}", ephemeral=True)


class DemoClient(discord.Client):
    def __init__(
        self,
        *,
        intents: discord.Intents | None = None,
        sync_guild: discord.abc.Snowflake | None = None,
        late_delay: float = 0.0,
        **options: object,
    ) -> None:
        # "intents or default()" would replace Intents.none(), which is falsy.
        chosen = intents if intents is not None else discord.Intents.default()
        super().__init__(intents=chosen, **options)  # type: ignore[arg-type]
        self.tree = app_commands.CommandTree(self)
        self.sync_guild = sync_guild
        self.late_delay = late_delay
        self.errors: list[BaseException] = []
        # Set with the first error: tests wait on it for what the sim cannot see.
        self.failed = asyncio.Event()
        self.seen: list[discord.Interaction] = []
        self.kept: list[discord.Interaction] = []
        self.received: list[discord.Message] = []
        self._define_commands()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # discord.py sleeps 5 s before every IDENTIFY but the first (Discord's identify rate
        # limit, which the sim does not have); a fresh session after INVALID_SESSION would
        # wait that long.
        return None

    async def setup_hook(self) -> None:
        if self.sync_guild is not None:
            self.tree.copy_global_to(guild=self.sync_guild)
            self.tree.clear_commands(guild=None)
            await self.tree.sync(guild=self.sync_guild)
        await self.tree.sync()

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        self.seen.append(interaction)

    async def on_message(self, message: discord.Message) -> None:
        self.received.append(message)

    def _define_commands(self) -> None:
        tree = self.tree

        @tree.error
        async def on_error(
            interaction: discord.Interaction, error: app_commands.AppCommandError
        ) -> None:
            self.errors.append(error)
            self.failed.set()

        @tree.command(description="Repeat the text")
        async def echo(interaction: discord.Interaction, text: str, hidden: bool = False) -> None:
            await interaction.response.send_message(text, ephemeral=hidden)

        @tree.command(description="Think, then answer with followups")
        async def slow(interaction: discord.Interaction, secret: bool = False) -> None:
            await interaction.response.defer(thinking=True, ephemeral=secret)
            await interaction.followup.send("done")
            await interaction.followup.send("extra")

        @tree.command(description="Show a board of buttons")
        async def board(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("Board", view=BoardView())

        @tree.command(description="Ask for a name")
        async def form(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(NameModal())

        @tree.command(description="Moderators only")
        @app_commands.default_permissions(manage_messages=True)
        async def purge(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("purged", ephemeral=True)

        @tree.command(description="Answer after late_delay seconds")
        async def late(interaction: discord.Interaction) -> None:
            await asyncio.sleep(self.late_delay)
            await interaction.response.send_message("late")

        @tree.command(description="Answer twice (a bug on purpose)")
        async def twice(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("one")
            # discord.py refuses a second answer through the same object; a fresh one
            # reaches the wire, as two code paths answering one interaction would.
            await discord.InteractionResponse(interaction).send_message("two")

        @tree.command(description="Reply and keep the interaction for later")
        async def keep(interaction: discord.Interaction) -> None:
            self.kept.append(interaction)
            await interaction.response.send_message("kept")

        @tree.command(description="Reply with a given number of characters")
        async def long(
            interaction: discord.Interaction, size: app_commands.Range[int, 1, 5000]
        ) -> None:
            await interaction.response.send_message("x" * size)

        ttt = app_commands.Group(name="ttt", description="Tic-tac-toe")

        @ttt.command(description="Challenge someone")
        async def start(
            interaction: discord.Interaction,
            opponent: discord.Member,
            level: Literal["easy", "hard"] = "easy",
        ) -> None:
            await interaction.response.send_message(
                f"{interaction.user.mention} vs {opponent.mention} ({level})",
                allowed_mentions=discord.AllowedMentions(users=[opponent]),
            )

        @ttt.command(description="Play a cell")
        async def move(interaction: discord.Interaction, cell: str) -> None:
            await interaction.response.send_message(f"move {cell}")

        @move.autocomplete("cell")
        async def cell_choices(
            interaction: discord.Interaction, current: str
        ) -> list[app_commands.Choice[str]]:
            cells = [f"{row}{col}" for row in "ABC" for col in "123"]
            return [
                app_commands.Choice(name=c, value=c)
                for c in cells
                if c.lower().startswith(current.lower())
            ]

        tree.add_command(ttt)


class GridCell(discord.ui.Button["GridView"]):
    def __init__(self, index: int) -> None:
        super().__init__(label="\u200b", custom_id=f"grid:{index}")
        self.index = index

    async def callback(self, interaction: discord.Interaction) -> None:
        assert self.view is not None
        self.disabled = True
        self.label = "X"
        self.view.status.content = f"played {self.index}"
        # A components-v2 message has no content: the status text display carries it.
        await interaction.response.edit_message(view=self.view)


class GridView(discord.ui.LayoutView):
    """A 5x5 board in one components-v2 message: a container holding a text display and
    five action rows of five buttons, a section whose accessory is a button, and a control
    row. 37 components, nested ones included, under Discord's 40."""

    def __init__(self) -> None:
        super().__init__(timeout=None)
        self.status: discord.ui.TextDisplay[GridView] = discord.ui.TextDisplay("your move")
        board: discord.ui.Container[GridView] = discord.ui.Container(self.status)
        for row in range(5):
            board.add_item(discord.ui.ActionRow(*(GridCell(row * 5 + col) for col in range(5))))
        self.add_item(board)
        hint = discord.ui.Button["GridView"](label="Hint", custom_id="grid:hint")
        hint.callback = self.hint  # type: ignore[method-assign]
        self.add_item(discord.ui.Section("Stuck?", accessory=hint))
        resign = discord.ui.Button["GridView"](label="Resign", custom_id="grid:resign")
        resign.callback = self.resign  # type: ignore[method-assign]
        self.add_item(discord.ui.ActionRow(resign))

    async def hint(self, interaction: discord.Interaction) -> None:
        self.status.content = "try the centre"
        await interaction.response.edit_message(view=self)

    async def resign(self, interaction: discord.Interaction) -> None:
        self.status.content = "resigned"
        await interaction.response.edit_message(view=self)


class LayoutDemoClient(DemoClient):
    """``DemoClient`` plus ``/grid``, which answers with a ``GridView``, and ``/gridlater``,
    which defers and sends it as the followup that fills the "thinking" message."""

    def _define_commands(self) -> None:
        super()._define_commands()

        @self.tree.command(description="Show a 5x5 board in one components-v2 message")
        async def grid(interaction: discord.Interaction) -> None:
            await interaction.response.send_message(view=GridView())

        @self.tree.command(description="Think, then show the board as the followup")
        async def gridlater(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True)
            await interaction.followup.send(view=GridView())


class ShardedDemoClient(discord.AutoShardedClient):
    """Two shards answering /where with the shard that received the interaction."""

    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default())
        self.tree = app_commands.CommandTree(self)
        self.shards_seen: list[int | None] = []

        @self.tree.command(description="Which shard am I on?")
        async def where(interaction: discord.Interaction) -> None:
            guild = interaction.guild
            shard = guild.shard_id if guild else None
            self.shards_seen.append(shard)
            await interaction.response.send_message(f"shard {shard}")

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # discord.py waits 5 s between IDENTIFYs to respect Discord's rate limit; the sim
        # has none.
        return None

    async def setup_hook(self) -> None:
        await self.tree.sync()
