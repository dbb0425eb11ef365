"""``/ttt-settings``: a server's admins show, change and reset how the bot behaves there.

A command of its own, not part of ``/ttt``: Discord applies ``default_member_permissions`` to
top-level commands only, so this one is hidden from members who cannot manage the server (the
service checks again: a server can show a command to anyone). Each handler turns the options
into ids, checks through Discord that a channel or role is this server's own, and calls
:class:`~bot.server_settings.SettingsService`; every answer is private to the admin.
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

from bot import render
from bot.answers import Answer
from bot.cogs.ttt import SIZE_CHOICES, member
from bot.domain import Actor, UserError
from bot.i18n import ALL_LANGUAGES, Language, for_locale
from bot.marks import custom_emoji_id
from bot.seasons import SeasonLength
from bot.server_settings import (
    OUTSIDE,
    ServerSettings,
    Setting,
    SettingsService,
    parse_duration,
)

if TYPE_CHECKING:
    from bot.client import TTTBot

log = logging.getLogger(__name__)


class ListedChannel(app_commands.Transformer):
    """A channel a server's list may name: one that holds messages (and announcements), or a
    category (its channels). Threads follow their parent channel, so they are not offered.
    Nor are forums: discord.py offers them with media channels, a type Discord's published API
    document does not list; a forum's category can be listed instead."""

    @property
    def type(self) -> discord.AppCommandOptionType:
        return discord.AppCommandOptionType.channel

    @property
    def channel_types(self) -> list[discord.ChannelType]:
        return [
            discord.ChannelType.text,
            discord.ChannelType.news,
            discord.ChannelType.voice,
            discord.ChannelType.stage_voice,
            discord.ChannelType.category,
        ]

    async def transform(self, interaction: discord.Interaction[Any], value: Any) -> int:
        # The channel's id: whether it is this server's is asked of Discord (_own_channel).
        return int(value.id)


class AnnouncementChannel(ListedChannel):
    """A channel to announce in: one that holds messages (a category holds none)."""

    @property
    def channel_types(self) -> list[discord.ChannelType]:
        return [discord.ChannelType.text, discord.ChannelType.news]


SERVER_LANGUAGE = "server"
LANGUAGE_CHOICES = [
    app_commands.Choice(name=locale_str("The server's Discord language"), value=SERVER_LANGUAGE),
    *(app_commands.Choice(name=render.language_name(code), value=code) for code in ALL_LANGUAGES),
]
EVERYTHING = "everything"
# What /ttt-settings reset can put back, by name; "everything" is all of them.
RESETS: dict[str, tuple[Setting, ...]] = {
    "channels": (Setting.CHANNELS,),
    "players": (Setting.PLAYER_ROLES,),
    "moderators": (Setting.MODERATOR_ROLE,),
    "timeouts": (Setting.TURN_TIMEOUT, Setting.CHALLENGE_TIMEOUT),
    "language": (Setting.LANGUAGE,),
    "limits": (Setting.MAX_GAMES, Setting.COOLDOWN),
    "board-size": (Setting.SIZE,),
    "marks": (Setting.MARK_X, Setting.MARK_O),
    "threads": (Setting.THREADS,),
    "seasons": (Setting.SEASONS,),
    "announcements": (Setting.ANNOUNCEMENTS,),
    EVERYTHING: tuple(Setting),
}
RESET_CHOICES = [
    app_commands.Choice(name=locale_str("where games can be started"), value="channels"),
    app_commands.Choice(name=locale_str("who can play"), value="players"),
    app_commands.Choice(name=locale_str("who can end games"), value="moderators"),
    app_commands.Choice(name=locale_str("timeouts"), value="timeouts"),
    app_commands.Choice(name=locale_str("language"), value="language"),
    app_commands.Choice(name=locale_str("limits"), value="limits"),
    app_commands.Choice(name=locale_str("board size"), value="board-size"),
    app_commands.Choice(name=locale_str("marks"), value="marks"),
    app_commands.Choice(name=locale_str("games in threads"), value="threads"),
    app_commands.Choice(name=locale_str("leaderboard seasons"), value="seasons"),
    app_commands.Choice(name=locale_str("season announcements"), value="announcements"),
    app_commands.Choice(name=locale_str("everything"), value=EVERYTHING),
]
SEASON_CHOICES = [
    app_commands.Choice(name=locale_str("monthly (calendar months, UTC)"), value="monthly"),
    app_commands.Choice(name=locale_str("off: the leaderboard is all time"), value="off"),
]
DURATION_HELP = locale_str("Like 90s, 5m, 2h or 1d (10 seconds to 7 days)")


