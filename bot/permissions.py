"""The permissions the bot needs in a server, each with what needs it and what breaks without
it. The code that checks a channel's permissions before acting checks these very objects, and
the invite link (:mod:`bot.invite`) asks for exactly their union, :data:`INVITE_PERMISSIONS`.

Everything a member does reaches the bot as an interaction, and an interaction's answer needs
no permission of the bot's own: what these are for is what the bot does in a channel by itself
(posting, editing its messages, opening threads) and how its messages look.

Not asked for, because nothing the bot does needs them: Read Message History (the bot reads
no message: it edits its own by id), Manage Messages (it deletes nothing), Manage Threads (it
archives only the threads it opened, which their creator may; where a server grants it, the
empty thread of a game that did not start is deleted instead), Use External Emojis (a server's
marks are that server's own emoji, which need nothing there), Mention Everyone (the one ping it
sends names one member), Attach Files, Add Reactions.
"""

from __future__ import annotations

import discord

# Posting and editing its own messages in a server channel by itself, rather than through an
# interaction's token: a board the sweeper posts for a game saved without its message, a
# turn's timeout or an ended game shown on a board whose interaction is older than Discord's
# 15 minutes, an older board retired. View Channel: without it the channel does not exist
# for the bot. Send Messages: without it the bot cannot post there. Without either the bot
# plays there through interaction tokens only, as in a server that never added it (see
# ``bot.boards.reaches_channel``): a timeout then shows at the next interaction there. Once
# they are given back, the next command there says so and the bot posts and edits there again.
WRITE_IN_CHANNEL = discord.Permissions(view_channel=True, send_messages=True)
# The same in a thread, where Discord asks for Send Messages in Threads instead of Send
# Messages.
WRITE_IN_THREAD = discord.Permissions(view_channel=True, send_messages_in_threads=True)
# Games in threads of their own (``/ttt-settings threads``): the bot opens a public thread off
# the channel and posts the board in it. Without Create Public Threads, or without Send
# Messages in Threads, a game start there is refused with a sentence that names them.
OPEN_THREAD = discord.Permissions(create_public_threads=True, send_messages_in_threads=True)
# A 3x3 or 4x4 board is an embed (its players, grid and status), and so are reviews, stats,
# the leaderboard and help. Discord shows embeds in the bot's messages (those it posts and
# edits itself, and since November 2023 its interaction edits and follow-ups too) only with
# Embed Links: without it such a board loses all but its buttons.
SHOW_EMBEDS = discord.Permissions(embed_links=True)

# What the invite link asks for: no more than the above.
INVITE_PERMISSIONS = WRITE_IN_CHANNEL | WRITE_IN_THREAD | OPEN_THREAD | SHOW_EMBEDS


def may_open_thread(allowed: discord.Permissions) -> bool:
    """Whether the bot, ``allowed`` this in a channel, may open a game's thread off it."""
    return allowed >= OPEN_THREAD
