"""The sim injects faults as Discord and its network produce them (429s, 5xx, connection
resets, delays, gateway closes), per route and per count, and serves long fast runs."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest
from discord import app_commands

from tests.discord_sim import DiscordSim, SimInteractionLost, SimTimeout, SimUsageError
from tests.discord_sim.demo_client import DemoClient
from tests.discord_sim.faults import Fault

CONNECTION_ERRORS = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)
CALLBACK = "POST /interactions/{id}/{token}/callback"
CREATE_MESSAGE = "POST /channels/{id}/messages"


def text_channel(client: discord.Client, channel_id: int) -> discord.TextChannel:
    channel = client.get_channel(channel_id)
    assert isinstance(channel, discord.TextChannel)
    return channel


async def invoke_error(client: DemoClient) -> BaseException:
    """The error the client's command raised; the sim cannot see it, so wait on the client."""
    await asyncio.wait_for(client.failed.wait(), 3)
    (error,) = client.errors
    assert isinstance(error, app_commands.CommandInvokeError)
    return error.original


@pytest.fixture
async def http(sim: DiscordSim) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bot {sim.token}"}
    async with aiohttp.ClientSession(sim.base_url, headers=headers) as session:
        yield session


async def post_message(
    http: aiohttp.ClientSession, channel_id: int, content: str
) -> tuple[int, Any]:
    async with http.post(
        f"/api/v10/channels/{channel_id}/messages", json={"content": content}
    ) as r:
        return r.status, await r.json()


# -- long and fast runs ---------------------------------------------------------------------------


async def test_300_fast_interactions_through_one_session(sim: DiscordSim) -> None:
    """discord.py allows 120 gateway sends a minute; the sim's ordering barrier (a websocket
    ping) costs none of them, so a long run is not stalled. Every second interaction is a
    click right after the reply that registered its View, which the barrier keeps in order."""
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        (session,) = sim.live_sessions()
        started = time.monotonic()
        async with asyncio.timeout(30):
            for n in range(150):
                if n % 2:
                    ix = await sim.slash(s.alice, s.channel, "echo", text=f"echo {n}")
                    assert ix.content == f"echo {n}"
                    board = await sim.slash(s.bob, s.channel, "board")
                    assert board.message is not None
                    clicked = await sim.click(s.alice, board.message, f"cell:{n % 9}")
                    assert clicked.response_type == 7
                    assert clicked.content == f"played {n % 9}"
                else:
                    ix = await sim.slash(s.carol, s.thread, "echo", text=f"thread {n}")
                    assert ix.content == f"thread {n}"
        elapsed = time.monotonic() - started
        assert client.ws is not None
        # Its own first heartbeat and IDENTIFY are all the client sent (of 110 a minute).
        assert client.ws._rate_limiter.remaining >= 105
    assert len(sim.interactions) == 300
    assert all(ix.answered and ix.rejected is None for ix in sim.interactions)
    assert sim.identifies == 1
    assert session.resumes == 0
    assert elapsed < 30


# -- which requests a fault hits ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "created", "statuses"),
    [
        ({"status": 502}, 1, [502, 502, 200]),
        ({"rate_limit": 0.05}, 1, [429, 429, 200]),
        ({"reset": "before"}, 1, [None, None, 200]),
        ({"reset": "after"}, 3, [None, None, 200]),
        ({"delay": 0.05}, 3, [200, 200, 200]),
    ],
    ids=["status", "rate_limit", "reset-before", "reset-after", "delay"],
)
async def test_each_fault_fires_count_times_on_its_route_only(
    sim: DiscordSim,
    http: aiohttp.ClientSession,
    options: dict[str, Any],
    created: int,
    statuses: list[int | None],
) -> None:
    s = sim.seed
    fault = sim.faults.add(CREATE_MESSAGE, count=2, **options)
    got: list[int | None] = []
    for n in range(3):
        async with http.get(f"/api/v10/channels/{s.channel.id}") as other_route:
            assert other_route.status == 200
        try:
            status, _ = await post_message(http, s.channel.id, f"message {n}")
        except CONNECTION_ERRORS:
            status = None
        got.append(status)
        await asyncio.sleep(0.06)  # past a rate-limit fault's retry_after
    assert got == statuses
    assert fault.fired == 2
    assert sim.faults.pending == []
    assert len(sim.messages(s.channel)) == created
    fired = sim.faults.injected
    assert [(i.method, i.route, i.fault) for i in fired] == [
        ("POST", "POST /channels/{channel_id}/messages", fault)
    ] * 2
    assert [i.path for i in fired] == [f"/channels/{s.channel.id}/messages"] * 2
    assert all(i.applied == (options.get("reset") == "after" or "delay" in options) for i in fired)
    gets = [r for r in sim.requests if r.method == "GET"]
    assert [(r.status, r.fault) for r in gets] == [(200, None)] * 3


