"""Tournaments as shown: the announcement (Join and Leave, the players), which becomes the
standings once it starts and stays current; the standings privately; a round's ping in each
game's thread; the final standings and the podium.

Every tournament message is components v2: its text and buttons in one container, within
Discord's 4,000 characters and 40 components whatever the count of players: the public
standings show the leading players (:data:`SHOWN_PUBLICLY`) and say how many more there are.
"""

from __future__ import annotations

from collections.abc import Sequence

import babel.numbers
import discord

from bot.components import TOURNAMENT_ID
from bot.i18n import N_, Language
from bot.render.parts import (
    CONTAINER,
    FORGOTTEN_MEMBER,
    LAYOUT_FOOTER,
    LIVE_COLOUR,
    OVER_COLOUR,
    WIN_COLOUR,
    Message,
    button,
    button_row,
    escape,
    fit_items,
    fit_lines,
    member,
    size_label,
    text_display,
    timestamp,
)
from bot.render.settings import duration
from bot.storage.base import TournamentStatus, is_forgotten
from bot.tournaments.state import Entry, Table, TournamentState
from tournament import Format, RoundResult, Standing

# The longest a message's text may be (Discord's 4,000 characters, with room for the frame).
TEXT_LIMIT = 3800
# Players the public standings list by name; the rest are counted.
SHOWN_PUBLICLY = 24
# Players a private standings message lists around the reader.
SHOWN_PRIVATELY = 30

FORMAT_NAMES = {Format.SWISS: N_("Swiss"), Format.ROUND_ROBIN: N_("Round robin")}
STATUS_LINES = {
    TournamentStatus.RUNNING: N_("Round {round} of {rounds} is being played."),
    TournamentStatus.PAUSED: N_("Paused by the organiser after round {round} of {rounds}."),
    TournamentStatus.CANCELLED: N_("Cancelled."),
}
ACTIONS_SHOWN = {
    "created": N_("created by {who} {when}"),
    "started": N_("started by {who} {when}"),
    "paused": N_("paused by {who} {when}"),
    "resumed": N_("resumed by {who} {when}"),
    "cancelled": N_("cancelled by {who} {when}"),
    "removed": N_("{member} removed by {who} {when}"),
    "awarded": N_("round {round} table {board} awarded by {who} {when}"),
    "unresolved": N_(
        "round {round} table {board} ended {when} with no result: {who} (or a moderator)"
        " awards one with `/ttt tournament award`"
    ),
}
MEDALS = ("🥇", "🥈", "🥉")
# Beside a player who left or was removed, in the standings.
WITHDREW = N_("withdrew")


def _name(entry: Entry | None, user_id: int, lang: Language) -> str:
    return member(user_id, entry.name if entry is not None else None, lang)


def _mention(user_id: int, lang: Language) -> str:
    """Who acted, as a mention (which pings nobody: the message allows none), or a
    forgotten member's placeholder."""
    if is_forgotten(user_id):
        return f"*{lang._(FORGOTTEN_MEMBER)}*"
    return f"<@{user_id}>"


def _points(points: float) -> str:
    whole = int(points)
    return (
        f"{whole}½" if points - whole == 0.5 and whole else ("½" if points == 0.5 else str(whole))
    )


def _decimal(value: float, lang: Language) -> str:
    """A tie-break's value (``6.25``; a whole one without decimals) as the language writes
    it: ``6,25`` in German, French, Spanish and Portuguese."""
    return babel.numbers.format_decimal(value, locale=lang.code)


def _round_mark(result: RoundResult) -> str:
    """A round's result in one character: 1, ½ or 0 a game, B a bye, - no game (withdrawn),
    · not finished."""
    if result.opponent is None:
        return "B" if result.points else "-"
    if result.points is None:
        return "·"
    return {1.0: "1", 0.5: "½", 0.0: "0"}[result.points]


def standings_lines(
    state: TournamentState, standings: Sequence[Standing], lang: Language
) -> list[str]:
    """One line a player: rank, name, points, tie-breaks, and each round's result."""
    lines = []
    for row in standings:
        entry = state.entry(row.player)
        rounds = "".join(_round_mark(result) for result in row.results)
        withdrawn = f" ({lang.gettext(WITHDREW)})" if row.withdrawn else ""
        lines.append(
            lang._(
                "{rank}. {name}{withdrawn}: {points} · Buchholz {buchholz} · SB {sb} · {rounds}",
                rank=row.rank,
                name=_name(entry, row.player, lang),
                withdrawn=withdrawn,
                points=_points(row.points),
                buchholz=_decimal(row.buchholz_cut1, lang),
                sb=_decimal(row.sonneborn_berger, lang),
                rounds=f"`{rounds}`" if rounds else "",
            )
        )
    return lines


