"""A server's settings as ``/ttt-settings`` shows them, with durations and languages in
words."""

from __future__ import annotations

import datetime
import math
from typing import Literal

import babel
import babel.dates
import discord

from bot.i18n import Language
from bot.render.parts import (
    FORGOTTEN_MEMBER,
    LIVE_COLOUR,
    MARK_EMOJI,
    Message,
    size_label,
    timestamp,
)
from bot.seasons import SeasonLength
from bot.server_settings import ServerSettings, Setting
from bot.storage.base import is_forgotten
from game import Mark


def duration(seconds: float, lang: Language) -> str:
    """A duration in words, exactly, in ``lang``: "1 hour and 30 minutes"."""
    locale = babel.Locale.parse(lang.code)
    whole = max(round(seconds), 1)
    parts = []
    units: tuple[tuple[Literal["day", "hour", "minute", "second"], int], ...] = (
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
        ("second", 1),
    )
    for unit, size in units:
        count, whole = divmod(whole, size)
        if count:
            # An infinite threshold holds the unit given: babel would say "1 week" for 7 days.
            exact = datetime.timedelta(seconds=count * size)
            parts.append(
                babel.dates.format_timedelta(
                    exact, granularity=unit, threshold=math.inf, locale=locale
                )
            )
    return lang.listing(parts)


def language_name(code: str) -> str:
    """A language's own name for itself: "Deutsch", "português (Brasil)"."""
    return str(babel.Locale.parse(code).get_display_name(code))


def settings_message(
    settings: ServerSettings,
    lang: Language,
    *,
    turn_timeout: float,
    challenge_timeout: float,
    saved: bool = False,
) -> Message:
    """A server's settings, each with who changed it last; the timeouts given are the bot's
    own, shown where the server keeps them."""

    def changed(*shown: Setting) -> str:
        changes = [settings.changes[setting] for setting in shown if setting in settings.changes]
        if not changes:
            return ""
        change = max(changes, key=lambda change: change.at)
        if is_forgotten(change.by):  # a placeholder is no member to mention
            return "\n" + lang._(
                "-# changed by *{placeholder}* {when}",
                placeholder=lang._(FORGOTTEN_MEMBER),
                when=timestamp(change.at),
            )
        return "\n" + lang._(
            "-# changed by <@{user}> {when}", user=change.by, when=timestamp(change.at)
        )

    def field(name: str, setting: Setting | tuple[Setting, ...], value: str) -> None:
        shown = setting if isinstance(setting, tuple) else (setting,)
        embed.add_field(name=name, value=value + changed(*shown), inline=False)

    def default(value: str) -> str:
        return lang._("{value} (the bot's default)", value=value)

    embed = discord.Embed(title=lang._("Tic-tac-toe settings for this server"), colour=LIVE_COLOUR)
    if settings.channels:
        where = lang.listing([f"<#{channel}>" for channel in sorted(settings.channels)])
    else:
        where = lang._("Every channel")
    field(lang._("Where games can be started"), Setting.CHANNELS, where)
    if settings.player_roles:
        who = lang.listing([f"<@&{role}>" for role in sorted(settings.player_roles)], "or")
    else:
        who = lang._("Everyone")
    field(lang._("Who can play"), Setting.PLAYER_ROLES, who)
    if settings.moderator_role is None:
        enders = lang._("Members who can manage messages")
    else:
        enders = lang._(
            "Members who can manage messages, and {role}", role=f"<@&{settings.moderator_role}>"
        )
    field(lang._("Who can end games (/ttt end)"), Setting.MODERATOR_ROLE, enders)
    for setting, name, own, bot_default in (
        (Setting.TURN_TIMEOUT, lang._("Time for a move"), settings.turn_timeout, turn_timeout),
        (
            Setting.CHALLENGE_TIMEOUT,
            lang._("Time to answer a challenge"),
            settings.challenge_timeout,
            challenge_timeout,
        ),
    ):
        shown = duration(own, lang) if own is not None else default(duration(bot_default, lang))
        field(name, setting, shown)
    if settings.language is None:
        spoken = lang._("The server's Discord language")
    else:
        spoken = language_name(settings.language)
    field(lang._("Language of boards and challenges"), Setting.LANGUAGE, spoken)
    if settings.max_games is None:
        limit = lang._("No limit")
    else:
        limit = lang.n_("{count} game", "{count} games", settings.max_games)
    field(lang._("Live games a member can be in at once"), Setting.MAX_GAMES, limit)
    wait = duration(settings.cooldown, lang) if settings.cooldown else lang._("None")
    field(lang._("Wait between one member's challenges"), Setting.COOLDOWN, wait)
    marks = " ".join(
        mark or MARK_EMOJI[side]
        for side, mark in ((Mark.X, settings.mark_x), (Mark.O, settings.mark_o))
    )
    chosen = settings.mark_x or settings.mark_o
    both = (Setting.MARK_X, Setting.MARK_O)
    field(lang._("Marks for X and O"), both, marks if chosen else default(marks))
    threads = (
        lang._("On: each game gets a thread of its own") if settings.threads else lang._("Off")
    )
    field(lang._("Games in threads"), Setting.THREADS, threads)
    size = settings.board(None)
    shown_size = size_label(size, lang) if settings.size else default(size_label(size, lang))
    field(lang._("Board size when none is picked"), Setting.SIZE, shown_size)
    if settings.seasons is SeasonLength.OFF:
        seasons = lang._("Off: the leaderboard is all time")
    else:
        seasons = default(lang._("Monthly: calendar months, UTC"))
    field(lang._("Leaderboard seasons"), Setting.SEASONS, seasons)
    if settings.announcements is None:
        announced = lang._("Nowhere: a season ends unannounced")
    else:
        announced = f"<#{settings.announcements}>"
    field(lang._("Where a season's top three are announced"), Setting.ANNOUNCEMENTS, announced)
    embed.set_footer(text=lang._("Change them with /ttt-settings; members don't see this."))
    content = lang._("Saved. The settings now:") if saved else None
    return Message(content=content, embed=embed)
