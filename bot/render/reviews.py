"""Reviews and hints: a finished game move by move, each move's sentence, and a hint."""

from __future__ import annotations

import dataclasses

import discord

from bot.components import PRACTISE_ID
from bot.i18n import N_, Language
from bot.render.games import ASSISTED, Shown, board_colour, status_line
from bot.render.parts import (
    EMBED_DESCRIPTION_LIMIT,
    Message,
    button,
    button_row,
    fit_lines,
    plain_text,
    player,
    size_label,
)
from bot.render.ultimate import board_range
from bot.service import Hint, Review, UltimateReview
from bot.storage.base import GameRecord
from game import Board, Mark, cell_name
from game.ai import is_solved
from game.drills import drills_of
from game.review import MoveReview, Verdict
from game.ultimate_review import ReplyEffect, UltimateMoveReview, UltimateVerdict
from game.variants import is_ultimate


def review_message(
    review: Review | UltimateReview, lang: Language, viewer_id: int | None = None
) -> Message:
    """A finished game move by move, for the member who asked (``viewer_id``), in their
    language: who played, how it ended, and one sentence a move; and **Practise this** when
    the viewer played a move that lost value (see :mod:`bot.practice`). At most 25 moves of at
    most about 90 characters each: well within an embed description's 4,096. An ultimate game:
    see :func:`ultimate_review_message`."""
    if isinstance(review, UltimateReview):
        return ultimate_review_message(review, lang)
    game = review.game
    lines = _heading(game, lang)
    lines.extend(move_sentence(move, lang) for move in review.moves)
    if not review.moves:
        lines.append(lang._("No move was played."))
    embed = discord.Embed(
        title=lang._("Review of game #{game}", game=game.id),
        description="\n".join(lines),
        colour=board_colour(game),
    )
    board = game.board
    if isinstance(board, Board) and is_solved(board):
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


def _heading(game: GameRecord, lang: Language) -> list[str]:
    """A review's first lines, in ``lang``: who played on which board, how it ended, whether a
    hint was used; then a blank line."""
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
    return lines


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


VERDICT_LABELS = {
    UltimateVerdict.INACCURACY: N_("inaccuracy"),
    UltimateVerdict.MISTAKE: N_("mistake"),
    UltimateVerdict.BLUNDER: N_("blunder"),
    UltimateVerdict.MISSED_WIN: N_("missed win"),
}


def ultimate_review_message(review: UltimateReview, lang: Language) -> Message:
    """A finished ultimate game as the engine's search judged it: up to 81 moves would not fit
    an embed, and most are good, so it lists the moves that were not (and the last), with the
    count of good ones; each verdict is the search's, proven only where it says so."""
    game = review.game
    good = sum(move.verdict is UltimateVerdict.GOOD for move in review.moves)
    lines = _heading(game, lang)
    if not review.moves:
        lines.append(lang._("No move was played."))
    else:
        lines.append(
            lang._(
                "{good} of {total} moves were good by the engine's search; the others:",
                good=good,
                total=len(review.moves),
            )
        )
    notable = [
        ultimate_move_sentence(move, lang)
        for index, move in enumerate(review.moves)
        if move.verdict is not UltimateVerdict.GOOD or index == len(review.moves) - 1
    ]
    if notable:
        # The first lines grow with the players' names and marks: the moves fill what they leave.
        room = EMBED_DESCRIPTION_LIMIT - len("\n".join(lines)) - 1
        lines.append(
            fit_lines(notable, room, lambda left: lang._("… and {count} more.", count=left))
        )
    embed = discord.Embed(
        title=lang._("Review of game #{game}", game=game.id),
        description="\n".join(lines),
        colour=board_colour(game),
    )
    embed.set_footer(
        text=lang._(
            "Judged by the engine's search: ultimate tic-tac-toe is not solved, so a verdict is "
            "proven only where it says so."
        )
    )
    return Message(embed=embed)


def ultimate_move_sentence(move: UltimateMoveReview, lang: Language) -> str:
    """An ultimate move's verdict in ``lang``, from the parts ``game.ultimate_review`` gives: one
    whole sentence a case. Small boards are named by their cells (``G7`` to ``I9``)."""
    mark, other = move.mark.value, move.mark.other.value
    head = f"{move.number}. {mark} {move.cell_name} — "
    after = move.after
    verdict = move.verdict
    if verdict is UltimateVerdict.GOOD:
        if after.winner is not None:
            return head + lang._("{mark} wins the game.", mark=after.winner.value)
        if after.is_over:
            return head + lang._("the game ends in a draw.")
        return head + lang._("good.")
    label = lang._(VERDICT_LABELS[verdict])
    if move.proven:
        label = lang._("{verdict} (proven)", verdict=label)
    better = move.better_name
    if verdict is UltimateVerdict.MISSED_WIN:
        if move.better_wins_at_once:
            text = N_("{verdict}: {better} won the game at once.")
        else:
            text = N_("{verdict}: {better} kept a forced win.")
        return head + lang._(text, verdict=label, better=better)
    sent_to, effect, board = move.sent_to, move.reply_effect, move.reply_board
    if after.is_over:
        text = N_("{verdict}: it ends the game in a draw. {better} was better.")
    elif effect is ReplyEffect.WINS_GAME and sent_to is not None:
        text = N_(
            "{verdict}: it sends {other} to {board}, where {other} wins the game with {reply}. "
            "{better} was better."
        )
    elif effect is ReplyEffect.WINS_GAME:
        text = N_(
            "{verdict}: it lets {other} play in any board, and {other} wins the game with "
            "{reply}. {better} was better."
        )
    elif effect is ReplyEffect.WINS_BOARD and sent_to is not None:
        text = N_(
            "{verdict}: it sends {other} to {board}, which {other} then wins with {reply}. "
            "{better} was better."
        )
    elif effect is ReplyEffect.WINS_BOARD:
        text = N_(
            "{verdict}: it lets {other} play in any board, and {other} wins {board} with "
            "{reply}. {better} was better."
        )
    else:
        text = N_("{verdict}: {other}'s best answer is {reply}. {better} was better.")
    shown_board = board_range(sent_to if sent_to is not None else board or 0)
    return head + lang._(
        text, verdict=label, other=other, board=shown_board, reply=move.reply_name, better=better
    )


def hint_message(hint: Hint, lang: Language) -> Message:
    """The best move, for the player alone; on ultimate, which is not solved, said to be the
    search's choice, as its reviews are."""
    cell = cell_name(hint.cell, hint.game.size)
    if is_ultimate(hint.game.size):
        return plain_text(
            lang._(
                "Hint: {cell} (by the engine's search, not proven: ultimate tic-tac-toe is not "
                "solved). This game is assisted now, so it counts in no stats.",
                cell=cell,
            )
        )
    return plain_text(
        lang._("Hint: {cell}. This game is assisted now, so it counts in no stats.", cell=cell)
    )
