"""The Discord simulator serves apps used where the bot is not: a user-installed app in group
DMs, DMs between users and guilds the bot is not in, next to the bot's own DM and guilds.

What it must do as Discord does: report each interaction's ``context`` and
``authorizing_integration_owners``; refuse a command where the app is not installed or the
command does not allow that place; answer the bot's channel routes for channels it is not in
with 403 Missing Access, and send it no message events from them; and let interaction tokens
answer there, for 15 minutes of its clock.
"""

from __future__ import annotations

import discord
import pytest
from discord import app_commands

from tests.discord_sim import DiscordSim, InteractionRecord, SimUsageError
from tests.discord_sim.models import USER_APP_PERMISSIONS


class AnywhereClient(discord.Client):
    """``/where`` works in every place an app can be used, installed either way, and answers
    with a button; ``/guildonly`` keeps the defaults (a guild install, in guilds and the
    bot's DM). ``/post`` tries to send a channel message, as a bot that forgot where it is."""

    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default())
        self.tree = app_commands.CommandTree(self)
        self.seen: list[discord.Interaction] = []
        self.post_errors: list[discord.HTTPException] = []
        self.messages_seen: list[discord.Message] = []

        @self.tree.command(name="where", description="Where am I")
        @app_commands.allowed_installs(guilds=True, users=True)
        @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
        async def where(interaction: discord.Interaction) -> None:
            self.seen.append(interaction)
            view = discord.ui.View(timeout=None)
            view.add_item(discord.ui.Button(label="Press", custom_id="where:press"))
            await interaction.response.send_message("here", view=view)

        @self.tree.command(name="guildonly", description="Only where the bot was added")
        async def guildonly(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("ok")

        @self.tree.command(name="post", description="Post a channel message")
        @app_commands.allowed_installs(guilds=True, users=True)
        @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
        async def post(interaction: discord.Interaction) -> None:
            await interaction.response.defer(ephemeral=True)
            assert interaction.channel is not None
            channel = self.get_partial_messageable(interaction.channel.id)
            try:
                await channel.send("posted by the bot")
            except discord.HTTPException as error:
                self.post_errors.append(error)
            await interaction.followup.send("tried", ephemeral=True)

    async def setup_hook(self) -> None:
        await self.tree.sync()

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is discord.InteractionType.component:
            self.seen.append(interaction)
            await interaction.response.edit_message(content="pressed")

    async def on_message(self, message: discord.Message) -> None:
        self.messages_seen.append(message)


async def posted(sim: DiscordSim, ix: InteractionRecord) -> None:
    """Wait for ``/post`` to finish: it answers with a defer before it tries to post."""
    await sim.wait_for(lambda: bool(ix.followups), 5, what="/post's followup")


async def test_the_bots_own_dm_is_a_guild_install_context_it_can_post_in(sim: DiscordSim) -> None:
    s = sim.seed
    client = AnywhereClient()
    async with sim.running(client):
        ix = await sim.slash(s.carol, sim.dm_channel(s.carol), "where")
        assert ix.payload["context"] == 1
        assert ix.payload["authorizing_integration_owners"] == {"0": "0"}
        await posted(sim, await sim.slash(s.carol, sim.dm_channel(s.carol), "post"))
    assert client.post_errors == []
    assert [m.content for m in sim.messages(sim.dm_channel(s.carol))][-1] == "posted by the bot"


async def test_a_group_dm_needs_the_users_install_and_is_closed_to_the_bot(
    sim: DiscordSim,
) -> None:
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob, s.carol)
    client = AnywhereClient()
    async with sim.running(client):
        with pytest.raises(SimUsageError, match="installed"):
            await sim.slash(s.alice, group, "where")
        sim.install_for_user(s.alice)
        ix = await sim.slash(s.alice, group, "where")
        assert ix.payload["context"] == 2
        assert ix.payload["authorizing_integration_owners"] == {"1": str(s.alice.id)}
        assert ix.payload["app_permissions"] == str(USER_APP_PERMISSIONS)
        assert ix.payload["channel"]["type"] == 3
        assert client.seen[-1].is_user_integration()
        assert not client.seen[-1].is_guild_integration()
        # Bob has not installed the app, but the button is on a message of Alice's install.
        assert ix.message is not None
        click = await sim.click(s.bob, ix.message, "where:press")
        assert click.payload["authorizing_integration_owners"] == {"1": str(s.alice.id)}
        assert click.message is not None
        assert click.message.content == "pressed"
        # A command that is for guild installs only is not offered there at all.
        with pytest.raises(SimUsageError):
            await sim.slash(s.alice, group, "guildonly")
        # The bot's own channel routes are refused, and it hears nothing from the group.
        await posted(sim, await sim.slash(s.alice, group, "post"))
        assert [error.status for error in client.post_errors] == [403]
        assert isinstance(client.post_errors[0], discord.Forbidden)
        assert client.post_errors[0].code == 50001
        await sim.send_message(s.bob, group, "hello all")
    assert client.messages_seen == []
    assert "posted by the bot" not in [m.content for m in sim.messages(group)]


