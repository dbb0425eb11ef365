"""Members' data: what the bot keeps about a member (``/ttt my-data``), forgetting it
(``/ttt forget-me``) and erasing a server's data, each question with its answers and what it
did, and what a game's or challenge's message shows after."""

from __future__ import annotations

import discord

from bot import i18n
from bot.components import ERASE_ID, FORGET_ID
from bot.domain import OUTSIDE_SERVERS, size_name
from bot.i18n import N_, Language
from bot.privacy import Forgetting
from bot.render.parts import (
    EMBED_DESCRIPTION_LIMIT,
    FORGOTTEN_MEMBER,
    LIVE_COLOUR,
    Message,
    button,
    button_row,
    escape,
    fit_items,
    fit_lines,
    plain_text,
    text_display,
    uses_layout,
)
from bot.render.stats import rating_text, record_text
from bot.storage.base import VS_MEMBER, ChallengeRecord, GameRecord, GuildErased, MemberData

# The most of a member's data the names stored with their games take (some 15 of the longest):
# a member who renamed themselves often sees the first of them and how many more there are.
_NAMES_ROOM = 1000


def _place(guild_id: int, here: int | None, lang: Language) -> str:
    """Where some data was played: a server by its id (the bot knows no server's name), or
    outside servers."""
    if guild_id == OUTSIDE_SERVERS:
        return lang._("Outside servers (DMs and group DMs)")
    if guild_id == here:
        return lang._("This server ({id})", id=guild_id)
    return lang._("Server {id}", id=guild_id)


def member_data_message(
    data: MemberData, here: int | None, difficulties: tuple[str, ...], lang: Language
) -> Message:
    """``/ttt my-data``: everything the bot keeps about the member, for them alone: per server
    (``here``: the one asked from) and board size their records, ratings and stored games,
    then their challenges and the names stored with them."""
    title = lang._("What I keep about you")
    if data.is_empty:
        return Message(
            embed=discord.Embed(
                title=title,
                description=lang._("Nothing: I keep no data about you."),
                colour=LIVE_COLOUR,
            )
        )
    stats = {(kept.guild_id, kept.size): kept for kept in data.stats}
    games = {(kept.guild_id, kept.size): kept.games for kept in data.games}
    lines: list[str] = []
    for guild_id in data.guild_ids:
        lines.append(f"**{_place(guild_id, here, lang)}**")
        for size in sorted(
            {size for guild, size in stats.keys() | games.keys() if guild == guild_id}
        ):
            stored = games.get((guild_id, size), 0)
            lines.append(
                f"- {size_name(size)}: "
                + lang.n_("{count} game stored", "{count} games stored", stored)
            )
            kept = stats.get((guild_id, size))
            if kept is None:
                continue
            members = kept.against(VS_MEMBER)
            if members.games or kept.rating is not None:
                rating = rating_text(lang, kept.rating, kept.deviation, kept.rated_games)
                record = record_text(lang, members.wins, members.losses, members.draws)
                lines.append(f"  - {lang._('Against members')}: {record} ({rating})")
            for difficulty in difficulties:
                against = kept.against(difficulty)
                if against.games:
                    record = record_text(lang, against.wins, against.losses, against.draws)
                    name = lang._("Against the bot ({difficulty})", difficulty=difficulty)
                    lines.append(f"  - {name}: {record}")
    lines.append("")
    lines.append(
        lang.n_("{count} challenge stored.", "{count} challenges stored.", data.challenges)
    )
    if data.tournaments:
        lines.append(
            lang.n_("{count} tournament stored.", "{count} tournaments stored.", data.tournaments)
        )
    if data.settings:
        lines.append(
            lang.n_(
                "{count} server setting you changed last.",
                "{count} server settings you changed last.",
                data.settings,
            )
        )
    if data.names:  # none with settings alone
        names = fit_items(
            [f"**{escape(name)}**" for name in data.names],
            _NAMES_ROOM,
            lambda left: lang.n_("and {count} more name", "and {count} more names", left),
            lang,
        )
        lines.append(
            lang._("Names stored with your games, challenges and tournaments: {names}", names=names)
        )
    if data.puzzle_days or data.drills:
        lines.append(
            lang.n_(
                "Daily puzzles answered on {count} day;",
                "Daily puzzles answered on {count} days;",
                data.puzzle_days,
            )
            + " "
            + lang.n_(
                "{count} drill from your games.", "{count} drills from your games.", data.drills
            )
        )
    description = fit_lines(
        lines,
        EMBED_DESCRIPTION_LIMIT,
        lambda left: lang.n_("… and {count} more line.", "… and {count} more lines.", left),
    )
    embed = discord.Embed(title=title, description=description, colour=LIVE_COLOUR)
    embed.set_footer(
        text=lang._(
            "Only you see this. /ttt forget-me deletes your stats and ratings and takes your "
            "name and id out of every game."
        )
    )
    return Message(embed=embed)


