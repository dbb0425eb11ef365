"""Reviews and hints: a finished game move by move, each move's sentence, and a hint."""

from __future__ import annotations

import dataclasses

import discord

from bot.components import PRACTISE_ID
from bot.i18n import N_, Language
from bot.render.games import ASSISTED, Shown, board_colour, status_line
from bot.render.parts import Message, button, button_row, plain_text, player, size_label
from bot.service import Hint, Review
from game import Board, Mark, cell_name
from game.ai import is_solved
from game.drills import drills_of
from game.review import MoveReview, Verdict


def review_message(review: Review, lang: Language, viewer_id: int | None = None) -> Message:
    """A finished game move by move, for the member who asked (``viewer_id``), in their
    language: who played, how it ended, and one sentence a move; and **Practise this** when
    the viewer played a move that lost value (see :mod:`bot.practice`). At most 25 moves of at
    most about 90 characters each: well within an embed description's 4,096."""
    game = review.game
    shown = dataclasses.replace(Shown.of(game), lang=lang)
    lines = [
        lang._(
            "{x} (X) vs {o} (O), {size}",
            x=player(game, Mark.X, lang),
            o=player(game, Mark.O, lang),
            size=size_label(game.size, lang),
        ),
        status_line(shown),
    ]
    if game.assisted:
        lines.append("💡 " + lang._(ASSISTED))
    lines.append("")
    lines.extend(move_sentence(move, lang) for move in review.moves)
    if not review.moves:
        lines.append(lang._("No move was played."))
    embed = discord.Embed(
        title=lang._("Review of game #{game}", game=game.id),
        description="\n".join(lines),
        colour=board_colour(game),
    )
    if isinstance(shown.board, Board) and is_solved(shown.board):
        embed.set_footer(text=lang._("Every move is judged against perfect play."))
    else:
        embed.set_footer(
            text=lang._(
                "Every move is judged by a search, which calls a move a mistake only when it "
                "proves it."
            )
        )
    mark = game.mark_of(viewer_id) if viewer_id is not None else None
    if mark is None or not drills_of(review.moves, mark):
        return Message(embed=embed)
    practise = button(
        PRACTISE_ID.build(game=game.id),
        lang._("Practise this"),
        "🎯",
        discord.ButtonStyle.primary,
    )
    return Message(embed=embed, components=[button_row([practise])])


def move_sentence(move: MoveReview, lang: Language) -> str:
    """``game.review``'s sentence for a move (the engine's, word for word, in English), in
    ``lang``: one whole sentence a case, so that each language can order it its own way."""
    size = move.position.size
    mark, other = move.mark.value, move.mark.other.value
    head = f"{move.number}. {mark} {cell_name(move.cell, size)} — "
    if move.verdict is Verdict.GOOD:
        outcome = move.position.play(move.cell).outcome()
        if outcome is None and move.value_after == 0:
            return head + lang._("draw.")
        if outcome is None:
            winner = mark if move.value_after > 0 else other
            return head + lang._("{mark} wins.", mark=winner)
        if outcome.winner is None:
            return head + lang._("the game ends in a draw.")
        return head + lang._("{mark} wins the game.", mark=outcome.winner.value)
    assert move.better is not None  # a move that lost value names one that kept it
    better = cell_name(move.better, size)
    at_once = move.position.play(move.better).winner is move.mark
    if move.value_before == 0:
        text = N_("blunder: the game was a draw, now {other} wins. {better} kept the draw.")
    elif move.value_after < 0 and at_once:
        text = N_("blunder: the game was a win for {mark}, now {other} wins. {better} won at once.")
    elif move.value_after < 0:
        text = N_(
            "blunder: the game was a win for {mark}, now {other} wins. {better} kept the win."
        )
    elif at_once:
        text = N_("missed win: the game was a win for {mark}, now a draw. {better} won at once.")
    else:
        text = N_("missed win: the game was a win for {mark}, now a draw. {better} kept the win.")
    return head + lang._(text, mark=mark, other=other, better=better)


def hint_message(hint: Hint, lang: Language) -> Message:
    """The best move, for the player alone."""
    cell = cell_name(hint.cell, hint.game.size)
    return plain_text(
        lang._("Hint: {cell}. This game is assisted now, so it counts in no stats.", cell=cell)
    )
