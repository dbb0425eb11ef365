"""Every ``/ttt`` command and button, and every error a user can cause, end to end.

Each error must come back as an ephemeral sentence and change nothing: no new message, no edit,
no stored change (checked by looking at the board again afterwards).
"""

from __future__ import annotations

import logging

import discord
import pytest

from bot.components import CHALLENGE_ID, GAME_ACTION_ID
from bot.storage.base import GameRecord
from game import Mark, cell_name
from tests.bot_harness import (
    BotHarness,
    board_of,
    both_engines,
    both_front_doors,
    button_id,
    cell_id,
    recorded_post,
    refused,
    shown_board,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, SimMessage

# Every command and button, over the gateway and over HTTP (`python -m bot serve`).
pytestmark = both_front_doors


def public_messages(sim: DiscordSim) -> list[SimMessage]:
    return [m for m in sim.messages(sim.seed.channel) if not m.ephemeral]


# -- /ttt start and the challenge buttons ----------------------------------------------------


async def test_start_pings_only_the_challenged_member(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        message = ix.message
        assert message is not None
        assert not ix.ephemeral
        assert f"<@{s.bob.id}>" in (message.content or "")
        assert message.pinged == [s.bob.id]
        assert message.allowed_mentions is not None
        assert [int(user) for user in message.allowed_mentions.get("users", [])] == [s.bob.id]
        assert message.allowed_mentions.get("parse") == []
        labels = [b["label"] for b in message.buttons()]
        assert labels == ["Accept", "Decline", "Withdraw"]


@pytest.mark.parametrize(
    ("who", "sentence"),
    [
        ("alice", "You can't challenge yourself"),
        ("other_bot", "Bots can't play tic-tac-toe here"),
        ("bot", "To play me, use `/ttt vs-ai`"),
    ],
)
async def test_start_refuses_impossible_opponents(
    sim: DiscordSim, harness: BotHarness, who: str, sentence: str
) -> None:
    s = sim.seed
    opponent = sim.bot_user if who == "bot" else getattr(s, who)
    async with harness.running():
        refused(await sim.slash(s.alice, s.channel, "ttt start", opponent=opponent), sentence)
        assert public_messages(sim) == []


async def test_start_refuses_a_busy_channel(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        refused(
            await sim.slash(s.carol, s.channel, "ttt start"),
            "There is already an open challenge in this channel",
        )
        refused(
            await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="smart"),
            "There is already an open challenge in this channel",
        )
    async with harness.running():
        pass


async def test_only_the_challenged_member_may_answer(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        message = ix.message
        assert message is not None
        accept = button_id(message, CHALLENGE_ID, action="accept")
        decline = button_id(message, CHALLENGE_ID, action="decline")
        withdraw = button_id(message, CHALLENGE_ID, action="withdraw")
        refused(
            await sim.click(s.carol, message, accept), "This challenge is for bob, not for you."
        )
        refused(await sim.click(s.carol, message, decline), "Only bob can decline this challenge.")
        refused(
            await sim.click(s.bob, message, withdraw), "Only alice can withdraw this challenge."
        )
        refused(await sim.click(s.alice, message, accept), "You can't accept your own challenge.")
        assert message.edits == []
        declined = await sim.click(s.bob, message, decline)
        assert declined.response_type == 7
        assert "**bob** declined **alice**'s challenge." in (message.content or "")
        assert message.buttons() == []
        fresh = await sim.slash(s.carol, s.channel, "ttt start")
        assert not fresh.ephemeral  # the channel is free again


async def test_the_challenger_can_withdraw(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.alice, s.channel, "ttt start")
        message = ix.message
        assert message is not None
        assert [b["label"] for b in message.buttons()] == ["Accept", "Withdraw"]
        withdrawn = await sim.click(
            s.alice, message, button_id(message, CHALLENGE_ID, action="withdraw")
        )
        assert withdrawn.response_type == 7
        assert "**alice** withdrew the challenge." in (message.content or "")


@both_engines
async def test_accepting_an_expired_challenge_shows_it_expired(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        message = await recorded_post(sim, bot, "ttt start", opponent=s.bob)
        harness.clock.advance(500)  # before any sweep
        late = await sim.click(s.bob, message, button_id(message, CHALLENGE_ID, action="accept"))
        assert late.response_type == 7
        assert "expired" in (message.content or "")
        await late.wait_followups(1)
        assert late.followups[0].ephemeral
        assert "This challenge has expired." in (late.followups[0].content or "")


# -- /ttt vs-ai --------------------------------------------------------------------------------


async def test_vs_ai_with_the_bot_first_already_shows_its_move(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart", first="bot")
        message = ix.message
        assert message is not None
        board = board_of(message)
        assert board.move_count == 1
        assert shown_board(message) == ".../.X./..."  # smart takes the centre
        assert "🤖 I played **B2**." in text_of(message)
        assert "❌ **tttbot (smart)** vs ⭕ **alice**" in text_of(message)
        assert message.allowed_mentions is not None
        assert message.pinged == []


async def test_vs_ai_refuses_a_channel_with_a_game(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random", first="random")
        refused(
            await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="minimax"),
            "There is already a game in this channel",
        )
        refused(
            await sim.slash(s.bob, s.channel, "ttt start", opponent=s.carol),
            "There is already a game in this channel",
        )


async def test_slash_options_are_the_documented_contract(
    sim: DiscordSim, harness: BotHarness
) -> None:
    async with harness.running():
        ttt, settings = sim.commands()
    assert ttt["name"] == "ttt"
    assert ttt["default_member_permissions"] is None
    # The admins' command is hidden from members who cannot manage the server, and only
    # offered in servers that added the bot.
    assert settings["name"] == "ttt-settings"
    assert settings["default_member_permissions"] == str(
        discord.Permissions(manage_guild=True).value
    )
    assert (settings["contexts"], settings["integration_types"]) == ([0], [0])
    assert {option["name"] for option in settings["options"]} == {
        "show", "channels", "players", "moderators", "timeouts", "language", "limits",
        "marks", "threads", "board-size", "reset", "erase-data", "seasons", "announcements",
    }  # fmt: skip
    subcommands = {option["name"]: option for option in ttt["options"]}
    assert set(subcommands) == {
        "start", "vs-ai", "move", "board", "resign", "stats", "leaderboard", "help", "end",
        "hint", "review", "my-data", "forget-me", "puzzle", "drill", "tournament",
    }  # fmt: skip
    # The daily puzzle is a group (Discord runs a group's subcommands, never the group), and
    # a drill is always the asker's own.
    puzzle = subcommands["puzzle"]
    assert puzzle["type"] == 2
    assert [(option["name"], option["type"]) for option in puzzle["options"]] == [
        ("today", 1),
        ("stats", 1),
    ]
    assert "options" not in subcommands["drill"] or subcommands["drill"]["options"] == []
    # Tournaments are a group too: the organiser's, the players' and everyone's.
    tournament = subcommands["tournament"]
    assert tournament["type"] == 2
    assert {option["name"] for option in tournament["options"]} == {
        "create", "start", "pause", "resume", "cancel", "remove", "award", "leave",
        "standings", "my-game",
    }  # fmt: skip
    # Members' data is always the asker's own: nobody can name another member there.
    assert "options" not in subcommands["my-data"] or subcommands["my-data"]["options"] == []
    assert "options" not in subcommands["forget-me"] or subcommands["forget-me"]["options"] == []
    vs_ai = {option["name"]: option for option in subcommands["vs-ai"]["options"]}
    difficulties = [c["value"] for c in vs_ai["difficulty"]["choices"]]
    assert difficulties == ["random", "casual", "smart", "minimax"]
    assert [c["value"] for c in vs_ai["first"]["choices"]] == ["me", "bot", "random"]
    assert vs_ai["difficulty"]["required"] is True
    assert vs_ai.get("first", {}).get("required", False) is False
    move = subcommands["move"]["options"][0]
    assert (move["name"], move["type"], move["autocomplete"]) == ("cell", 3, True)
    start = subcommands["start"]["options"][0]
    assert (start["name"], start["type"]) == ("opponent", 6)
    # A leaderboard's season is typed or picked from the seasons played (or all time).
    leaderboard = {option["name"]: option for option in subcommands["leaderboard"]["options"]}
    assert set(leaderboard) == {"size", "season"}
    season = leaderboard["season"]
    assert (season["type"], season["autocomplete"], season.get("required", False)) == (
        3,
        True,
        False,
    )


# -- /ttt move, autocomplete, /ttt board --------------------------------------------------------


async def test_move_replies_with_the_board_and_retires_the_old_one(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        old = await recorded_post(sim, bot, "ttt vs-ai", difficulty="minimax")
        moved = await sim.slash(s.alice, s.channel, "ttt move", cell=" b2 ")
        new = moved.message
        assert new is not None
        assert not moved.ephemeral
        assert new.id != old.id
        answer = board_of(new)
        assert answer.move_count == 2
        (bot_cell,) = [cell for cell in range(9) if answer[cell] is Mark.O]
        assert f"Last move: B2. 🤖 I played **{cell_name(bot_cell)}**." in text_of(new)
        await sim.wait_for(lambda: old.buttons() == [])  # only one board can be clicked
        assert "moved to a newer message" in text_of(old)
        assert "click a cell" not in text_of(old)  # it has no cell left to click
        assert "click a cell" in text_of(new)
        again = await sim.slash(s.bob, s.channel, "ttt board")
        assert again.message is not None
        assert shown_board(again.message) == shown_board(new)
        await sim.wait_for(lambda: new.buttons() == [])


async def test_the_board_shows_whose_turn_it_is_and_when_their_time_runs_out(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Each turn's deadline is its own, counted from the move before, shown in relative time."""
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        deadline = int(harness.clock.now() + 300)
        assert f"❌ **alice** to move, time runs out <t:{deadline}:R>." in text_of(board)
        harness.clock.advance(100)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        deadline = int(harness.clock.now() + 300)
        assert f"⭕ **bob** to move, time runs out <t:{deadline}:R>." in text_of(board)


async def test_the_boards_buttons_are_its_cells_row_by_row_then_the_control_row(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A1 B1 C1 / A2 B2 C2 / A3 B3 C3: a free cell is its name and clickable, a taken one its
    mark and disabled; below them Resign while the game is live, Rematch (and Review) after."""
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        await sim.click(s.bob, board, cell_id(board, "A1"))
        *cells, control = [row["components"] for row in board.components]
        faces = [
            [(b.get("label"), (b.get("emoji") or {}).get("name")) for b in row] for row in cells
        ]
        assert faces == [
            [(None, "⭕"), ("B1", None), ("C1", None)],
            [("A2", None), (None, "❌"), ("C2", None)],
            [("A3", None), ("B3", None), ("C3", None)],
        ]  # fmt: skip
        assert [b["disabled"] for row in cells for b in row] == [
            cell in (0, 4) for cell in range(9)
        ]
        assert [b["label"] for b in control] == ["Resign"]
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        control = board.components[-1]["components"]
        assert [b["label"] for b in control] == ["Rematch", "Review"]


@pytest.mark.parametrize(
    ("cell", "sentence"),
    [
        ("Z9", '"Z9" is not a cell: use a column letter A-C and a row number 1-3'),
        ("B2", "Cannot play B2: it is taken by X."),
        ("0", '"0" is not a cell'),
    ],
)
async def test_bad_cells_are_refused_and_change_nothing(
    sim: DiscordSim, harness: BotHarness, cell: str, sentence: str
) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        before = shown_board(board)
        count = len(public_messages(sim))
        refused(await sim.slash(s.bob, s.channel, "ttt move", cell=cell), sentence)
        assert len(public_messages(sim)) == count
        assert shown_board(sim.message(board.id)) == before


async def test_out_of_turn_and_spectators_are_refused(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        edits = len(board.edits)
        refused(
            await sim.slash(s.bob, s.channel, "ttt move", cell="A1"),
            "It is not your turn: waiting for alice.",
        )
        refused(
            await sim.click(s.bob, board, cell_id(board, "A1")),
            "It is not your turn: waiting for alice.",
        )
        refused(
            await sim.click(s.carol, board, cell_id(board, "A1")),
            "You are not playing in this game",
        )
        refused(
            await sim.slash(s.carol, s.channel, "ttt resign"),
            "You are not playing in this game, so you can't resign it.",
        )
        assert len(board.edits) == edits
        assert shown_board(board) == ".../.../..."


async def test_no_game_here(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        for command, options in [
            ("ttt move", {"cell": "A1"}),
            ("ttt board", {}),
            ("ttt resign", {}),
        ]:
            refused(
                await sim.slash(s.alice, s.channel, command, options=options),
                "There is no game in this channel.",
            )
        refused(
            await sim.slash(s.moderator, s.channel, "ttt end"), "There is no game in this channel."
        )
        assert sim.messages(s.channel) == [m for m in sim.messages(s.channel) if m.ephemeral]


async def test_autocomplete_offers_the_free_cells(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        assert await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="") == []
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        everything = await sim.autocomplete(s.bob, s.channel, "ttt move", focused="cell", cell="")
        assert [c["value"] for c in everything] == ["A1", "B1", "C1", "A2", "C2", "A3", "B3", "C3"]
        column_b = await sim.autocomplete(s.bob, s.channel, "ttt move", focused="cell", cell="b")
        assert [c["name"] for c in column_b] == ["B1", "B3"]
        by_number = await sim.autocomplete(s.bob, s.channel, "ttt move", focused="cell", cell="9")
        assert [c["value"] for c in by_number] == ["C3"]
        taken = await sim.autocomplete(s.bob, s.channel, "ttt move", focused="cell", cell="5")
        assert taken == []


# -- resign, end, rematch ----------------------------------------------------------------------


async def test_resign_by_command_and_by_button(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        resigned = await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert resigned.response_type == 7
        assert "🏳️ ⭕ **bob** resigned: ❌ **alice** wins." in text_of(board)
        refused(
            await sim.slash(s.bob, s.channel, "ttt resign"), "There is no game in this channel."
        )
        started = await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="random")
        assert started.message is not None
        by_command = await sim.slash(s.carol, s.channel, "ttt resign")
        assert by_command.message is not None
        assert "❌ **carol** resigned" in text_of(by_command.message)
        stats = text_of(await sim.slash(s.carol, s.channel, "ttt stats"))
    assert "Against the bot (random): 0 W · 1 L · 0 D" in stats


async def test_end_is_for_moderators_and_counts_for_nobody(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        # The accept's board is adopted after its answer: adopted after the end's board, it
        # would retire that one and keep its own buttons.
        assert await bot.in_flight.wait_idle(patience=5)
        refused(
            await sim.slash(s.alice, s.channel, "ttt end"),
            "Only members who can manage messages can do that.",
        )
        assert "to move" in text_of(board)
        ended = await sim.slash(s.moderator, s.channel, "ttt end")
        assert ended.message is not None
        assert "🛑 A moderator ended this game: it counts for nobody." in text_of(ended.message)
        await sim.wait_for(lambda: board.buttons() == [])  # the older board was retired
        alice = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
    assert "No finished games yet" in alice


async def test_rematch_swaps_sides_once(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        rematch = button_id(board, GAME_ACTION_ID, action="rematch")
        refused(await sim.click(s.carol, board, rematch), "Only the players of this game")
        again = await sim.click(s.bob, board, rematch)
        assert again.message is not None
        assert "❌ **bob** vs ⭕ **alice**" in text_of(again.message)
        refused(
            await sim.click(s.alice, board, rematch), "A rematch of this game was already started."
        )
        await sim.slash(s.bob, s.channel, "ttt resign")
        refused(
            await sim.click(s.alice, board, rematch), "A rematch of this game was already started."
        )


async def test_rematch_against_the_bot_keeps_the_difficulty(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        assert ix.message is not None
        resigned = await sim.slash(s.alice, s.channel, "ttt resign")
        assert resigned.message is not None
        again = await sim.click(
            s.alice, resigned.message, button_id(resigned.message, GAME_ACTION_ID, action="rematch")
        )
        assert again.message is not None
        assert "❌ **tttbot (smart)** vs ⭕ **alice**" in text_of(again.message)
        assert board_of(again.message).move_count == 1  # the bot, now X, has moved


# -- stats, leaderboard, help --------------------------------------------------------------------


async def test_stats_of_another_member_and_an_empty_leaderboard(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        empty = await sim.slash(s.alice, s.channel, "ttt leaderboard")
        assert "Nobody is rated yet" in text_of(empty)
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        await sim.slash(s.alice, s.channel, "ttt resign")
        bob = await sim.slash(s.alice, s.channel, "ttt stats", member=s.bob)
        assert "stats: bob" in text_of(bob)
        assert "No finished games yet" in text_of(bob)
        alice = await sim.slash(s.bob, s.channel, "ttt stats", member=s.alice)
        assert "Against the bot (minimax): 0 W · 1 L · 0 D" in text_of(alice)
        assert "Against members: 0 W · 0 L · 0 D (unrated)" in text_of(alice)
        still_empty = await sim.slash(s.alice, s.channel, "ttt leaderboard")
        assert "Nobody is rated yet" in text_of(still_empty)  # games against the bot don't count


async def test_help_is_private(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.carol, s.channel, "ttt help")
        assert ix.ephemeral
        assert "/ttt vs-ai" in text_of(ix)


async def test_names_are_escaped(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    sneaky = sim.add_user("**@everyone**_x_")
    sim.add_member(s.guild, sneaky)
    async with harness.running():
        ix = await sim.slash(sneaky, s.channel, "ttt vs-ai", difficulty="random")
        assert ix.message is not None
        text = text_of(ix.message)
        assert "\\*\\*@\u200beveryone\\*\\*\\_x\\_" in text
        assert ix.message.pinged == []


async def test_names_that_look_like_channels_commands_or_times_are_shown_as_typed(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Not only user and role mentions: Discord also draws <#channel>, </command:id>,
    <t:time> and <:emoji:id> in text, so a name that spells one is broken up as well."""
    s = sim.seed
    tokens = [f"<#{s.channel.id}>", "</ttt start:1>", "<t:0:R>", "<:e:1>", "<a:e:1>"]
    sneaky = sim.add_user("".join(tokens))
    sim.add_member(s.guild, sneaky)
    async with harness.running():
        ix = await sim.slash(sneaky, s.channel, "ttt vs-ai", difficulty="random")
        assert ix.message is not None
        text = text_of(ix.message)
        assert "".join(tokens).replace("<", "<\u200b") in text
        assert not any(token in text for token in tokens)


# -- the unexpected ------------------------------------------------------------------------------


async def test_an_unexpected_error_is_logged_apologised_for_and_survived(
    sim: DiscordSim,
    harness: BotHarness,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = sim.seed
    async with harness.running(expect_errors=True) as bot:
        calls = 0

        async def broken(channel_id: int) -> GameRecord | None:
            nonlocal calls
            calls += 1
            raise RuntimeError("database on fire")

        monkeypatch.setattr(bot.service.storage, "live_game_in_channel", broken)
        with caplog.at_level(logging.ERROR):
            sorry = await sim.slash(s.alice, s.channel, "ttt board")
        refused(sorry, "Sorry, something went wrong on my side, so I can't tell whether that went")
        assert "database on fire" not in (sorry.content or "")
        assert calls == 1
        assert any(
            record.exc_info and "database on fire" in str(record.exc_info[1])
            for record in caplog.records
        )
        monkeypatch.undo()
        works = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert not works.ephemeral


async def test_an_unexpected_error_on_a_click_is_logged_apologised_for_and_survived(
    sim: DiscordSim,
    harness: BotHarness,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A click goes another way than a command (bot.fast_clicks first, then discord.py's
    buttons): a fault there is apologised for the same."""
    s = sim.seed
    async with harness.running(expect_errors=True) as bot:
        board = await start_member_game(sim)
        assert await bot.in_flight.wait_idle(patience=5)
        edits = len(board.edits)

        async def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("database on fire")

        monkeypatch.setattr(bot.service, "move_on_board", broken)
        with caplog.at_level(logging.ERROR):
            sorry = await sim.click(s.alice, board, cell_id(board, "B2"))
        refused(sorry, "Sorry, something went wrong on my side, so I can't tell whether that went")
        assert "database on fire" not in (sorry.content or "")
        assert any(
            record.exc_info and "database on fire" in str(record.exc_info[1])
            for record in caplog.records
        )
        assert len(board.edits) == edits
        monkeypatch.undo()
        played = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert played.response_type == 7
        assert shown_board(board) == ".../.X./..."


# -- stale buttons: clients that have not caught up with an edit --------------------------------


async def test_stale_clicks_are_checked_against_the_stored_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        challenge = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        board = challenge.message
        assert board is not None
        accept = button_id(board, CHALLENGE_ID, action="accept")
        await sim.click(s.bob, board, accept)
        b2 = cell_id(board, "B2")
        await sim.click(s.alice, board, b2)
        # Drawn before alice's move: the board bob clicked is not the position he would play.
        refused(
            await sim.click(s.bob, board, b2, stale=True),
            "The board changed while you were moving: look again and retry.",
        )
        await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="resign"))
        edits = len(board.edits)
        finished = shown_board(board)
        refused(
            await sim.click(s.alice, board, cell_id(board, "A1"), stale=True),
            "This game is over.",
        )
        refused(
            await sim.click(s.carol, board, accept, stale=True),
            "That button is no longer on this message: use the newest board.",
        )
        assert len(board.edits) == edits
        assert shown_board(board) == finished


async def test_an_older_games_board_is_refused_while_a_new_game_runs(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        old_board = await start_member_game(sim)
        for user, cell in [(s.alice, "A1"), (s.bob, "B1"), (s.alice, "A2"), (s.bob, "B2")]:
            await sim.click(user, old_board, cell_id(old_board, cell))
        c3 = cell_id(old_board, "C3")  # as a client that never saw the last move shows it
        await sim.click(s.alice, old_board, cell_id(old_board, "A3"))  # alice wins in place
        second = await sim.slash(s.bob, s.channel, "ttt vs-ai", difficulty="smart")
        assert second.message is not None
        refused(
            await sim.click(s.bob, old_board, c3, stale=True),
            "The board changed while you were moving: look again and retry.",
        )
        assert board_of(second.message).move_count == 0


async def test_a_click_on_a_board_that_moved_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        first = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        older = first.message
        assert older is not None
        # The board's message id is saved after the answer (over HTTP, once Discord said it).
        assert await bot.in_flight.wait_idle(patience=5)
        b2 = cell_id(older, "B2")
        shown_again = await sim.slash(s.alice, s.channel, "ttt board")
        newer = shown_again.message
        assert newer is not None
        await sim.wait_for(lambda: older.buttons() == [])
        refused(
            await sim.click(s.alice, older, b2, stale=True),
            "That button is no longer on this message: use the newest board.",
        )
        assert board_of(newer).move_count == 0
        moved = await sim.click(s.alice, newer, cell_id(newer, "B2"))
        assert moved.response_type == 7


async def test_names_and_typed_text_are_escaped_in_private_replies_too(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    sneaky = sim.add_user("__sneaky__")
    sim.add_member(s.guild, sneaky)
    async with harness.running():
        await start_member_game(sim, x=sneaky, o=s.bob)
        refused(
            await sim.slash(s.bob, s.channel, "ttt move", cell="A1"),
            "It is not your turn: waiting for \\_\\_sneaky\\_\\_.",
        )
        refused(
            await sim.slash(sneaky, s.channel, "ttt move", cell="**A9**"),
            '"\\*\\*A9\\*\\*" is not a cell',
        )
