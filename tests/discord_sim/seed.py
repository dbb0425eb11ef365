"""The standard world every bot test starts from (also used by the standalone server)."""

from __future__ import annotations

from dataclasses import dataclass

import discord

from .models import SimChannel, SimGuild, SimUser
from .server import DiscordSim


@dataclass(frozen=True)
class Seed:
    guild: SimGuild
    channel: SimChannel
    other_channel: SimChannel
    thread: SimChannel
    owner: SimUser
    alice: SimUser
    bob: SimUser
    carol: SimUser
    moderator: SimUser
    other_bot: SimUser


def seed_default(sim: DiscordSim) -> Seed:
    """One guild with #general (and a thread in it), #random, three ordinary members, a
    moderator (manage_messages) and another bot; stores and returns it as ``sim.seed``."""
    owner = sim.add_user("owner")
    guild = sim.add_guild("Test Guild", owner=owner)
    channel = sim.add_channel(guild, "general")
    other_channel = sim.add_channel(guild, "random")
    thread = sim.add_thread(channel, "side-thread")
    alice, bob, carol = (sim.add_user(n) for n in ("alice", "bob", "carol"))
    for user in (alice, bob, carol):
        sim.add_member(guild, user)
    moderator = sim.add_user("moderator")
    sim.add_member(guild, moderator, permissions=discord.Permissions(manage_messages=True))
    other_bot = sim.add_user("otherbot", bot=True)
    sim.add_member(guild, other_bot)
    seed = Seed(
        guild, channel, other_channel, thread, owner, alice, bob, carol, moderator, other_bot
    )
    sim.seed = seed
    return seed