async def test_a_dm_between_users_is_a_private_channel_context(sim: DiscordSim) -> None:
    s = sim.seed
    dm = sim.private_dm(s.alice, s.bob)
    sim.install_for_user(s.bob)
    async with sim.running(AnywhereClient()):
        ix = await sim.slash(s.bob, dm, "where")
        assert ix.payload["context"] == 2
        assert ix.payload["channel"]["type"] == 1
        with pytest.raises(SimUsageError, match="not in DM channel"):
            await sim.slash(s.carol, dm, "where")


async def test_a_guild_without_the_bot_works_through_the_users_install_only(
    sim: DiscordSim,
) -> None:
    s = sim.seed
    elsewhere = sim.add_guild("elsewhere", with_bot=False)
    channel = sim.add_channel(elsewhere, "lobby")
    sim.add_member(elsewhere, s.alice)
    client = AnywhereClient()
    async with sim.running(client):
        assert client.get_guild(elsewhere.id) is None  # not in READY: the bot is not a member
        with pytest.raises(SimUsageError):
            await sim.slash(s.alice, channel, "where")
        sim.install_for_user(s.alice)
        ix = await sim.slash(s.alice, channel, "where")
        assert ix.payload["context"] == 0
        assert ix.payload["guild_id"] == str(elsewhere.id)
        assert ix.payload["authorizing_integration_owners"] == {"1": str(s.alice.id)}
        assert not client.seen[-1].is_guild_integration()
        with pytest.raises(SimUsageError):
            await sim.slash(s.alice, channel, "guildonly")
        await posted(sim, await sim.slash(s.alice, channel, "post"))
        # In the bot's own guild both installs reach Alice, and the guild's is reported.
        home = await sim.slash(s.alice, s.channel, "where")
    assert [error.code for error in client.post_errors] == [50001]
    assert home.payload["authorizing_integration_owners"] == {
        "0": str(s.guild.id),
        "1": str(s.alice.id),
    }


async def test_a_guild_that_added_the_bot_without_the_commands_scope_refuses_its_commands(
    sim: DiscordSim,
) -> None:
    """Added with the bot scope alone: the bot is a member, but Discord refuses the app's
    guild commands there (403 Missing Access) and the guild's install offers none of its
    commands; a member's own install still does."""
    s = sim.seed
    bare = sim.add_guild("bot scope only", commands_scope=False)
    channel = sim.add_channel(bare, "lobby")
    sim.add_member(bare, s.alice)
    client = AnywhereClient()
    async with sim.running(client):
        assert client.get_guild(bare.id) is not None  # a member: in READY
        with pytest.raises(discord.Forbidden) as refused:
            await client.tree.sync(guild=discord.Object(bare.id))
        assert (refused.value.status, refused.value.code) == (403, 50001)
        await client.tree.sync(guild=discord.Object(s.guild.id))  # a guild with the scope
        with pytest.raises(SimUsageError):
            await sim.slash(s.alice, channel, "where")
        sim.install_for_user(s.alice)
        ix = await sim.slash(s.alice, channel, "where")
    assert ix.payload["authorizing_integration_owners"] == {"1": str(s.alice.id)}


async def test_interaction_tokens_answer_for_15_minutes_where_the_bot_is_not(
    sim: DiscordSim,
) -> None:
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    client = AnywhereClient()
    async with sim.running(client):
        ix = await sim.slash(s.alice, group, "where")
        interaction = client.seen[-1]
        sim.advance_clock(14 * 60)
        await interaction.edit_original_response(content="still mine")
        assert ix.message is not None
        assert ix.message.content == "still mine"
        sim.advance_clock(61)
        with pytest.raises(discord.HTTPException) as refused:
            await interaction.edit_original_response(content="too late")
    assert refused.value.status == 401
    assert ix.message.content == "still mine"
    assert any("expire after 15 min" in v for v in sim.take_violations())
