"""Several ``python -m bot serve`` workers on one database, any of them given any interaction
of any game (issue 40): what one worker keeps in its own memory either only saves it a round
trip, the database deciding (a copy made stale by another worker costs a retry at most), or has
been moved to the database. Two bots of the harness serve at once, and the sim is pointed at
one or the other for each interaction."""

from __future__ import annotations

import orjson

from bot.client import TTTBot
from bot.components import CHALLENGE_ID, GAME_ACTION_ID, PICK_ID
from bot.endpoint import SEEN_KEPT
from game.variants import ULTIMATE_SIZE
from tests.bot_harness import (
    BotHarness,
    both_engines,
    button_id,
    cell_id,
    http_only,
    is_live,
    refused,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord

pytestmark = [http_only, both_engines]

OVER = "This game is over."


def to(sim: DiscordSim, bot: TTTBot) -> None:
    """Send the next interactions to ``bot``'s endpoint."""
    sim.interactions_url = f"http://127.0.0.1:{bot.http_port}/interactions"


def given(bot: TTTBot, ix: InteractionRecord) -> bool:
    """Whether ``ix`` was POSTed to ``bot`` (its endpoint remembers what it was given)."""
    assert bot.endpoint is not None
    return ix.id in bot.endpoint._seen


async def test_an_interaction_sent_again_to_another_worker_is_refused_and_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The interaction answered by one worker, sent again to the other within the window:
    401 there, nothing started or answered twice. The sweeper forgets it once a request
    signed then would be refused as stale anyway."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert started.response_type == 4
        assert not started.ephemeral
        to(sim, second)
        assert not given(second, started)  # so the database refuses it, not its own memory
        assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
        # And back to the worker that answered it: refused by its own memory.
        to(sim, first)
        assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
        assert sim.messages(s.channel) == [started.message]
        assert sum(1 for request in sim.requests if request.http_response) == 1
        # Noted by the database until its signing time is SEEN_KEPT behind the sweeper's
        # clock: then the holder of the sweeper lease removes it.
        holder = first if first.holds_sweeper_lease else second
        assert holder.endpoint is not None
        clock = holder.endpoint.wall_clock
        await holder.sweep()
        assert not await holder.storage.note_interaction(started.id, clock())
        holder.endpoint.wall_clock = lambda: clock() + SEEN_KEPT + 2
        await holder.sweep()
        assert await holder.storage.note_interaction(started.id, clock())


async def test_a_copy_another_worker_moved_past_costs_a_retry_and_plays_the_stored_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """GameService's copy of a live game (its ``_kept``) in the worker that started it goes
    stale when the other worker plays a move: a click there is tried on the copy, refused by
    the copy's older ply, and played on the stored game, once. A copy of a game the other
    worker finished is refused the same way, and the click shows the game over."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        to(sim, second)
        await sim.click(s.bob, board, cell_id(board, "A1"))
        game_id = next(iter(first.service._kept))
        assert len(first.service._kept[game_id].moves) == 1  # behind: the stored game has 2
        to(sim, first)
        played = await sim.click(s.alice, board, cell_id(board, "C3"))
        assert played.response_type == 7, played.content
        stored = await first.storage.get_game(game_id)
        assert stored is not None
        assert stored.moves == (4, 0, 8)
        # Bob resigns on the second worker; alice's click on the first worker's copy (live,
        # at her turn) is refused by the stored game, which is over, and the board shows it.
        to(sim, second)
        await sim.click(s.bob, board, cell_id(board, "C1"))
        await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert not is_live(board)
        assert first.service._kept[game_id].is_active
        to(sim, first)
        late = await sim.click(s.alice, board, cell_id(board, "A3"), stale=True)
        refused(late, OVER)
        stored = await first.storage.get_game(game_id)
        assert stored is not None
        assert stored.moves == (4, 0, 8, 2)
        assert not is_live(board)


async def test_a_small_board_picked_on_a_stale_copy_is_refused_by_the_stored_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A pick stores nothing, so no compare-and-set would refuse one made on a stale copy:
    it is made on the stored game. Bob resigns an ultimate game on the second worker, and
    alice's pick on the board still showing the small boards, sent to the first worker
    (whose copy is live), shows the game over rather than a live board again."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        challenge = await sim.slash(
            s.alice, s.channel, "ttt start", opponent=s.bob, size=ULTIMATE_SIZE
        )
        message = challenge.message
        assert message is not None
        await sim.click(s.bob, message, button_id(message, CHALLENGE_ID, action="accept"))
        pick = button_id(message, PICK_ID, board="4")
        # Alice clicks while Discord still shows the live board; her click reaches the first
        # worker after bob's resignation was stored and shown through the second.
        shown_then = message.payload()
        game_id = next(iter(first.service._kept))
        to(sim, second)
        await sim.click(s.bob, message, button_id(message, GAME_ACTION_ID, action="resign"))
        assert not is_live(message)
        assert first.service._kept[game_id].is_active
        to(sim, first)
        late = await sim.click(
            s.alice,
            message,
            pick,
            stale=True,
            tamper_event=lambda payload: payload.update(message=shown_then),
        )
        # Refused by the stored game: the board it clicked on is brought up to date (the game
        # over), not put back as it was, and no small board is offered.
        assert late.response_type == 7
        assert not is_live(message)
        assert "resigned" in text_of(message), text_of(message)
        assert not [b for b in message.buttons() if PICK_ID.parse(b["custom_id"])]
