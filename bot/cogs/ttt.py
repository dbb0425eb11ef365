"""The ``/ttt`` commands and the board's buttons: parse the interaction, call the domain, show.

Each handler reads what the interaction asks, calls :mod:`bot.service` for the rules, and hands
what came back to :mod:`bot.boards` (a game's or a challenge's message) or answers it (a review,
a hint, stats). Errors a user causes come back from the service as ``UserError`` and reach the
user as a private sentence through :mod:`bot.errors`; nothing else happens here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot import render
from bot.answers import Answer
from bot.boards import Boards, reaches_channel
from bot.components import (
    CELL_ID,
    COG_NAME,
    ERASE_ID,
    FORGET_ID,
    ID_FORMATS,
    PICK_ID,
    TOURNAMENT_ID,
    ClickHandler,
    decode_day,
    decode_moves,
    walk,
)
from bot.domain import OUTSIDE_SERVERS, Actor, UserError, half_width
from bot.i18n import N_, Language, for_locale, language
from bot.permissions import may_open_thread
from bot.practice import NOT_THIS_DRILL, NOT_THIS_PUZZLE, PracticeService
from bot.privacy import FORGOTTEN_BUT_A_NEWER_TOURNAMENT, MAYBE_FORGOTTEN, MembersData
from bot.seasons import ALL_TIME
from bot.service import CHANGED, DIFFICULTIES, NO_SUCH_BUTTON, NOT_HERE, Clicked, GameService, Place
from bot.storage.base import DatabaseUnavailableError, GameRecord
from bot.threads import ThreadKeeper
from bot.tournaments.rounds import TournamentRounds
from bot.tournaments.service import Tournament, TournamentService
from bot.tournaments.state import NewerTournamentError, Rules
from game import cell_name, parse_cell
from game.ai import DIFFICULTIES as LEVELS
from game.variants import GAME_SIZES
from tournament import ROUND_ROBIN_MOST, Format

if TYPE_CHECKING:
    from bot.client import TTTBot

log = logging.getLogger(__name__)


def actor(user: discord.abc.User) -> Actor:
    """Someone an interaction names, with their roles in its server (none outside one)."""
    # The bot keeps no cache of servers (it asks for no intent), so Member.roles, which looks
    # the ids up in that cache, is always empty: the ids themselves are what the payload says.
    roles: Iterable[int] = getattr(user, "_roles", ())
    return Actor(id=user.id, name=user.display_name, is_bot=user.bot, roles=frozenset(roles))


def member(interaction: discord.Interaction[Any]) -> Actor:
    """The interaction's user, with the permissions the server's settings ask about."""
    permissions = interaction.permissions
    return dataclasses.replace(
        actor(interaction.user),
        manages_messages=permissions.manage_messages,
        manages_server=permissions.manage_guild,
    )


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
    for size in GAME_SIZES
]
# Every command's: the server's default board (/ttt-settings board-size) when none is picked.
SIZE_HELP = locale_str(
    "Board size; default: the server's (3\N{MULTIPLICATION SIGN}3 unless its admins chose one)"
)
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


FORMAT_CHOICES = [
    app_commands.Choice(name=locale_str("Swiss"), value=Format.SWISS.value),
    app_commands.Choice(name=locale_str("Round robin"), value=Format.ROUND_ROBIN.value),
]
RESULT_CHOICES = [
    app_commands.Choice(name=locale_str("X won"), value="x"),
    app_commands.Choice(name=locale_str("O won"), value="o"),
    app_commands.Choice(name=locale_str("A draw"), value="draw"),
]
RESULT_POINTS = {"x": 1.0, "o": 0.0, "draw": 0.5}
# /ttt tournament start's name in the catalogues: /ttt start's is "start" (a challenge).
TOURNAMENT_START = N_("start (tournament)")
# The most players a Swiss takes unless its organiser says.
DEFAULT_PLAYERS = 32
NO_TOURNAMENT_THREADS = N_(
    "A tournament plays each game in a thread off its channel: create it in a server's text "
    "channel where I can Create Public Threads and Send Messages in Threads."
)
NOT_THIS_TOURNAMENT = N_("That button doesn't belong to this message.")
STARTED = N_("Done: the tournament has started.")
PAUSED = N_("Done: no new round starts until you resume it.")
RESUMED = N_("Done: the tournament goes on.")
CANCELLED = N_("Done: the tournament is cancelled.")
REMOVED = N_("Done: that player is out, and their remaining games are forfeited.")
AWARDED = N_("Done: the result is recorded.")
LEFT = N_("You have left the tournament.")
# The bot opens no form (modal): a form submitted comes from a stale client or by hand.
NO_SUCH_FORM = N_("That form isn't one I opened, so nothing was done.")


def _picked_size(choice: app_commands.Choice[int] | None) -> int | None:
    """The size picked; None leaves it to the server's default (:meth:`_board_size`)."""
    return choice.value if choice is not None else None


