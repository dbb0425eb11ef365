"""How the bot answers off the happy path, for every handler alike: a private sentence for a
mistake, an apology for a fault, the new state of a game a failed attempt did change, and edits
of its own messages outside an interaction.

The command tree's ``on_error``, the cog's ``cog_app_command_error`` and every button handler
end here, so a user always gets an answer and nothing a user controls is logged as an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

import aiohttp
import discord
from discord import app_commands

from bot import i18n, render
from bot.components import GAME_ACTION_ID, ID_FORMATS, walk
from bot.cycles import empty_view
from bot.i18n import N_, Language
from bot.service import UserError
from bot.storage.base import ChallengeRecord, GameRecord, ReplyRoute

if TYPE_CHECKING:
    from bot.client import TTTBot

log = logging.getLogger(__name__)

# An unexpected error may strike after a change was saved (a reply that failed, a connection
# that dropped): the apology cannot say that nothing changed, so it says where to look.
APOLOGY = N_(
    "Sorry, something went wrong on my side, so I can't tell whether that went through: "
    "`/ttt board` shows where the game stands."
)
# Discord refuses a first answer that arrives more than 3 s after the interaction was sent;
# one still unanswered this long into its handling is deferred (see answering()).
DEFER_AFTER = 1.5
# What answering through Discord can fail with: an HTTP error, a dropped connection, a timeout.
ANSWER_FAILURES = (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError)
_LOCK = "tttbot.answer_lock"
_TRIED = "tttbot.answer_tried"
# A first answer whose connection dropped: Discord may have applied it all the same.
_UNSURE = "tttbot.answer_unsure"
# ...and Discord, asked, said it had: the message it showed.
_ACKNOWLEDGED = "tttbot.answer_acknowledged"
# Discord refused a first answer as "Unknown interaction" (too late, or gone): nothing more can
# go through the interaction.
_GONE = "tttbot.interaction_gone"
UNKNOWN_INTERACTION = 10062  # Discord's error code
_SHOWN = "tttbot.games_shown"


@contextlib.asynccontextmanager
async def answering(
    interaction: discord.Interaction[Any], *, received_at: float | None = None
) -> AsyncIterator[None]:
    """Handle ``interaction`` knowing it will be answered in time: if no answer went out
    ``DEFER_AFTER`` seconds in (a locked database, a slow or rate-limited Discord), it is
    deferred, and the answer functions below then finish it with an edit or a follow-up.
    ``received_at``: the event loop's time when its handling began, if before now (a click
    :mod:`bot.fast_clicks` hands on)."""
    loop = asyncio.get_running_loop()
    # A timer, not a sleeping task: most interactions are answered long before it fires.
    deferring: list[asyncio.Task[None]] = []
    timer = loop.call_at(
        (loop.time() if received_at is None else received_at) + DEFER_AFTER,
        lambda: deferring.append(asyncio.create_task(_defer(interaction), name="ttt-defer")),
    )
    try:
        yield
    finally:
        timer.cancel()
        for task in deferring:
            task.cancel()
        await asyncio.gather(*deferring, return_exceptions=True)


async def _defer(interaction: discord.Interaction[Any]) -> None:
    async with _lock(interaction):
        # An answer that was tried and failed is not retried as a deferral: Discord refused
        # it (too late, or gone), or it may have arrived after all.
        if interaction.response.is_done() or interaction.extras.get(_TRIED):
            return
        try:
            # A command shows "thinking..." until its answer replaces it; a click keeps its
            # message as it is until the answer edits it.
            await interaction.response.defer(
                thinking=interaction.type is discord.InteractionType.application_command
            )
        except ANSWER_FAILURES as error:
            log.warning("could not defer interaction %s: %s", interaction.id, error)


def _lock(interaction: discord.Interaction[Any]) -> asyncio.Lock:
    """One answer at a time per interaction: the deferral must not cross the answer."""
    lock: asyncio.Lock = interaction.extras.setdefault(_LOCK, asyncio.Lock())
    return lock


def _thinking(interaction: discord.Interaction[Any]) -> bool:
    return interaction.response.type is discord.InteractionResponseType.deferred_channel_message


async def post(
    interaction: discord.Interaction[Any],
    reply: render.Reply,
    *,
    ephemeral: bool = False,
    again: bool = False,
) -> int | None:
    """Answer with a new message (public: a board, a challenge, stats; or for the user alone);
    the id of the message shown, or None if it could not be shown (logged: whatever it shows
    is already saved, and the caller or the sweeper shows it another way). Once shown, the
    reply is spent (see :func:`_spend`). ``again``: a first answer tried before (by
    :mod:`bot.fast_clicks`) was this same reply, so if it arrived after all, its message is
    the one shown, not posted twice."""
    message_id = await _post(interaction, reply, ephemeral=ephemeral, again=again)
    if message_id is not None:
        _spend(reply)
    return message_id


def _spend(reply: render.Reply) -> None:
    """Empty a reply's View once the message is sent (:func:`bot.cycles.empty_view`): a
    View left in cycles waits for a full garbage collection, and under load those meet tens of
    thousands of such objects at once and stall the loop for 20-40 ms. A reply is only ever
    reused after it failed."""
    if reply.view is not None:
        empty_view(reply.view)


async def _post(
    interaction: discord.Interaction[Any], reply: render.Reply, *, ephemeral: bool, again: bool
) -> int | None:
    kwargs = reply.send_kwargs()
    async with _lock(interaction):
        interaction.extras[_TRIED] = True
        first: bool | None = None
        try:
            first = await _first_answer_due(interaction)
            if first is None:
                return None
            acknowledged: discord.Message | None = interaction.extras.get(_ACKNOWLEDGED)
            if again and acknowledged is not None:
                return acknowledged.id
            if first:
                callback = await interaction.response.send_message(**kwargs, ephemeral=ephemeral)
                return callback.message_id
            if _thinking(interaction):
                if not ephemeral:
                    return (await interaction.edit_original_response(**reply.edit_kwargs())).id
                # Discord fills a deferred command's public "thinking..." with its first
                # follow-up, ephemeral or not: it goes first, so the answer stays private.
                await interaction.delete_original_response()
            sent = await interaction.followup.send(**kwargs, ephemeral=ephemeral, wait=True)
            return sent.id
        except ANSWER_FAILURES as error:
            log.warning("could not answer interaction %s: %s", interaction.id, error)
            if first and _outcome_unknown(interaction, error):
                # Asked now, so that the message is not posted again by whoever handles this.
                message = await _acknowledged_after_all(interaction)
                return message.id if message is not None else None
            return None


async def _first_answer_due(interaction: discord.Interaction[Any]) -> bool | None:
    """True if the next answer is the interaction's first; False if it has one (the next goes
    as a follow-up, or edits it); None if that cannot be known: a first answer dropped with
    its connection, which Discord says it does not have. Left unanswered then, rather than
    risk answering twice."""
    if interaction.extras.get(_GONE):
        return None
    if interaction.response.is_done() or interaction.extras.get(_ACKNOWLEDGED) is not None:
        return False
    if not interaction.extras.get(_UNSURE):
        return True
    return False if await _acknowledged_after_all(interaction) is not None else None


def note_first_answer_failed(
    interaction: discord.Interaction[Any], *, unsure: bool, gone: bool
) -> None:
    """Note how a first answer to ``interaction`` failed, here or sent another way
    (:mod:`bot.fast_clicks`): ``unsure``, its connection dropped and Discord may have it (the
    next answer asks first); ``gone``, Discord refused it as an unknown interaction (no answer
    goes through it any more). Neither: it was not taken, and the next answer is a first."""
    if unsure or gone:
        interaction.extras[_TRIED] = True
    if unsure:
        interaction.extras[_UNSURE] = True
    if gone:
        interaction.extras[_GONE] = True


def _outcome_unknown(interaction: discord.Interaction[Any], error: BaseException) -> bool:
    """Whether a first answer that failed with ``error`` may have reached Discord all the same
    (a dropped connection, a timeout; an HTTP error status means it did not); noted, as is an
    interaction Discord no longer knows."""
    unsure = not isinstance(error, discord.HTTPException)
    gone = isinstance(error, discord.NotFound) and error.code == UNKNOWN_INTERACTION
    note_first_answer_failed(interaction, unsure=unsure, gone=gone)
    return unsure


async def _acknowledged_after_all(interaction: discord.Interaction[Any]) -> discord.Message | None:
    """After a first answer whose connection dropped, what Discord has of it, if anything."""
    try:
        message = await interaction.original_response()
    except ANSWER_FAILURES:
        return None
    log.info("the answer to interaction %s went through after all", interaction.id)
    interaction.extras[_ACKNOWLEDGED] = message
    return message


async def update(interaction: discord.Interaction[Any], reply: render.Reply) -> bool:
    """Answer a click by editing the message it is on; False if that failed (logged). Once
    shown, the reply is spent (see :func:`_spend`)."""
    async with _lock(interaction):
        interaction.extras[_TRIED] = True
        first: bool | None = None
        try:
            first = await _first_answer_due(interaction)
            if first is None:
                return False
            if first:
                await interaction.response.edit_message(**reply.edit_kwargs())
            else:  # deferred or answered: the original response is the clicked message
                await interaction.edit_original_response(**reply.edit_kwargs())
        except ANSWER_FAILURES as error:
            log.warning("could not update message of interaction %s: %s", interaction.id, error)
            if first:
                _outcome_unknown(interaction, error)
            return False
    _spend(reply)
    return True


async def send_ephemeral(interaction: discord.Interaction[Any], text: str) -> None:
    """``text`` for the user alone."""
    await post(interaction, render.Reply(content=text), ephemeral=True)


async def report_error(interaction: discord.Interaction[Any], error: Exception) -> None:
    """Tell the user what went wrong, privately; log what they could not have caused."""
    bot = cast("TTTBot", interaction.client)
    async with bot.in_flight():
        await _report(bot, interaction, error)


async def _report(bot: TTTBot, interaction: discord.Interaction[Any], error: Exception) -> None:
    if isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    lang = private_language(interaction)
    try:
        if isinstance(error, UserError):
            await show_changed(bot, interaction, error.changed)
            await send_ephemeral(interaction, error.sentence(lang, render.escape))
        elif isinstance(error, app_commands.MissingPermissions):
            await send_ephemeral(
                interaction, lang._("Only members who can manage messages can do that.")
            )
        elif isinstance(error, app_commands.NoPrivateMessage):
            await send_ephemeral(
                interaction,
                lang._(
                    "That only works in a server: the leaderboard and `/ttt end` belong to "
                    "a server's channels."
                ),
            )
        elif isinstance(error, app_commands.TransformerError):
            # Discord only sends values from the command's choices; this one was hand-made.
            log.info("refused a hand-made option value %r", error.value)
            await send_ephemeral(
                interaction, lang._("That isn't one of the choices: pick from the list.")
            )
        elif isinstance(error, app_commands.AppCommandError):  # a check
            await send_ephemeral(interaction, lang._("That didn't work: {error}", error=error))
        else:
            log.error(
                "unexpected error handling %s by user %s in channel %s",
                _describe(interaction),
                interaction.user.id,
                interaction.channel_id,
                exc_info=error,
            )
            await send_ephemeral(interaction, lang._(APOLOGY))
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
    if isinstance(changed, GameRecord):
        mark_shown(interaction, changed)
    message = interaction.message
    # A message that already shows the end (nothing live left to press) stays as it is.
    if (
        message is not None
        and message.id == changed.message_id
        and (not _shows_live_state(message) or await update(interaction, reply))
    ):
        return
    if changed.message_id is not None:
        bot = cast("TTTBot", client)
        await bot.edit_shown(
            changed.channel_id, changed.message_id, reply, reaches=reaches_channel(interaction)
        )


def _shows_live_state(message: discord.Message) -> bool:
    """Whether the message offers a move, Resign, or an answer to a challenge: it shows a
    game or challenge as still going."""
    return any(
        isinstance(component, discord.Button)
        and not component.disabled
        and component.custom_id is not None
        and _acts_on_live_state(component.custom_id)
        for component in walk(message.components)
    )


def _acts_on_live_state(custom_id: str) -> bool:
    action = GAME_ACTION_ID.parse(custom_id)
    if action is not None:
        return action["action"] == "resign"  # Rematch and Review are on finished boards
    return any(form.parse(custom_id) for form in ID_FORMATS)


def mark_shown(interaction: discord.Interaction[Any], game: GameRecord) -> None:
    """Note that this interaction's answer shows ``game`` as it now stands."""
    interaction.extras.setdefault(_SHOWN, set()).add(game.id)


