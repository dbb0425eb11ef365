"""The Discord simulator serves the real discord.py client: login, commands, responses,
components, autocomplete, modals, reconnects and sharding."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import discord
import pytest

from tests.discord_sim import DiscordSim, SimClientDied, SimTimeout, SimUsageError, openapi
from tests.discord_sim.demo_client import DemoClient, ShardedDemoClient
from tests.discord_sim.models import (
    ALL_PERMISSIONS,
    PERM_MANAGE_THREADS,
    PERM_SEND_MESSAGES,
    PERM_SEND_MESSAGES_IN_THREADS,
)


async def test_login_ready_caches_seeded_guild(sim: DiscordSim) -> None:
    s = sim.seed
    client = DemoClient()
    async with sim.running(client):
        guild = client.get_guild(s.guild.id)
        assert guild is not None
        assert not guild.unavailable
        assert {c.name for c in guild.text_channels} == {"general", "random"}
        assert [t.name for t in guild.threads] == ["side-thread"]
        assert client.user is not None
        assert client.user.id == sim.bot_user.id
        assert client.application_id == sim.application_id
        registered = {c["name"] for c in sim.commands()}
        assert {"echo", "ttt", "board", "slow"} <= registered
    assert sim.identifies == 1
    assert sim.unknown_routes == []


async def test_the_client_is_ready_without_discord_pys_two_second_guild_wait(
    sim: DiscordSim,
) -> None:
    """discord.py waits 2 s after the last GUILD_CREATE before on_ready; ``sim.running``
    caps that wait (``ready_delay``, 50 ms), so a test starts at once."""
    client = DemoClient()
    assert client._connection.guild_ready_timeout == 2.0
    started = time.monotonic()
    async with sim.running(client):
        ready_in = time.monotonic() - started
        assert client._connection.guild_ready_timeout == 0.05
        assert client.get_guild(sim.seed.guild.id) is not None
    assert ready_in < 2.0


async def test_wrong_token_is_a_login_failure(sim: DiscordSim) -> None:
    with pytest.raises(discord.LoginFailure):
        async with sim.running(DemoClient(), token="another-token"):
            pass
    assert discord.http.Route.BASE == "https://discord.com/api/v10"


async def test_the_application_says_how_many_guilds_the_bot_is_in(sim: DiscordSim) -> None:
    """Both application routes answer Discord's application object, as its spec has it, with
    the count of the guilds the bot is a member of: a bot that asks no intent learns of no
    guild otherwise."""
    s = sim.seed
    sim.add_guild("elsewhere", with_bot=False)
    sim.add_guild("second home")
    spec = openapi.load().validator("/components/schemas/PrivateApplicationResponse")
    async with sim.running(DemoClient()) as client:
        assert client.application is not None
        assert client.application.approximate_guild_count == 2  # the seed's guild and "second home"
        sim.remove_member(s.guild, sim.bot_user)
        info = await client.application_info()  # GET /oauth2/applications/@me
        assert info.id == sim.application_id
        assert info.name == sim.bot_user.name
        assert info.approximate_guild_count == 1
        for route in ("/oauth2/applications/@me", "/applications/@me"):
            payload = await client.http.request(discord.http.Route("GET", route))
            assert [error.message for error in spec.iter_errors(payload)] == []
            assert payload["approximate_guild_count"] == 1
    with pytest.raises(SimUsageError):
        sim.remove_member(s.guild, sim.bot_user)  # no longer a member


async def test_running_restores_discord_globals(sim: DiscordSim) -> None:
    before = (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    async with sim.running(DemoClient()):
        assert sim.api_base_url == discord.http.Route.BASE
        assert str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == sim.gateway_url
    assert before == (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)


async def test_slash_command_reply_is_recorded(sim: DiscordSim) -> None:
    s = sim.seed
    client = DemoClient()
    async with sim.running(client):
        ix = await sim.slash(s.alice, s.channel, "echo", text="hello there")
    assert ix.response_type == 4
    assert not ix.ephemeral
    assert ix.content == "hello there"
    assert ix.message is not None
    assert ix.message.author is sim.bot_user
    assert sim.messages(s.channel) == [ix.message]
    assert sim.interactions == [ix]
    assert ix.latency is not None
    assert ix.latency < sim.response_deadline
    seen = client.seen[0]
    assert seen.user.id == s.alice.id
    assert seen.channel is not None
    assert seen.channel.id == s.channel.id
    assert seen.guild_id == s.guild.id
    assert not seen.permissions.manage_messages
    assert seen.app_permissions.send_messages


async def test_a_reply_asked_with_response_gets_the_callback_resource(sim: DiscordSim) -> None:
    """discord.py asks for the callback's resource (``with_response``) and reads the new
    message's id out of it: the sim answers Discord's JSON, not a bare 204."""
    s = sim.seed
    client = DemoClient()
    answers: list[discord.InteractionCallbackResponse[discord.Client]] = []

    @client.tree.command(description="Reply and keep what Discord answered")
    async def told(interaction: discord.Interaction) -> None:
        answers.append(await interaction.response.send_message("told", ephemeral=True))

    async with sim.running(client):
        ix = await sim.slash(s.alice, s.channel, "told")
    (answer,) = answers
    assert ix.message is not None
    assert (answer.id, answer.message_id) == (ix.id, ix.message.id)
    assert answer.type is discord.InteractionResponseType.channel_message
    assert answer.is_ephemeral()
    assert not answer.is_thinking()
    assert isinstance(answer.resource, discord.InteractionMessage)
    assert (answer.resource.id, answer.resource.content) == (ix.message.id, "told")
    (callback,) = [r for r in sim.requests if r.path.endswith("/callback")]
    assert callback.status == 200


async def test_ephemeral_reply_is_only_for_its_user(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        ix = await sim.slash(s.bob, s.channel, "echo", text="psst", hidden=True)
        assert ix.ephemeral
        assert ix.message is not None
        assert ix.message.interaction_user is s.bob
        # Ephemeral messages do not exist for the bot's REST calls.
        channel = client.get_channel(s.channel.id)
        assert isinstance(channel, discord.TextChannel)
        with pytest.raises(discord.NotFound):
            await channel.fetch_message(ix.message.id)


async def test_slash_in_a_thread_and_in_dms(sim: DiscordSim) -> None:
    s = sim.seed
    client = DemoClient()
    async with sim.running(client):
        in_thread = await sim.slash(s.carol, s.thread, "echo", text="threaded")
        in_dm = await sim.slash(s.carol, sim.dm_channel(s.carol), "echo", text="private")
        with pytest.raises(SimUsageError, match="bots cannot invoke"):
            await sim.slash(s.other_bot, s.channel, "echo", text="beep")
    assert in_thread.message is not None
    assert in_thread.message.channel is s.thread
    assert isinstance(client.seen[0].channel, discord.Thread)
    assert in_dm.guild is None
    assert in_dm.content == "private"
    assert isinstance(client.seen[1].channel, discord.DMChannel)
    assert client.seen[1].guild_id is None
    assert "member" not in in_dm.payload
    assert in_dm.payload["user"]["id"] == str(s.carol.id)


async def test_user_option_carries_resolved_member_and_allowed_mentions(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        ix = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob, level="hard")
    assert ix.content == f"<@{s.alice.id}> vs <@{s.bob.id}> (hard)"
    assert ix.payload["data"]["resolved"]["users"][str(s.bob.id)]["username"] == "bob"
    assert ix.message is not None
    assert ix.message.allowed_mentions is not None
    assert ix.message.allowed_mentions["users"] == [s.bob.id]
    assert ix.message.pinged == [s.bob.id]


async def test_deferred_reply_with_followups(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        ix = await sim.slash(s.alice, s.channel, "slow")
        assert ix.response_type == 5
        await ix.wait_done()
        followups = await ix.wait_followups(2)
    assert ix.message is not None
    assert not ix.message.loading
    assert followups[0] is ix.message
    assert [m.content for m in followups] == ["done", "extra"]
    assert ix.message.edits == []
    assert [m.content for m in sim.messages(s.channel)] == ["done", "extra"]


async def test_ephemeral_defer_makes_first_followup_ephemeral(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        ix = await sim.slash(s.alice, s.channel, "slow", secret=True)
        followups = await ix.wait_followups(2)
    assert followups[0].ephemeral
    assert followups[0].interaction_user is s.alice
    assert not followups[1].ephemeral


async def test_button_click_edits_message_in_place(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        shown = await sim.slash(s.alice, s.channel, "board")
        board = shown.message
        assert board is not None
        assert len(board.buttons()) == 10
        clicked = await sim.click(s.bob, board, "cell:4")
        assert clicked.response_type == 7
        assert clicked.message is board
        assert board.content == "played 4"
        assert board.button("cell:4")["disabled"] is True
        assert board.button("cell:4")["label"] == "X"
        assert [v.content for v in board.edits] == ["Board"]
        # The message shares its lists with its history and the payloads it handed out (an
        # edit replaces them): what the click carried and the version before it still show
        # the cell free.
        sent = clicked.payload["message"]["components"]
        assert sent[1]["components"][1].get("disabled", False) is False  # cell:4, as sent
        assert board.edits[0].components == sent
        assert board.components != sent
        with pytest.raises(SimUsageError, match="disabled"):
            await sim.click(s.bob, board, "cell:4")
        with pytest.raises(SimUsageError, match="no component"):
            await sim.click(s.bob, board, "cell:42")
        again = await sim.click(s.alice, board.id, "cell:0")
        assert again.message is board
        assert board.content == "played 0"
    assert len(sim.messages(s.channel)) == 1


async def test_deferred_update_then_edit_original(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        shown = await sim.slash(s.alice, s.channel, "board")
        assert shown.message is not None
        ix = await sim.click(s.alice, shown.message, "refresh")
        assert ix.response_type == 6
        await ix.wait_done()
    assert ix.original_edits == 1
    assert shown.message.content == "refreshed"


async def test_the_original_response_is_read_edited_and_deleted(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        ix = await sim.slash(s.alice, s.channel, "keep")
        assert ix.message is not None
        kept = client.kept[0]
        original = await kept.original_response()
        assert (original.id, original.content) == (ix.message.id, "kept")
        await kept.edit_original_response(content="edited")
        assert sim.message(ix.message.id).content == "edited"
        await kept.delete_original_response()
        assert sim.message(ix.message.id).deleted
        # discord.py keeps the message it read: asked again, as a bot that lost it would.
        url = f"{sim.api_base_url}/webhooks/{sim.application_id}/{ix.token}/messages/@original"
        async with aiohttp.ClientSession() as http, http.get(url) as gone:
            assert gone.status == 404
            assert (await gone.json())["code"] == 10008
    original_route = "/webhooks/{webhook_id}/{webhook_token}/messages/@original"
    asked = [(r.route, r.status) for r in sim.requests if r.path.endswith("/@original")]
    assert asked == [
        (f"GET {original_route}", 200),
        (f"PATCH {original_route}", 200),
        (f"DELETE {original_route}", 204),
        (f"GET {original_route}", 404),
    ]


async def test_click_without_registered_view_times_out_clearly(sim: DiscordSim) -> None:
    s = sim.seed
    client = DemoClient()
    async with sim.running(client):
        shown = await sim.slash(s.alice, s.channel, "board")
        assert shown.message is not None
        # discord.py stores the View once send_message's reply is read, just after the sim
        # wrote it: let that happen (it is no sim event), then forget it, as after a restart
        # without add_view.
        store = client._connection._view_store
        for _ in range(200):
            if store._views:
                break
            await asyncio.sleep(0.01)
        assert store._views
        store._views.clear()
        with pytest.raises(SimTimeout, match="no View is registered"):
            await sim.click(s.alice, shown.message, "cell:1", timeout=0.3)


async def test_autocomplete_returns_choices(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        choices = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="b")
    assert choices == [{"name": c, "value": c} for c in ("B1", "B2", "B3")]
    assert sim.interactions[-1].response_type == 8


async def test_modal_round_trip(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        shown = await sim.slash(s.carol, s.channel, "form")
        assert shown.response_type == 9
        assert shown.modal is not None
        submitted = await sim.submit_modal(s.carol, shown, name="Carol")
    assert submitted.type == 5
    assert submitted.content == "hello Carol"
    assert submitted.ephemeral


async def test_slash_is_checked_against_registered_commands(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        with pytest.raises(SimUsageError, match="not a registered slash command"):
            await sim.slash(s.alice, s.channel, "nope")
        with pytest.raises(SimUsageError, match="no subcommand 'jump'"):
            await sim.slash(s.alice, s.channel, "ttt jump")
        with pytest.raises(SimUsageError, match="command group"):
            await sim.slash(s.alice, s.channel, "ttt")
        with pytest.raises(SimUsageError, match="no option"):
            await sim.slash(s.alice, s.channel, "echo", text="a", colour="red")
        with pytest.raises(SimUsageError, match="expects a str"):
            await sim.slash(s.alice, s.channel, "echo", text=3)
        with pytest.raises(SimUsageError, match="required option"):
            await sim.slash(s.alice, s.channel, "ttt start")
        with pytest.raises(SimUsageError, match="choices"):
            await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob, level="medium")
        with pytest.raises(SimUsageError, match="within"):
            await sim.slash(s.alice, s.channel, "long", size=9000)
        with pytest.raises(SimUsageError, match="default_member_permissions"):
            await sim.slash(s.alice, s.channel, "purge")
        ix = await sim.slash(s.moderator, s.channel, "purge")
        assert ix.content == "purged"
        with pytest.raises(SimUsageError, match="not registered with autocomplete"):
            await sim.autocomplete(s.alice, s.channel, "echo", focused="text", text="h")
    assert len(sim.interactions) == 1


async def test_guild_commands_carry_guild_id(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient(sync_guild=discord.Object(s.guild.id))):
        assert sim.commands() == []
        assert {c["name"] for c in sim.commands(s.guild)} >= {"echo", "ttt"}
        ix = await sim.slash(s.alice, s.channel, "echo", text="scoped")
    assert ix.payload["data"]["guild_id"] == str(s.guild.id)
    assert ix.content == "scoped"


async def test_heartbeats_are_acknowledged(sim: DiscordSim) -> None:
    """discord.py measures its latency from a heartbeat to its ACK (infinite before the first
    ACK), and reconnects when ACKs stop coming."""
    sim.heartbeat_interval_ms = 50
    async with sim.running(DemoClient()) as client:
        (session,) = sim.live_sessions()
        await sim.wait_for(lambda: session.heartbeats >= 3)
        await sim.wait_for(lambda: client.latency < 1.0)
        assert session.resumes == 0
    assert sim.identifies == 1


async def test_reconnect_resumes_and_replays_missed_events(sim: DiscordSim) -> None:
    s = sim.seed
    intents = discord.Intents.default()
    intents.message_content = True
    async with sim.running(DemoClient(intents=intents)) as client:
        await sim.drop_connection()
        session = sim.live_sessions()[0]
        assert session.resumes == 1
        ix = await sim.slash(s.alice, s.channel, "echo", text="still here")
        assert ix.content == "still here"
        # What happens while the socket is down reaches the client through the RESUME replay.
        await sim.drop_connection(wait=False)
        assert session.conn is None
        await sim.send_message(s.bob, s.channel, "while you were away")
        await sim.wait_for(lambda: session.resumes == 2)
        ix = await sim.slash(s.alice, s.channel, "echo", text="back")
        assert ix.content == "back"
        assert "while you were away" in [m.content for m in client.received]
        await sim.request_reconnect()
        assert session.resumes == 3
        assert client.is_ready()
    assert sim.identifies == 1


async def test_two_shards_route_guilds_by_id(sim: DiscordSim) -> None:
    s = sim.seed
    sim.recommended_shards = 2
    other = sim.add_guild("Other Guild", shard=(1 - s.guild.shard_id(2), 2))
    other_channel = sim.add_channel(other, "lobby")
    sim.add_member(other, s.alice)
    client = ShardedDemoClient()
    async with sim.running(client):
        assert client.shard_count == 2
        assert sorted(sess.shard for sess in sim.live_sessions() if sess.shard) == [(0, 2), (1, 2)]
        assert {g.id for g in client.guilds} == {s.guild.id, other.id}
        first = await sim.slash(s.alice, s.channel, "where")
        second = await sim.slash(s.alice, other_channel, "where")
    assert first.shard_id == s.guild.shard_id(2)
    assert second.shard_id == other.shard_id(2)
    assert first.shard_id != second.shard_id
    assert client.shards_seen == [first.shard_id, second.shard_id]
    assert ("GET", "/gateway/bot") in [(r.method, r.path) for r in sim.requests]


async def test_members_intent_gets_member_chunks(sim: DiscordSim) -> None:
    s = sim.seed
    intents = discord.Intents.default()
    intents.members = True
    async with sim.running(DemoClient(intents=intents)) as client:
        guild = client.get_guild(s.guild.id)
        assert guild is not None
        assert guild.chunked
        member = guild.get_member(s.moderator.id)
        assert member is not None
        assert member.guild_permissions.manage_messages
        bob = guild.get_member(s.bob.id)
        assert bob is not None
        assert not bob.guild_permissions.manage_messages


async def test_without_members_intent_only_the_bot_is_cached(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        guild = client.get_guild(s.guild.id)
        assert guild is not None
        assert guild.member_count == len(s.guild.members)
        assert [m.id for m in guild.members] == [sim.bot_user.id]


async def test_bot_rest_calls_outside_interactions(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        channel = await client.fetch_channel(s.channel.id)
        assert isinstance(channel, discord.TextChannel)
        sent = await channel.send("a board", allowed_mentions=discord.AllowedMentions.none())
        fetched = await channel.fetch_message(sent.id)
        assert fetched.content == "a board"
        await fetched.edit(content="timed out")
        user = await client.fetch_user(s.carol.id)
        assert user.name == "carol"
        guild = client.get_guild(s.guild.id)
        assert guild is not None
        member = await guild.fetch_member(s.moderator.id)
        assert member.guild_permissions.manage_messages
        # Someone who is not (or no longer) a member: Discord's 404 Unknown Member.
        with pytest.raises(discord.NotFound) as unknown:
            await guild.fetch_member(sim.add_user("stranger").id)
        assert unknown.value.code == 10007
        dm = await client.create_dm(user)
        await dm.send("hi carol")
        await sent.delete()
    stored = sim.message(sent.id)
    assert [v.content for v in stored.edits] == ["a board"]
    assert stored.content == "timed out"
    assert stored.deleted
    assert stored.allowed_mentions == {"parse": []}
    assert [m.content for m in sim.messages(sim.dm_channel(s.carol))] == ["hi carol"]
    assert sim.unknown_routes == []


async def test_threads_are_listed_counted_limited_and_deleted_as_discord_does(
    sim: DiscordSim,
) -> None:
    """The server's active threads are listed with their messages counted; a server at its
    limit of active threads refuses another (400, 160006) until one is archived; deleting a
    thread asks for Manage Threads even of its creator (403, 50013)."""
    s = sim.seed
    s.guild.max_active_threads = 3  # the seed's side-thread, and two more
    async with sim.running(DemoClient()) as client:
        http = client.http
        made = [
            await http.start_thread_without_message(
                s.channel.id, name=f"game {n}", auto_archive_duration=10080, type=11
            )
            for n in range(2)
        ]
        with pytest.raises(discord.HTTPException) as full:
            await http.start_thread_without_message(
                s.channel.id, name="one too many", auto_archive_duration=10080, type=11
            )
        assert (full.value.status, full.value.code) == (400, 160006)
        await http.send_message(
            int(made[0]["id"]),
            params=discord.http.MultipartParameters(
                payload={"content": "a board"}, multipart=None, files=None
            ),
        )
        listed = await http.get_active_threads(s.guild.id)
        by_name = {thread["name"]: thread for thread in listed["threads"]}
        assert set(by_name) == {"side-thread", "game 0", "game 1"}
        assert by_name["game 0"]["message_count"] == 1
        assert by_name["game 0"]["last_message_id"] is not None
        assert by_name["game 1"]["message_count"] == 0
        assert by_name["game 1"]["last_message_id"] is None
        assert by_name["game 1"]["owner_id"] == str(sim.bot_user.id)
        assert {member["id"] for member in listed["members"]} >= {t["id"] for t in made}
        await http.edit_channel(int(made[1]["id"]), archived=True)
        assert await http.start_thread_without_message(
            s.channel.id, name="room again", auto_archive_duration=10080, type=11
        )
        with pytest.raises(discord.Forbidden) as refused:
            await http.delete_channel(int(made[0]["id"]))
        assert refused.value.code == 50013
        s.guild.everyone.permissions |= PERM_MANAGE_THREADS
        await http.delete_channel(int(made[0]["id"]))
        with pytest.raises(discord.NotFound):
            await http.get_channel(int(made[0]["id"]))
        names = [
            thread["name"] for thread in (await http.get_active_threads(s.guild.id))["threads"]
        ]
        assert sorted(names) == ["room again", "side-thread"]
    assert sim.unknown_routes == []


async def test_a_channel_overwrite_and_a_deleted_channel_meet_the_bot_mid_run(
    sim: DiscordSim,
) -> None:
    """Admins change a server under a running bot: a permission denied to the bot in a
    channel (a thread under it too) refuses its posts there (403, 50013) and shows in its
    interactions' ``app_permissions``, and taken away gives it back; an administrator keeps
    everything; a deleted channel (its threads with it) answers 404 Unknown Channel and takes
    no interactions."""
    s = sim.seed
    payload = discord.http.MultipartParameters(
        payload={"content": "a board"}, multipart=None, files=None
    )
    async with sim.running(DemoClient()) as client:
        http = client.http
        sim.deny(s.channel, sim.bot_user, PERM_SEND_MESSAGES | PERM_SEND_MESSAGES_IN_THREADS)
        for place in (s.channel, s.thread):
            with pytest.raises(discord.Forbidden) as refused:
                await http.send_message(place.id, params=payload)
            assert refused.value.code == 50013
        await http.send_message(s.other_channel.id, params=payload)
        shown = await sim.slash(s.alice, s.channel, "echo", text="where")
        assert not int(shown.payload["app_permissions"]) & PERM_SEND_MESSAGES
        sim.deny(s.channel, s.owner, PERM_SEND_MESSAGES)
        assert sim.channel_permissions(s.guild.member(s.owner), s.channel) == ALL_PERMISSIONS
        sim.deny(s.channel, sim.bot_user, 0)
        await http.send_message(s.thread.id, params=payload)
        shown = await sim.slash(s.alice, s.channel, "echo", text="again")
        assert int(shown.payload["app_permissions"]) & PERM_SEND_MESSAGES
        sim.delete_channel(s.channel)
        for place in (s.channel, s.thread):
            with pytest.raises(discord.NotFound) as gone:
                await http.send_message(place.id, params=payload)
            assert gone.value.code == 10003
        with pytest.raises(SimUsageError, match="deleted"):
            await sim.slash(s.alice, s.channel, "echo", text="anyone?")
        await http.send_message(s.other_channel.id, params=payload)
    with pytest.raises(SimUsageError):
        sim.delete_channel(s.channel)  # once
    assert sim.unknown_routes == []


async def test_user_messages_reach_the_bot(sim: DiscordSim) -> None:
    s = sim.seed
    intents = discord.Intents.default()
    intents.message_content = True
    async with sim.running(DemoClient(intents=intents)) as client:
        await sim.send_message(s.alice, s.channel, "hello bot")
        await sim.send_message(s.bob, s.channel, "second")
        # The ping round trip that precedes an interaction flushes earlier dispatches.
        await sim.slash(s.alice, s.channel, "echo", text="sync")
    assert [m.content for m in client.received if m.author.id != sim.bot_user.id] == [
        "hello bot",
        "second",
    ]


async def test_wait_for_returns_the_predicate_value(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        ix = await sim.slash(s.alice, s.channel, "slow")
        found = await sim.wait_for(
            lambda: [m for m in sim.messages(s.channel) if m.content == "extra"]
        )
        assert found[0] in ix.followups
        with pytest.raises(SimTimeout, match="never"):
            await sim.wait_for(lambda: False, timeout=0.05, what="never")


async def test_client_crash_is_reported_instead_of_a_timeout(sim: DiscordSim) -> None:
    s = sim.seed

    async def scenario() -> None:
        async with sim.running(DemoClient()):
            # A dispatch missing required fields makes discord.py's parser raise, which ends
            # connect(); the next wait must say so rather than time out.
            await sim.dispatch_raw("MESSAGE_CREATE", {"id": "1"}, guild=s.guild)
            await sim.slash(s.alice, s.channel, "echo", text="never answered")

    with pytest.raises(SimClientDied, match="KeyError"):
        await scenario()


async def test_a_stale_click_presses_a_button_from_an_older_version(sim: DiscordSim) -> None:
    """Discord accepts a click from a client that has not seen an edit yet; by default the
    sim refuses buttons the current version disables, ``stale=True`` allows them."""
    s = sim.seed
    async with sim.running(DemoClient()):
        shown = await sim.slash(s.alice, s.channel, "board")
        board = shown.message
        assert board is not None
        await sim.click(s.bob, board, "cell:4")
        assert board.button("cell:4")["disabled"] is True
        with pytest.raises(SimUsageError, match="disabled"):
            await sim.click(s.bob, board, "cell:4")
        late = await sim.click(s.bob, board, "cell:4", stale=True)
        assert late.response_type == 7
        assert late.payload["message"]["id"] == str(board.id)
        with pytest.raises(SimUsageError, match="no component"):
            await sim.click(s.bob, board, "cell:42", stale=True)


async def test_no_guild_create_without_the_guilds_intent(sim: DiscordSim) -> None:
    """Like Discord: GUILD_CREATE belongs to the GUILDS intent; READY still lists the guilds."""
    client = DemoClient(intents=discord.Intents.none())
    async with sim.running(client):
        (session,) = sim.live_sessions()
        assert session.intents == 0
        assert all(
            event.get("t") != "GUILD_CREATE" for event in session.history if isinstance(event, dict)
        )
        ix = await sim.slash(sim.seed.alice, sim.seed.channel, "echo", text="hi")
        assert ix.content == "hi"
