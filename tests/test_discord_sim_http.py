"""The simulator's HTTP mode against a small endpoint of the test's own (not the bot): each
interaction POSTed signed as Discord signs it, and the response read as the interaction's
callback with the rules the gateway mode checks (the deadline, one answer, limits, the flags a
deferral may set), a status other than 200, or a body not labelled JSON, being no answer."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import nacl.exceptions
import nacl.signing
import orjson
import pytest
from aiohttp import web

from tests.discord_sim import DiscordSim, SimTimeout, SimUsageError
from tests.discord_sim.demo_client import DemoClient

# What the endpoint answers an interaction: a status and a JSON body.
Answer = Callable[[dict[str, Any]], Awaitable[tuple[int, Any]]]
JSON_TYPE = "application/json"


@dataclass(frozen=True)
class Endpoint:
    """One endpoint of the test's own: where it listens, and the signature headers of each
    request it was sent."""

    url: str
    headers: list[dict[str, str]]


@asynccontextmanager
async def endpoint(
    sim: DiscordSim, answer: Answer, *, content_type: str = JSON_TYPE
) -> AsyncIterator[list[dict[str, str]]]:
    """An endpoint that checks each request's signature with the sim's public key, answers it
    with ``answer`` (labelled ``content_type``), and keeps each request's signature headers;
    the sim's HTTP mode set on it. DemoClient registers its commands over the gateway first."""
    async with endpoints(sim, [answer], content_type=content_type) as (only,):
        yield only.headers


@asynccontextmanager
async def endpoints(
    sim: DiscordSim, answers: list[Answer], *, content_type: str = JSON_TYPE
) -> AsyncIterator[list[Endpoint]]:
    """One :func:`endpoint` per answer, each on its own port, the sim's HTTP mode set on the
    first."""
    async with sim.running(DemoClient()):
        pass
    key = nacl.signing.VerifyKey(bytes.fromhex(sim.public_key))
    started: list[Endpoint] = []
    runners: list[web.AppRunner] = []
    try:
        for answer in answers:
            headers: list[dict[str, str]] = []
            runner = web.AppRunner(_endpoint_app(key, answer, headers, content_type))
            runners.append(runner)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            url = f"http://127.0.0.1:{runner.addresses[0][1]}/interactions"
            started.append(Endpoint(url, headers))
        sim.interactions_url = started[0].url
        yield started
    finally:
        sim.interactions_url = None
        for runner in runners:
            await runner.cleanup()


def _endpoint_app(
    key: nacl.signing.VerifyKey, answer: Answer, headers: list[dict[str, str]], content_type: str
) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        signature = request.headers["X-Signature-Ed25519"]
        timestamp = request.headers["X-Signature-Timestamp"]
        try:
            key.verify(timestamp.encode() + body, bytes.fromhex(signature))
        except nacl.exceptions.BadSignatureError:
            return web.Response(status=401, text="invalid request signature")
        headers.append({"signature": signature, "timestamp": timestamp})
        status, reply = await answer(orjson.loads(body))
        return web.Response(
            status=status, body=orjson.dumps(reply), headers={"Content-Type": content_type}
        )

    app = web.Application()
    app.router.add_post("/interactions", handle)
    return app


