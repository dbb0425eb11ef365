"""Run the simulator alone: ``python -m tests.discord_sim --port 8765``.

It seeds the standard world, prints ``KEY=value`` lines (API base URL, gateway URL, token,
application id and the seeded ids) and ``DISCORD_SIM_READY=1`` last, then serves until
SIGINT or SIGTERM. Point a bot at it by setting discord.py's ``Route.BASE`` to the API base
and ``DiscordWebSocket.DEFAULT_GATEWAY`` to the gateway URL, and log in with the token.
Another process can drive it through the JSON control API:

* ``GET /_sim/state``: guilds, channels, messages, commands, interactions, violations.
* ``POST /_sim/slash`` ``{"user": "alice", "channel": "general", "command": "ttt move",
  "options": {"cell": "B2", "opponent": "@bob"}}`` (``@name`` is a user, ``#name`` a channel).
* ``POST /_sim/click`` ``{"user": "bob", "message": "<id>", "custom_id": "..."}``.
* ``POST /_sim/autocomplete`` (like slash, plus ``"focused": "cell"``).
* ``POST /_sim/drop``: drop the gateway connection and wait for the RESUME.
* ``POST /_sim/gateway/close`` ``{"resumable": false, "code": null, "wait": true}``: see
  ``DiscordSim.close_gateway``.
* ``POST /_sim/faults`` ``{"route": "PATCH /channels/{id}/messages/{id}", "rate_limit": 4,
  "global": false, "count": 1}`` adds a fault (fields as ``sim.faults.add``: ``status``,
  ``body``, ``rate_limit``, ``global``, ``reset``, ``delay``, ``reply_delay``, ``count``
  (null: until cleared), ``skip``); ``GET /_sim/faults`` lists the pending and injected
  ones; ``DELETE /_sim/faults`` clears the pending ones.

Each interaction call answers once the bot responded (409 with a message if it could not;
400 for a request the sim refuses, such as a fault pattern that names no route, a body that
is not a JSON object, or one missing a field its route needs).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from .seed import seed_default
from .server import DiscordSim


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.discord_sim", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--token", default="sim-bot-token")
    parser.add_argument(
        "--shards", type=int, default=1, help="shard count GET /gateway/bot recommends"
    )
    parser.add_argument("--deadline", type=float, default=3.0, help="initial response deadline (s)")
    parser.add_argument(
        "--timeout", type=float, default=5.0, help="how long verbs wait for the bot (s)"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


async def _serve(args: argparse.Namespace) -> None:
    sim = DiscordSim(
        token=args.token,
        recommended_shards=args.shards,
        response_deadline=args.deadline,
        interaction_timeout=args.timeout,
    )
    seed = seed_default(sim)
    await sim.start(args.host, args.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    values = {
        "API_BASE": sim.api_base_url,
        "GATEWAY_URL": sim.gateway_url,
        "TOKEN": sim.token,
        "APPLICATION_ID": sim.application_id,
        "GUILD_ID": seed.guild.id,
        "CHANNEL_ID": seed.channel.id,
        "OTHER_CHANNEL_ID": seed.other_channel.id,
        "THREAD_ID": seed.thread.id,
        **{
            f"{u.name.upper()}_ID": u.id
            for u in (seed.alice, seed.bob, seed.carol, seed.moderator, seed.other_bot)
        },
        "READY": 1,
    }
    for key, value in values.items():
        print(f"DISCORD_SIM_{key}={value}", flush=True)
    try:
        await stop.wait()
    finally:
        await sim.stop()
        if sim.violations:
            print("violations:", *sim.violations, sep="\n  ", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
