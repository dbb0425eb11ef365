"""Discord's newer component layout ("components v2", discord.py's ``LayoutView``) in the
local server: a message with the IS_COMPONENTS_V2 flag is stored, shown and clicked like a
classic one, and each of Discord's rules for it is checked."""

from __future__ import annotations

from tests.discord_sim import DiscordSim
from tests.discord_sim.demo_client import LayoutDemoClient
from tests.discord_sim.models import FLAG_COMPONENTS_V2

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