def _question(
    title: str, text: str, custom_ids: tuple[str, str], labels: tuple[str, str], lang: Language
) -> Message:
    """A question with its two answers: a red button that does it, a grey one that cancels."""
    (confirm, cancel), (yes, no) = custom_ids, labels
    buttons = [
        button(confirm, lang.gettext(yes), None, discord.ButtonStyle.danger),
        button(cancel, lang.gettext(no), None, discord.ButtonStyle.secondary),
    ]
    embed = discord.Embed(title=title, description=text, colour=discord.Colour.red())
    return Message(embed=embed, components=[button_row(buttons)])


def forget_confirmation(data: MemberData, asked_at: int, lang: Language) -> Message:
    """``/ttt forget-me``'s question, for the member alone: what goes, that it cannot be undone,
    and a button for each answer, which only they can use, for a while."""
    games = sum(kept.games for kept in data.games)
    text = "\n\n".join(
        [
            lang._(
                "In every server and outside servers, your stats and ratings are deleted, and "
                "your name and id are replaced by *{placeholder}* in {games} and {challenges}; "
                "the other players keep their results.",
                placeholder=lang._(FORGOTTEN_MEMBER),
                games=lang.n_("{count} game", "{count} games", games),
                challenges=lang.n_("{count} challenge", "{count} challenges", data.challenges),
            ),
            lang._(
                "Your live games end first, counting for nobody, and your open challenges close."
            ),
            *_tournaments_forgotten(data.tournaments, lang),
            *_settings_forgotten(data.settings, lang),
            lang._("Your daily puzzle results and your drills are deleted too."),
            "**" + lang._("This cannot be undone.") + "**",
        ]
    )
    ids = tuple(
        FORGET_ID.build(member=data.user_id, asked=asked_at, action=action)
        for action in ("confirm", "cancel")
    )
    title = lang._("Delete your data?")
    return _question(title, text, (ids[0], ids[1]), (N_("Delete my data"), N_("Cancel")), lang)


def _tournaments_forgotten(count: int, lang: Language) -> list[str]:
    if not count:
        return []
    return [
        lang.n_(
            "In {count} tournament, *{placeholder}* takes your place; you leave it if it is "
            "still going.",
            "In {count} tournaments, *{placeholder}* takes your place; you leave those still "
            "going.",
            count,
            placeholder=lang._(FORGOTTEN_MEMBER),
        )
    ]


def _settings_forgotten(count: int, lang: Language) -> list[str]:
    if not count:
        return []
    return [
        lang.n_(
            "In {count} server setting you changed last, *{placeholder}* is shown as who "
            "changed it.",
            "In {count} server settings you changed last, *{placeholder}* is shown as who "
            "changed them.",
            count,
            placeholder=lang._(FORGOTTEN_MEMBER),
        )
    ]


