"""Setting the bot up: the permissions and scopes its invite link asks for (each one something
the code needs), ``python -m bot invite``, the start-up lines of an application in no server
and of one whose Interactions Endpoint URL does not fit the front door, and one line for each way
the Discord application can be set up wrong."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import discord
import pytest

from bot import render
from bot.boards import may_write
from bot.invite import SCOPES, invite_link
from bot.permissions import INVITE_PERMISSIONS, SHOW_EMBEDS, may_open_thread
from bot.storage.base import GameRecord, GameStatus
from tests.bot_harness import HTTP, BotHarness
from tests.bot_processes import bot_process, run_bot
from tests.discord_sim import DiscordSim
from tests.postgres_cluster import free_port

# view_channel 2**10 + send_messages 2**11 + embed_links 2**14 + create_public_threads 2**35
# + send_messages_in_threads 2**38.
PERMISSIONS = 309_237_664_768


def granting(*flags: str) -> discord.Permissions:
    return discord.Permissions(**dict.fromkeys(flags, True))


def without(flag: str) -> discord.Permissions:
    return discord.Permissions(
        INVITE_PERMISSIONS.value & ~discord.Permissions(**{flag: True}).value
    )


def the_link(application_id: int) -> str:
    return (
        f"https://discord.com/oauth2/authorize?client_id={application_id}"
        f"&permissions={PERMISSIONS}&integration_type=0&scope=bot+applications.commands"
    )


def test_the_invite_asks_for_two_scopes_and_five_permissions() -> None:
    assert SCOPES == ("bot", "applications.commands")
    assert INVITE_PERMISSIONS.value == PERMISSIONS
    assert (
        granting(
            "view_channel",
            "send_messages",
            "embed_links",
            "create_public_threads",
            "send_messages_in_threads",
        )
        == INVITE_PERMISSIONS
    )
    assert invite_link(1234567890123456789) == the_link(1234567890123456789)


# What the bot decides from a channel's permissions, by the code's own checks: True where
# it may.
DECISIONS: dict[str, Callable[[discord.Permissions], bool]] = {
    "post and edit in a channel": lambda allowed: may_write(allowed, in_thread=False),
    "post and edit in a thread": lambda allowed: may_write(allowed, in_thread=True),
    "open a game's thread": may_open_thread,
}
# What each permission but Embed Links (below) is needed for: without it, the bot may not.
NEEDED_FOR = {
    "view_channel": ["post and edit in a channel", "post and edit in a thread"],
    "send_messages": ["post and edit in a channel"],
    "send_messages_in_threads": ["post and edit in a thread", "open a game's thread"],
    "create_public_threads": ["open a game's thread"],
}


def test_every_permission_asked_for_has_its_reason() -> None:
    assert granting(*NEEDED_FOR, "embed_links") == INVITE_PERMISSIONS


def test_with_the_invites_permissions_the_bot_may_do_all_it_does() -> None:
    assert [what for what, may in DECISIONS.items() if not may(INVITE_PERMISSIONS)] == []


@pytest.mark.parametrize("flag", sorted(NEEDED_FOR))
def test_without_any_one_of_them_the_bot_may_not_do_something(flag: str) -> None:
    fewer = without(flag)
    assert [what for what, may in DECISIONS.items() if not may(fewer)] == NEEDED_FOR[flag]


def game(size: int) -> GameRecord:
    return GameRecord(
        id=7,
        guild_id=10,
        channel_id=20,
        x_id=101,
        o_id=102,
        x_name="alice",
        o_name="bob",
        ai_difficulty=None,
        ai_mark=None,
        size=size,
        moves=(),
        status=GameStatus.ACTIVE,
        winner=None,
        end_reason=None,
        message_id=None,
        deadline=None,
        version=1,
        created_at=0.0,
        updated_at=0.0,
        rematch_of=None,
    )


def test_embed_links_is_for_the_boards_which_are_embeds_on_3x3_and_4x4() -> None:
    assert granting("embed_links") == SHOW_EMBEDS
    assert INVITE_PERMISSIONS >= SHOW_EMBEDS
    for size in (3, 4):
        board = render.board_message(game(size))
        assert board.embed is not None
        assert "alice" in (board.embed.description or "")
    assert render.board_message(game(5)).embed is None  # components v2: text displays


# -- python -m bot, as a process against the simulator ----------------------------------------


@pytest.mark.slow  # a real python -m bot process
async def test_python_m_bot_invite_prints_the_applications_link(
    sim: DiscordSim, tmp_path: Path
) -> None:
    code, out, err = await run_bot(sim, tmp_path, "invite")
    assert (code, err) == (0, "")
    assert out == the_link(sim.application_id) + "\n"
    # It asks who the token is, and nothing else: no gateway, no commands, no database.
    assert [request.route for request in sim.requests] == [
        "GET /users/@me",
        "GET /oauth2/applications/@me",
    ]
    assert sim.identifies == 0
    assert not (tmp_path / "bot.sqlite3").exists()


@pytest.mark.slow  # a real python -m bot process
@pytest.mark.parametrize(
    ("env", "code", "line"),
    [
        (
            {"DISCORD_TOKEN": ""},
            2,
            "tttbot: DISCORD_TOKEN is not set: put the bot's token in the environment or in "
            ".env (see .env.example)",
        ),
        (
            {"DISCORD_TOKEN": "not-the-token"},
            1,
            "tttbot: Discord rejected DISCORD_TOKEN (401 Unauthorized): check the token, or "
            "reset it on the Bot page of the application in the developer portal and copy the "
            "new one",
        ),
        (
            {"DISCORD_API_BASE_URL": "http://127.0.0.1:9/api/v10"},  # the discard port: refused
            1,
            "tttbot: cannot reach Discord at http://127.0.0.1:9/api/v10: ",
        ),
    ],
    ids=["missing token", "rejected token", "unreachable Discord"],
)
async def test_python_m_bot_invite_fails_in_one_line(
    sim: DiscordSim, tmp_path: Path, env: dict[str, str], code: int, line: str
) -> None:
    got, out, err = await run_bot(sim, tmp_path, "invite", **env)
    assert got == code
    assert out == ""
    (only,) = err.splitlines()
    assert only.startswith(line) if line.endswith(": ") else only == line
    assert "not-the-token" not in err
    assert sim.token not in err


def startup_line(sim: DiscordSim) -> str:
    return (
        f"the application tttbot (id {sim.application_id}) is in no server yet: invite it with "
        f"{the_link(sim.application_id)} (if you invited another application, DISCORD_TOKEN is "
        "not its token: put that one's token there, or invite this one)"
    )


@pytest.mark.slow  # a real python -m bot process
async def test_an_application_in_no_server_logs_its_link_once_at_start_up(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """What the bot sees of a token of another application than the one invited, as of an
    application not invited yet: its own application is in no server."""
    sim.remove_member(sim.seed.guild, sim.bot_user)
    async with bot_process(sim, tmp_path, TTT_GUILD_ID="", LOG_LEVEL="INFO") as bot:
        pass  # started: connected to the gateway
    lines = [line for line in bot.log.splitlines() if startup_line(sim) in line]
    assert len(lines) == 1
    prefix = lines[0].removesuffix(startup_line(sim))
    assert "INFO" in prefix
    assert "bot.invite" in prefix
    assert "Traceback" not in bot.log
    assert sim.token not in bot.log


@pytest.mark.slow  # a real python -m bot process
async def test_an_application_in_a_server_logs_no_link(sim: DiscordSim, tmp_path: Path) -> None:
    async with bot_process(sim, tmp_path, TTT_GUILD_ID="", LOG_LEVEL="INFO") as bot:
        pass
    assert "synced 2 global commands" in bot.log  # the log was read, and the start went on
    assert "in no server" not in bot.log
    assert "oauth2/authorize" not in bot.log


async def run_failing_bot(sim: DiscordSim, tmp_path: Path, guild_id: int) -> str:
    """``python -m bot`` with ``TTT_GUILD_ID`` naming a server that refuses the commands: its
    one line (logs silenced, as the failure is what is looked at)."""
    code, out, err = await run_bot(
        sim,
        tmp_path,
        TTT_GUILD_ID=str(guild_id),
        LOG_LEVEL="CRITICAL",
        DISCORD_LOG_LEVEL="CRITICAL",
    )
    assert code == 1
    assert sim.token not in out + err
    assert "Traceback" not in err
    (line,) = err.splitlines()
    return line


@pytest.mark.slow  # a real python -m bot process
async def test_a_server_that_never_added_this_application_is_one_line(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """A token of another application than the one invited, with TTT_GUILD_ID: the server
    does not know this one."""
    guild = sim.seed.guild
    sim.remove_member(guild, sim.bot_user)
    assert await run_failing_bot(sim, tmp_path, guild.id) == (
        f"tttbot: TTT_GUILD_ID {guild.id}: Discord refused to register the commands of the "
        f"application tttbot (id {sim.application_id}) there (403 Missing Access): it is not "
        f"in that server; invite it with {the_link(sim.application_id)} (if you invited "
        "another application, put that one's token in DISCORD_TOKEN)"
    )


@pytest.mark.slow  # a real python -m bot process
async def test_a_server_that_added_it_without_the_commands_scope_is_one_line(
    sim: DiscordSim, tmp_path: Path
) -> None:
    guild = sim.add_guild("bot scope only", commands_scope=False)
    assert await run_failing_bot(sim, tmp_path, guild.id) == (
        f"tttbot: TTT_GUILD_ID {guild.id}: Discord refused to register the commands of the "
        f"application tttbot (id {sim.application_id}) there (403 Missing Access): it is in "
        "that server without the applications.commands scope; invite it again with "
        f"{the_link(sim.application_id)}"
    )


@pytest.mark.slow  # a real python -m bot process
async def test_python_m_bot_invite_when_discord_refuses_the_application_is_one_line(
    sim: DiscordSim, tmp_path: Path
) -> None:
    sim.faults.add("GET /oauth2/applications/@me", status=403)
    code, out, err = await run_bot(sim, tmp_path, "invite")
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"tttbot: Discord at {sim.api_base_url} did not say which application DISCORD_TOKEN "
        "is: 403 Forbidden (error code: 0): 403: Forbidden"
    ]


# The application's Interactions Endpoint URL as an operator sets it in the developer portal.
ENDPOINT_URL = "https://bot.example.org/interactions"
# discord.py's own warning at login when the application has one, written for its gateway users.
DISCORD_PYS_WARNING = "Application has an interaction endpoint URL set"


def lines_of(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno == level]


async def test_a_gateway_bot_whose_application_has_an_endpoint_url_warns_it_answers_nothing(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Switching back to the gateway without clearing the URL: Discord sends the gateway no
    interaction. discord.py's warning said only that "the library" receives none."""
    caplog.set_level(logging.INFO)
    sim.interactions_url = ENDPOINT_URL  # the sim, as Discord, reports it in the application
    try:
        async with harness.running():
            pass
    finally:
        sim.interactions_url = None
    assert lines_of(caplog, logging.WARNING) == [
        f"the application tttbot (id {sim.application_id}) has an Interactions Endpoint URL, "
        f"{ENDPOINT_URL}: Discord POSTs every interaction there and sends none over the "
        "gateway, so this process answers none; clear the URL on the General Information page "
        "of the developer portal, or run `python -m bot serve` behind it"
    ]