async def test_patterns_name_routes_and_a_literal_segment_narrows_them(
    sim: DiscordSim, http: aiohttp.ClientSession
) -> None:
    s = sim.seed
    only_other = sim.faults.add(f"POST /channels/{s.other_channel.id}/messages", status=500)
    every_post = sim.faults.add("POST /**", status=503, skip=1)
    assert (await post_message(http, s.channel.id, "first"))[0] == 200  # skipped by every_post
    assert (await post_message(http, s.channel.id, "second"))[0] == 503
    assert (await post_message(http, s.other_channel.id, "third"))[0] == 500
    assert (await post_message(http, s.other_channel.id, "fourth"))[0] == 200
    assert (only_other.fired, every_post.fired) == (1, 1)
    assert (only_other.seen, every_post.seen) == (1, 2)  # counted until it was used up
    assert [m.content for m in sim.messages(s.channel) + sim.messages(s.other_channel)] == [
        "first",
        "fourth",
    ]

    forever = sim.faults.add("GET /users/{id}", status=500, count=None)
    for _ in range(3):
        async with http.get(f"/api/v10/users/{s.alice.id}") as reply:
            assert reply.status == 500
            assert await reply.json() == {"message": "500: Internal Server Error", "code": 0}
    async with http.get("/api/v10/users/@me") as reply:
        assert reply.status == 500  # {id} matches any one segment, @me too
    sim.faults.remove(forever)
    async with http.get(f"/api/v10/users/{s.alice.id}") as reply:
        assert reply.status == 200
    assert forever.fired == 4


def test_a_pattern_that_names_no_route_or_a_muddled_fault_is_refused(sim: DiscordSim) -> None:
    with pytest.raises(SimUsageError, match="matches none of the sim's routes"):
        sim.faults.add("POST /interaction/{id}/{token}/callback", status=500)
    with pytest.raises(SimUsageError, match="matches none"):
        sim.faults.add("PUT /channels/{id}/messages", status=500)
    with pytest.raises(SimUsageError, match="METHOD /path"):
        sim.faults.add("/channels/{id}/messages", status=500)
    with pytest.raises(SimUsageError, match="one outcome"):
        sim.faults.add(CALLBACK, status=500, reset="after")
    with pytest.raises(SimUsageError, match="needs"):
        sim.faults.add(CALLBACK)
    with pytest.raises(SimUsageError, match="rate_limit=seconds"):
        sim.faults.add(CALLBACK, status=429)
    assert sim.faults.pending == []


# -- 429 ------------------------------------------------------------------------------------------


async def test_a_429_carries_what_discord_sends_and_holds_its_window(
    sim: DiscordSim, http: aiohttp.ClientSession
) -> None:
    sim.faults.add("GET /users/@me", rate_limit=0.25)
    async with http.get("/api/v10/users/@me") as reply:
        assert reply.status == 429
        assert reply.headers["Content-Type"] == "application/json"
        assert await reply.json() == {
            "message": "You are being rate limited.",
            "retry_after": 0.25,
            "global": False,
        }
        headers = reply.headers
    assert headers["Via"] == "1.1 google"  # without it discord.py takes a 429 for a ban
    assert headers["Retry-After"] == "1"  # whole seconds, rounded up
    assert headers["X-RateLimit-Limit"] == "5"
    assert headers["X-RateLimit-Remaining"] == "0"
    assert headers["X-RateLimit-Reset-After"] == "0.250"
    assert abs(float(headers["X-RateLimit-Reset"]) - time.time() - 0.25) < 0.2
    assert len(headers["X-RateLimit-Bucket"]) == 32
    assert headers["X-RateLimit-Scope"] == "user"
    assert "X-RateLimit-Global" not in headers
    async with http.get("/api/v10/users/@me") as early:
        assert early.status == 429  # asked again inside retry_after: Discord says no again
        assert 0 < (await early.json())["retry_after"] <= 0.25
    async with http.get(f"/api/v10/users/{sim.seed.bob.id}") as other_path:
        assert other_path.status == 200
    await asyncio.sleep(0.25)
    async with http.get("/api/v10/users/@me") as later:
        assert later.status == 200
    assert [(i.status, i.window) for i in sim.faults.fired("rate_limit")] == [
        (429, False),
        (429, True),
    ]