def _header(state: TournamentState, lang: Language) -> str:
    rules = state.rules
    parts = [
        lang.gettext(FORMAT_NAMES[rules.format]),
        size_label(rules.size, lang),
        lang._("{time} a move", time=duration(rules.turn_timeout, lang)),
    ]
    if state.rounds:
        parts.append(lang.n_("{count} round", "{count} rounds", state.rounds))
    return " · ".join(parts)


def _status_line(status: TournamentStatus, state: TournamentState, lang: Language) -> str:
    if status is TournamentStatus.FINISHED:
        return lang.n_(
            "Finished after {count} round.", "Finished after {count} rounds.", state.rounds
        )
    return lang._(STATUS_LINES[status], round=state.current_round, rounds=state.rounds)


def _log_lines(state: TournamentState, lang: Language) -> list[str]:
    lines = []
    for action in state.log[-6:]:
        template = ACTIONS_SHOWN.get(action.action)
        if template is None:
            continue
        detail = action.detail.split(":")
        values = {"who": _mention(action.actor_id, lang), "when": timestamp(action.at)}
        if action.action == "removed" and action.detail.lstrip("-").isdigit():
            values["member"] = _mention(int(action.detail), lang)
        if (action.action, len(detail)) in (("awarded", 3), ("unresolved", 2)):
            values["round"], values["board"] = detail[0], detail[1]
        try:
            lines.append("-# " + lang._(template, **values))
        except KeyError:
            continue
    return lines


def tournament_message(
    tournament_id: int,
    status: TournamentStatus,
    state: TournamentState,
    standings: Sequence[Standing],
    lang: Language,
) -> Message:
    """The tournament's one public message: while registering, who entered and Join/Leave;
    then the standings, kept current."""
    lines = [f"### 🏆 {escape(state.rules.name)}", _header(state, lang)]
    rows: list[dict[str, object]] = []
    if status is TournamentStatus.REGISTERING:
        if state.starts_at is not None:
            lines.append(lang._("Starts {when}.", when=timestamp(state.starts_at)))
        else:
            lines.append(lang._("Starts when its organiser starts it."))
        lines.append(
            lang._(
                "Players ({count} of {most}):",
                count=len(state.entries),
                most=state.rules.most_players,
            )
        )
        names = [_name(entry, entry.user_id, lang) for entry in state.entries]
        names_at = len(lines)
        lines.append(lang._("nobody yet"))
        rows.append(
            button_row(
                [
                    button(
                        TOURNAMENT_ID.build(tournament=tournament_id, action="join"),
                        lang._("Join"),
                        None,
                        discord.ButtonStyle.success,
                    ),
                    button(
                        TOURNAMENT_ID.build(tournament=tournament_id, action="leave"),
                        lang._("Leave"),
                        None,
                        discord.ButtonStyle.secondary,
                    ),
                ]
            )
        )
    else:
        lines.append(_status_line(status, state, lang))
        standings_at = len(lines)
        lines.append("")  # the standings, fitted below
    lines.extend(_log_lines(state, lang))
    # What grows with the players (their names, or the standings' rows) takes the room the
    # other lines leave, so that those always show.
    room = TEXT_LIMIT - sum(len(line) + 1 for line in lines)
    if status is TournamentStatus.REGISTERING:
        if names:
            lines[names_at] = fit_items(
                names,
                room + len(lines[names_at]),
                lambda left: lang.n_("and {count} more", "and {count} more", left),
                lang,
            )
    else:
        lines[standings_at] = _public_standings(state, standings, room, lang)
        if not lines[standings_at]:
            del lines[standings_at]
    text = _fitted(lines)
    colour = {
        TournamentStatus.FINISHED: WIN_COLOUR,
        TournamentStatus.CANCELLED: OVER_COLOUR,
    }.get(status, LIVE_COLOUR)
    footer = LAYOUT_FOOTER.format(lang._("Tournament #{number}", number=tournament_id))
    container = {
        "type": CONTAINER,
        "accent_color": colour.value,
        "components": [text_display(text), *rows, text_display(footer)],
    }
    return Message(components=[container], layout=True)


def _public_standings(
    state: TournamentState, standings: Sequence[Standing], room: int, lang: Language
) -> str:
    """The leaders' rows, at most :data:`SHOWN_PUBLICLY` and as many as fit in ``room``, then
    how many more there are and where each player finds their own."""
    shown = standings_lines(state, standings[:SHOWN_PUBLICLY], lang)
    hidden = len(standings) - len(shown)

    def more(left: int) -> str:
        return lang._(
            "…and {count} more: `/ttt tournament standings` shows yours.", count=left + hidden
        )

    def block(kept: int) -> str:
        left = len(shown) - kept
        return "\n".join(shown[:kept] + ([more(left)] if left + hidden else []))

    kept = len(shown)
    while kept and len(block(kept)) > room:
        kept -= 1
    return block(kept)


