"""How the bot answers off the happy path, for every handler alike: a private sentence for a
mistake, an apology for a fault, the new state of a game a failed attempt did change, and edits
of its own messages outside an interaction.

The command tree's ``on_error``, the cog's ``cog_app_command_error`` and every button handler
end here, so a user always gets an answer and nothing a user controls is logged as an error.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

import discord
from discord import app_commands

from bot import render
from bot.service import UserError
from bot.storage.base import ChallengeRecord, GameRecord

if TYPE_CHECKING:
    from bot.client import TTTBot

log = logging.getLogger(__name__)

APOLOGY = "Sorry, something went wrong on my side. Nothing was changed; please try again."


async def send_ephemeral(interaction: discord.Interaction[Any], text: str) -> None:
    """``text`` for the user alone: the response if it is still open, else a follow-up."""
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=render.NO_PINGS)
    else:
        await interaction.response.send_message(
            text, ephemeral=True, allowed_mentions=render.NO_PINGS
        )


async def report_error(interaction: discord.Interaction[Any], error: Exception) -> None:
    """Tell the user what went wrong, privately; log what they could not have caused."""
    bot = cast("TTTBot", interaction.client)
    async with bot.in_flight():
        await _report(bot, interaction, error)


async def _report(bot: TTTBot, interaction: discord.Interaction[Any], error: Exception) -> None:
    if isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    try:
        if isinstance(error, UserError):
            await show_changed(bot, interaction, error.changed)
            await send_ephemeral(interaction, error.sentence(render.escape))
        elif isinstance(error, app_commands.MissingPermissions):
            await send_ephemeral(interaction, "Only members who can manage messages can do that.")
        elif isinstance(error, app_commands.NoPrivateMessage):
            await send_ephemeral(interaction, "Tic-tac-toe is played in a server channel.")
        elif isinstance(error, app_commands.TransformerError):
            # Discord only sends values from the command's choices; this one was hand-made.
            log.info("refused a hand-made option value %r", error.value)
            await send_ephemeral(interaction, "That isn't one of the choices: pick from the list.")
        elif isinstance(error, app_commands.AppCommandError):  # a check
            await send_ephemeral(interaction, f"That didn't work: {error}")
        else:
            log.error(
                "unexpected error handling %s by user %s in channel %s",
                _describe(interaction),
                interaction.user.id,
                interaction.channel_id,
                exc_info=error,
            )
            await send_ephemeral(interaction, APOLOGY)
    except Exception:
        # Reporting must never raise: this runs as the last handler of a failed interaction.
        log.exception("could not tell user %s about an error", interaction.user.id)


async def show_changed(
    client: discord.Client,
    interaction: discord.Interaction[Any],
    changed: GameRecord | ChallengeRecord | None,
) -> None:
    """A failed attempt that did settle something (a turn out of time, an expired challenge)
    shows the new state: in place on the clicked message, else by editing the stored one."""
    if changed is None:
        return
    reply = (
        render.board_reply(changed)
        if isinstance(changed, GameRecord)
        else render.challenge_reply(changed)
    )
    clicked = interaction.message.id if interaction.message else None
    if clicked is not None and clicked == changed.message_id and not interaction.response.is_done():
        await interaction.response.edit_message(**reply.edit_kwargs())
    elif changed.message_id is not None:
        await edit_message(client, changed.channel_id, changed.message_id, reply)


async def edit_message(
    client: discord.Client, channel_id: int, message_id: int, reply: render.Reply
) -> bool:
    """Edit one of the bot's messages outside an interaction; a failure is logged, never
    raised: the game state is already saved, and the next board shown will be right."""
    message = client.get_partial_messageable(channel_id).get_partial_message(message_id)
    try:
        await message.edit(**reply.edit_kwargs())
    except discord.HTTPException as error:
        log.warning("could not edit message %s in channel %s: %s", message_id, channel_id, error)
        return False
    return True


def _describe(interaction: discord.Interaction[Any]) -> str:
    if interaction.command is not None:
        return f"/{interaction.command.qualified_name}"
    data: dict[str, Any] = dict(interaction.data or {})
    return f"component {data.get('custom_id', '?')}"
