"""The sim's second line of defence: requests checked against Discord's OpenAPI document
(``tests/discord_sim/openapi.py``), with Discord's caveats and nothing looser."""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

import aiohttp
import discord
import pytest

from tests.discord_sim import DiscordSim, openapi
from tests.discord_sim.demo_client import DemoClient
from tests.discord_sim.openapi import Allowance, DiscordOpenAPI, SpecProblem

CALLBACK = "POST /interactions/{interaction_id}/{interaction_token}/callback"
CALLBACK_PATH = "/interactions/1574025340349579264/ix.cMK_yS5AxDYTrikEf5GHg5zQufVGRtvF/callback"
COMMANDS = "PUT /applications/{application_id}/commands"
MESSAGES = "POST /channels/{channel_id}/messages"
USER_ID = 1574025339959508999


@pytest.fixture(scope="module")
def spec() -> DiscordOpenAPI:
    return openapi.load()


def button(custom_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": 2, "style": 2, "label": "\u200b", "custom_id": custom_id} | extra


def board_callback() -> dict[str, Any]:
    """A type 4 response as discord.py 2.7 sends it for a board with a View."""
    rows = [
        {
            "type": 1,
            "components": [button(f"ttt:cell:{r * 3 + c}", disabled=False) for c in range(3)],
        }
        for r in range(3)
    ]
    return {
        "type": 4,
        "data": {
            "tts": False,
            "content": f"<@{USER_ID}>, your move",
            "embeds": [
                {"type": "rich", "title": "Tic-tac-toe", "color": 5793266, "flags": 0},
            ],
            "components": rows,
            "allowed_mentions": {"users": [USER_ID], "parse": []},
            "flags": 64,
        },
    }


def command_sync() -> list[dict[str, Any]]:
    """A bulk overwrite with localisations and user-installed contexts."""
    return [
        {
            "type": 1,
            "name": "ttt",
            "description": "Play tic-tac-toe",
            "name_localizations": {"de": "tictactoe", "fr": "morpion"},
            "description_localizations": {"de": "Tic-Tac-Toe spielen"},
            "default_member_permissions": "8",
            "integration_types": [0, 1],
            "contexts": [0, 1, 2],
            "nsfw": False,
            "options": [
                {
                    "type": 1,
                    "name": "vs-ai",
                    "description": "Play against me",
                    "options": [
                        {
                            "type": 3,
                            "name": "difficulty",
                            "description": "How well I play",
                            "required": True,
                            "choices": [
                                {"name": "random", "value": "random"},
                                {
                                    "name": "smart",
                                    "value": "smart",
                                    "name_localizations": {"de": "klug"},
                                },
                            ],
                        },
                        {"type": 6, "name": "opponent", "description": "Who", "required": False},
                    ],
                },
            ],
        },
        {"type": 2, "name": "Challenge", "integration_types": [0], "contexts": [0]},
    ]


def check(
    spec: DiscordOpenAPI,
    method: str,
    path: str,
    body: Any = None,
    query: Iterable[tuple[str, str]] = (),
    content_type: str = "application/json",
) -> list[SpecProblem]:
    return spec.check(method, path, query=query, body=body, content_type=content_type)


def only(problems: list[SpecProblem]) -> SpecProblem:
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


# ---------------------------------------------------------------------- bodies that pass


def test_an_interaction_response_with_components(spec: DiscordOpenAPI) -> None:
    query = [("with_response", "1")]
    assert check(spec, "POST", CALLBACK_PATH, board_callback(), query) == []
    update = board_callback() | {"type": 7}
    assert check(spec, "POST", CALLBACK_PATH, update, query) == []
    assert check(spec, "POST", CALLBACK_PATH, {"type": 5}, query) == []
    assert check(spec, "POST", CALLBACK_PATH, {"type": 6}) == []


def test_the_newer_component_layout(spec: DiscordOpenAPI) -> None:
    body = {
        "type": 4,
        "data": {
            "flags": 1 << 15,
            "components": [
                {
                    "type": 17,
                    "accent_color": 0x5865F2,
                    "components": [
                        {"type": 10, "content": "## Tic-tac-toe"},
                        {"type": 14, "divider": True, "spacing": 1},
                        {
                            "type": 9,
                            "components": [{"type": 10, "content": "alice vs bob"}],
                            "accessory": button("ttt:resign", style=4, label="Resign"),
                        },
                        {"type": 1, "components": [button("ttt:cell:0", id=7)]},
                    ],
                }
            ],
        },
    }
    assert check(spec, "POST", CALLBACK_PATH, body) == []


def test_a_followup(spec: DiscordOpenAPI) -> None:
    body = {"content": "This challenge has expired.", "tts": False, "flags": 64}
    body["allowed_mentions"] = {"parse": []}
    query = [("wait", "1"), ("with_components", "0")]
    assert check(spec, "POST", "/webhooks/1574025342954242048/ix.tok", body, query) == []


def test_an_original_edit_with_tts_and_embed_flags(spec: DiscordOpenAPI) -> None:
    # discord.py always sends tts, and flags in each embed; the spec leaves its objects open.
    path = "/webhooks/1574025379859922944/ix.tok/messages/@original"
    body = {"content": "refreshed", "tts": False, "embeds": [{"title": "t", "flags": 0}]}
    assert check(spec, "PATCH", path, body) == []
    assert spec.match("PATCH", path) == (
        "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
        {"webhook_id": "1574025379859922944", "webhook_token": "ix.tok"},
    )


def test_literal_segments_win_over_templated_ones(spec: DiscordOpenAPI) -> None:
    assert spec.match("GET", "/users/@me") == ("/users/@me", {})
    assert spec.match("GET", "/users/42") == ("/users/{user_id}", {"user_id": "42"})
    found = spec.match("PATCH", "/webhooks/1/t/messages/42")
    assert found is not None
    assert found[0] == "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}"
    found = spec.match("GET", "/applications/@me")
    assert found is not None
    assert found[0] == "/applications/@me"


def test_a_command_sync_with_localisations_and_user_installs(spec: DiscordOpenAPI) -> None:
    path = "/applications/1574025339955314688/commands"
    assert check(spec, "PUT", path, command_sync()) == []


def test_a_multipart_payload_json(spec: DiscordOpenAPI) -> None:
    payload = {
        "content": "the board",
        "attachments": [{"id": 0, "filename": "board.png", "description": "the board"}],
        "nonce": "5776704839890668677",
        "enforce_nonce": True,
        "tts": False,
    }
    content_type = "multipart/form-data; boundary=3e5b1c2d"
    assert check(spec, "POST", "/channels/42/messages", payload, content_type=content_type) == []


def test_snowflakes_as_json_integers(spec: DiscordOpenAPI) -> None:
    assert check(spec, "POST", "/users/@me/channels", {"recipient_id": USER_ID}) == []
    problem = only(check(spec, "POST", "/users/@me/channels", {"recipient_id": -1}))
    assert (problem.json_path, problem.rule) == ("$.recipient_id", "type ['null', 'string']")
    problem = only(check(spec, "POST", "/users/@me/channels", {"recipient_id": True}))
    assert problem.json_path == "$.recipient_id"


def test_int_parseable_strings_where_the_spec_says_integer(spec: DiscordOpenAPI) -> None:
    assert check(spec, "POST", CALLBACK_PATH, {"type": "6"}) == []
    assert check(spec, "GET", "/channels/42/messages", query=[("limit", "100")]) == []
    for bad in ("6.0", " 6", "+6", "six"):
        problem = only(check(spec, "POST", CALLBACK_PATH, {"type": bad}))
        assert problem.json_path == "$.type"


def test_a_digit_nonce_is_one_shape(spec: DiscordOpenAPI) -> None:
    # It fits nonce's integer shape only through the int-parseable caveat, and its string
    # shape as sent: that is one shape, not two.
    body = {"content": "hi", "nonce": "5776704839890668677", "enforce_nonce": True}
    assert check(spec, "POST", "/channels/42/messages", body) == []


def test_booleans_in_query_strings(spec: DiscordOpenAPI) -> None:
    for value in ("true", "True", "1", "false", "False", "0"):
        assert check(spec, "GET", "/guilds/42", query=[("with_counts", value)]) == []
    problem = only(check(spec, "GET", "/guilds/42", query=[("with_counts", "yes")]))
    assert (problem.part, problem.json_path, problem.rule) == (
        "query",
        "with_counts",
        'type "boolean"',
    )


# ---------------------------------------------------------------------- bodies that fail


def test_a_101_character_custom_id(spec: DiscordOpenAPI) -> None:
    body = board_callback()
    body["data"]["components"][1]["components"][2]["custom_id"] = "c" * 101
    problem = only(check(spec, "POST", CALLBACK_PATH, body))
    assert problem.route == CALLBACK
    assert problem.part == "body"
    assert problem.json_path == "$.data.components[1].components[2].custom_id"
    assert problem.rule == "maxLength 100"
    assert problem.excerpt.endswith("… (101 characters)")
    assert str(problem) == (
        f"OpenAPI: {CALLBACK}: body $.data.components[1].components[2].custom_id: "
        f"maxLength 100: {problem.excerpt}"
    )


def test_an_unknown_component_type(spec: DiscordOpenAPI) -> None:
    body = board_callback()
    body["data"]["components"][0]["components"][1]["type"] = 99
    problem = only(check(spec, "POST", CALLBACK_PATH, body))
    assert problem.json_path == "$.data.components[0].components[1].type"
    assert problem.rule == "enum [2, 3, 5, 6, 7, 8]"
    assert problem.excerpt == "99"
    body = board_callback()
    body["data"]["components"][2]["type"] = 99
    problem = only(check(spec, "POST", CALLBACK_PATH, body))
    assert problem.json_path == "$.data.components[2].type"
    assert problem.rule.startswith("enum [1, 9, 10, 12, 13, 14, 17")


def test_a_bad_callback_type(spec: DiscordOpenAPI) -> None:
    problem = only(check(spec, "POST", CALLBACK_PATH, {"type": 3, "data": {"content": "x"}}))
    assert (problem.route, problem.json_path) == (CALLBACK, "$.type")
    assert problem.rule == "enum [1, 4, 5, 6, 7, 8, 9, 12, 13]"
    assert problem.excerpt == "3"
    problem = only(check(spec, "POST", CALLBACK_PATH, {"data": {"content": "x"}}))
    assert (problem.json_path, problem.rule) == ("$", "required ['type']")


def test_a_string_where_an_object_is_required(spec: DiscordOpenAPI) -> None:
    problem = only(check(spec, "POST", CALLBACK_PATH, {"type": 4, "data": "hello"}))
    assert (problem.json_path, problem.rule, problem.excerpt) == (
        "$.data",
        "type ['null', 'object']",
        '"hello"',
    )
    body = board_callback()
    body["data"]["allowed_mentions"] = "none"
    problem = only(check(spec, "POST", CALLBACK_PATH, body))
    assert (problem.json_path, problem.rule) == (
        "$.data.allowed_mentions",
        "type ['null', 'object']",
    )
    problem = only(check(spec, "POST", CALLBACK_PATH, "type=4"))
    assert (problem.json_path, problem.rule) == ("$", "type ['object']")


def test_an_out_of_range_integer_given_as_a_string(spec: DiscordOpenAPI) -> None:
    command = {"name": "ttt", "description": "d", "default_member_permissions": "18014398509481984"}
    problem = only(check(spec, "PUT", "/applications/42/commands", [command]))
    assert problem.route == COMMANDS
    assert problem.json_path == "$[0].default_member_permissions"
    assert problem.rule == "maximum 18014398509481983"
    assert problem.excerpt == '"18014398509481984"'
    command["default_member_permissions"] = "-1"
    problem = only(check(spec, "PUT", "/applications/42/commands", [command]))
    assert (problem.json_path, problem.rule) == ("$[0].default_member_permissions", "minimum 0")
    problem = only(check(spec, "GET", "/channels/42/messages", query=[("limit", "101")]))
    assert (problem.part, problem.json_path, problem.rule) == ("query", "limit", "maximum 100")


def test_a_route_the_spec_lacks(spec: DiscordOpenAPI) -> None:
    problem = only(check(spec, "GET", "/games/42/board"))
    assert (problem.route, problem.part, problem.rule) == (
        "GET /games/42/board",
        "route",
        "no operation in the spec",
    )
    assert str(problem) == "OpenAPI: GET /games/42/board: no operation in the spec"
    problem = only(check(spec, "PUT", "/channels/42"))
    assert problem.route == "PUT /channels/42"
    problem = only(check(spec, "GET", "/webhooks/1/t/messages/"))
    assert problem.part == "route"


def test_a_bad_path_parameter(spec: DiscordOpenAPI) -> None:
    path = "/interactions/not-a-snowflake/ix.tok/callback"
    problem = only(check(spec, "POST", path, {"type": 6}))
    assert (problem.route, problem.part, problem.json_path) == (CALLBACK, "path", "interaction_id")
    assert problem.rule == 'pattern "^(0|[1-9][0-9]*)$"'
    assert problem.excerpt == '"not-a-snowflake"'
    problem = only(check(spec, "GET", "/guilds/42/members/@me"))
    assert (problem.route, problem.json_path) == (
        "GET /guilds/{guild_id}/members/{user_id}",
        "user_id",
    )


def test_a_nonce_too_long(spec: DiscordOpenAPI) -> None:
    problem = only(
        check(spec, "POST", "/channels/42/messages", {"content": "x", "nonce": "n" * 26})
    )
    assert (problem.route, problem.json_path, problem.rule) == (MESSAGES, "$.nonce", "maxLength 25")


def test_query_parameters_and_bodies_the_operation_does_not_take(spec: DiscordOpenAPI) -> None:
    problem = only(check(spec, "POST", CALLBACK_PATH, {"type": 6}, [("wait", "true")]))
    assert (problem.part, problem.json_path) == ("query", "wait")
    assert problem.rule == "not a parameter of this operation"
    problem = only(check(spec, "GET", "/users/@me", {"x": 1}))
    assert (problem.part, problem.rule) == ("body", "the operation takes no body")
    problem = only(check(spec, "POST", CALLBACK_PATH))
    assert (problem.part, problem.rule) == ("body", "required")
    problem = only(check(spec, "POST", CALLBACK_PATH, {"type": 6}, content_type="text/plain"))
    assert problem.rule.startswith("content type ['application/json'")


def test_every_problem_of_the_right_branch_is_reported(spec: DiscordOpenAPI) -> None:
    body = board_callback()
    body["data"]["components"][0]["components"][0]["label"] = "l" * 81
    body["data"]["components"][0]["components"][1]["style"] = 9
    problems = check(spec, "POST", CALLBACK_PATH, body)
    assert [(p.json_path, p.rule.split()[0]) for p in problems] == [
        ("$.data.components[0].components[0].label", "maxLength"),
        ("$.data.components[0].components[1].style", "oneOf:"),
    ]


def test_an_allowance_excuses_exactly_what_it_names(
    spec: DiscordOpenAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = board_callback()
    body["data"]["components"][0]["components"][0]["custom_id"] = "c" * 101
    allowance = Allowance(
        CALLBACK,
        "body",
        r"\$\.data\.components\[\d+\]\.components\[\d+\]\.custom_id",
        "maxLength",
        "test",
    )
    monkeypatch.setattr(openapi, "ALLOWANCES", (allowance,))
    assert check(spec, "POST", CALLBACK_PATH, body) == []
    body["data"]["components"][0]["components"][0]["label"] = "l" * 81
    assert [p.json_path for p in check(spec, "POST", CALLBACK_PATH, body)] == [
        "$.data.components[0].components[0].label"
    ]


# ---------------------------------------------------------------------- the machinery


def test_the_document_is_loaded_once() -> None:
    assert openapi.load() is openapi.load()
    assert openapi.SPEC_FILE.is_file()
    assert openapi.load().document["openapi"].startswith("3.1")


def test_a_body_checked_again_gets_the_same_verdict_and_a_changed_one_a_new_one(
    spec: DiscordOpenAPI,
) -> None:
    """Verdicts on bodies are kept by their content: the same body again gives the same
    problems (the list is the caller's to change), the same body changed in place is judged
    anew, and the oldest verdicts give way once more bodies than are kept were checked."""
    body = board_callback()
    body["data"]["components"][2]["type"] = 99
    first = check(spec, "POST", CALLBACK_PATH, body)
    assert [p.json_path for p in first] == ["$.data.components[2].type"]
    first.clear()
    again = check(spec, "POST", CALLBACK_PATH, body)
    assert [p.json_path for p in again] == ["$.data.components[2].type"]
    body["data"]["components"][2]["type"] = 1
    body["data"]["components"][1]["components"][0]["type"] = 99
    assert [p.json_path for p in check(spec, "POST", CALLBACK_PATH, body)] == [
        "$.data.components[1].components[0].type"
    ]
    for n in range(openapi.BODY_VERDICTS_KEPT + 1):
        assert check(spec, "POST", CALLBACK_PATH, {"type": 4, "data": {"content": str(n)}}) == []
    assert len(spec._body_verdicts) == openapi.BODY_VERDICTS_KEPT


@pytest.mark.slow  # every request body checked twice, once as written: 1.2 s of CPU
def test_the_shortcuts_give_the_verdicts_of_the_keywords_as_written(
    spec: DiscordOpenAPI,
) -> None:
    """With the shortcuts, the board is accepted first (and remembered), and each change
    of it after is still judged as the keywords judge it."""
    plain = DiscordOpenAPI(spec.document, shortcuts=False)
    button_at = ("data", "components", 0, "components", 0)
    edits: list[tuple[tuple[str | int, ...], str, Any]] = [
        (button_at, "type", 99),
        (button_at, "type", "2"),
        (button_at, "style", "2"),
        (button_at, "custom_id", "c" * 101),
        (("data", "components", 0), "type", 99),
        (("data",), "allowed_mentions", "none"),
        ((), "type", "4"),
        ((), "type", 7),
        ((), "type", 3),
    ]
    bodies: list[Any] = [board_callback(), "x"]
    for where, key, value in edits:
        body = board_callback()
        node: Any = body
        for step in where:
            node = node[step]
        node[key] = value
        bodies.append(body)
    cases = [("POST", CALLBACK_PATH, body) for body in bodies]
    commands = command_sync()
    commands[0]["options"][0]["options"][0]["type"] = 99
    commands[0]["options"][0]["options"][0]["choices"][0]["value"] = 4
    commands[1]["type"] = "2"
    cases += [("PUT", "/applications/42/commands", [c]) for c in command_sync() + commands]
    for method, path, body in cases:
        fast = check(spec, method, path, body)
        slow = check(plain, method, path, body)
        assert [p.json_path for p in fast] == [p.json_path for p in slow], body


def test_integer_consts_sit_in_integer_fields(spec: DiscordOpenAPI) -> None:
    """``enum``/``const`` take an int-parseable string on untyped schemas too; that is no
    looser than the caveat only while every untyped integer const in the document is a
    branch of a union in an integer-typed field."""
    strays: list[str] = []

    def types(node: dict[str, Any]) -> set[str]:
        declared = node.get("type")
        return {declared} if isinstance(declared, str) else set(declared or ())

    def walk(node: Any, where: str, parent: set[str]) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{where}/{index}", set())
            return
        if not isinstance(node, dict):
            return
        mine = types(node)
        values = ([node["const"]] if "const" in node else []) + list(node.get("enum") or [])
        if any(type(v) is int for v in values) and "integer" not in mine | parent:
            strays.append(where)
        for key, value in node.items():
            if key in ("oneOf", "anyOf") and isinstance(value, list):
                for index, branch in enumerate(value):
                    walk(branch, f"{where}/{key}/{index}", mine)
            else:
                walk(value, f"{where}/{key}", set())

    walk(spec.document, "", set())
    assert strays == []


# ---------------------------------------------------------------------- through the sim


async def test_the_running_sim_reports_a_spec_violation(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        channel = client.get_channel(s.channel.id)
        assert isinstance(channel, discord.TextChannel)
        # No hand-written check knows the nonce's limit; the spec does.
        await channel.send("hello", nonce="n" * 26)
    violations = sim.take_violations()
    assert len(violations) == 1
    assert violations[0].startswith(
        f'OpenAPI: {MESSAGES}: body $.nonce: maxLength 25: "nnnnnnnnnnnnnnnnnnnnnnnnnn"'
    )
    # The spec only reports; the reply is the hand-written checks' to give.
    assert [m.content for m in sim.messages(s.channel)] == ["hello"]


async def test_a_file_upload_passes_through_the_sim(sim: DiscordSim) -> None:
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        channel = client.get_channel(s.channel.id)
        assert isinstance(channel, discord.TextChannel)
        await channel.send("board", file=discord.File(io.BytesIO(b"png"), "board.png"))
    (message,) = sim.messages(s.channel)
    assert [a["filename"] for a in message.attachments] == ["board.png"]
    assert sim.violations == []


async def test_a_request_outside_api_v10_is_a_violation(sim: DiscordSim) -> None:
    headers = {"Authorization": f"Bot {sim.token}"}
    async with aiohttp.ClientSession() as http:
        reply = await http.get(f"{sim.base_url}/api/v9/users/@me", headers=headers)
        assert reply.status == 404
    assert sim.unknown_routes == [("GET", "/api/v9/users/@me")]
    assert sim.take_violations() == ["OpenAPI: GET /api/v9/users/@me: not under /api/v10"]
