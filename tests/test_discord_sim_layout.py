"""Discord's newer component layout ("components v2", discord.py's ``LayoutView``) in the
local server: a message with the IS_COMPONENTS_V2 flag is stored, shown and clicked like a
classic one, and each of Discord's rules for it is checked."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from discord.http import Route

from tests.discord_sim import DiscordSim
from tests.discord_sim.demo_client import LayoutDemoClient
from tests.discord_sim.models import FLAG_COMPONENTS_V2
from tests.test_discord_sim_checks import button, post_raw, rejected, row

GRID_IDS = [f"grid:{index}" for index in range(25)]


async def test_a_5x5_layout_message_is_stored_shown_and_clicked(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(LayoutDemoClient()) as client:
        ix = await sim.slash(s.alice, s.channel, "grid")
        msg = ix.message
        assert msg is not None
        assert ix.response_type == 4
        assert ix.rejected is None
        assert msg.flags & FLAG_COMPONENTS_V2
        assert msg.content == ""
        assert msg.embeds == []
        assert [c["type"] for c in msg.components] == [17, 9, 1]
        ids = [b["custom_id"] for b in msg.buttons()]
        assert ids == [*GRID_IDS, "grid:hint", "grid:resign"]
        assert sum(1 for _ in msg.iter_components()) == 37
        click = await sim.click(s.bob, msg, "grid:12")
        assert click.response_type == 7
        assert click.rejected is None
        assert click.message is msg
        assert len(msg.edits) == 1
        assert msg.flags & FLAG_COMPONENTS_V2
        assert msg.button("grid:12")["disabled"]
        assert msg.button("grid:12")["label"] == "X"
        assert msg.components[0]["components"][0]["content"] == "played 12"
        sent = click.payload["message"]
        assert sent["flags"] & FLAG_COMPONENTS_V2
        assert sent["components"][0]["type"] == 17
        seen = client.seen[-1]
        assert seen.data is not None
        assert seen.data.get("custom_id") == "grid:12"
        assert seen.message is not None
        assert seen.message.flags.components_v2
        hint = await sim.click(s.bob, msg, "grid:hint")
        assert hint.response_type == 7
        assert msg.components[0]["components"][0]["content"] == "try the centre"


async def test_a_layout_followup_fills_a_deferred_message(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(LayoutDemoClient()):
        ix = await sim.slash(s.alice, s.channel, "gridlater")
        assert await ix.wait_done()
        msg = ix.message
        assert msg is not None
        assert ix.followups == [msg]
        assert msg.flags & FLAG_COMPONENTS_V2
        assert not msg.loading
        assert len(msg.buttons()) == 27
        click = await sim.click(s.bob, msg, "grid:resign")
        assert click.response_type == 7
        assert msg.components[0]["components"][0]["content"] == "resigned"


def layout(*components: dict[str, Any]) -> dict[str, Any]:
    return {"flags": FLAG_COMPONENTS_V2, "components": list(components)}


def text(content: str) -> dict[str, Any]:
    return {"type": 10, "content": content}


def container(*children: dict[str, Any]) -> dict[str, Any]:
    return {"type": 17, "components": list(children)}


def rows(count: int, per_row: int, prefix: str = "c") -> list[dict[str, Any]]:
    return [row(*(button(f"{prefix}{r}.{b}") for b in range(per_row))) for r in range(count)]


async def edit_raw(
    client: discord.Client, channel_id: int, message_id: int, payload: dict[str, Any]
) -> Any:
    route = Route(
        "PATCH",
        "/channels/{channel_id}/messages/{message_id}",
        channel_id=channel_id,
        message_id=message_id,
    )
    return await client.http.request(route, json=payload)


def took(sim: DiscordSim, problem: str) -> list[str]:
    """The violations, after checking that one names ``problem``."""
    violations = sim.take_violations()
    assert any(problem in v for v in violations), violations
    return violations


async def test_40_components_pass(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(LayoutDemoClient()) as client:
        sent = await post_raw(client, s.channel.id, layout(*rows(8, 4)))
        await post_raw(client, s.channel.id, layout(text("a" * 2000), container(text("b" * 2000))))
    assert sum(1 for _ in sim.message(int(sent["id"])).iter_components()) == 40


async def test_a_mention_in_a_text_display_pings_as_allowed(sim: DiscordSim) -> None:
    s = sim.seed
    mentions = f"<@{s.bob.id}> and <@{s.carol.id}>, your move"
    async with sim.running(LayoutDemoClient()) as client:
        allowed = await post_raw(
            client,
            s.channel.id,
            {
                **layout(container(text(mentions))),
                "allowed_mentions": {"parse": [], "users": [str(s.bob.id)]},
            },
        )
        silent = await post_raw(
            client,
            s.channel.id,
            {**layout(text(mentions)), "allowed_mentions": {"parse": []}},
        )
    assert sim.message(int(allowed["id"])).pinged == [s.bob.id]
    assert sim.message(int(silent["id"])).pinged == []
    assert sim.message(int(silent["id"])).text == mentions


SECTION_SAME = {"type": 9, "components": [text("t")], "accessory": button("same")}
# 1 container + 1 text display + 6 rows of 5 buttons + 1 row of 2 = 41, nested ones counted.
NESTED_41 = container(text("board"), *rows(6, 5), row(*(button(f"x{i}") for i in range(2))))


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (layout(text("board"), *rows(8, 4)), "41 components; the components-v2 limit is 40"),
        (layout(NESTED_41), "41 components; the components-v2 limit is 40"),
        (
            {**layout(text("board")), "content": "hi"},
            "a components-v2 message cannot also have content or embeds",
        ),
        (
            {**layout(text("board")), "embeds": [{"title": "t"}]},
            "a components-v2 message cannot also have content or embeds",
        ),
        (
            layout(container(row(button("same"))), SECTION_SAME),
            "custom_id 'same' is used 2 times in one message",
        ),
        (
            layout(container(*rows(1, 6))),
            "components[0].components[0] has 6 buttons; the limit is 5 per row",
        ),
        (layout(container(row(button("x" * 101)))), "is 101 characters; it must be 1 to 100"),
        (
            layout(text("a" * 2000), container(text("b" * 2001))),
            "text displays hold 4001 characters; the components-v2 limit is 4000",
        ),
    ],
    ids=["41", "41-nested", "content", "embeds", "same-id", "6-in-a-row", "long-id", "4001"],
)
async def test_layouts_discord_refuses(
    sim: DiscordSim, payload: dict[str, Any], problem: str
) -> None:
    s = sim.seed
    async with sim.running(LayoutDemoClient()) as client:
        error = await rejected(client, s.channel.id, payload)
    assert error.status == 400
    assert error.code == 50035
    took(sim, problem)


async def test_an_edit_cannot_remove_the_flag(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(LayoutDemoClient()) as client:
        sent = await post_raw(client, s.channel.id, layout(text("board")))
        msg = sim.message(int(sent["id"]))
        with pytest.raises(discord.HTTPException) as info:
            await edit_raw(client, s.channel.id, msg.id, {"flags": 0, "components": rows(1, 1)})
        # Leaving flags out keeps them, as on Discord.
        await edit_raw(client, s.channel.id, msg.id, {"components": [text("moved")]})
    assert info.value.code == 50035
    took(sim, "an edit cannot remove the components-v2 flag from a message")
    assert msg.flags & FLAG_COMPONENTS_V2
    assert msg.components == [text("moved")]


async def test_an_edit_may_turn_a_classic_message_into_a_layout(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(LayoutDemoClient()) as client:
        sent = await post_raw(client, s.channel.id, {"content": "classic"})
        msg = sim.message(int(sent["id"]))
        with pytest.raises(discord.HTTPException):
            await edit_raw(client, s.channel.id, msg.id, layout(text("board")))
        took(sim, "a components-v2 message cannot also have content or embeds")
        await edit_raw(client, s.channel.id, msg.id, {**layout(text("board")), "content": ""})
    assert msg.flags & FLAG_COMPONENTS_V2
    assert msg.content == ""


async def test_layout_shapes_discord_refuses(sim: DiscordSim) -> None:
    s = sim.seed
    section = {"type": 9, "components": [text(str(i)) for i in range(4)]}
    async with sim.running(LayoutDemoClient()) as client:
        for payload in (layout(button("loose")), layout(section), layout(container())):
            await rejected(client, s.channel.id, payload)
        # The newer components without the flag are refused as on Discord.
        await rejected(client, s.channel.id, {"components": [text("no flag")]})
    violations = sim.take_violations()
    for problem in (
        "components[0] is a component of type 2, which cannot stand there",
        "components[0] must hold 1 to 3 text displays",
        "components[0] needs a button or thumbnail accessory",
        "components[0] is an empty container",
        "components[0] must be an action row (type 1) unless the message sets the "
        "components-v2 flag",
    ):
        assert any(problem in v for v in violations), (problem, violations)