class TicTacToeCog(commands.Cog, name=COG_NAME):
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

    @functools.cached_property
    def threads(self) -> ThreadKeeper:
        return ThreadKeeper(self.bot, self.bot.storage, self.bot.clock)

    @property
    def service(self) -> GameService:
        return self.bot.service

    @property
    def boards(self) -> Boards:
        return self.bot.boards

    @property
    def members_data(self) -> MembersData:
        return self.bot.members_data

    @property
    def practice(self) -> PracticeService:
        return self.bot.practice

    def _handling(
        self, interaction: discord.Interaction[Any]
    ) -> contextlib.AbstractAsyncContextManager[Answer]:
        return self.bot.handling(interaction)

    def _place(self, interaction: discord.Interaction[Any]) -> Place:
        """Where a game is to start: the channel, its category, and for a thread its channel
        (and that channel's category, asked of Discord only if the server's list needs it)."""
        channel = interaction.channel
        _, channel_id = place(interaction)
        if isinstance(channel, discord.Thread):
            parent_id = channel.parent_id
            return Place(channel_id, (parent_id,), functools.partial(self._category_of, parent_id))
        category_id = getattr(channel, "category_id", None)
        parents = () if category_id is None else (category_id,)
        # A thread of its own for a game, where the server asks for one: off a server's text
        # channel the bot is in (a thread cannot hold threads; elsewhere the bot cannot).
        if isinstance(channel, discord.TextChannel) and reaches_channel(interaction):
            return Place(channel_id, parents, threads=self.threads.off(interaction, channel_id))
        return Place(channel_id, parents)

    async def _category_of(self, channel_id: int) -> Collection[int]:
        try:
            channel = await self.bot.fetch_channel(channel_id)
        except discord.HTTPException as error:
            log.info("could not read channel %s for its category: %s", channel_id, error)
            return ()
        category_id = getattr(channel, "category_id", None)
        return () if category_id is None else (category_id,)

    async def _public_language(self, answer: Answer) -> Language:
        """The language of what the channel sees: the server's choice, else its Discord
        locale (outside servers, the member's)."""
        guild_id = answer.interaction.guild_id
        chosen = (await self.service.server_settings.of(guild_id)).language if guild_id else None
        return language(chosen) if chosen else answer.public_language

    async def _board_size(self, guild_id: int, picked: int | None) -> int:
        """The size a command means: the one picked, else the server's default board."""
        return (await self.service.server_settings.of(guild_id)).board(picked)

    async def cog_app_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        # What fails before a handler runs: its checks, an option's value.
        await self.bot.refuse(interaction, error)

    # -- starting --------------------------------------------------------------------------

    @ttt.command(
        name=locale_str("start"),
        description=locale_str("Challenge a member, or anyone in this channel"),
    )
    @app_commands.rename(opponent=locale_str("opponent"), size=locale_str("size"))
    @app_commands.describe(
        opponent=locale_str("Who to challenge; leave it out to let anyone accept"),
        size=SIZE_HELP,
    )
    @app_commands.choices(size=SIZE_CHOICES)
    async def start(
        self,
        interaction: discord.Interaction[Any],
        opponent: discord.User | None = None,
        size: app_commands.Choice[int] | None = None,
    ) -> None:
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            challenge = await self.service.challenge(
                guild_id,
                channel_id,
                member(interaction),
                actor(opponent) if opponent is not None else None,
                _picked_size(size),
                answer.public_language.code,
                place=self._place(interaction),
            )
            await self.boards.post_challenge(answer, challenge)

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
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            started = await self.service.start_vs_ai(
                guild_id,
                channel_id,
                member(interaction),
                difficulty.value,
                first.value if first else "me",
                _picked_size(size),
                answer.public_language.code,
                place=self._place(interaction),
            )
            note = render.move_note(started.game, None, started.ai_cell)
            await self.boards.post_board(answer, started.game, note)

    # -- playing ---------------------------------------------------------------------------

    @ttt.command(
        name=locale_str("move"),
        description=locale_str("Play a cell, like B2 (letter = column, number = row)"),
    )
    @app_commands.rename(cell=locale_str("cell"))
    @app_commands.describe(
        cell=locale_str(
            "A1 to C3 (or 1 to 9); to D4 or E5 (16, 25) on larger boards; to I9 in ultimate"
        )
    )
    async def move(self, interaction: discord.Interaction[Any], cell: str) -> None:
        async with self._handling(interaction) as answer:
            _, channel_id = place(interaction)
            result = await self.service.move_in_channel(
                channel_id, actor(interaction.user), half_width(cell)
            )
            note = render.move_note(result.game, result.cell, result.ai_cell)
            await self.boards.post_board(answer, result.game, note)

    @move.autocomplete("cell")
    async def move_cell_autocomplete(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return await _offered(interaction, self._cells_offered(interaction, current))

    async def _cells_offered(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        if interaction.channel_id is None:
            return []
        board = await self.service.board_in_channel(interaction.channel_id)
        if board is None:
            return []
        cells, size, typed = board.legal_moves, board.size, half_width(current)
        names = [cell_name(cell, size) for cell in cells]
        matching = [name for name in names if name.startswith(typed.strip().upper())]
        if not matching:
            # "5" or " b2 " name a cell too: offer it if it is free.
            try:
                wanted: int | None = parse_cell(typed, size)
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
        async with self._handling(interaction) as answer:
            _, channel_id = place(interaction)
            shown = await self.service.shown_in_channel(channel_id)
            if isinstance(shown, GameRecord):
                await self.boards.post_board(answer, shown, None)
            else:
                await self.boards.post_challenge(answer, shown)

    @ttt.command(name=locale_str("resign"), description=locale_str("Give up this channel's game"))
    async def resign(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            _, channel_id = place(interaction)
            game = await self.service.resign_in_channel(channel_id, actor(interaction.user))
            await self.boards.post_board(answer, game, None)

    @ttt.command(
        name=locale_str("end"),
        description=locale_str("Moderators: end this channel's game; it counts for nobody"),
    )
    # Discord applies default_member_permissions to top-level commands only, so the /ttt group
    # stays visible to everyone and the service decides who may end a game (those who can
    # manage messages, or have the server's moderator role).
    @app_commands.check(in_a_server)
    async def end(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            game = await self.service.end_in_channel(guild_id, channel_id, member(interaction))
            await self.boards.post_board(answer, game, None)

    # -- hints and reviews -----------------------------------------------------------------

    @ttt.command(
        name=locale_str("hint"),
        description=locale_str(
            "Against me: the best move, for you alone (the game then counts in no stats)"
        ),
    )
    async def hint(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            _, channel_id = place(interaction)
            hint = await self.service.hint_in_channel(channel_id, actor(interaction.user))
            message = render.hint_message(hint, answer.private_language)
            if not await answer.whisper(message):
                await self.service.unseen_hint(hint)
                return
            game = hint.game
            if hint.newly_assisted and game.message_id is not None:
                # Everyone watching the board sees that the game is assisted from now on.
                board = render.board_message(game, render.last_answer_note(game))
                await self.boards.edit(
                    channel_id, game.message_id, board, reaches=reaches_channel(interaction)
                )

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
        async with self._handling(interaction) as answer:
            _, channel_id = place(interaction)
            review = await self.service.review(channel_id, game)
            message = render.review_message(review, answer.private_language, interaction.user.id)
            await answer.whisper(message)

    # -- the daily puzzle and drills (see bot.practice) -------------------------------------

    # Discord runs either a command or its subcommands, never both: the day's puzzle is
    # /ttt puzzle today, beside /ttt puzzle stats.
    puzzle = app_commands.Group(
        name=locale_str("puzzle"),
        description=locale_str("The daily puzzle: the same for everyone, a new one each day"),
        parent=ttt,
    )

    @puzzle.command(
        name=locale_str("today"), description=locale_str("Today's puzzle, for you alone")
    )
    async def puzzle_today(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            view = await self.practice.puzzle(interaction.user.id)
            await answer.whisper(render.puzzle_message(view, answer.private_language))

    @puzzle.command(
        name=locale_str("stats"),
        description=locale_str("Daily puzzles solved, the streak, and this server's solvers today"),
    )
    @app_commands.rename(member=locale_str("member"))
    @app_commands.describe(member=locale_str("Whose puzzles; default: yours"))
    async def puzzle_stats(
        self, interaction: discord.Interaction[Any], member: discord.User | None = None
    ) -> None:
        async with self._handling(interaction) as answer:
            who = member or interaction.user
            stats = await self.practice.puzzle_stats(who.id, interaction.guild_id)
            lang = await self._public_language(answer)
            await answer.post(render.puzzle_stats_message(stats, who.display_name, lang))

    @ttt.command(
        name=locale_str("drill"),
        description=locale_str("Your next due drill, from the mistakes of your games"),
    )
    async def drill(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            view = await self.practice.next_drill(interaction.user.id)
            await answer.whisper(render.drill_message(view, answer.private_language))

    async def puzzle_clicked(
        self,
        interaction: discord.Interaction[Any],
        day: str,
        puzzle: str,
        tries: int,
        moves: str,
        cell: int,
    ) -> None:
        async with self._handling(interaction) as answer:
            guild_id, _ = place(interaction)
            shown = self.practice.daily(_day(day), puzzle)
            _in_its_form(interaction, shown.size, NOT_THIS_PUZZLE)
            view = await self.practice.answer_puzzle(
                interaction.user.id, guild_id, _day(day), puzzle, tries, _moves(moves), cell
            )
            await answer.update(render.puzzle_message(view, answer.private_language))

    async def puzzle_again_clicked(
        self, interaction: discord.Interaction[Any], day: str, puzzle: str
    ) -> None:
        async with self._handling(interaction) as answer:
            shown = self.practice.daily(_day(day), puzzle)
            _in_its_form(interaction, shown.size, NOT_THIS_PUZZLE)
            view = await self.practice.puzzle(interaction.user.id, _day(day), puzzle)
            await answer.update(render.puzzle_message(view, answer.private_language))

    async def legacy_puzzle_clicked(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction):
            raise UserError(NOT_THIS_PUZZLE)

    async def drill_clicked(
        self, interaction: discord.Interaction[Any], drill_id: int, answers: int, cell: int
    ) -> None:
        async with self._handling(interaction) as answer:
            view = await self.practice.answer_drill(
                interaction.user.id,
                drill_id,
                answers,
                cell,
                shown_at=functools.partial(_in_its_form, interaction, refusal=NOT_THIS_DRILL),
            )
            await answer.update(render.drill_message(view, answer.private_language))

    async def drill_next_clicked(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            view = await self.practice.next_drill(interaction.user.id)
            # A message of its own, not an edit: the next drill may be on a board of another
            # size, and a classic message cannot become a components-v2 one (or back).
            message = render.drill_message(view, answer.private_language)
            await answer.whisper(message)

    async def practise_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        async with self._handling(interaction) as answer:
            _, channel_id = place(interaction)
            review = await self.service.review_to_practise(channel_id, game_id)
            view = await self.practice.practise(review, interaction.user.id)
            await answer.whisper(render.drill_message(view, answer.private_language))

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
        async with self._handling(interaction) as answer:
            guild_id, _ = place(interaction)
            who = member or interaction.user
            stats = await self.service.stats(
                guild_id, who.id, await self._board_size(guild_id, _picked_size(size))
            )
            message = render.stats_message(
                stats,
                who.display_name,
                DIFFICULTIES,
                await self._public_language(answer),
                in_server=interaction.guild_id is not None,
            )
            await answer.post(message)

    @ttt.command(
        name=locale_str("leaderboard"),
        description=locale_str("Members ranked by rating from games between members"),
    )
    @app_commands.rename(size=locale_str("size"), season=locale_str("season"))
    @app_commands.describe(
        size=SIZE_HELP, season=locale_str("A past season, like 2026-10, or all time")
    )
    @app_commands.choices(size=SIZE_CHOICES)
    @app_commands.check(in_a_server)
    async def leaderboard(
        self,
        interaction: discord.Interaction[Any],
        size: app_commands.Choice[int] | None = None,
        season: app_commands.Range[str, 1, 20] | None = None,
    ) -> None:
        async with self._handling(interaction) as answer:
            guild_id, _ = place(interaction)
            typed = half_width(season) if season is not None else None
            board = await self._board_size(guild_id, _picked_size(size))
            shown = await self.bot.ladder.table(guild_id, board, typed)
            lang = await self._public_language(answer)
            message = render.leaderboard_message(
                shown.rows, lang, shown.size, season=shown.season, current=shown.current
            )
            await answer.post(message)

    @leaderboard.autocomplete("season")
    async def season_autocomplete(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return await _offered(interaction, self._seasons_offered(interaction, current))

    async def _seasons_offered(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        """All time, then the seasons with rated games on the size picked, latest first."""
        lang = for_locale(interaction.locale)
        choices = [app_commands.Choice(name=lang._("All time"), value=ALL_TIME)]
        if interaction.guild_id is None:
            return choices
        picked = getattr(interaction.namespace, "size", None)
        if picked is not None and picked not in GAME_SIZES:
            # A size none of the choices offers: only a hand-made payload sends one, and an
            # autocomplete that raises gets no answer at all.
            return []
        size = await self._board_size(interaction.guild_id, picked)
        played = await self.bot.ladder.seasons_played(interaction.guild_id, size, current)
        return choices + [app_commands.Choice(name=name, value=name) for name in played]

    @ttt.command(name=locale_str("help"), description=locale_str("How to play"))
    async def help(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            guild_id = interaction.guild_id or OUTSIDE_SERVERS
            size = await self._board_size(guild_id, None)
            message = render.help_message(answer.private_language, size)
            await answer.whisper(message)

    # -- members' data (see bot.privacy) ----------------------------------------------------

    @ttt.command(
        name=locale_str("my-data"),
        description=locale_str("What I keep about you, everywhere (only you see it)"),
    )
    async def my_data(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            data = await self.members_data.of_member(interaction.user.id)
            message = render.member_data_message(
                data, interaction.guild_id, DIFFICULTIES, answer.private_language
            )
            await answer.whisper(message)

    @ttt.command(
        name=locale_str("forget-me"),
        description=locale_str("Delete what I keep about you, everywhere (asks first)"),
    )
    async def forget_me(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            data = await self.members_data.to_forget(interaction.user.id)
            asked = int(self.bot.clock.now())
            message = render.forget_confirmation(data, asked, answer.private_language)
            await answer.whisper(message)

    async def forget_clicked(
        self, interaction: discord.Interaction[Any], member_id: int, asked_at: int, action: str
    ) -> None:
        """An answer to ``/ttt forget-me``'s question: only the member who asked may give it."""
        async with self._handling(interaction) as answer:
            if interaction.user.id != member_id:
                raise UserError(
                    "Only the member who asked can answer this: to delete your own data, use "
                    "`/ttt forget-me`."
                )
            lang = answer.private_language
            if action == "cancel":
                await answer.update(render.cancelled_message(lang))
                return
            forgetting = await self.members_data.forget(member_id, asked_at)
            # Before the member is told: a failure here is an apology, and asking again
            # finishes it (the tournaments still name the member).
            placeholder = forgetting.forgotten.placeholder_id
            try:
                withdrawn = await self.tournaments.forget(member_id, placeholder)
            except DatabaseUnavailableError as error:
                # Their games and stats are forgotten already: not "nothing was deleted".
                log.warning("forgot user %s but not yet their tournaments: %s", member_id, error)
                raise UserError(MAYBE_FORGOTTEN) from None
            except NewerTournamentError:
                log.info("forgot user %s but not yet a tournament of a newer version", member_id)
                raise UserError(FORGOTTEN_BUT_A_NEWER_TOURNAMENT) from None
            # Told first: the boards below may take a while, and may fail without undoing it.
            await answer.update(render.forgotten_message(forgetting, len(withdrawn), lang))
            await self.boards.show_ended(
                forgetting.games, forgetting.challenges, render.forgotten_note
            )
            for tournament in withdrawn:
                await self.rounds.show(tournament)

    async def erase_clicked(
        self, interaction: discord.Interaction[Any], guild_id: int, asked_at: int, action: str
    ) -> None:
        """An answer to the question :func:`bot.render.erase_server_confirmation` asks: only
        a member who can manage that server may give it, there."""
        async with self._handling(interaction) as answer:
            if interaction.guild_id != guild_id:
                raise UserError(NOT_HERE)
            if not interaction.permissions.manage_guild:
                raise UserError("Only members who can manage this server can delete its data.")
            lang = answer.private_language
            if action == "cancel":
                await answer.update(render.cancelled_message(lang))
                return
            erased = await self.members_data.erase_guild(guild_id, asked_at)
            await answer.update(render.server_erased_message(erased, lang))
            await self.boards.show_erased(erased)
            for going in erased.live_tournaments:
                await self.rounds.show_erased(going)

    # -- buttons (see bot.components) ---------------------------------------------------

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Answer clicks and forms that discord.py would drop without a word.

        discord.py routes a click to a DynamicItem only when its custom_id matches a template
        and is on the message as the interaction shows it. Anything else gets no reply, and
        the user sees "This interaction failed": a client still showing an older version (a
        board that has since moved, a challenge that became a board), or a hand-made id.
        A form (a modal submit) it routes only to a modal the process opened, and the bot
        opens none: one comes from a stale client or a hand-made request.
        """
        a_form = interaction.type is discord.InteractionType.modal_submit
        if not a_form and interaction.type is not discord.InteractionType.component:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        custom_id = str(data.get("custom_id", ""))
        if a_form:
            log.info(
                "answered a form the bot never opened, %r, by user %s",
                custom_id,
                interaction.user.id,
            )
            await self.bot.refuse(interaction, UserError(NO_SUCH_FORM))
            return
        on_message = _custom_ids(interaction.message) if interaction.message else set()
        # A form without fields parses to {}, which is falsy: compare with None. Every
        # component of the bot's is a button, and discord.py routes a click only to a
        # component of the type it names (any other is a hand-made payload).
        if data.get("component_type") != discord.ComponentType.button.value or not any(
            form.parse(custom_id) is not None for form in ID_FORMATS
        ):
            sentence = NO_SUCH_BUTTON
        elif custom_id in on_message:
            return  # discord.py routes it to the DynamicItem
        elif _on_a_board(custom_id) and any(_on_a_board(other) for other in on_message):
            # A cell (or an ultimate board's small board) drawn at an older ply, or before the
            # player picked or left a small board, on a board since redrawn.
            sentence = CHANGED
        elif TOURNAMENT_ID.parse(custom_id):
            # Join or Leave, on a tournament's message since it started or ended.
            sentence = N_("This tournament takes no more players: its message shows where it is.")
        elif FORGET_ID.parse(custom_id) or ERASE_ID.parse(custom_id):
            # A second click on a question its first click answered (and took the buttons off).
            sentence = N_("This question was already answered: nothing more was done.")
        else:
            sentence = N_("That button is no longer on this message: use the newest board.")
        log.info("answered an unroutable click on %r by user %s", custom_id, interaction.user.id)
        await self.bot.refuse(interaction, UserError(sentence))

    async def cell_clicked(
        self, interaction: discord.Interaction[Any], game_id: int, ply: int | None, cell: int
    ) -> None:
        async with self._handling(interaction) as answer:
            result = await answer.state.resume(
                lambda: self.service.move_on_board(
                    game_id, actor(interaction.user), cell, _on_board(interaction, game_id), ply
                )
            )
            note = render.move_note(result.game, result.cell, result.ai_cell)
            await self.boards.update_board(answer, result.game, note)

    async def pick_clicked(
        self, interaction: discord.Interaction[Any], game_id: int, ply: int, board: int | None
    ) -> None:
        async with self._handling(interaction) as answer:
            clicked = _on_board(interaction, game_id)
            user = actor(interaction.user)
            game = await self.service.pick_on_board(game_id, user, board, clicked, ply)
            # Only what the message shows changes: nothing to store, nothing to redo if the
            # edit fails (the board still offers the small boards).
            shown = render.board_message(game, render.last_move_note(game), board)
            if await answer.update(shown):
                await self.boards.redraw_if_moved_on(answer, game)

    async def resign_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        async with self._handling(interaction) as answer:
            clicked = _on_board(interaction, game_id)
            game = await self.service.resign_on_board(game_id, actor(interaction.user), clicked)
            await self.boards.update_board(answer, game, None)

    async def rematch_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        async with self._handling(interaction) as answer:
            started = await answer.state.resume(
                lambda: self.service.rematch(
                    game_id, actor(interaction.user), _on_board(interaction, game_id)
                )
            )
            note = render.move_note(started.game, None, started.ai_cell)
            await self.boards.post_board(answer, started.game, note)

    async def review_clicked(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        async with self._handling(interaction) as answer:
            clicked = _on_board(interaction, game_id)
            review = await self.service.review(clicked.channel_id, game_id)
            message = render.review_message(review, answer.private_language, interaction.user.id)
            await answer.whisper(message)

    async def challenge_clicked(
        self, interaction: discord.Interaction[Any], challenge_id: int, action: str
    ) -> None:
        async with self._handling(interaction) as answer:
            user, clicked = actor(interaction.user), _clicked(interaction)
            if action == "accept":
                where = self._place(interaction)
                _, game = await self.service.accept(challenge_id, user, clicked, place=where)
                # The challenge message becomes the board: one message, edited in place.
                await self.boards.update_board(answer, game, None)
                return
            if action == "decline":
                challenge = await self.service.decline(challenge_id, user, clicked)
            else:
                challenge = await self.service.withdraw(challenge_id, user, clicked)
            await self.boards.update_challenge(answer, challenge)

    # -- tournaments (see bot.tournaments) ---------------------------------------------------

    tournament = app_commands.Group(
        name=locale_str("tournament"),
        description=locale_str("Tournaments the bot runs: Swiss or round robin"),
        parent=ttt,
    )

    @property
    def tournaments(self) -> TournamentService:
        return self.bot.tournaments

    @property
    def rounds(self) -> TournamentRounds:
        return self.bot.tournament_rounds

    @tournament.command(
        name=locale_str("create"),
        description=locale_str("Create a tournament hosted in this channel"),
    )
    @app_commands.check(in_a_server)
    @app_commands.rename(
        name=locale_str("name"),
        format=locale_str("format"),
        size=locale_str("size"),
        turn_minutes=locale_str("turn-minutes"),
        starts_in=locale_str("starts-in"),
        players=locale_str("players"),
        rounds=locale_str("rounds"),
    )
    @app_commands.describe(
        name=locale_str("Its name, plain text"),
        format=locale_str("Swiss (default) or round robin (up to 10 players)"),
        size=SIZE_HELP,
        turn_minutes=locale_str("Minutes a player has for each move; default 5"),
        starts_in=locale_str("Minutes until it starts; leave it out to start it yourself"),
        players=locale_str("The most players; default 32 (a round robin's, 10)"),
        rounds=locale_str("A Swiss's rounds; default from the number of players"),
    )
    @app_commands.choices(format=FORMAT_CHOICES)
    @app_commands.choices(size=SIZE_CHOICES)
    async def tournament_create(
        self,
        interaction: discord.Interaction[Any],
        name: str,
        format: app_commands.Choice[str] | None = None,
        size: app_commands.Choice[int] | None = None,
        turn_minutes: int = 5,
        starts_in: int | None = None,
        players: int | None = None,
        rounds: int | None = None,
    ) -> None:
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            if not isinstance(interaction.channel, discord.TextChannel) or not may_open_thread(
                interaction.app_permissions
            ):
                raise UserError(NO_TOURNAMENT_THREADS)
            lang = await self._public_language(answer)
            kind = Format(format.value) if format is not None else Format.SWISS
            if players is None:
                players = ROUND_ROBIN_MOST if kind is Format.ROUND_ROBIN else DEFAULT_PLAYERS
            rules = Rules(
                name=name.strip(),
                format=kind,
                size=await self._board_size(guild_id, _picked_size(size)),
                turn_timeout=turn_minutes * 60.0,
                most_players=players,
                rounds=rounds,
                language=lang.code,
            )
            created = await self.tournaments.create(
                guild_id,
                channel_id,
                member(interaction),
                rules,
                starts_in=None if starts_in is None else starts_in * 60.0,
            )
            message_id = await answer.post(self.rounds.message(created))
            if message_id is not None:
                try:
                    await self.tournaments.note_announcement(created.id, message_id)
                except DatabaseUnavailableError as error:
                    # Created and shown: not "nothing was done". Its first Join notes it.
                    log.warning("tournament %s: could not note its message: %s", created.id, error)

    async def tournament_clicked(
        self, interaction: discord.Interaction[Any], tournament_id: int, action: str
    ) -> None:
        async with self._handling(interaction) as answer:
            guild_id, _ = place(interaction)
            clicked = interaction.message
            shown = await self.tournaments.get(tournament_id)
            if (
                shown is None
                or shown.record.guild_id != guild_id
                or clicked is None
                or shown.state.announcement_id not in (None, clicked.id)
            ):
                raise UserError(NOT_THIS_TOURNAMENT)
            if shown.state.announcement_id is None:
                # Its creation could not note its message (the database failed): this is it.
                await self.tournaments.note_announcement(tournament_id, clicked.id)
            user = member(interaction)
            if action == "join":
                changed = await self.tournaments.join(tournament_id, guild_id, user)
            else:
                changed = await self.tournaments.leave(tournament_id, guild_id, user)
            if await answer.update(self.rounds.message(changed)):
                await self.rounds.show_if_changed(changed)
            else:
                await self.rounds.show(changed)
            if action != "join":  # a Leave still shown after the start: the game is lost
                await self.rounds.end_forfeited_game(changed, user.id)

    async def _organiser_acts(
        self,
        interaction: discord.Interaction[Any],
        act: Callable[[int, int, Actor], Awaitable[Tournament]],
        done: str,
    ) -> None:
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            here = await self.tournaments.here(guild_id, channel_id)
            changed = await act(here.id, guild_id, member(interaction))
            await answer.whisper(render.plain_text(answer.private_language._(done)))
            await self.rounds.follow(changed)

    @tournament.command(
        name=locale_str("start", msgid=TOURNAMENT_START),
        description=locale_str("Start this channel's tournament now"),
    )
    @app_commands.check(in_a_server)
    async def tournament_start(self, interaction: discord.Interaction[Any]) -> None:
        await self._organiser_acts(interaction, self.tournaments.start, STARTED)

    @tournament.command(
        name=locale_str("pause"),
        description=locale_str("Hold the tournament after the round being played"),
    )
    @app_commands.check(in_a_server)
    async def tournament_pause(self, interaction: discord.Interaction[Any]) -> None:
        await self._organiser_acts(interaction, self.tournaments.pause, PAUSED)

    @tournament.command(
        name=locale_str("resume"), description=locale_str("Let a paused tournament go on")
    )
    @app_commands.check(in_a_server)
    async def tournament_resume(self, interaction: discord.Interaction[Any]) -> None:
        await self._organiser_acts(interaction, self.tournaments.resume, RESUMED)

    @tournament.command(
        name=locale_str("cancel"), description=locale_str("Cancel this channel's tournament")
    )
    @app_commands.check(in_a_server)
    async def tournament_cancel(self, interaction: discord.Interaction[Any]) -> None:
        await self._organiser_acts(interaction, self.tournaments.cancel, CANCELLED)

    @tournament.command(
        name=locale_str("remove"),
        description=locale_str("Remove a player: their remaining games are forfeited"),
    )
    @app_commands.check(in_a_server)
    @app_commands.rename(player=locale_str("player"))
    @app_commands.describe(player=locale_str("Who to remove"))
    async def tournament_remove(
        self, interaction: discord.Interaction[Any], player: discord.User
    ) -> None:
        async def remove(tournament_id: int, guild_id: int, who: Actor) -> Tournament:
            await self._settle_clocks(player.id)
            changed = await self.tournaments.remove(tournament_id, guild_id, who, player.id)
            await self.rounds.end_forfeited_game(changed, player.id)
            return changed

        await self._organiser_acts(interaction, remove, REMOVED)

    @tournament.command(
        name=locale_str("award"),
        description=locale_str("Decide a game's result by hand (a game that went wrong)"),
    )
    @app_commands.check(in_a_server)
    @app_commands.rename(
        table=locale_str("table"), result=locale_str("result"), round=locale_str("round")
    )
    @app_commands.describe(
        table=locale_str("The table's number in the round"),
        result=locale_str("Who won"),
        round=locale_str("The round; default the one being played"),
    )
    @app_commands.choices(result=RESULT_CHOICES)
    async def tournament_award(
        self,
        interaction: discord.Interaction[Any],
        table: int,
        result: app_commands.Choice[str],
        round: int | None = None,
    ) -> None:
        # A value that is none of the choices (a hand-made payload) is refused by the service.
        points = RESULT_POINTS.get(result.value, -1.0)

        async def award(tournament_id: int, guild_id: int, who: Actor) -> Tournament:
            awarded = await self.tournaments.award(
                tournament_id, guild_id, who, table, points, round
            )
            await self.rounds.end_awarded_game(awarded.tournament, awarded.round_number, table)
            return awarded.tournament

        await self._organiser_acts(interaction, award, AWARDED)

    @tournament.command(
        name=locale_str("leave"),
        description=locale_str("Leave this channel's tournament; once started, you forfeit"),
    )
    @app_commands.check(in_a_server)
    async def tournament_leave(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            here = await self.tournaments.here(guild_id, channel_id)
            await self._settle_clocks(interaction.user.id)
            changed = await self.tournaments.leave(here.id, guild_id, member(interaction))
            await answer.whisper(render.plain_text(answer.private_language._(LEFT)))
            await self.rounds.end_forfeited_game(changed, interaction.user.id)
            await self.rounds.follow(changed)

    async def _settle_clocks(self, user_id: int) -> None:
        """Time out the member's games whose turn ran out, before their withdrawal decides
        their table: a game their opponent had already lost on time is their win, not a
        forfeit of theirs."""
        await self.boards.show_ended(await self.service.time_out_overdue_of(user_id), [])

    @tournament.command(
        name=locale_str("standings"),
        description=locale_str("The standings of this channel's tournament, for you"),
    )
    @app_commands.check(in_a_server)
    async def tournament_standings(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            here = await self.tournaments.here(guild_id, channel_id, ended_too=True)
            message = render.tournament_standings(
                here.state, here.state.standings(), interaction.user.id, answer.private_language
            )
            await answer.whisper(message)

    @tournament.command(
        name=locale_str("my-game"), description=locale_str("Where your game of this round is")
    )
    @app_commands.check(in_a_server)
    async def tournament_my_game(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as answer:
            guild_id, channel_id = place(interaction)
            here = await self.tournaments.here(guild_id, channel_id)
            table = here.state.current_table_of(interaction.user.id)
            message = render.tournament_my_game(
                here.state, table, guild_id, answer.private_language
            )
            await answer.whisper(message)


if TYPE_CHECKING:
    # mypy proves here that the cog answers every click the buttons route.
    _answers_clicks: type[ClickHandler] = TicTacToeCog


async def _offered(
    interaction: discord.Interaction[Any], offer: Awaitable[list[app_commands.Choice[str]]]
) -> list[app_commands.Choice[str]]:
    """An autocomplete's choices; none while the database is down. Raised, the outage would
    leave the picker without an answer, and discord.py would log it as a bug: at ERROR, with
    a traceback."""
    try:
        return await offer
    except DatabaseUnavailableError as error:
        log.warning(
            "offered nothing to an autocomplete from user %s: %s", interaction.user.id, error
        )
        return []


def _custom_ids(message: discord.Message) -> set[str]:
    found = set()
    for component in walk(message.components):
        custom_id = getattr(component, "custom_id", None)
        if custom_id:
            found.add(custom_id)
    return found


def _on_a_board(custom_id: str) -> bool:
    """Whether ``custom_id`` is a board's cell, or an ultimate board's small board."""
    return CELL_ID.parse(custom_id) is not None or PICK_ID.parse(custom_id) is not None


def _clicked(interaction: discord.Interaction[Any]) -> Clicked:
    if interaction.message is None or interaction.channel_id is None:
        raise UserError("That button is no longer attached to a message.")
    return Clicked(interaction.channel_id, interaction.message.id)


def _in_its_form(interaction: discord.Interaction[Any], size: int, refusal: str) -> None:
    """Refuse a click that names a puzzle or drill of a size drawn in the other form than the
    message it is on (a classic message, or a components-v2 one): only a hand-made button
    does, and Discord would refuse to turn the message into the other form."""
    message = interaction.message
    if message is not None and message.flags.components_v2 != render.uses_layout(size):
        raise UserError(refusal)


def _day(text: str) -> datetime.date:
    """A puzzle button's day; a sentence for a hand-made one that names no date."""
    try:
        return decode_day(text)
    except ValueError:
        raise UserError(NOT_THIS_PUZZLE) from None


def _moves(text: str) -> tuple[int, ...]:
    """A puzzle button's moves so far; a sentence for a hand-made line."""
    try:
        return decode_moves(text)
    except ValueError:
        raise UserError(NOT_THIS_PUZZLE) from None


def _on_board(interaction: discord.Interaction[Any], game_id: int) -> Clicked:
    """Where a game button was clicked, if the message it is on is that game's board."""
    clicked = _clicked(interaction)
    assert interaction.message is not None  # _clicked checked
    if render.board_game_id(interaction.message) != game_id:
        raise UserError(NOT_HERE)
    return clicked