@asynccontextmanager
async def raw_endpoint(
    handle: Callable[[web.Request], Awaitable[web.Response]],
) -> AsyncIterator[str]:
    """An endpoint that hands each request to ``handle`` as it comes, signed or not; its URL."""
    app = web.Application()
    app.router.add_post("/interactions", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/interactions"
    finally:
        await runner.cleanup()


def message(content: str) -> Answer:
    async def answer(interaction: dict[str, Any]) -> tuple[int, Any]:
        return 200, {"type": 4, "data": {"content": content}}

    return answer


async def test_a_response_is_read_as_the_callback_of_a_signed_interaction(sim: DiscordSim) -> None:
    s = sim.seed
    async with endpoint(sim, message("hello")) as requests:
        ix = await sim.slash(s.alice, s.channel, "board")
    assert ix.response_type == 4
    assert ix.content == "hello"
    assert ix.message is not None
    assert sim.messages(s.channel) == [ix.message]
    ((signed),) = requests
    assert abs(int(signed["timestamp"]) - time.time()) < 5
    (recorded,) = [r for r in sim.requests if r.path.endswith("/callback")]
    assert recorded.http_response
    assert recorded.status == 204


async def test_a_late_response_is_a_violation(sim: DiscordSim) -> None:
    s = sim.seed

    async def late(interaction: dict[str, Any]) -> tuple[int, Any]:
        await asyncio.sleep(0.4)
        return 200, {"type": 4, "data": {"content": "late"}}

    sim.response_deadline = 0.2
    async with endpoint(sim, late):
        ix = await sim.slash(s.alice, s.channel, "board")
    assert ix.rejected == "late"
    assert ix.message is None
    (violation,) = sim.take_violations()
    assert "after the interaction was sent; Discord allows 0.2 s" in violation


async def test_a_response_over_discords_limits_is_a_violation(sim: DiscordSim) -> None:
    s = sim.seed
    async with endpoint(sim, message("x" * 2001)):
        ix = await sim.slash(s.alice, s.channel, "board")
    assert ix.rejected == "invalid"
    assert ix.message is None
    violations = sim.take_violations()
    assert "content is 2001 characters; the limit is 2000" in violations[0]
    assert violations[1].startswith(
        "OpenAPI: POST /interactions/{interaction_id}/{interaction_token}/callback: "
        "body $.data.content: maxLength 2000: "
    )


async def test_a_callback_after_the_response_is_a_second_answer(sim: DiscordSim) -> None:
    s = sim.seed
    async with endpoint(sim, message("one")):
        ix = await sim.slash(s.alice, s.channel, "board")
        url = f"{sim.api_base_url}/interactions/{ix.id}/{ix.token}/callback"
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, json={"type": 4, "data": {"content": "two"}}) as second,
        ):
            assert second.status == 400
            assert (await second.json())["code"] == 40060
    assert ix.content == "one"
    (violation,) = sim.take_violations()
    assert "the interaction was answered twice (first with type 4, then with type 4)" in violation


async def test_a_status_other_than_200_is_no_answer(sim: DiscordSim) -> None:
    s = sim.seed

    async def refuse(interaction: dict[str, Any]) -> tuple[int, Any]:
        return 500, {"error": "no"}

    async with endpoint(sim, refuse):
        with pytest.raises(SimTimeout, match="with HTTP 500"):
            await sim.slash(s.alice, s.channel, "board")
    (ix,) = sim.interactions
    assert not ix.answered
    assert sim.messages(s.channel) == []


async def test_a_response_lost_on_its_way_is_no_answer_and_its_token_knows_none(
    sim: DiscordSim,
) -> None:
    s = sim.seed
    async with endpoint(sim, message("lost")) as requests:
        sim.lose_http_answers = True
        with pytest.raises(SimTimeout, match="was lost on its way"):
            await sim.slash(s.alice, s.channel, "board")
        sim.lose_http_answers = False
        (ix,) = sim.interactions
        url = f"{sim.api_base_url}/webhooks/{sim.application_id}/{ix.token}/messages/@original"
        async with aiohttp.ClientSession() as http, http.get(url) as original:
            assert original.status == 404
        shown = await sim.slash(s.alice, s.channel, "board")
    assert len(requests) == 2  # the endpoint wrote both responses
    assert not ix.answered
    assert shown.content == "lost"
    assert sim.messages(s.channel) == [shown.message]


async def test_a_connection_the_endpoint_drops_or_refuses_is_no_answer_and_says_which(
    sim: DiscordSim,
) -> None:
    """A worker killed while it holds the request (the connection closed with no response),
    and a port nobody listens on (every worker down): no answer, and the record says why."""
    s = sim.seed

    async def hang_up(request: web.Request) -> web.Response:
        await request.read()
        assert request.transport is not None
        request.transport.abort()
        return web.json_response({"type": 4, "data": {"content": "never read"}})

    async with sim.running(DemoClient()):
        pass
    async with raw_endpoint(hang_up) as url:
        sim.interactions_url = url
        with pytest.raises(aiohttp.ServerDisconnectedError):
            await sim.slash(s.alice, s.channel, "board")
    with pytest.raises(aiohttp.ClientConnectorError):
        await sim.slash(s.alice, s.channel, "board")
    sim.interactions_url = None
    dropped, refused = sim.interactions
    assert not dropped.answered
    assert not refused.answered
    assert (dropped.dropped or "").startswith("ServerDisconnectedError: ")
    assert (refused.dropped or "").startswith("ClientConnectorError: ")
    assert sim.messages(s.channel) == []


