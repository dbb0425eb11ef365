"""Stats and the leaderboard: a member's records and rating on one board size, and a
server's ratings."""

from __future__ import annotations

import discord

from bot import results
from bot.domain import size_name
from bot.i18n import Language
from bot.ladder import SeasonEnd
from bot.render.parts import LIVE_COLOUR, Message, escape, timestamp
from bot.seasons import Season
from bot.storage.base import VS_MEMBER, PlayerStats, Rating
from game import DEFAULT_SIZE


def record_text(lang: Language, wins: int, losses: int, draws: int) -> str:
    """A record in one line: wins, losses and draws."""
    return lang._("{wins} W · {losses} L · {draws} D", wins=wins, losses=losses, draws=draws)


def rating_text(lang: Language, rating: float | None, deviation: float | None, games: int) -> str:
    """A rating with how sure it is (``1311 ± 339``), marked provisional when it is; or
    "unrated"."""
    if rating is None or deviation is None:
        return lang._("unrated")
    shown = lang._(
        "rating {rating} ± {deviation}", rating=f"{rating:.0f}", deviation=f"{deviation:.0f}"
    )
    if results.is_provisional(games, deviation):
        return lang._("{rating}, provisional", rating=shown)
    return shown


def stats_message(
    stats: PlayerStats,
    name: str,
    difficulties: tuple[str, ...],
    lang: Language,
    *,
    in_server: bool = True,
) -> Message:
    """A member's stats in this server, or (``in_server=False``) in all their DMs."""
    embed = discord.Embed(
        title=lang._(
            "Tic-tac-toe stats: {name} ({size})", name=escape(name), size=size_name(stats.size)
        ),
        colour=LIVE_COLOUR,
    )
    members = stats.against(VS_MEMBER)
    rating = rating_text(lang, stats.rating, stats.deviation, stats.rated_games)
    embed.add_field(
        name=lang._("Against members"),
        value=f"{record_text(lang, members.wins, members.losses, members.draws)} ({rating})",
        inline=False,
    )
    for difficulty in difficulties:
        record = stats.against(difficulty)
        embed.add_field(
            name=lang._("Against the bot ({difficulty})", difficulty=difficulty),
            value=record_text(lang, record.wins, record.losses, record.draws),
            inline=True,
        )
    if not any(record.games for record in stats.records.values()):
        embed.description = (
            lang._(
                "No finished games yet in this server on {size} boards.",
                size=size_name(stats.size),
            )
            if in_server
            else lang._(
                "No finished games yet outside servers on {size} boards.",
                size=size_name(stats.size),
            )
        )
    embed.set_footer(text=lang._("Games in which a hint was used (/ttt hint) count in no stats."))
    return Message(embed=embed)


def leaderboard_message(
    rows: list[Rating],
    lang: Language,
    size: int = DEFAULT_SIZE,
    *,
    season: Season | None = None,
    current: bool = False,
) -> Message:
    """A leaderboard: ``season``'s (``current``: still going), or (None) all time's."""
    if season is None:
        title = lang._("Tic-tac-toe leaderboard ({size}), all time", size=size_name(size))
    else:
        title = lang._(
            "Tic-tac-toe leaderboard ({size}), season {season}",
            size=size_name(size),
            season=season.name,
        )
    embed = discord.Embed(title=title, colour=LIVE_COLOUR)
    footer = [
        lang._(
            "Ranked by rating less three times its ± (how sure it is), from games between "
            "members on {size} boards; games against the bot don't count. * provisional: "
            "fewer than {games} rated games, or ± above {deviation}.",
            size=size_name(size),
            games=results.PROVISIONAL_GAMES,
            deviation=f"{results.PROVISIONAL_DEVIATION:.0f}",
        )
    ]
    if season is not None:
        footer.append(
            lang._(
                "A season's ratings come from its own games, every member starting afresh; "
                "season: all-time shows all games."
            )
        )
    lines = []
    if season is not None and current:
        lines.append(lang._("This season ends {when}.", when=timestamp(season.end)))
    if not rows:
        if season is None or current:
            lines.append(
                lang._(
                    "Nobody is rated yet on {size} boards: ratings come from games between "
                    "members (games against the bot don't count).",
                    size=size_name(size),
                )
            )
        else:
            lines.append(
                lang._(
                    "Nobody played a rated game on {size} boards in season {season}.",
                    size=size_name(size),
                    season=season.name,
                )
            )
        embed.description = "\n".join(lines)
        return Message(embed=embed)
    medals = ["🥇", "🥈", "🥉"]
    for rank, row in enumerate(rows, start=1):
        badge = medals[rank - 1] if rank <= len(medals) else f"{rank}."
        lines.append(f"{badge} {_rated(lang, row)}")
    embed.description = "\n".join(lines)
    embed.set_footer(text=" ".join(footer))
    return Message(embed=embed)


def season_end_message(end: SeasonEnd, lang: Language) -> Message:
    """A season's end, for its server's announcements channel: its top three on each board
    size that had rated games in it."""
    embed = discord.Embed(
        title=lang._("Tic-tac-toe season {season} is over", season=end.season.name),
        colour=LIVE_COLOUR,
    )
    medals = ["🥇", "🥈", "🥉"]
    for size, podium in sorted(end.podiums.items()):
        embed.add_field(
            name=size_name(size),
            value="\n".join(
                f"{medal} {_rated(lang, row)}" for medal, row in zip(medals, podium, strict=False)
            ),
            inline=False,
        )
    embed.set_footer(
        text=lang._(
            "A new season has begun: everyone starts afresh on /ttt leaderboard, and season: "
            "{season} shows this one's table.",
            season=end.season.name,
        )
    )
    return Message(embed=embed)


def _rated(lang: Language, row: Rating) -> str:
    """A member's line on a table: their rating, marked if provisional, and their record."""
    record = record_text(lang, row.wins, row.losses, row.draws)
    mark = "*" if results.is_provisional(row.games, row.deviation) else ""
    return f"<@{row.user_id}>: **{row.rating:.0f}** ± {row.deviation:.0f}{mark} ({record})"
