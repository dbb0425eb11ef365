"""The daily puzzle and drills: a puzzle's message before and after each answer, a member's
puzzle stats, and a drill's message; the puzzles' sentences (task, reply, refutation)."""

from __future__ import annotations

import babel.dates
import discord

from bot.components import (
    DRILL_ID,
    DRILL_NEXT_ID,
    PUZZLE_AGAIN_ID,
    PUZZLE_ID,
    encode_day,
    encode_moves,
)
from bot.i18n import N_, Language
from bot.practice import Counted, DrillView, PuzzleStats, PuzzleView
from bot.render.parts import (
    Message,
    button,
    cell_buttons,
    cell_rows,
    escape,
    grid,
    panel,
    size_label,
    timestamp,
    uses_layout,
)
from game import Board, cell_name
from game.drills import Drill
from game.puzzles import Puzzle, Reason, Refutation, Reply, Step, StepKind, Task

PUZZLE_COLOUR = discord.Colour.gold()
SOLVED_COLOUR = discord.Colour.green()
MISSED_COLOUR = discord.Colour.red()
# How a position's cells show what just happened: the member's move, and the answer to it.
_MOVED_STYLE = discord.ButtonStyle.primary
_ANSWER_STYLE = discord.ButtonStyle.danger
# The most solvers of the day a stats message names; the rest are counted.
SOLVERS_SHOWN = 30


def task_sentence(puzzle: Puzzle, lang: Language) -> str:
    """The puzzle's task, as ``game.puzzles`` words it in English: "X to play and win in 3",
    "O to play: only one move keeps the draw"."""
    if puzzle.task is Task.WIN:
        return lang._(
            "{mark} to play and win in {count}", mark=puzzle.turn.value, count=puzzle.moves
        )
    return lang._("{mark} to play: only one move keeps the draw", mark=puzzle.turn.value)


def refutation_sentence(refutation: Refutation, lang: Language) -> str:
    """``game.puzzles``' refutation of a wrong move (its English, word for word), in ``lang``."""
    size = refutation.position.size
    wrong, answer = cell_name(refutation.move, size), cell_name(refutation.reply, size)
    mark = refutation.position.turn.other.value  # the side that answers
    match refutation.reason:
        case Reason.COMPLETES_LINE:
            text = N_("{wrong}? {reply} completes a line: {mark} wins.")
        case Reason.FORK:
            text = N_("{wrong}? {reply} wins: {reply} makes two threats at once.")
        case Reason.FORCED_WIN:
            text = N_(
                "{wrong}? {reply}, and the win can no longer be stopped: {mark} wins in {count}."
            )
        case Reason.BLOCK:
            text = N_("{wrong}? {reply} blocks the threat: a draw.")
        case _:
            text = N_("{wrong}? {reply} holds the draw.")
    return lang._(text, wrong=wrong, reply=answer, mark=mark, count=refutation.replier_moves)


def reply_sentence(answered: Reply, lang: Language) -> str:
    """``game.puzzles``' answer to a right move (its English, word for word), in ``lang``."""
    size = answered.position.size
    right = cell_name(answered.move, size)
    solver, defender = answered.position.turn.value, answered.position.turn.other.value
    if answered.answer is None:
        return lang._("{right} completes a line: {mark} wins.", right=right, mark=solver)
    answer = cell_name(answered.answer, size)
    if answered.moves_left is None:
        return lang._(
            "{right}! The draw is held; {defender} answers {answer}.",
            right=right,
            defender=defender,
            answer=answer,
        )
    return lang._(
        "{right}! {defender}'s longest defence is {answer}; {mark} wins in {count} more.",
        right=right,
        defender=defender,
        answer=answer,
        mark=solver,
        count=answered.moves_left,
    )


def _step_shown(answered: Step) -> tuple[Board, dict[int, discord.ButtonStyle]]:
    """The position after a step, as its message shows it, and its cells' colours: the move
    and the answer to it, or the line it completed."""
    moved = answered.position.play(answered.move)
    styles = {answered.move: _MOVED_STYLE}
    answer: int | None = None
    if answered.refutation is not None:
        answer = answered.refutation.reply
    elif answered.reply is not None:
        answer = answered.reply.answer
    if moved.winning_line is not None:
        return moved, dict.fromkeys(moved.winning_line, discord.ButtonStyle.success)
    if answer is not None:
        styles[answer] = _ANSWER_STYLE
        return moved.play(answer), styles
    return moved, styles