@pytest.mark.parametrize("keep_alive", [True, False])
async def test_interactions_share_a_kept_alive_connection_or_each_has_its_own(
    sim: DiscordSim, keep_alive: bool
) -> None:
    s = sim.seed
    peers: list[object] = []

    async def answer(request: web.Request) -> web.Response:
        assert request.transport is not None
        peers.append(request.transport.get_extra_info("peername"))
        return web.json_response({"type": 4, "data": {"content": "hi"}})

    async with sim.running(DemoClient()):
        pass
    sim.interactions_keep_alive = keep_alive
    async with raw_endpoint(answer) as url:
        sim.interactions_url = url
        for _ in range(3):
            await sim.slash(s.alice, s.channel, "board")
    sim.interactions_url = None
    assert len(peers) == 3
    assert len(set(peers)) == (1 if keep_alive else 3)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
async def test_a_response_discord_would_not_read_as_json_is_no_answer(
    sim: DiscordSim, content_type: str
) -> None:
    """Discord reads a response by its Content-Type: "You must provide a valid Content-Type
    when responding to PINGs" (discord-api-docs, docs/interactions/overview.mdx), the valid
    ones being application/json, x-www-form-urlencoded and multipart/form-data
    (docs/Reference.mdx, "HTTP API"). JSON labelled anything but JSON is not read as JSON."""
    s = sim.seed
    async with endpoint(sim, message("hello"), content_type=content_type):
        with pytest.raises(SimTimeout, match=f"with Content-Type '{content_type}'"):
            await sim.slash(s.alice, s.channel, "board")
    (ix,) = sim.interactions
    assert not ix.answered
    assert sim.messages(s.channel) == []
    (violation,) = sim.take_violations()
    assert f"Content-Type '{content_type}'; Discord reads 'application/json'" in violation


@pytest.mark.parametrize(
    "reply",
    [{"type": 1}, {"type": 6}, {"type": 8, "data": {"choices": []}}, {"data": {}}, "ok", None],
)
async def test_a_200_that_is_no_interaction_response_for_the_interaction_shows_nothing(
    sim: DiscordSim, reply: Any
) -> None:
    """The response is an Interaction Response, of a callback type valid for the interaction:
    a PONG only for a PING, 6 and 7 for components, 8 for autocomplete (discord-api-docs,
    docs/interactions/receiving-and-responding.mdx, "Interaction Callback Type")."""
    s = sim.seed

    async def answer(interaction: dict[str, Any]) -> tuple[int, Any]:
        return 200, reply

    async with endpoint(sim, answer):
        ix = await sim.slash(s.alice, s.channel, "board")
    assert (ix.rejected, ix.message) == ("invalid", None)
    assert sim.messages(s.channel) == []
    violations = sim.take_violations()
    assert "is not valid for interaction type 2" in violations[0]


async def test_a_json_response_with_a_charset_is_read(sim: DiscordSim) -> None:
    s = sim.seed
    async with endpoint(sim, message("hello"), content_type="application/json; charset=utf-8"):
        ix = await sim.slash(s.alice, s.channel, "board")
    assert ix.content == "hello"


async def test_a_deferral_may_set_the_ephemeral_flag_and_no_other(sim: DiscordSim) -> None:
    """A deferral may set EPHEMERAL and no other flag: "If you create a callback with the type
    DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE the only valid message flag you may use is
    EPHEMERAL", a components-v2 message being made by the edit of the original response
    (discord-api-docs,
    docs/interactions/receiving-and-responding.mdx, "Interaction Callback Data Structure")."""
    s = sim.seed
    flags = iter([64, 1 << 15, 64 | 1 << 2])

    async def defer(interaction: dict[str, Any]) -> tuple[int, Any]:
        return 200, {"type": 5, "data": {"flags": next(flags)}}

    async with endpoint(sim, defer):
        private = await sim.slash(s.alice, s.channel, "board")
        layout = await sim.slash(s.alice, s.channel, "board")
        suppressed = await sim.slash(s.alice, s.channel, "board")
    assert private.rejected is None
    assert private.message is not None
    assert private.message.ephemeral
    assert private.message.loading
    assert (layout.rejected, layout.message) == ("invalid", None)
    assert (suppressed.rejected, suppressed.message) == ("invalid", None)
    violations = sim.take_violations()
    assert len(violations) == 2
    assert "may set no flag but EPHEMERAL (64); it set 32768" in violations[0]
    assert "may set no flag but EPHEMERAL (64); it set 68" in violations[1]