async def test_serve_says_where_discord_sends_the_interactions_and_warns_of_nothing(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Under ``serve`` the URL is the point: discord.py's warning about it came at every
    start of every worker."""
    caplog.set_level(logging.INFO)
    harness.front_door = HTTP
    async with harness.running():  # started before the URL is set, as docs/operating.md says
        pass
    sim.interactions_url = ENDPOINT_URL
    async with harness.running():  # a restart once it is set
        pass
    named = f"the application tttbot (id {sim.application_id})"
    assert [line for line in lines_of(caplog, logging.INFO) if "Endpoint URL" in line] == [
        f"{named} has no Interactions Endpoint URL yet: Discord sends its interactions over "
        "the gateway until it is set to this bot's https://.../interactions on the General "
        "Information page of the developer portal",
        f"{named} has its Interactions Endpoint URL at {ENDPOINT_URL}: Discord POSTs its "
        "interactions there",
    ]
    assert lines_of(caplog, logging.WARNING) == []


@pytest.mark.slow  # a real python -m bot process
async def test_serve_with_the_public_key_of_another_application_is_one_line(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """A key of the right form but another application's (a development application's, say):
    every interaction Discord signs would be refused, the portal would refuse the URL, and
    nothing in the logs said why."""
    other = "0b" * 32
    code, out, err = await run_bot(
        sim,
        tmp_path,
        "serve",
        DISCORD_PUBLIC_KEY=other,
        TTT_HTTP_PORT=str(free_port()),
        LOG_LEVEL="CRITICAL",
        DISCORD_LOG_LEVEL="CRITICAL",
    )
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"tttbot: DISCORD_PUBLIC_KEY is not the Public Key of the application tttbot (id "
        f"{sim.application_id}), whose token DISCORD_TOKEN is: copy its Public Key from its "
        "General Information page in the developer portal (it is not secret)"
    ]
    assert not (tmp_path / "bot.sqlite3").exists()  # stopped before the database was opened