class SettingsCog(commands.Cog, name="Settings"):
    settings = app_commands.Group(
        name=locale_str("ttt-settings"),
        description=locale_str("Server admins: where and how tic-tac-toe is played here"),
        default_permissions=discord.Permissions(manage_guild=True),
        allowed_contexts=app_commands.AppCommandContext(guild=True),
        allowed_installs=app_commands.AppInstallationType(guild=True),
    )
    channels = app_commands.Group(
        name=locale_str("channels"),
        description=locale_str("Where games can be started"),
        parent=settings,
    )
    players = app_commands.Group(
        name=locale_str("players"), description=locale_str("Who can play"), parent=settings
    )

    def __init__(self, bot: TTTBot) -> None:
        self.bot = bot

    @property
    def service(self) -> SettingsService:
        return self.bot.service.server_settings

    @contextlib.asynccontextmanager
    async def _handling(
        self, interaction: discord.Interaction[Any]
    ) -> AsyncIterator[tuple[Answer, int, Actor]]:
        """A handler's answer, the server, and the member acting, with their permissions."""
        async with self.bot.handling(interaction) as answer:
            if interaction.guild_id is None:  # Discord offers the command in servers only
                raise UserError(OUTSIDE)
            yield answer, interaction.guild_id, member(interaction)

    async def _show(self, answer: Answer, settings: ServerSettings, *, saved: bool) -> None:
        config = self.bot.settings
        message = render.settings_message(
            settings,
            answer.private_language,
            turn_timeout=config.turn_timeout,
            challenge_timeout=config.challenge_timeout,
            saved=saved,
        )
        await answer.whisper(message)

    async def cog_app_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        await self.bot.refuse(interaction, error)

    # -- showing ---------------------------------------------------------------------------

    @settings.command(name=locale_str("show"), description=locale_str("This server's settings"))
    async def show(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            await self._show(answer, await self.service.for_admin(guild_id, admin), saved=False)

    # -- where and who -----------------------------------------------------------------------

    @channels.command(
        name=locale_str("add"),
        description=locale_str("Let games be started in a channel, or a category's channels"),
    )
    @app_commands.rename(channel=locale_str("channel"))
    @app_commands.describe(channel=locale_str("A channel or a category (threads follow theirs)"))
    async def channels_add(
        self,
        interaction: discord.Interaction[Any],
        channel: app_commands.Transform[int, ListedChannel],
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            await self._own_channel(guild_id, channel)
            settings = await self.service.add_channel(guild_id, admin, channel)
            await self._show(answer, settings, saved=True)

    @channels.command(
        name=locale_str("remove"), description=locale_str("Take a channel or category off the list")
    )
    @app_commands.rename(channel=locale_str("channel"))
    @app_commands.describe(channel=locale_str("A channel or category on the list"))
    async def channels_remove(
        self,
        interaction: discord.Interaction[Any],
        channel: app_commands.Transform[int, ListedChannel],
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.remove_channel(guild_id, admin, channel)
            await self._show(answer, settings, saved=True)

    @channels.command(
        name=locale_str("everywhere"),
        description=locale_str("Let games be started in every channel"),
    )
    async def channels_everywhere(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.reset(guild_id, admin, RESETS["channels"])
            await self._show(answer, settings, saved=True)

    @players.command(name=locale_str("add"), description=locale_str("Let members with a role play"))
    @app_commands.rename(role=locale_str("role"))
    @app_commands.describe(role=locale_str("Members with it can play"))
    async def players_add(self, interaction: discord.Interaction[Any], role: discord.Role) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            await self._own_role(guild_id, role.id)
            settings = await self.service.add_player_role(guild_id, admin, role.id)
            await self._show(answer, settings, saved=True)

    @players.command(
        name=locale_str("remove"), description=locale_str("Take a role off the list of players")
    )
    @app_commands.rename(role=locale_str("role"))
    @app_commands.describe(role=locale_str("A role on the list"))
    async def players_remove(
        self, interaction: discord.Interaction[Any], role: discord.Role
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.remove_player_role(guild_id, admin, role.id)
            await self._show(answer, settings, saved=True)

    @players.command(name=locale_str("everyone"), description=locale_str("Let everyone play"))
    async def players_everyone(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.reset(guild_id, admin, RESETS["players"])
            await self._show(answer, settings, saved=True)

    @settings.command(
        name=locale_str("moderators"),
        description=locale_str("A role that can end games, besides those who manage messages"),
    )
    @app_commands.rename(role=locale_str("role"))
    @app_commands.describe(role=locale_str("Members with it can use /ttt end"))
    async def moderators(self, interaction: discord.Interaction[Any], role: discord.Role) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            await self._own_role(guild_id, role.id)
            settings = await self.service.set_moderator_role(guild_id, admin, role.id)
            await self._show(answer, settings, saved=True)

    # -- how -----------------------------------------------------------------------------------

    @settings.command(
        name=locale_str("timeouts"), description=locale_str("Time for a move, and for a challenge")
    )
    @app_commands.rename(turn=locale_str("turn"), challenge=locale_str("challenge"))
    @app_commands.describe(turn=DURATION_HELP, challenge=DURATION_HELP)
    async def timeouts(
        self,
        interaction: discord.Interaction[Any],
        turn: app_commands.Range[str, 1, 20] | None = None,
        challenge: app_commands.Range[str, 1, 20] | None = None,
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.set_timeouts(guild_id, admin, turn, challenge)
            await self._show(answer, settings, saved=True)

    @timeouts.autocomplete("turn")
    @timeouts.autocomplete("challenge")
    async def timeout_choices(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return duration_choices(current, TIMEOUT_SUGGESTIONS, for_locale(interaction.locale))

    @settings.command(
        name=locale_str("language"),
        description=locale_str("The language of boards and challenges in this server"),
    )
    @app_commands.rename(language=locale_str("language"))
    @app_commands.describe(language=locale_str("Each member still reads their own replies"))
    @app_commands.choices(language=LANGUAGE_CHOICES)
    async def language(
        self, interaction: discord.Interaction[Any], language: app_commands.Choice[str]
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            if language.value == SERVER_LANGUAGE:
                settings = await self.service.reset(guild_id, admin, RESETS["language"])
            else:
                settings = await self.service.set_language(guild_id, admin, language.value)
            await self._show(answer, settings, saved=True)

    @settings.command(
        name=locale_str("limits"),
        description=locale_str("Live games per member, and a wait between challenges"),
    )
    @app_commands.rename(games=locale_str("games"), cooldown=locale_str("cooldown"))
    @app_commands.describe(
        games=locale_str("Live games a member can be in at once"),
        cooldown=locale_str("Wait between one member's challenges, like 30s or 5m (0: none)"),
    )
    async def limits(
        self,
        interaction: discord.Interaction[Any],
        games: app_commands.Range[int, 1, 100] | None = None,
        cooldown: app_commands.Range[str, 1, 20] | None = None,
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.set_limits(guild_id, admin, games, cooldown)
            await self._show(answer, settings, saved=True)

    @limits.autocomplete("cooldown")
    async def cooldown_choices(
        self, interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return duration_choices(current, COOLDOWN_SUGGESTIONS, for_locale(interaction.locale))

    @settings.command(
        name=locale_str("marks"), description=locale_str("The emoji for X and for O on boards")
    )
    @app_commands.rename(x=locale_str("x"), o=locale_str("o"))
    @app_commands.describe(
        x=locale_str("One emoji, or one of this server's own"),
        o=locale_str("One emoji, or one of this server's own"),
    )
    async def marks(
        self,
        interaction: discord.Interaction[Any],
        x: app_commands.Range[str, 1, 100] | None = None,
        o: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            for text in (x, o):
                emoji_id = _custom_emoji_id(text)
                if emoji_id is not None:
                    await self._own_emoji(guild_id, emoji_id)
            settings = await self.service.set_marks(guild_id, admin, x, o)
            await self._show(answer, settings, saved=True)

    @settings.command(
        name=locale_str("threads"),
        description=locale_str("Each game in a thread of its own, so a channel holds many"),
    )
    @app_commands.rename(enabled=locale_str("enabled"))
    @app_commands.describe(enabled=locale_str("On, or off: one game at a time in each channel"))
    async def threads(self, interaction: discord.Interaction[Any], enabled: bool) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.set_threads(guild_id, admin, enabled)
            await self._show(answer, settings, saved=True)

    @settings.command(
        name=locale_str("seasons"),
        description=locale_str("Whether the leaderboard starts afresh each month"),
    )
    @app_commands.rename(length=locale_str("length"))
    @app_commands.describe(length=locale_str("Monthly, or off"))
    @app_commands.choices(length=SEASON_CHOICES)
    async def seasons(
        self, interaction: discord.Interaction[Any], length: app_commands.Choice[str]
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            chosen = SeasonLength(length.value)
            settings = await self.service.set_seasons(guild_id, admin, chosen)
            await self._show(answer, settings, saved=True)

    @settings.command(
        name=locale_str("announcements"),
        description=locale_str("Where each season's top three are announced when it ends"),
    )
    @app_commands.rename(channel=locale_str("channel"))
    @app_commands.describe(channel=locale_str("A channel the bot can post in"))
    async def announcements(
        self,
        interaction: discord.Interaction[Any],
        channel: app_commands.Transform[int, AnnouncementChannel],
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            await self._own_channel(guild_id, channel)
            settings = await self.service.set_announcements(guild_id, admin, channel)
            await self._show(answer, settings, saved=True)

    @settings.command(
        name=locale_str("board-size"),
        description=locale_str("The board games get when no size is picked"),
    )
    @app_commands.rename(size=locale_str("size"))
    @app_commands.describe(size=locale_str("The default board"))
    @app_commands.choices(size=SIZE_CHOICES)
    async def board_size(
        self, interaction: discord.Interaction[Any], size: app_commands.Choice[int]
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.set_size(guild_id, admin, size.value)
            await self._show(answer, settings, saved=True)

    @settings.command(name=locale_str("reset"), description=locale_str("Put a setting back"))
    @app_commands.rename(setting=locale_str("setting"))
    @app_commands.describe(setting=locale_str("Which one, or everything"))
    @app_commands.choices(setting=RESET_CHOICES)
    async def reset(
        self, interaction: discord.Interaction[Any], setting: app_commands.Choice[str]
    ) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            settings = await self.service.reset(guild_id, admin, RESETS[setting.value])
            await self._show(answer, settings, saved=True)

    @settings.command(
        name=locale_str("erase-data"),
        description=locale_str("Delete this server's games, stats and settings, after a question"),
    )
    async def erase_data(self, interaction: discord.Interaction[Any]) -> None:
        async with self._handling(interaction) as (answer, guild_id, admin):
            if not admin.manages_server:
                raise UserError("Only members who can manage this server can delete its data.")
            asked_at = int(self.bot.clock.now())
            question = render.erase_server_confirmation(guild_id, asked_at, answer.private_language)
            await answer.whisper(question)

    # -- checks through Discord ----------------------------------------------------------------

    async def _own_channel(self, guild_id: int, channel_id: int) -> None:
        """Refuse a channel that is not this server's (only a hand-made option names one)."""
        try:
            channel = await self.bot.fetch_channel(channel_id)
        except (discord.NotFound, discord.Forbidden):
            channel = None
        if not isinstance(channel, discord.abc.GuildChannel) or channel.guild.id != guild_id:
            log.info("refused channel %s for the settings of guild %s", channel_id, guild_id)
            raise UserError("That channel isn't one of this server's: pick one from the list.")
        if isinstance(channel, discord.Thread):
            raise UserError("Threads follow their channel: add the channel instead.")

    async def _own_emoji(self, guild_id: int, emoji_id: int) -> None:
        """Refuse a custom emoji that is not this server's: the bot could not show it."""
        try:
            await self.bot.http.get_custom_emoji(guild_id, emoji_id)
        except discord.NotFound:
            log.info("refused emoji %s for the marks of guild %s", emoji_id, guild_id)
            raise UserError(
                "That emoji isn't one of this server's: use one of its own, or a standard one."
            ) from None

    async def _own_role(self, guild_id: int, role_id: int) -> None:
        """Refuse a role that is not this server's (only a hand-made option names one)."""
        roles = await self.bot.http.get_roles(guild_id)
        if not any(int(role["id"]) == role_id for role in roles):
            log.info("refused role %s for the settings of guild %s", role_id, guild_id)
            raise UserError("That role isn't one of this server's: pick one from the list.")


# What the duration options offer before anything is typed, as people write them.
TIMEOUT_SUGGESTIONS = ("30s", "1m", "2m", "5m", "10m", "30m", "1h", "12h", "1d", "7d")
COOLDOWN_SUGGESTIONS = ("0", "10s", "30s", "1m", "5m", "15m", "1h")


def duration_choices(
    current: str, suggestions: tuple[str, ...], lang: Language
) -> list[app_commands.Choice[str]]:
    """Durations for an option being typed: what was typed so far, if it reads as one, then
    the suggestions it begins; each named in words in the member's language ("5m: 5
    minutes"), so that "90" is seen to mean seconds before it is sent."""
    typed = current.strip()
    offered = [typed] if typed else []
    offered += [text for text in suggestions if text.startswith(typed) and text != typed]
    choices = []
    for text in offered:
        try:
            seconds = parse_duration(text)
        except ValueError:
            continue
        words = render.duration(seconds, lang) if seconds else lang._("None")
        choices.append(app_commands.Choice(name=f"{text}: {words}"[:100], value=text))
    return choices[:25]


def _custom_emoji_id(text: str | None) -> int | None:
    """The id of the custom emoji ``text`` names, if it names one (anything else is left to
    the service to refuse)."""
    if text is None:
        return None
    try:
        return custom_emoji_id(text)
    except ValueError:
        return None