async def pong(interaction: dict[str, Any]) -> tuple[int, Any]:
    return 200, {"type": 1} if interaction["type"] == 1 else {"type": 4, "data": {"content": "!"}}


async def test_discord_saves_the_url_of_an_endpoint_that_pongs_and_refuses_forgeries(
    sim: DiscordSim,
) -> None:
    """When the URL is saved, and from time to time after, Discord sends a PING, which must be
    answered 200 with a PONG under a valid Content-Type, and requests whose signature fails,
    which must be answered 401 (discord-api-docs, docs/interactions/overview.mdx, "Setting Up
    an Endpoint")."""
    async with endpoint(sim, pong):
        assert await sim.verify_endpoint() == []
    assert sim.take_violations() == []
    async with endpoint(sim, message("hello")):
        assert await sim.verify_endpoint() == [
            "a PING was answered with {'type': 4, 'data': {'content': 'hello'}}, not a PONG"
        ]
    async with endpoint(sim, pong, content_type="text/plain"):
        assert await sim.verify_endpoint() == ["a PING's answer has Content-Type 'text/plain'"]
    (message_violation, label_violation) = sim.take_violations()
    assert "Interactions Endpoint URL http://127.0.0.1:" in message_violation
    assert label_violation.endswith("a PING's answer has Content-Type 'text/plain'")


async def test_an_endpoint_that_takes_forgeries_fails_discords_check(sim: DiscordSim) -> None:
    async def anything(request: web.Request) -> web.Response:
        return web.json_response({"type": 1})

    async with raw_endpoint(anything) as url:
        problems = await sim.verify_endpoint(url)
    assert problems == ["a PING with a signature that fails was answered 200"]
    (violation,) = sim.take_violations()
    assert violation.endswith(problems[0])


def worker(name: str) -> Answer:
    """A worker answering every interaction with its own name."""
    return message(name)


async def spread(sim: DiscordSim, count: int) -> list[str]:
    """``count`` commands sent; which worker answered each."""
    s = sim.seed
    return [(await sim.slash(s.alice, s.channel, "board")).content or "" for _ in range(count)]


async def test_interactions_are_spread_over_the_workers_in_turn(sim: DiscordSim) -> None:
    async with endpoints(sim, [worker("a"), worker("b"), worker("c")]) as started:
        sim.spread_over([e.url for e in started])
        assert await spread(sim, 7) == ["a", "b", "c", "a", "b", "c", "a"]
        assert [len(e.headers) for e in started] == [3, 2, 2]
        assert [ix.endpoint for ix in sim.interactions] == [started[i % 3].url for i in range(7)]
        # The first stays the endpoint a single-endpoint test reads.
        assert sim.interactions_url == started[0].url


async def test_interactions_spread_at_random_repeat_with_the_seed(sim: DiscordSim) -> None:
    async with endpoints(sim, [worker("a"), worker("b")]) as started:
        urls = [e.url for e in started]
        sim.spread_over(urls, order="random", seed=7)
        first = await spread(sim, 16)
        sim.spread_over(urls, order="random", seed=7)
        again = await spread(sim, 16)
        sim.spread_over(urls, order="random", seed=8)
        other = await spread(sim, 16)
    assert first == again
    assert other != first
    # At random, not in turn: both get some, and some in a row.
    assert set(first) == {"a", "b"}
    assert any(one == two for one, two in itertools.pairwise(first))


async def test_one_endpoint_set_again_ends_the_spreading(sim: DiscordSim) -> None:
    async with endpoints(sim, [worker("a"), worker("b")]) as started:
        sim.spread_over([e.url for e in started], order="random", seed=1)
        sim.interactions_url = started[1].url
        assert await spread(sim, 3) == ["b", "b", "b"]
        with pytest.raises(SimUsageError, match="'round robin' or 'random'"):
            sim.spread_over([started[0].url], order="shuffle")  # type: ignore[arg-type]
    assert sim.interactions_url is None
    with pytest.raises(SimUsageError, match=r"set sim\.interactions_url"):
        sim.next_endpoint()
