"""The ``/ttt`` commands and the board's buttons: parse the interaction, call the domain, render.

Errors a user causes come back from :mod:`bot.service` as ``UserError`` and reach the user as an
ephemeral sentence through :func:`bot.respond.report_error`; nothing else happens in these
handlers.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot import render, respond
from bot.components import CELL_ID, ID_FORMATS, walk
from bot.fast_clicks import HandedOn
from bot.i18n import N_
from bot.service import (
    CHANGED,
    DIFFICULTIES,
    NOT_HERE,
    OUTSIDE_SERVERS,
    Actor,
    Clicked,
    MoveResult,
    Started,
    UserError,
)
from bot.storage.base import ChallengeRecord, GameRecord
from game import BOARD_SIZES, DEFAULT_SIZE, cell_name, parse_cell
from game.ai import DIFFICULTIES as LEVELS

if TYPE_CHECKING:
    from bot.client import TTTBot

log = logging.getLogger(__name__)


def actor(user: discord.abc.User) -> Actor:
    return Actor(id=user.id, name=user.display_name, is_bot=user.bot)


def place(interaction: discord.Interaction[Any]) -> tuple[int, int]:
    """The guild and channel of an interaction; outside servers (DMs, group DMs) the guild
    is :data:`OUTSIDE_SERVERS`, one for all of them."""
    if interaction.channel_id is None:  # Discord sends a channel with every command
        raise UserError("I can't tell which channel this is: try again in a channel.")
    return interaction.guild_id or OUTSIDE_SERVERS, interaction.channel_id


def in_a_server(interaction: discord.Interaction[Any]) -> bool:
    """The check of commands that only mean something in a server. Discord applies where a
    command may be used to the whole ``/ttt`` group, so these refuse with a sentence."""
    if interaction.guild_id is None:
        raise app_commands.NoPrivateMessage()
    return True


# Command and option texts are locale_str: Babel extracts them, and the command translator
# (bot.i18n) gives Discord each language's.
SIZE_CHOICES = [
    app_commands.Choice(name=locale_str(render.SIZE_LABELS[size]), value=size)
    for size in BOARD_SIZES
]
SIZE_HELP = locale_str("Board size; default 3\N{MULTIPLICATION SIGN}3")
FIRST_CHOICES = [
    app_commands.Choice(name=locale_str("me"), value="me"),
    app_commands.Choice(name=locale_str("bot"), value="bot"),
    app_commands.Choice(name=locale_str("random"), value="random"),
]
# The levels weakest first, each with its line: Discord shows a choice's name (100 characters
# at most), so the description goes in it (translated by the command translator, which reads
# the level from the extras).
DIFFICULTY_CHOICES = [
    app_commands.Choice(
        name=locale_str(f"{level.name} — {level.description}", level=level.name),
        value=level.name,
    )
    for level in LEVELS
]


def _size(choice: app_commands.Choice[int] | None) -> int:
    return choice.value if choice is not None else DEFAULT_SIZE


class TicTacToeCog(commands.Cog, name="TicTacToe"):
    # Usable wherever the app is: servers that added the bot, and, installed to a member's own
    # account, DMs, group DMs and servers without the bot.
    ttt = app_commands.Group(
        name=locale_str("ttt"),
        description=locale_str("Play tic-tac-toe in this channel"),
        allowed_contexts=app_commands.AppCommandContext(
            guild=True, dm_channel=True, private_channel=True
        ),
        allowed_installs=app_commands.AppInstallationType(guild=True, user=True),
    )

    def __init__(self, bot: TTTBot) -> None:
        self.bot = bot

    @contextlib.asynccontextmanager
    async def _handling(
        self, interaction: discord.Interaction[Any], *, received_at: float | None = None
    ) -> AsyncIterator[None]:
        """Every handler: counted for shutdown, and answered within Discord's deadline (counted
        from ``received_at``, if its handling began earlier); in a channel the bot is not in,
        followed by a game that ended there unseen."""
        async with self.bot.in_flight(), respond.answering(interaction, received_at=received_at):
            failed: Exception | None = None
            try:
                yield
            except Exception as error:  # reported by the caller, after the unseen game
                failed = error
            if not respond.reaches_channel(interaction) and interaction.channel_id is not None:
                await self._show_unseen(interaction, interaction.channel_id)
            if failed is not None:
                raise failed

    async def _show_unseen(self, interaction: discord.Interaction[Any], channel_id: int) -> None:
        """A game here ran out of time when no interaction's token could edit its board: its
        result comes with the next answer here, as a follow-up."""
        game = await self.bot.service.take_unseen(channel_id)
        if game is None or game.id in respond.shown_games(interaction):
            return
        message_id = await respond.post(interaction, render.board_reply(game))
        if message_id is not None:
            await self._remember_route(interaction, channel_id, message_id)

    async def cog_app_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        await respond.report_error(interaction, error)

    # -- starting --------------------------------------------------------------------------

    @ttt.command(
        name=locale_str("start"),
        description=locale_str("Challenge a member, or anyone in this channel"),
    )
    @app_commands.rename(opponent=locale_str("opponent"), size=locale_str("size"))
    @app_commands.describe(
        opponent=locale_str("Who to challenge; leave it out to let anyone accept"), size=SIZE_HELP
    )
    @app_commands.choices(size=SIZE_CHOICES)
    async def start(
        self,
        interaction: discord.Interaction[Any],
        opponent: discord.User | None = None,
        size: app_commands.Choice[int] | None = None,
    ) -> None:
        async with self._handling(interaction):
            guild_id, channel_id = place(interaction)
            challenge = await self.bot.service.challenge(
                guild_id,
                channel_id,
                actor(interaction.user),
                actor(opponent) if opponent is not None else None,
                _size(size),
                respond.public_language(interaction).code,
            )
            await self._post_challenge(interaction, challenge)

    @ttt.command(name=locale_str("vs-ai"), description=locale_str("Play against me"))
    @app_commands.rename(
        difficulty=locale_str("difficulty"), first=locale_str("first"), size=locale_str("size")
    )
    @app_commands.describe(
        difficulty=locale_str("How well I play, weakest first"),
        first=locale_str("Who moves first (and plays X); default: you"),
        size=SIZE_HELP,
    )
    @app_commands.choices(difficulty=DIFFICULTY_CHOICES, first=FIRST_CHOICES)
    @app_commands.choices(size=SIZE_CHOICES)
    async def vs_ai(
        self,
        interaction: discord.Interaction[Any],
        difficulty: app_commands.Choice[str],
        first: app_commands.Choice[str] | None = None,
        size: app_commands.Choice[int] | None = None,
    ) -> None:
        async with self._handling(interaction):
            guild_id, channel_id = place(interaction)
            started = await self.bot.service.start_vs_ai(
                guild_id,
                channel_id,
                actor(interaction.user),
                difficulty.value,
                first.value if first else "me",
                _size(size),
                respond.public_language(interaction).code,
            )
            note = render.move_note(started.game, None, started.ai_cell)
            await self._post_board(interaction, started.game, note)

    # -- playing ---------------------------------------------------------------------------

    @ttt.command(
        name=locale_str("move"),
        description=locale_str("Play a cell, like B2 (letter = column, number = row)"),
    )
    @app_commands.rename(cell=locale_str("cell"))
    @app_commands.describe(
        cell=locale_str("A1 to C3 (or 1 to 9); to D4 or E5 (16, 25) on larger boards")
    )
    async def move(self, interaction: discord.Interaction[Any], cell: str) -> None:
        async with self._handling(interaction):
            _, channel_id = place(interaction)
            result = await self.bot.service.move_in_channel(
                channel_id, actor(interaction.user), cell
            )
            note = render.move_note(result.game, result.cell, result.ai_cell)
            await self._post_board(interaction, result.game, note)

    @move.autocomplete("cell")
    async def move_cell_autocomplete(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        if interaction.channel_id is None:
            return []
        board = await self.bot.service.board_in_channel(interaction.channel_id)
        if board is None:
            return []
        cells, size = board.legal_moves, board.size
        names = [cell_name(cell, size) for cell in cells]
        matching = [name for name in names if name.startswith(current.strip().upper())]
        if not matching:
            # "5" or " b2 " name a cell too: offer it if it is free.
            try:
                wanted: int | None = parse_cell(current, size)
            except ValueError:
                wanted = None
            matching = [cell_name(wanted, size)] if wanted is not None and wanted in cells else []
        # Discord shows 25 choices at most: an empty 5x5 board's cells, exactly.
        return [app_commands.Choice(name=name, value=name) for name in matching[:25]]

    @ttt.command(
        name=locale_str("board"),
        description=locale_str("Show this channel's game (or open challenge) again, at the bottom"),
    )
    async def board(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction):
            _, channel_id = place(interaction)
            shown = await self.bot.service.shown_in_channel(channel_id)
            if isinstance(shown, GameRecord):
                await self._post_board(interaction, shown, None)
            else:
                await self._post_challenge(interaction, shown)

    @ttt.command(name=locale_str("resign"), description=locale_str("Give up this channel's game"))
    async def resign(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction):
            _, channel_id = place(interaction)
            game = await self.bot.service.resign_in_channel(channel_id, actor(interaction.user))
            await self._post_board(interaction, game, None)

    @ttt.command(
        name=locale_str("end"),
        description=locale_str("Moderators: end this channel's game; it counts for nobody"),
    )
    # Discord applies default_member_permissions to top-level commands only, so the /ttt group
    # stays visible to everyone and this check is what guards /ttt end.
    @app_commands.checks.has_permissions(manage_messages=True)
    @app_commands.check(in_a_server)
    async def end(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction):
            _, channel_id = place(interaction)
            game = await self.bot.service.end_in_channel(channel_id)
            await self._post_board(interaction, game, None)

    # -- hints and reviews -----------------------------------------------------------------

    @ttt.command(
        name=locale_str("hint"),
        description=locale_str(
            "Against me: the best move, for you alone (the game then counts in no stats)"
        ),
    )
    async def hint(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction):
            _, channel_id = place(interaction)
            hint = await self.bot.service.hint_in_channel(channel_id, actor(interaction.user))
            reply = render.hint_reply(hint, respond.private_language(interaction))
            await respond.post(interaction, reply, ephemeral=True)
            game = hint.game
            if hint.newly_assisted and game.message_id is not None:
                # Everyone watching the board sees that the game is assisted from now on.
                board = render.board_reply(game, render.last_answer_note(game))
                await self._edit(interaction, channel_id, game.message_id, board)

    @ttt.command(
        name=locale_str("review"),
        description=locale_str("A finished game move by move, for you alone"),
    )
    @app_commands.rename(game=locale_str("game"))
    @app_commands.describe(
        game=locale_str("Its number, as on its board (Game #12); default: this channel's last game")
    )
    async def review(
        self, interaction: discord.Interaction[Any], game: app_commands.Range[int, 1] | None = None
    ) -> None:
        async with self._handling(interaction):
            _, channel_id = place(interaction)
            review = await self.bot.service.review(channel_id, game)
            reply = render.review_reply(review, respond.private_language(interaction))
            await respond.post(interaction, reply, ephemeral=True)

    async def _post_board(
        self,
        interaction: discord.Interaction[Any],
        game: GameRecord,
        note: str | None,
        *,
        again: bool = False,
    ) -> None:
        """Reply with the board as a new message, which becomes the game's live board. If the
        reply fails, the saved state shows on the game's board message as it is (or, without
        one, the sweeper posts it). ``again``: a first answer that may have arrived was this
        board (see :func:`bot.respond.post`)."""
        reply = render.board_reply(game, note)
        respond.mark_shown(interaction, game)
        message_id = await respond.post(interaction, reply, again=again)
        if message_id is not None:
            await self._adopt_board(interaction, game, message_id)
        elif game.message_id is not None:
            await self._edit(interaction, game.channel_id, game.message_id, reply)

    async def _post_challenge(
        self, interaction: discord.Interaction[Any], challenge: ChallengeRecord
    ) -> None:
        """Reply with the challenge as a new message, which becomes its message; an older one
        loses its buttons. Without a message (the reply failed), the sweeper posts it later."""
        message_id = await respond.post(interaction, render.challenge_reply(challenge))
        if message_id is None or message_id == challenge.message_id:
            return
        await self.bot.service.set_challenge_message(challenge.id, message_id)
        if challenge.message_id is not None:
            await self._edit(
                interaction,
                challenge.channel_id,
                challenge.message_id,
                render.retired_challenge_reply(challenge),
            )
        await self._remember_route(interaction, challenge.channel_id, message_id)

    async def _adopt_board(
        self, interaction: discord.Interaction[Any], game: GameRecord, message_id: int
    ) -> None:
        await self.adopt_board(game, message_id, reaches=respond.reaches_channel(interaction))
        await self._remember_route(interaction, game.channel_id, message_id)

    async def adopt_board(self, game: GameRecord, message_id: int, *, reaches: bool) -> None:
        """Make ``message_id`` the game's live board and take the buttons off the previous
        one, so that only one board of a game can be clicked. A click on an older board (a
        client that has not caught up) adopts that board in the same way. ``reaches``: the
        bot can post and edit in the game's channel (:func:`bot.respond.reaches_channel`)."""
        previous = game.message_id
        if previous != message_id:
            await self.bot.service.set_board_message(game.id, message_id)
            if previous is not None:
                await self.bot.edit_shown(
                    game.channel_id, previous, render.retired_board_reply(game), reaches=reaches
                )

    async def _edit(
        self,
        interaction: discord.Interaction[Any],
        channel_id: int,
        message_id: int,
        reply: render.Reply,
    ) -> bool:
        """Edit another message of the bot's than the one this interaction answers with."""
        return await self.bot.edit_shown(
            channel_id, message_id, reply, reaches=respond.reaches_channel(interaction)
        )

    async def _remember_route(
        self, interaction: discord.Interaction[Any], channel_id: int, message_id: int
    ) -> None:
        """In a channel the bot is not in, this interaction's token is how to edit the
        message it showed, for the next 15 minutes (a turn that times out)."""
        if not respond.reaches_channel(interaction):
            await self.bot.service.remember_route(channel_id, interaction.token, message_id)

    # -- stats -----------------------------------------------------------------------------

    @ttt.command(
        name=locale_str("stats"),
        description=locale_str("Wins, losses and draws in this server (in DMs: in all DMs)"),
    )
    @app_commands.rename(member=locale_str("member"), size=locale_str("size"))
    @app_commands.describe(member=locale_str("Whose stats; default: yours"), size=SIZE_HELP)
    @app_commands.choices(size=SIZE_CHOICES)
    async def stats(
        self,
        interaction: discord.Interaction[Any],
        member: discord.User | None = None,
        size: app_commands.Choice[int] | None = None,
    ) -> None:
        async with self._handling(interaction):
            guild_id, _ = place(interaction)
            who = member or interaction.user
            stats = await self.bot.service.stats(guild_id, who.id, _size(size))
            await respond.post(
                interaction,
                render.stats_reply(
                    stats,
                    who.display_name,
                    DIFFICULTIES,
                    respond.public_language(interaction),
                    in_server=interaction.guild_id is not None,
                ),
            )

    @ttt.command(
        name=locale_str("leaderboard"),
        description=locale_str("Members ranked by Elo from games between members"),
    )
    @app_commands.rename(size=locale_str("size"))
    @app_commands.describe(size=SIZE_HELP)
    @app_commands.choices(size=SIZE_CHOICES)
    @app_commands.check(in_a_server)
    async def leaderboard(
        self, interaction: discord.Interaction[Any], size: app_commands.Choice[int] | None = None
    ) -> None:
        async with self._handling(interaction):
            guild_id, _ = place(interaction)
            rows = await self.bot.service.leaderboard(guild_id, _size(size))
            reply = render.leaderboard_reply(
                rows, respond.public_language(interaction), _size(size)
            )
            await respond.post(interaction, reply)

    @ttt.command(name=locale_str("help"), description=locale_str("How to play"))
    async def help(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction):
            reply = render.help_reply(respond.private_language(interaction))
            await respond.post(interaction, reply, ephemeral=True)

    # -- buttons (see bot.components) ---------------------------------------------------

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Answer clicks that discord.py would drop without a word.

        discord.py routes a click to a DynamicItem only when its custom_id matches a template
        and is on the message as the interaction shows it. Anything else gets no reply, and
        the user sees "This interaction failed": a client still showing an older version (a
        board that has since moved, a challenge that became a board), or a hand-made id.
        """
        if interaction.type is not discord.InteractionType.component:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        custom_id = str(data.get("custom_id", ""))
        on_message = _custom_ids(interaction.message) if interaction.message else set()
        if not any(form.parse(custom_id) for form in ID_FORMATS):
            sentence = N_("That button does nothing: use the buttons on the newest board.")
        elif custom_id in on_message:
            return  # discord.py routes it to the DynamicItem
        elif CELL_ID.parse(custom_id) and any(CELL_ID.parse(other) for other in on_message):
            # A cell drawn at an older ply, on a board since redrawn.
            sentence = CHANGED
        else:
            sentence = N_("That button is no longer on this message: use the newest board.")
        log.info("answered an unroutable click on %r by user %s", custom_id, interaction.user.id)
        await respond.report_error(interaction, UserError(sentence))

    async def cell_clicked(
        self, interaction: discord.Interaction[Any], game_id: int, ply: int | None, cell: int
    ) -> None:
        # Most clicks are answered by bot.fast_clicks, which hands on the rest: those it began
        # go on from where it stopped, the move played (or refused) once.
        handed_on: HandedOn[MoveResult] | None = self.bot.fast_clicks.take(interaction.id)
        received_at = None if handed_on is None else handed_on.received_at
        async with self._handling(interaction, received_at=received_at):
            try:
                if handed_on is None:
                    clicked = _on_board(interaction, game_id)
                    result = await self.bot.service.move_on_board(
                        game_id, actor(interaction.user), cell, clicked, ply
                    )
                else:
                    respond.note_first_answer_failed(
                        interaction, unsure=handed_on.answer_unsure, gone=handed_on.gone
                    )
                    result = await handed_on.work
                note = render.move_note(result.game, result.cell, result.ai_cell)
                await self._update_board(interaction, result.game, note)
            except Exception as error:
                await respond.report_error(interaction, error)

    async def resign_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        async with self._handling(interaction):
            try:
                clicked = _on_board(interaction, game_id)
                game = await self.bot.service.resign_on_board(
                    game_id, actor(interaction.user), clicked
                )
                await self._update_board(interaction, game, None)
            except Exception as error:
                await respond.report_error(interaction, error)

    async def _update_board(
        self, interaction: discord.Interaction[Any], game: GameRecord, note: str | None
    ) -> None:
        """Edit the clicked board in place; it is (or becomes) the game's live board. If the
        answer fails, the board is edited through the channel, so it shows what was saved."""
        clicked = _clicked(interaction)
        reply = render.board_reply(game, note)
        respond.mark_shown(interaction, game)
        if await respond.update(interaction, reply) or await self._edit(
            interaction, clicked.channel_id, clicked.message_id, reply
        ):
            await self._adopt_board(interaction, game, clicked.message_id)

    async def rematch_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        # As with cell_clicked: a rematch bot.fast_clicks began is started once.
        handed_on: HandedOn[Started] | None = self.bot.fast_clicks.take(interaction.id)
        received_at = None if handed_on is None else handed_on.received_at
        async with self._handling(interaction, received_at=received_at):
            try:
                if handed_on is None:
                    clicked = _on_board(interaction, game_id)
                    started = await self.bot.service.rematch(
                        game_id, actor(interaction.user), clicked
                    )
                else:
                    respond.note_first_answer_failed(
                        interaction, unsure=handed_on.answer_unsure, gone=handed_on.gone
                    )
                    started = await handed_on.work
                note = render.move_note(started.game, None, started.ai_cell)
                # An answer whose connection dropped was this same board.
                await self._post_board(interaction, started.game, note, again=handed_on is not None)
            except Exception as error:
                await respond.report_error(interaction, error)

    async def review_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        async with self._handling(interaction):
            try:
                clicked = _on_board(interaction, game_id)
                review = await self.bot.service.review(clicked.channel_id, game_id)
                reply = render.review_reply(review, respond.private_language(interaction))
                await respond.post(interaction, reply, ephemeral=True)
            except Exception as error:
                await respond.report_error(interaction, error)

    async def challenge_clicked(
        self, interaction: discord.Interaction[Any], challenge_id: int, action: str
    ) -> None:
        async with self._handling(interaction):
            try:
                await self._answer_challenge(interaction, challenge_id, action)
            except Exception as error:
                await respond.report_error(interaction, error)

    async def _answer_challenge(
        self, interaction: discord.Interaction[Any], challenge_id: int, action: str
    ) -> None:
        user = actor(interaction.user)
        service = self.bot.service
        clicked = _clicked(interaction)
        if action == "accept":
            _, game = await service.accept(challenge_id, user, clicked)
            # The challenge message becomes the board: one message, edited in place.
            await self._update_board(interaction, game, None)
            return
        if action == "decline":
            challenge = await service.decline(challenge_id, user, clicked)
        else:
            challenge = await service.withdraw(challenge_id, user, clicked)
        reply = render.challenge_reply(challenge)
        if not await respond.update(interaction, reply):
            await self._edit(interaction, clicked.channel_id, clicked.message_id, reply)


def _custom_ids(message: discord.Message) -> set[str]:
    found = set()
    for component in walk(message.components):
        custom_id = getattr(component, "custom_id", None)
        if custom_id:
            found.add(custom_id)
    return found


def _clicked(interaction: discord.Interaction[Any]) -> Clicked:
    if interaction.message is None or interaction.channel_id is None:
        raise UserError("That button is no longer attached to a message.")
    return Clicked(interaction.channel_id, interaction.message.id)


def _on_board(interaction: discord.Interaction[Any], game_id: int) -> Clicked:
    """Where a game button was clicked, if the message it is on is that game's board."""
    clicked = _clicked(interaction)
    assert interaction.message is not None  # _clicked checked
    if render.board_game_id(interaction.message) != game_id:
        raise UserError(NOT_HERE)
    return clicked


async def setup(bot: TTTBot) -> None:
    await bot.add_cog(TicTacToeCog(bot))
