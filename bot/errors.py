"""What the user hears when an interaction fails: a private sentence for a mistake, an apology
for a fault, with the new state of a game or challenge a failed attempt did change.

Every handler's failure ends here (the cog's handlers, its ``cog_app_command_error``, and the
command tree's checks and ``on_error``), so a user always gets an answer and nothing a user
controls is logged as an error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import discord
from discord import app_commands

from bot import render
from bot.answers import Answer
from bot.boards import Boards
from bot.domain import UserError
from bot.i18n import N_
from bot.metrics import Outcome
from bot.storage.base import DatabaseUnavailableError

log = logging.getLogger(__name__)

# An unexpected error may strike after a change was saved (a reply that failed, a connection
# that dropped): the apology cannot say that nothing changed, so it says where to look.
APOLOGY = N_(
    "Sorry, something went wrong on my side, so I can't tell whether that went through: "
    "`/ttt board` shows where the game stands."
)
# The database failed before anything of the interaction was written (a lock held past the
# busy timeout, a server down or unreachable): known to have changed nothing.
DATABASE_DOWN = N_(
    "The database did not answer (it may be busy or down), so nothing was done: try again in "
    "a moment."
)
# Discord sent a command this process does not have, or with options it no longer takes: the
# member's Discord still shows the commands as they were before a deploy changed them.
# Nothing ran. (discord.py's own words for it are English, and meant for the developer.)
STALE_COMMAND = N_(
    "This command changed since your Discord app loaded it, so nothing was done: reload "
    "Discord (or wait a minute) and try again."
)


class Reporter:
    """Tells users what went wrong; ``in_flight`` counts each report as work in flight, so
    that shutdown waits for it."""

    def __init__(
        self, boards: Boards, in_flight: Callable[[], AbstractAsyncContextManager[None]]
    ) -> None:
        self._boards = boards
        self._in_flight = in_flight

    async def report(self, answer: Answer, error: Exception) -> None:
        """Tell the user what went wrong, privately; log what they could not have caused.
        Never raises: this is the last handler of a failed interaction."""
        async with self._in_flight():
            try:
                await self._report(answer, error)
            except Exception:
                answer.state.reported = Outcome.FAILED
                log.exception("could not tell user %s about an error", answer.interaction.user.id)

    async def _report(self, answer: Answer, error: Exception) -> None:
        if isinstance(error, app_commands.CommandInvokeError):
            error = error.original
        # Every known kind of error below is a refusal; the last, unexpected one a failure.
        answer.state.reported = Outcome.REFUSED
        lang = answer.private_language
        if isinstance(error, UserError):
            await self._boards.show_changed(answer, error.changed)
            await answer.tell(error.sentence(lang, render.escape))
        elif isinstance(error, app_commands.NoPrivateMessage):
            await answer.tell(
                lang._(
                    "That only works in a server: the leaderboard, `/ttt end` and tournaments "
                    "belong to a server's channels."
                )
            )
        elif isinstance(error, app_commands.TransformerError):
            # Discord only sends values from the command's choices; this one was hand-made.
            log.info("refused a hand-made option value %r", error.value)
            await answer.tell(lang._("That isn't one of the choices: pick from the list."))
        elif isinstance(
            error, (app_commands.CommandNotFound, app_commands.CommandSignatureMismatch)
        ):
            log.info("refused a command Discord showed as it was before: %s", error)
            await answer.tell(lang._(STALE_COMMAND))
        elif isinstance(error, app_commands.AppCommandError):  # a check
            await answer.tell(lang._("That didn't work: {error}", error=error))
        elif isinstance(error, DatabaseUnavailableError):
            # An outage, not a bug of the bot's: one line, and only what is known.
            answer.state.reported = Outcome.FAILED
            interaction = answer.interaction
            log.warning(
                "the database failed handling %s by user %s in channel %s (%s): %s",
                describe(interaction),
                interaction.user.id,
                interaction.channel_id,
                "nothing written" if error.nothing_written else "maybe written",
                error,
            )
            await answer.tell(lang._(DATABASE_DOWN if error.nothing_written else APOLOGY))
        else:
            answer.state.reported = Outcome.FAILED
            interaction = answer.interaction
            log.error(
                "unexpected error handling %s by user %s in channel %s",
                describe(interaction),
                interaction.user.id,
                interaction.channel_id,
                exc_info=error,
            )
            await answer.tell(lang._(APOLOGY))


def describe(interaction: discord.Interaction[Any]) -> str:
    """What an interaction asked for, for the logs: its command, or its button."""
    if interaction.command is not None:
        return f"/{interaction.command.qualified_name}"
    data: dict[str, Any] = dict(interaction.data or {})
    return f"component {data.get('custom_id', '?')}"