def _step_sentence(answered: Step, lang: Language) -> str:
    if answered.kind is StepKind.WRONG:
        assert answered.refutation is not None  # a wrong step comes with its refutation
        return "❌ " + refutation_sentence(answered.refutation, lang)
    if answered.kind is StepKind.TOO_SLOW:
        size = answered.position.size
        assert answered.faster is not None  # a slow step comes with a faster move
        return "❌ " + lang._(
            "{move} still wins, but not within the puzzle's count: {faster} wins faster.",
            move=cell_name(answered.move, size),
            faster=cell_name(answered.faster, size),
        )
    assert answered.reply is not None  # a right step comes with the defender's answer
    return "✅ " + reply_sentence(answered.reply, lang)


def _puzzle_outcome(view: PuzzleView, lang: Language) -> list[str]:
    """What an ended attempt did to the day's result."""
    assert view.step is not None  # an ended attempt has its last step
    if view.counted is Counted.DAY_OVER:
        return [
            "**"
            + lang._(
                "This was an earlier day's puzzle: it no longer counts. `/ttt puzzle today` "
                "has today's."
            )
            + "**"
        ]
    if view.counted is Counted.SOLVED_BEFORE:
        return ["**" + lang._("You solved this puzzle already: this try changes nothing.") + "**"]
    lines = []
    result = view.result
    if view.step.kind is not StepKind.SOLVED:
        lines.append("**" + lang._("Not solved: try again from the start.") + "**")
    elif result is not None and result.first_try:
        lines.append("🏆 **" + lang._("Solved on the first try!") + "**")
    else:
        lines.append("🏆 **" + lang._("Solved.") + "**")
    if view.streak is not None:
        lines.append(
            "🔥 "
            + lang.n_(
                "Streak: {count} day in a row.",
                "Streak: {count} days in a row.",
                view.streak.current,
            )
        )
    return lines


PUZZLE_FOOTER = N_("Puzzle {puzzle}, proven by the exact solver · a new one every day at 00:00 UTC")


def puzzle_message(view: PuzzleView, lang: Language) -> Message:
    """The daily puzzle for one member: the task, the position with its cells to click, and
    after an answer what it did (the defender's answer, or the refutation of a wrong move)."""
    puzzle, day = view.puzzle, view.day
    dated = babel.dates.format_date(day, format="long", locale=lang.code)
    lines = [
        f"{dated} · {size_label(puzzle.size, lang)}",
        "**" + task_sentence(puzzle, lang) + "**",
        "",
    ]
    over = view.is_over
    board: Board = view.position
    styles: dict[int, discord.ButtonStyle] = {}
    if view.step is not None:
        # After a right move that goes on, this is the position to play: view.position.
        board, styles = _step_shown(view.step)
    lines.append(grid(board, winning=board.winning_line or ()))
    if view.step is not None:
        lines += ["", _step_sentence(view.step, lang)]
    if over:
        lines += _puzzle_outcome(view, lang)
    moves = encode_moves(view.moves)
    cells = cell_buttons(
        board,
        lambda cell: PUZZLE_ID.build(
            day=encode_day(day), puzzle=puzzle.id, tries=view.tries, moves=moves, cell=cell
        ),
        playable=not over,
        styles=styles,
    )
    controls = []
    if over and view.step is not None and view.step.kind is not StepKind.SOLVED:
        again = PUZZLE_AGAIN_ID.build(day=encode_day(day), puzzle=puzzle.id)
        controls.append(button(again, lang._("Try again"), "🔁", discord.ButtonStyle.primary))
    solved = over and view.step is not None and view.step.kind is StepKind.SOLVED
    colour = SOLVED_COLOUR if solved else MISSED_COLOUR if over else PUZZLE_COLOUR
    footer = lang._(PUZZLE_FOOTER, puzzle=puzzle.id)
    rows = cell_rows(cells, board.size, controls)
    # The form follows the size alone, so that every edit of the message keeps it.
    title = lang._("Puzzle of the day")
    return panel(title, "\n".join(lines), footer, colour, rows, layout=uses_layout(board.size))