def shown_games(interaction: discord.Interaction[Any]) -> set[int]:
    """The games this interaction's answer showed."""
    shown: set[int] = interaction.extras.get(_SHOWN, set())
    return shown


async def edit_message(
    client: discord.Client, channel_id: int, message_id: int, reply: render.Reply
) -> bool:
    """Edit one of the bot's messages outside an interaction; a failure is logged, never
    raised: the game state is already saved, and the next board shown will be right."""
    message = client.get_partial_messageable(channel_id).get_partial_message(message_id)
    try:
        await message.edit(**reply.edit_kwargs())
    except ANSWER_FAILURES as error:
        log.warning("could not edit message %s in channel %s: %s", message_id, channel_id, error)
        return False
    return True


def private_language(interaction: discord.Interaction[Any]) -> Language:
    """The language of what only the interaction's user sees: their Discord client's."""
    return i18n.for_locale(interaction.locale)


def public_language(interaction: discord.Interaction[Any]) -> Language:
    """The language of what the channel sees: the server's; outside servers, the user's."""
    return i18n.for_locale(interaction.guild_locale or interaction.locale)


def reaches_channel(interaction: discord.Interaction[Any]) -> bool:
    """Whether the bot itself can post and edit in the interaction's channel, as the
    interaction tells: its own DM with the user, or a server channel of a server that added
    the bot, where the bot may see and write. Elsewhere (a group DM, a DM between members, a
    server where only the member installed the app, a channel closed to the bot) only this
    interaction's token reaches the channel."""
    if interaction.context.dm_channel:
        return True
    if not interaction.is_guild_integration():
        return False
    in_thread = isinstance(interaction.channel, discord.Thread)
    return may_write(interaction.app_permissions, in_thread=in_thread)


