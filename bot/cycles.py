"""The reference cycles discord.py leaves behind each interaction, broken once it is answered.

discord.py builds, for each interaction, objects that point at each other: the interaction and
the response it caches, a View and its items. Left as cycles, they wait for a full garbage
collection, which under load meets tens of thousands of them at once and stalls the event loop
for 20-40 ms; broken, reference counting frees them as soon as the interaction is done.
``tests/test_bot_memory.py`` fails if an answered click or command leaves any behind, over
either front door.
"""

from __future__ import annotations

import contextlib
from typing import Any

import discord

# What nests items in a View (a components-v2 one): each holds its children, each child points
# back at it.
_NESTING = (discord.ui.Container, discord.ui.ActionRow, discord.ui.Section)


def empty_view(view: discord.ui.View | discord.ui.LayoutView) -> None:
    """Empty ``view`` and everything nested in it. A View and its items point at each other
    (its children and their view, a container's children and their parent), so a dropped View
    waits for a full garbage collection; emptied, reference counting frees it at once."""
    for nested in list(view.walk_children()):
        if isinstance(nested, _NESTING):
            nested.clear_items()
    view.clear_items()


def release_interaction(interaction: discord.Interaction[Any]) -> None:
    """Break the cycles ``interaction`` is in, once nothing will answer it again: the response
    it caches, which points back at it (asked for afterwards, discord.py would make a fresh one
    that knows nothing of the answer given), and the bot's own member in a guild discord.py
    made up for it. Over HTTP no gateway's READY fills discord.py's cache of guilds, so each
    interaction from a server gets a guild of its own, holding a member for the bot that points
    back at it: a cycle with a dozen objects in it, for every command."""
    # discord.py 2.7 caches the response in this slot; no public call releases it.
    with contextlib.suppress(AttributeError):
        delattr(interaction, "_cs_response")
    guild = interaction.guild
    if guild is None or interaction.client.get_guild(guild.id) is guild:
        return  # a guild of discord.py's cache (the gateway's): it stays whole
    me = guild.me
    if me is not None:
        # Private too (discord.py's gateway parser removes members with it).
        guild._remove_member(me)
