"""Each of the simulator's Discord-rule checks fires, is reported clearly, and is answered
with the error Discord would give. Tests that provoke a violation take it out of
``sim.violations`` so the fixture's teardown check stays quiet. Where Discord's OpenAPI spec
also forbids the payload, its check (``tests/discord_sim/openapi.py``) reports it too, after
the hand-written one."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import discord
import pytest
from discord import app_commands
from discord.http import Route

from tests.discord_sim import DiscordSim
from tests.discord_sim.demo_client import DemoClient

REPO = Path(__file__).resolve().parents[1]


def button(custom_id: str, label: str = "b") -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": label, "custom_id": custom_id}


def row(*buttons: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(buttons)}


async def post_raw(client: discord.Client, channel_id: int, payload: dict[str, Any]) -> Any:
    """Send a message body as is, past discord.py's own checks."""
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=channel_id)
    return await client.http.request(route, json=payload)


async def rejected(
    client: discord.Client, channel_id: int, payload: dict[str, Any]
) -> discord.HTTPException:
    with pytest.raises(discord.HTTPException) as info:
        await post_raw(client, channel_id, payload)
    return info.value


async def test_content_over_2000_characters_in_a_response(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        ok = await sim.slash(s.alice, s.channel, "long", size=2000)
        ix = await sim.slash(s.alice, s.channel, "long", size=2001)
        await asyncio.wait_for(client.failed.wait(), 5)  # the sim cannot see it
    assert ok.rejected is None
    assert ok.content == "x" * 2000
    assert ix.rejected == "invalid"
    assert ix.message is None
    assert isinstance(client.errors[0].__cause__, discord.HTTPException)
    assert client.errors[0].__cause__.code == 50035
    violations = sim.take_violations()
    assert len(violations) == 2
    assert "slash 'long' size=2001 by alice" in violations[0]
    assert "content is 2001 characters; the limit is 2000" in violations[0]
    assert violations[1].startswith(
        "OpenAPI: POST /interactions/{interaction_id}/{interaction_token}/callback: "
        "body $.data.content: maxLength 2000: "
    )


async def test_more_than_five_action_rows(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        await post_raw(
            client, s.channel.id, {"components": [row(button(f"r{i}")) for i in range(5)]}
        )
        error = await rejected(
            client, s.channel.id, {"components": [row(button(f"r{i}")) for i in range(6)]}
        )
    assert error.status == 400
    assert error.code == 50035
    assert sim.take_violations() == [
        f"POST /channels/{s.channel.id}/messages: 6 action rows; the limit is 5"
    ]
    assert len(sim.messages(s.channel)) == 1


async def test_more_than_five_buttons_in_a_row(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        await rejected(
            client, s.channel.id, {"components": [row(*(button(f"b{i}") for i in range(6)))]}
        )
    assert any("has 6 buttons; the limit is 5 per row" in v for v in sim.take_violations())
    assert sim.messages(s.channel) == []


async def test_custom_id_over_100_characters(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        await post_raw(client, s.channel.id, {"components": [row(button("c" * 100))]})
        await rejected(client, s.channel.id, {"components": [row(button("c" * 101))]})
    violations = sim.take_violations()
    assert len(violations) == 2
    assert "is 101 characters; it must be 1 to 100" in violations[0]
    assert violations[1].startswith(
        "OpenAPI: POST /channels/{channel_id}/messages: "
        "body $.components[0].components[0].custom_id: maxLength 100: "
    )


async def test_custom_id_repeated_within_a_message(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        await rejected(
            client, s.channel.id, {"components": [row(button("same")), row(button("same"))]}
        )
    assert any(
        "custom_id 'same' is used 2 times in one message" in v for v in sim.take_violations()
    )


async def test_embed_limits(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        channel = client.get_channel(s.channel.id)
        assert isinstance(channel, discord.TextChannel)
        with pytest.raises(discord.HTTPException):
            await channel.send(embed=discord.Embed(title="t" * 257))
        big = [discord.Embed(description="d" * 4000) for _ in range(2)]
        with pytest.raises(discord.HTTPException):
            await channel.send(embeds=big)
        fields = discord.Embed(title="fields")
        for i in range(26):
            fields.add_field(name=f"n{i}", value="v")
        with pytest.raises(discord.HTTPException):
            await channel.send(embed=fields)
        await channel.send(embed=discord.Embed(title="t" * 256, description="fine"))
    violations = sim.take_violations()
    assert len(violations) == 5
    assert "embeds[0].title is 257 characters; the limit is 256" in violations[0]
    assert "body $.embeds[0].title: maxLength 256: " in violations[1]
    # The spec has no limit on the embeds' total length: only the hand-written check knows.
    assert "embeds hold 8000 characters in total; the limit is 6000" in violations[2]
    assert "has 26 fields; the limit is 25" in violations[3]
    assert "body $.embeds[0].fields: maxItems 25: " in violations[4]
    assert len(sim.messages(s.channel)) == 1


async def test_empty_message(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        error = await rejected(client, s.channel.id, {"content": "   "})
    assert error.status == 400
    assert any("cannot send an empty message" in v for v in sim.take_violations())


async def test_autocomplete_choice_value_over_100_characters(sim: DiscordSim) -> None:
    """Discord refuses a choice value over 100 characters, where its OpenAPI document allows
    6,000: the hand-written check is the only one that sees it."""
    s = sim.seed
    client = DemoClient()

    @client.tree.command(description="Pick a word")
    async def pick(interaction: discord.Interaction, word: str) -> None:
        await interaction.response.send_message(word)

    @pick.autocomplete("word")
    async def words(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name="long", value="v" * int(current))]

    async with sim.running(client):
        fits = await sim.autocomplete(s.alice, s.channel, "pick", focused="word", word="100")
        assert fits == [{"name": "long", "value": "v" * 100}]
        assert sim.take_violations() == []
        over = await sim.autocomplete(s.alice, s.channel, "pick", focused="word", word="101")
    assert over == []
    assert [ix.rejected for ix in sim.interactions[-1:]] == ["invalid"]
    violations = sim.take_violations()
    assert len(violations) == 1
    assert "choices[0].value is over 100 characters" in violations[0]


async def test_interaction_answered_twice(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        ix = await sim.slash(s.alice, s.channel, "twice")
        await asyncio.wait_for(client.failed.wait(), 5)  # the sim cannot see it
    assert ix.content == "one"
    assert ix.callbacks == 2
    cause = client.errors[0].__cause__
    assert isinstance(cause, discord.HTTPException)
    assert cause.code == 40060
    violations = sim.take_violations()
    assert len(violations) == 1
    assert (
        "the interaction was answered twice (first with type 4, then with type 4)" in violations[0]
    )


async def test_response_later_than_the_deadline(sim: DiscordSim) -> None:
    s = sim.seed
    assert sim.response_deadline == 3.0  # Discord's, unless a test sets its own
    sim.response_deadline = 0.2
    async with sim.running(DemoClient(late_delay=0.4)) as client:
        ix = await sim.slash(s.alice, s.channel, "late")
        await asyncio.wait_for(client.failed.wait(), 5)  # the sim cannot see it
    assert ix.rejected == "late"
    assert ix.message is None
    assert ix.latency is not None
    assert ix.latency > 0.2
    cause = client.errors[0].__cause__
    assert isinstance(cause, discord.NotFound)
    assert cause.code == 10062
    violations = sim.take_violations()
    assert len(violations) == 1
    assert "after the interaction was sent; Discord allows 0.2 s" in violations[0]


async def test_followup_and_edit_after_15_minutes(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        ix = await sim.slash(s.alice, s.channel, "keep")
        kept = client.kept[0]
        await kept.followup.send("within time")
        sim.advance_clock(16 * 60)
        with pytest.raises(discord.HTTPException) as info:
            await kept.followup.send("too late")
        assert info.value.status == 401
        assert info.value.code == 50027
        with pytest.raises(discord.HTTPException):
            await kept.edit_original_response(content="too late")
    assert [m.content for m in ix.followups] == ["within time"]
    violations = sim.take_violations()
    assert len(violations) == 2
    assert all("interaction tokens expire after 15 min" in v for v in violations)
    assert violations[0].startswith("followup for slash 'keep' by alice 16.0 min")


async def test_followup_before_acknowledging(sim: DiscordSim) -> None:
    s = sim.seed
    client = DemoClient()
    failures: list[discord.HTTPException] = []

    @client.tree.command(description="Follow up first (a bug on purpose)")
    async def eager(interaction: discord.Interaction) -> None:
        try:
            await interaction.followup.send("too soon")
        except discord.HTTPException as exc:
            failures.append(exc)
        await interaction.response.send_message("ok")

    async with sim.running(client):
        ix = await sim.slash(s.alice, s.channel, "eager")
    assert ix.content == "ok"
    assert ix.followups == []
    assert failures
    assert failures[0].status == 404
    assert sim.take_violations() == [
        "followup for slash 'eager' by alice before the interaction was acknowledged"
    ]


async def test_editing_another_users_message(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        theirs = await sim.send_message(s.alice, s.channel, "mine")
        channel = client.get_channel(s.channel.id)
        assert isinstance(channel, discord.TextChannel)
        with pytest.raises(discord.Forbidden):
            await channel.get_partial_message(theirs.id).edit(content="hijacked")
    assert theirs.content == "mine"
    assert theirs.edits == []
    assert any("cannot edit a message authored by alice" in v for v in sim.take_violations())


async def test_invalid_command_definitions_on_sync(sim: DiscordSim) -> None:
    async with sim.running(DemoClient()) as client:
        bad: list[dict[str, Any]] = [
            {"name": "Bad Name", "description": "x", "type": 1},
            {"name": "ok", "description": "", "type": 1},
            {
                "name": "opts",
                "description": "x",
                "options": [
                    {"name": "a", "description": "x", "type": 3},
                    {"name": "b", "description": "x", "type": 3, "required": True},
                ],
            },
        ]
        with pytest.raises(discord.HTTPException) as info:
            await client.http.bulk_upsert_global_commands(sim.application_id, payload=bad)
    assert info.value.code == 50035
    violations = sim.take_violations()
    assert any("name 'Bad Name' must be 1 to 32 lowercase" in v for v in violations)
    assert any("command 'ok' description must be 1 to 100 characters" in v for v in violations)
    assert any("option 'b' is required but follows an optional option" in v for v in violations)
    assert {c["name"] for c in sim.commands()} >= {"echo"}


async def test_unknown_routes_get_discords_404_and_are_recorded(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        with pytest.raises(discord.NotFound) as info:
            await client.http.request(Route("GET", "/guilds/{guild_id}/bans", guild_id=s.guild.id))
        assert info.value.code == 0
        assert info.value.text == "404: Not Found"
        with pytest.raises(discord.NotFound):
            await client.http.request(
                Route("PUT", "/channels/{channel_id}", channel_id=s.channel.id)
            )
    assert sim.unknown_routes == [
        ("GET", f"/guilds/{s.guild.id}/bans"),
        ("PUT", f"/channels/{s.channel.id}"),
    ]
    # Discord has the first route (the sim does not); nobody has the second.
    assert sim.take_violations() == [
        f"OpenAPI: PUT /channels/{s.channel.id}: no operation in the spec"
    ]


@pytest.mark.slow  # a pytest run in a process of its own
def test_violations_fail_the_test_at_teardown(tmp_path: Path) -> None:
    test_file = tmp_path / "test_breaks_a_rule.py"
    test_file.write_text(
        textwrap.dedent(
            """
            import aiohttp
            from tests.discord_sim.fixtures import sim

            async def test_long_message(sim):
                url = f"{sim.api_base_url}/channels/{sim.seed.channel.id}/messages"
                headers = {"Authorization": f"Bot {sim.token}"}
                async with aiohttp.ClientSession() as http:
                    reply = await http.post(url, json={"content": "x" * 2001}, headers=headers)
                    assert reply.status == 400
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path), str(test_file)),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed, 1 error in" in result.stdout
    assert "the bot broke Discord rules" in result.stdout
    assert "content is 2001 characters; the limit is 2000" in result.stdout