def may_write(allowed: discord.Permissions, *, in_thread: bool) -> bool:
    """Whether the bot, ``allowed`` this in a channel (or a thread), may see and write in it."""
    writes = allowed.send_messages_in_threads if in_thread else allowed.send_messages
    return allowed.view_channel and writes


async def edit_through(
    client: discord.Client, route: ReplyRoute, message_id: int, reply: render.Reply, now: float
) -> bool:
    """Edit ``message_id`` in a channel the bot is not in, through the route's token: only
    if the token can edit that message and is still valid. False if not, or if it failed
    (logged)."""
    if route.message_id != message_id or route.expires_at <= now:
        return False
    assert client.application_id is not None  # set at login
    webhook = discord.Webhook.partial(client.application_id, route.token, client=client)
    try:
        await webhook.edit_message(message_id, **reply.edit_kwargs())
    except ANSWER_FAILURES as error:
        log.warning(
            "could not edit message %s through an interaction token in channel %s: %s",
            message_id,
            route.channel_id,
            error,
        )
        return False
    return True


def _describe(interaction: discord.Interaction[Any]) -> str:
    if interaction.command is not None:
        return f"/{interaction.command.qualified_name}"
    data: dict[str, Any] = dict(interaction.data or {})
    return f"component {data.get('custom_id', '?')}"