def puzzle_stats_message(stats: PuzzleStats, name: str, lang: Language) -> Message:
    """A member's daily puzzles, and in a server today's solvers there (first-try ones
    starred), mentioned without pinging anyone."""
    streak = stats.streak
    lines = [
        lang._(
            "Solved: {solved} of {days} answered, {first} on the first try.",
            solved=stats.solved,
            days=stats.days,
            first=stats.first_tries,
        ),
        "🔥 "
        + lang.n_("Streak: {count} day in a row.", "Streak: {count} days in a row.", streak.current)
        + " "
        + lang.n_("Best: {count} day.", "Best: {count} days.", streak.best),
        lang._("Today's puzzle: solved.")
        if stats.solved_today
        else lang._("Today's puzzle: not solved yet."),
    ]
    if stats.in_server:
        lines += ["", "**" + lang._("Solved today in this server") + "**"]
        shown = [
            f"<@{result.user_id}>" + (" ★" if result.first_try else "")
            for result in stats.solvers[:SOLVERS_SHOWN]
        ]
        if not shown:
            lines.append(lang._("Nobody yet: `/ttt puzzle today`."))
        else:
            more = len(stats.solvers) - len(shown)
            if more:
                shown.append(lang.n_("and {count} more", "and {count} more", more))
            lines.append(lang.comma.join(shown))
            lines.append("-# " + lang._("★ solved on the first try"))
    embed = discord.Embed(
        title=lang._("Daily puzzles: {name}", name=escape(name)),
        description="\n".join(lines),
        colour=PUZZLE_COLOUR,
    )
    return Message(embed=embed)


def drill_task(drill: Drill, lang: Language) -> str:
    """What a drill asks: the move that kept what the position held."""
    if drill.value == 1:
        return lang._(
            "The game was a win for {mark} here: find a move that keeps the win.",
            mark=drill.position.turn.value,
        )
    return lang._("The game was a draw here: find a move that keeps the draw.")


def _drill_schedule(view: DrillView, lang: Language) -> str:
    record = view.record
    if record.learned_at is not None:
        return "🎓 " + lang.n_(
            "Learned: right {count} time in a row. It won't be asked again.",
            "Learned: right {count} times in a row. It won't be asked again.",
            record.right_in_row,
        )
    return lang._("It comes back {when}.", when=timestamp(record.due_at))


def drill_message(view: DrillView, lang: Language) -> Message:
    """A drill for its member: the position of their game and the task, its cells to click;
    once answered, whether the move was right (or its refutation) and when it comes back."""
    record, drill, answered = view.record, view.drill, view.answer
    size = drill.position.size
    lines = []
    if view.from_game is not None:
        lines.append(
            lang.n_(
                "{count} drill from game #{game}: here is the first.",
                "{count} drills from game #{game}: here is the first.",
                view.from_game,
                game=record.game_id,
            )
        )
    lines += [
        lang._("From game #{game}, {size}.", game=record.game_id, size=size_label(size, lang))
        if view.game_kept
        else lang._(
            "From game #{game} (no longer kept), {size}.",
            game=record.game_id,
            size=size_label(size, lang),
        ),
        "**" + drill_task(drill, lang) + "**",
        lang._("In the game, {played} was played here.", played=cell_name(drill.played, size)),
        "",
    ]
    board: Board = drill.position
    styles: dict[int, discord.ButtonStyle] = {}
    if answered is not None:
        moved = drill.position.play(answered.move)
        styles = {answered.move: _MOVED_STYLE}
        board = moved
        if answered.refutation is not None:
            styles[answered.refutation.reply] = _ANSWER_STYLE
            board = moved.play(answered.refutation.reply)
    lines.append(grid(board, winning=board.winning_line or ()))
    controls = []
    if answered is not None:
        move = cell_name(answered.move, size)
        if answered.right and drill.value == 1:
            lines += ["", "✅ " + lang._("{move} keeps the win.", move=move)]
        elif answered.right:
            lines += ["", "✅ " + lang._("{move} keeps the draw.", move=move)]
        else:
            assert answered.refutation is not None  # a wrong answer comes with one
            lines += ["", "❌ " + refutation_sentence(answered.refutation, lang)]
        lines.append(_drill_schedule(view, lang))
        queue = view.queue
        if queue is not None and queue.due:
            lines.append(
                lang.n_("{count} more drill is due.", "{count} more drills are due.", queue.due)
            )
            controls.append(
                button(
                    DRILL_NEXT_ID.build(), lang._("Next drill"), "➡️", discord.ButtonStyle.primary
                )
            )
    cells = cell_buttons(
        board,
        lambda cell: DRILL_ID.build(drill=record.id, answers=record.answers, cell=cell),
        playable=answered is None,
        styles=styles,
    )
    colour = (
        PUZZLE_COLOUR if answered is None else SOLVED_COLOUR if answered.right else MISSED_COLOUR
    )
    footer = lang._("Drill #{drill} · /ttt drill asks the next one", drill=record.id)
    rows = cell_rows(cells, size, controls)
    return panel(lang._("Drill"), "\n".join(lines), footer, colour, rows, layout=uses_layout(size))