def forgotten_message(forgetting: Forgetting, tournaments: int, lang: Language) -> Message:
    """What forgetting did, in place of the question; ``tournaments``: how many tournaments
    the placeholder took the member's place in."""
    forgotten = forgetting.forgotten
    if not (
        tournaments
        or forgotten.games
        or forgotten.challenges
        or forgotten.stats_rows
        or forgotten.practice_rows
        or forgotten.settings
    ):
        # A second click, or a member with nothing left: nothing changed.
        return plain_text(lang._("There was nothing left to delete: your data is already gone."))
    lines = [
        "🗑️ "
        + lang._(
            "Done: your stats and ratings are deleted, and {games} and {challenges} now show "
            "*{placeholder}* instead of you.",
            games=lang.n_("{count} game", "{count} games", forgotten.games),
            challenges=lang.n_("{count} challenge", "{count} challenges", forgotten.challenges),
            placeholder=lang._(FORGOTTEN_MEMBER),
        )
    ]
    if forgotten.practice_rows:
        lines.append(lang._("Your daily puzzle results and your drills are deleted."))
    if tournaments:
        lines.append(
            lang.n_(
                "*{placeholder}* now takes your place in {count} tournament.",
                "*{placeholder}* now takes your place in {count} tournaments.",
                tournaments,
                placeholder=lang._(FORGOTTEN_MEMBER),
            )
        )
    if forgotten.settings:
        lines.append(
            lang.n_(
                "*{placeholder}* is now shown as who last changed {count} server setting.",
                "*{placeholder}* is now shown as who last changed {count} server settings.",
                forgotten.settings,
                placeholder=lang._(FORGOTTEN_MEMBER),
            )
        )
    if forgetting.games:
        lines.append(
            lang.n_(
                "{count} live game ended, counting for nobody.",
                "{count} live games ended, counting for nobody.",
                len(forgetting.games),
            )
        )
    return plain_text("\n".join(lines))


def cancelled_message(lang: Language) -> Message:
    """A question answered with Cancel."""
    return plain_text(lang._("Cancelled: nothing was deleted."))


def forgotten_note(game: GameRecord) -> str:
    """The note on the board of a game that ended because a player was forgotten."""
    return (
        "*"
        + i18n.language(game.language)._("A player deleted their data, so this game ended.")
        + "*"
    )


def erase_server_confirmation(guild_id: int, asked_at: int, lang: Language) -> Message:
    """The question an admin answers before a server's data goes (posted, ephemeral, by the
    command that asks it): what goes, that it cannot be undone, and a button for each answer,
    which works for members who can manage the server, for a while."""
    text = "\n\n".join(
        [
            lang._(
                "Every game, challenge, tournament, record and rating of this server goes, for "
                "every member, and its settings too; live games, tournaments still going and open "
                "challenges end."
            ),
            "**" + lang._("This cannot be undone.") + "**",
        ]
    )
    ids = tuple(
        ERASE_ID.build(guild=guild_id, asked=asked_at, action=action)
        for action in ("confirm", "cancel")
    )
    title = lang._("Delete this server's tic-tac-toe data?")
    labels = (N_("Delete this server's data"), N_("Cancel"))
    return _question(title, text, (ids[0], ids[1]), labels, lang)


def server_erased_message(erased: GuildErased, lang: Language) -> Message:
    """What erasing a server's data did, in place of the question."""
    if erased.is_empty:
        return plain_text(lang._("There was no data of this server to delete."))
    drills = (
        " "
        + lang.n_(
            "{count} drill made from its games went with them.",
            "{count} drills made from its games went with them.",
            erased.drills,
        )
        if erased.drills
        else ""
    )
    if erased.tournaments:
        drills += " " + lang.n_(
            "{count} tournament was deleted too.",
            "{count} tournaments were deleted too.",
            erased.tournaments,
        )
    return plain_text(
        "🗑️ "
        + lang._(
            "Done: deleted {games}, {challenges} and {rows} of this server.",
            games=lang.n_("{count} game", "{count} games", erased.games),
            challenges=lang.n_("{count} challenge", "{count} challenges", erased.challenges),
            rows=lang.n_(
                "{count} row of records, ratings and settings",
                "{count} rows of records, ratings and settings",
                erased.stats_rows,
            ),
        )
        + drills
    )


def erased_tournament_message(lang: Language) -> Message:
    """What a tournament's announcement shows once its server's data was deleted: no Join,
    Leave or standings, a sentence, still a components-v2 message as it was posted."""
    text = "🗑️ " + lang._("This tournament was deleted with the server's data.")
    return Message(components=[text_display(text)], layout=True)


def erased_message(shown: GameRecord | ChallengeRecord) -> Message:
    """What the message of a live game or open challenge shows once its server's data was
    deleted: no buttons, a sentence, in its form (see :mod:`bot.render.parts`)."""
    lang = i18n.language(shown.language)
    if isinstance(shown, GameRecord):
        text = "🗑️ " + lang._("This game was deleted with the server's data.")
    else:
        text = "🗑️ " + lang._("This challenge was deleted with the server's data.")
    if uses_layout(shown.size):
        return Message(components=[text_display(text)], layout=True)
    return Message(content=text)