def _fitted(lines: list[str]) -> str:
    """The lines joined, cut to :data:`TEXT_LIMIT` at a line's end."""
    return fit_lines(lines, TEXT_LIMIT, lambda _: "…")


def standings_message(
    state: TournamentState, standings: Sequence[Standing], reader: int, lang: Language
) -> Message:
    """The standings for one member, privately: the leaders and the rows around their own."""
    mine = next((i for i, row in enumerate(standings) if row.player == reader), None)
    start = 0 if mine is None or mine < SHOWN_PRIVATELY else mine - SHOWN_PRIVATELY // 2
    window = standings[start : start + SHOWN_PRIVATELY]
    lines = [f"### 🏆 {escape(state.rules.name)}", _header(state, lang)]
    if not standings:
        lines.append(lang._("No round has been played yet."))
    rows = standings_lines(state, window, lang)
    own = None if mine is None else mine - start
    lines.extend(_around(rows, own, TEXT_LIMIT - sum(len(line) + 1 for line in lines)))
    container = {
        "type": CONTAINER,
        "accent_color": LIVE_COLOUR.value,
        "components": [text_display(_fitted(lines))],
    }
    return Message(components=[container], layout=True)


def _around(rows: list[str], own: int | None, room: int) -> list[str]:
    """As many of ``rows`` as fit in ``room`` characters, the reader's own (at ``own``) always
    among them: the rows farthest from it are left out first, each end cut marked with "…"
    (rows grow with the rounds played and the players' names)."""
    first, last = 0, len(rows)  # the rows kept: rows[first:last]
    centre = own if own is not None else 0
    while last - first > 1 and sum(len(row) + 1 for row in rows[first:last]) + 4 > room:
        if last - 1 - centre >= centre - first:
            last -= 1
        else:
            first += 1
    return ["…"] * (first > 0) + rows[first:last] + ["…"] * (last < len(rows))


def final_message(
    tournament_id: int, state: TournamentState, standings: Sequence[Standing], lang: Language
) -> Message:
    """The final standings' podium, posted once in the host channel."""
    lines = [lang._("### 🏆 {name} is over!", name=escape(state.rules.name))]
    for medal, row in zip(MEDALS, standings, strict=False):
        entry = state.entry(row.player)
        points = _points(row.points)
        lines.append(f"{medal} {_name(entry, row.player, lang)}: {points}")
    lines.append(lang._("The full standings are on the tournament's message above."))
    footer = LAYOUT_FOOTER.format(lang._("Tournament #{number}", number=tournament_id))
    container = {
        "type": CONTAINER,
        "accent_color": WIN_COLOUR.value,
        "components": [text_display(_fitted(lines)), text_display(footer)],
    }
    return Message(components=[container], layout=True)


def round_ping_message(state: TournamentState, table: Table, lang: Language) -> Message:
    """The one ping of a round's game, in its thread: both players."""
    assert table.o is not None
    text = lang._(
        "<@{x}> <@{o}>: round {round} of {name}. Your game is here: the first named moves "
        "first, and each move has {time}.",
        x=table.x,
        o=table.o,
        round=table.round,
        name=escape(state.rules.name),
        time=duration(state.rules.turn_timeout, lang),
    )
    mentions = discord.AllowedMentions(
        everyone=False, roles=False, users=[discord.Object(table.x), discord.Object(table.o)]
    )
    return Message(content=text, allowed_mentions=mentions)


def my_game_message(
    state: TournamentState, table: Table | None, guild_id: int, lang: Language
) -> Message:
    """Where the reader's game of the current round is."""
    if table is None:
        return Message(content=lang._("You have no game in the current round."))
    if table.o is None:
        return Message(content=lang._("You have the bye this round: it counts as a win."))
    if table.thread_id is None:
        return Message(content=lang._("Your game of this round is being opened: a moment."))
    link = f"https://discord.com/channels/{guild_id}/{table.thread_id}"
    return Message(
        content=lang._("Your game of round {round}: {link}", round=table.round, link=link)
    )


def thread_name(state: TournamentState, table: Table) -> str:
    """A round's game thread's name (Discord allows 100 characters)."""
    x, o = state.entry(table.x), state.entry(table.o or 0)
    names = " vs ".join(entry.name if entry else "?" for entry in (x, o))
    return f"{state.rules.name} · R{table.round} · {names}"[:100]
