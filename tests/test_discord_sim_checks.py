"""Each of the simulator's Discord-rule checks fires, is reported clearly, and is answered
with the error Discord would give. Tests that provoke a violation take it out of
``sim.violations`` so the fixture's teardown check stays quiet. Where Discord's OpenAPI spec
also forbids the payload, its check (``tests/discord_sim/openapi.py``) reports it too, after
the hand-written one."""

from __future__ import annotations

import asyncio
import io
import json
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

from tests.discord_sim import DiscordSim, limits
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


def subcommands(count: int, description: str, german: str | None) -> list[dict[str, Any]]:
    """``count`` subcommands of 25 string options each, described by ``description`` and, if
    given, in German by ``german``."""
    localized = {"de": german} if german is not None else None
    return [
        {
            "name": f"s{index}",
            "description": "x",
            "type": 1,
            "options": [
                {
                    "name": f"o{option:02}",
                    "description": description,
                    "description_localizations": localized,
                    "type": 3,
                }
                for option in range(25)
            ],
        }
        for index in range(count)
    ]


async def test_a_commands_size_counts_each_fields_longest_translation_up_to_8000(
    sim: DiscordSim,
) -> None:
    """Discord counts a slash command's names, descriptions and choices together, each field
    by its longest localization, up to 8,000 characters (4,000 until 2024): a command of
    5,160 characters is taken, and one whose German descriptions make it 10,317 is refused,
    though its English alone is 417."""
    long_english = {"name": "big", "description": "x", "options": subcommands(2, "d" * 100, None)}
    long_german = {"name": "wide", "description": "x", "options": subcommands(4, "d", "d" * 100)}
    bad_translation = {
        "name": "bad",
        "description": "x",
        "name_localizations": {"de": "Groß Geschrieben"},
        "description_localizations": {"fr": "d" * 101},
    }
    async with sim.running(DemoClient()) as client:
        await client.http.bulk_upsert_global_commands(sim.application_id, payload=[long_english])
        assert sim.take_violations() == []
        for refused in (long_german, bad_translation):
            with pytest.raises(discord.HTTPException) as info:
                await client.http.bulk_upsert_global_commands(sim.application_id, payload=[refused])
            assert info.value.code == 50035
    assert [c["name"] for c in sim.commands()] == ["big"]
    violations = sim.take_violations()
    assert (
        "command 'wide' uses 10317 characters of names, descriptions and choices (each field's "
        "longest localization counted); the limit is 8000" in violations[0]
    )
    shouting = "command 'bad' (de): name 'Groß Geschrieben' must be 1 to 32"
    assert any(shouting in v for v in violations)
    assert any("command 'bad' description (fr) must be 1 to 100" in v for v in violations)


async def test_a_file_over_the_upload_limit_is_refused_with_413(sim: DiscordSim) -> None:
    """Discord refuses a file over the upload limit (the ``attachment_size_limit`` the sim's
    interactions announce) with 413 and code 40005, and more than 10 files on a message."""
    s = sim.seed
    limit = limits.ATTACHMENT_SIZE_LIMIT
    async with sim.running(DemoClient()) as client:
        channel = client.get_channel(s.channel.id)
        assert isinstance(channel, discord.TextChannel)
        fits = await channel.send(file=discord.File(io.BytesIO(b"x" * limit), "fits.txt"))
        assert [a.size for a in fits.attachments] == [limit]
        with pytest.raises(discord.HTTPException) as info:
            await channel.send(file=discord.File(io.BytesIO(b"x" * (limit + 1)), "big.txt"))
        assert (info.value.status, info.value.code) == (413, 40005)
        route = Route("POST", "/channels/{channel_id}/messages", channel_id=s.channel.id)
        files = [discord.File(io.BytesIO(b"x"), f"f{n}.txt") for n in range(11)]
        with pytest.raises(discord.HTTPException) as info:
            await client.http.request(route, files=files, form=_form({"content": "many"}, files))
        assert (info.value.status, info.value.code) == (400, 50035)
    violations = sim.take_violations()
    assert any(f"file 'big.txt' is {limit + 1} bytes; the upload limit" in v for v in violations)
    assert any("11 attachments; the limit is 10" in v for v in violations)
    assert [m.content for m in sim.messages(s.channel)] == [""]


def _form(payload: dict[str, Any], files: list[discord.File]) -> list[dict[str, Any]]:
    """A multipart body as discord.py writes one, past its own limit of 10 files."""
    form: list[dict[str, Any]] = [{"name": "payload_json", "value": json.dumps(payload)}]
    for index, file in enumerate(files):
        form.append(
            {
                "name": f"files[{index}]",
                "value": file.fp,
                "filename": file.filename,
                "content_type": "application/octet-stream",
            }
        )
    return form


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
    # In one process (-n 0): the configuration's addopts would start four pytest-xdist
    # workers for this one test, 5.0 s of CPU rather than 0.9 s.
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider"),
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