async def test_discord_py_waits_out_a_route_429_and_retries(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        sent = await text_channel(client, s.channel.id).send("before")
        fault = sim.faults.add("PATCH /channels/{id}/messages/{id}", rate_limit=0.3)
        started = time.monotonic()
        await sent.edit(content="after")
        waited = time.monotonic() - started
    assert waited >= 0.3
    patches = [(r.status, r.fault) for r in sim.requests if r.method == "PATCH"]
    assert patches == [(429, "rate_limit"), (200, None)]
    stored = sim.message(sent.id)
    assert stored.content == "after"
    assert [v.content for v in stored.edits] == ["before"]  # applied once, by the retry
    assert fault.fired == 1
    assert not [i for i in sim.faults.injected if i.window]  # it waited as told


async def test_a_global_429_holds_every_route_but_the_interaction_endpoints(
    sim: DiscordSim, http: aiohttp.ClientSession
) -> None:
    s = sim.seed
    sim.faults.add("*", rate_limit=0.3, global_=True)
    async with http.get(f"/api/v10/channels/{s.channel.id}") as reply:
        assert reply.status == 429
        assert (await reply.json())["global"] is True
        assert reply.headers["X-RateLimit-Global"] == "true"
        assert reply.headers["X-RateLimit-Scope"] == "global"
    status, body = await post_message(http, s.other_channel.id, "during")
    assert (status, body["global"]) == (429, True)
    # Interaction endpoints are not bound to the global limit: an unknown interaction's
    # callback gets its ordinary 404, not a 429.
    async with http.post("/api/v10/interactions/1/x/callback", json={"type": 1}) as callback:
        assert callback.status == 404
        assert (await callback.json())["code"] == 10062
    sim.take_violations()  # the callback for an interaction the sim never sent
    await asyncio.sleep(0.3)
    assert (await post_message(http, s.other_channel.id, "after"))[0] == 200
    assert [m.content for m in sim.messages(s.other_channel)] == ["after"]


async def test_discord_py_waits_out_a_global_429_on_every_route(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        sim.faults.add("POST /channels/{id}/messages", rate_limit=0.3, global_=True)
        started = time.monotonic()
        await asyncio.gather(
            text_channel(client, s.channel.id).send("one"),
            text_channel(client, s.other_channel.id).send("two"),
        )
        waited = time.monotonic() - started
        fetched = await client.fetch_user(s.bob.id)
    assert waited >= 0.3
    assert fetched.name == "bob"
    assert [m.content for m in sim.messages(s.channel)] == ["one"]
    assert [m.content for m in sim.messages(s.other_channel)] == ["two"]
    assert len(sim.faults.fired("rate_limit")) >= 1


# -- 5xx ------------------------------------------------------------------------------------------


async def test_discord_py_retries_a_500_and_gives_up_on_a_503(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        channel = text_channel(client, s.channel.id)
        sim.faults.add(CREATE_MESSAGE, status=500)
        started = time.monotonic()
        sent = await channel.send("retried")
        assert time.monotonic() - started >= 1.0  # discord.py's own back-off after a 500
        sim.faults.add(CREATE_MESSAGE, status=503)
        with pytest.raises(discord.DiscordServerError) as refused:
            await channel.send("refused")
    assert refused.value.status == 503
    assert [m.content for m in sim.messages(s.channel)] == ["retried"]
    assert sim.message(sent.id).content == "retried"
    posts = [r.status for r in sim.requests if r.method == "POST" and "/messages" in r.path]
    assert posts == [500, 200, 503]


async def test_a_status_fault_can_carry_discords_own_error(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        sim.faults.add(CALLBACK, status=404, body={"message": "Unknown interaction", "code": 10062})
        # The refused callback was never applied: for the sim the bot has not answered.
        with pytest.raises(SimTimeout):
            await sim.slash(s.alice, s.channel, "echo", text="refused", timeout=0.2)
        error = await invoke_error(client)
    (ix,) = sim.interactions
    assert ix.response_type is None
    assert sim.messages(s.channel) == []
    assert isinstance(error, discord.NotFound)
    assert error.code == 10062


# -- connection resets ----------------------------------------------------------------------------


async def test_a_reset_after_the_callback_applied_it(sim: DiscordSim) -> None:
    """The point of reset="after": the reply is lost, not the change. The bot cannot tell
    the two apart from the error, and must not claim that nothing happened."""
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        sim.faults.add(CALLBACK, reset="after")
        ix = await sim.slash(s.alice, s.channel, "echo", text="it did happen")
        assert isinstance(await invoke_error(client), CONNECTION_ERRORS)
        again = await sim.slash(s.alice, s.channel, "echo", text="next")
    assert ix.response_type == 4
    assert ix.content == "it did happen"
    assert [m.content for m in sim.messages(s.channel)] == ["it did happen", "next"]
    (injected,) = sim.faults.fired("reset")
    assert (injected.applied, injected.status, injected.detail) == (True, None, "reset-after")
    record = next(r for r in sim.requests if r.fault == "reset-after")
    assert record.status == 200  # what the sim decided; the client never saw it
    assert record.route == "POST /interactions/{interaction_id}/{interaction_token}/callback"
    assert again.content == "next"


async def test_an_answer_sent_again_after_an_unheard_one_is_refused_as_discord_does(
    sim: DiscordSim, http: aiohttp.ClientSession
) -> None:
    """After a first answer applied but never heard of (reset="after"), the bot may send it
    again to find out: Discord refuses it with 40060, and so does the sim, without calling it
    a violation. Once told, a further first answer is answering twice."""
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        sim.faults.add(CALLBACK, reset="after")
        ix = await sim.slash(s.alice, s.channel, "echo", text="it did happen")
        assert isinstance(await invoke_error(client), CONNECTION_ERRORS)
        callback = f"/api/v10/interactions/{ix.id}/{ix.token}/callback"
        body = {"type": 4, "data": {"content": "it did happen"}}
        for attempt in range(2):
            async with http.post(callback, json=body) as again:
                assert again.status == 400
                assert (await again.json())["code"] == 40060
            # The first is no violation, the next is.
            assert len(sim.take_violations()) == attempt
    assert [m.content for m in sim.messages(s.channel)] == ["it did happen"]


async def test_a_reset_before_a_message_applied_nothing(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        channel = text_channel(client, s.channel.id)
        sim.faults.add(CREATE_MESSAGE, reset="before")
        with pytest.raises(CONNECTION_ERRORS):
            await channel.send("lost on the way")
        await channel.send("delivered")
    assert [m.content for m in sim.messages(s.channel)] == ["delivered"]
    (injected,) = sim.faults.fired("reset")
    assert (injected.applied, injected.detail) == (False, "reset-before")
    assert [(r.status, r.fault) for r in sim.requests if r.method == "POST"][-2:] == [
        (0, "reset-before"),
        (200, None),
    ]


async def test_aiohttp_resends_a_delete_once_after_a_reset(sim: DiscordSim) -> None:
    """aiohttp retries a GET, PUT or DELETE once by itself when a reused connection drops;
    after reset="after" the second DELETE finds the message gone."""
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        sent = await text_channel(client, s.channel.id).send("short-lived")
        sim.faults.add("DELETE /channels/{id}/messages/{id}", reset="after")
        with pytest.raises(discord.NotFound):
            await sent.delete()
    assert sim.message(sent.id).deleted
    deletes = [(r.status, r.fault) for r in sim.requests if r.method == "DELETE"]
    assert deletes == [(204, "reset-after"), (404, None)]


# -- delays and the 3 second deadline -------------------------------------------------------------


async def test_a_callback_delayed_past_the_deadline_is_refused(sim: DiscordSim) -> None:
    s = sim.seed
    sim.response_deadline = 0.3
    async with sim.running(DemoClient()) as client:
        sim.faults.add(CALLBACK, delay=0.5)
        ix = await sim.slash(s.alice, s.channel, "echo", text="too late")
        error = await invoke_error(client)
    assert ix.rejected == "late"
    assert ix.latency is not None
    assert ix.latency >= 0.5  # it arrived when the delay ended
    assert ix.message is None
    assert sim.messages(s.channel) == []
    assert isinstance(error, discord.NotFound)
    assert error.code == 10062
    (violation,) = sim.take_violations()
    assert "first answered" in violation
    assert "Discord allows 0.3 s" in violation


async def test_a_slow_reply_to_a_callback_that_arrived_in_time_is_accepted(
    sim: DiscordSim,
) -> None:
    s = sim.seed
    sim.response_deadline = 0.3
    async with sim.running(DemoClient()) as client:
        sim.faults.add(CALLBACK, reply_delay=0.5)
        completed = asyncio.ensure_future(client.wait_for("app_command_completion", timeout=3))
        started = time.monotonic()
        ix = await sim.slash(s.alice, s.channel, "echo", text="slow but on time")
        await completed  # the command returned: discord.py has the reply
        replied = time.monotonic() - started
    assert replied >= 0.5
    assert ix.rejected is None
    assert ix.latency is not None
    assert ix.latency < 0.3
    assert ix.content == "slow but on time"
    assert client.errors == []


async def test_a_reply_delay_applies_first_and_answers_later(
    sim: DiscordSim, http: aiohttp.ClientSession
) -> None:
    s = sim.seed
    sim.faults.add(CREATE_MESSAGE, reply_delay=0.3)
    started = time.monotonic()
    posting = asyncio.create_task(post_message(http, s.channel.id, "applied early"))
    # Waiters wake once a reply is written, so look in the middle of the delay instead.
    await asyncio.sleep(0.15)
    assert [m.content for m in sim.messages(s.channel)] == ["applied early"]
    assert not posting.done()
    status, body = await posting
    assert time.monotonic() - started >= 0.3
    assert (status, body["content"]) == (200, "applied early")


# -- gateway closes -------------------------------------------------------------------------------


async def test_a_resumable_close_resumes_and_replays_what_was_sent_meanwhile(
    sim: DiscordSim,
) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        (session,) = sim.live_sessions()
        await sim.close_gateway()
        assert session.resumes == 1
        await sim.close_gateway(wait=False)
        assert session.conn is None
        # Sent while the socket is down: Discord queues it and replays it after the RESUME.
        ix = await sim.slash(s.alice, s.channel, "echo", text="queued")
        assert session.resumes == 2
        assert ix.session_id == session.id
    assert ix.content == "queued"
    assert [i.id for i in client.seen] == [ix.id]
    assert sim.identifies == 1
    assert [i.detail for i in sim.faults.fired("gateway")] == ["close 4000", "close 4000"]


async def test_an_invalid_session_makes_the_client_identify_afresh(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        before = await sim.slash(s.alice, s.channel, "echo", text="old session")
        (old,) = sim.live_sessions()
        await sim.close_gateway(resumable=False)
        (new,) = sim.live_sessions()
        assert old.ended
        assert new is not old
        assert new.history[0]["t"] == "READY"
        after = await sim.slash(s.alice, s.channel, "echo", text="new session")
        guild = client.get_guild(s.guild.id)
        assert guild is not None
        assert not guild.unavailable
    assert sim.identifies == 2
    assert (before.session_id, after.session_id) == (old.id, new.id)
    assert after.content == "new session"
    assert [i.detail for i in sim.faults.fired("gateway")] == ["INVALID_SESSION d=false"]


async def test_what_was_queued_for_a_session_that_cannot_resume_is_lost(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        (old,) = sim.live_sessions()
        # 4009 "Session timed out": discord.py tries to RESUME and gets INVALID_SESSION.
        await sim.close_gateway(resumable=False, code=4009, wait=False)
        with pytest.raises(SimInteractionLost, match="invalidated instead of resumed"):
            await sim.slash(s.alice, s.channel, "echo", text="never seen")
        (lost,) = sim.interactions
        assert lost.lost
        assert lost.session_id == old.id
        await sim.wait_for(lambda: sim.identifies == 2 and sim.live_sessions()[0].conn)
        ix = await sim.slash(s.alice, s.channel, "echo", text="seen")
    assert old.ended
    assert old.resumes == 0
    assert ix.content == "seen"
    assert [i.id for i in client.seen] == [ix.id]  # the lost one never reached the client
    assert [m.content for m in sim.messages(s.channel)] == ["seen"]


async def test_refused_gateway_connections_fail_until_used_up_then_the_client_resumes(
    sim: DiscordSim,
) -> None:
    s = sim.seed
    async with sim.running(DemoClient()):
        (session,) = sim.live_sessions()
        sim.refuse_gateway(2)
        # discord.py tries again after each refusal (a pause of a second or two), then resumes.
        await sim.drop_connection(timeout=30)
        ix = await sim.slash(s.alice, s.channel, "echo", text="back")
    assert ix.content == "back"
    assert session.resumes == 1
    assert sim.identifies == 1
    refusals = sim.faults.fired("gateway")
    assert [(i.status, i.detail) for i in refusals] == [(502, "refused 502")] * 2
    with pytest.raises(SimUsageError):
        sim.refuse_gateway(0)


# -- the control API ------------------------------------------------------------------------------


async def test_faults_through_the_control_api(sim: DiscordSim, http: aiohttp.ClientSession) -> None:
    s = sim.seed
    body = {"route": CREATE_MESSAGE, "rate_limit": 0.2, "global": True, "count": 1}
    async with http.post("/_sim/faults", json=body) as reply:
        assert reply.status == 200
        added = await reply.json()
    assert (added["kind"], added["global"], added["fired"]) == ("rate_limit", True, 0)
    async with http.post("/_sim/faults", json={"route": "POST /nowhere", "status": 500}) as bad:
        assert bad.status == 400
        assert "matches none" in (await bad.json())["message"]
    assert (await post_message(http, s.channel.id, "limited"))[0] == 429
    async with http.get("/_sim/faults") as reply:
        listed = await reply.json()
    assert listed["pending"] == []
    assert [(i["kind"], i["status"], i["fault"]) for i in listed["injected"]] == [
        ("rate_limit", 429, added["id"])
    ]
    async with http.post("/_sim/faults", json={"route": "*", "status": 502, "count": None}):
        pass
    async with http.delete("/_sim/faults") as reply:
        assert (await reply.json())["pending"] == []
    assert (await post_message(http, s.channel.id, "free"))[0] == 200
    async with http.get("/_sim/state") as reply:
        assert len((await reply.json())["faults"]["injected"]) == 1


async def test_gateway_closes_through_the_control_api(
    sim: DiscordSim, http: aiohttp.ClientSession
) -> None:
    async with sim.running(DemoClient()):
        async with http.post("/_sim/gateway/close", json={"resumable": True}) as reply:
            assert await reply.json() == {"resumable": True, "identifies": 1}
        async with http.post("/_sim/gateway/close", json={"resumable": False}) as reply:
            assert await reply.json() == {"resumable": False, "identifies": 2}
        ix = await sim.slash(sim.seed.alice, sim.seed.channel, "echo", text="still there")
    assert ix.content == "still there"


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/_sim/slash", {"user": "alice", "channel": "general"}, "missing field(s) ['command']"),
        ("/_sim/click", {"user": "alice"}, "missing field(s) ['custom_id', 'message']"),
        ("/_sim/autocomplete", {}, "missing field(s) ['channel', 'command', 'focused', 'user']"),
        ("/_sim/slash", [1, 2], "a JSON object"),
        ("/_sim/slash", "not json{", "a JSON object"),
    ],
)
async def test_a_control_request_missing_what_it_needs_is_told_what(
    sim: DiscordSim, http: aiohttp.ClientSession, path: str, body: object, says: str
) -> None:
    """A bad request to the control API is the caller's mistake: a 400 naming it, not a 500."""
    data = body if isinstance(body, str) else json.dumps(body)
    headers = {"Content-Type": "application/json"}
    async with http.post(path, data=data, headers=headers) as reply:
        assert reply.status == 400
        answer = await reply.json()
    assert answer["error"] == "SimUsageError"
    assert says in answer["message"]
    assert sim.interactions == []


def test_a_fault_is_a_plain_record(sim: DiscordSim) -> None:
    fault = sim.faults.add(CALLBACK, delay=4.0, count=2)
    assert isinstance(fault, Fault)
    assert (fault.kind, fault.fired, fault.exhausted) == ("delay", 0, False)
    assert sim.faults.pending == [fault]
    sim.faults.clear()
    assert sim.faults.pending == []
