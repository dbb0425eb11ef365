"""The daily puzzle and drills: today's puzzle, what an answer does, the results and streaks,
and when a drill comes back. The rules only: no Discord here (see :mod:`bot.cogs.ttt`).

The daily puzzle is :func:`game.puzzles.puzzle_of_the_day` for the day in UTC, the same in
every server, process and restart. Its message is the whole state of an attempt: its buttons
carry the day and the moves played so far, and the defender's answers follow from them. What
is stored is a day's result (:meth:`bot.storage.base.Storage.record_puzzle`): each attempt that
ends (a wrong move, or the solution) counts once, and a day once solved stays solved.

A drill is a position of a member's finished game where their move lost value
(:mod:`game.drills`), made from the game's review with "Practise this". It is due at once, then
spaced out: each right answer in a row sends it further off (:data:`DRILL_INTERVALS`), a wrong
one brings it back soon (:data:`AGAIN_AFTER_WRONG`), and after :data:`LEARNED_AFTER` right
answers in a row it is learned and asked no more.
"""

from __future__ import annotations

import datetime
import functools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from bot.clock import Clock
from bot.domain import UserError
from bot.i18n import N_
from bot.service import Review, when
from bot.storage.base import (
    DatabaseUnavailableError,
    DrillQueue,
    DrillRecord,
    NewDrill,
    PuzzleAttempt,
    PuzzleResult,
    Storage,
)
from bot.thinking import think
from game import Board
from game.drills import Drill, DrillAnswer, answer, drills_of
from game.puzzles import (
    DAILY_EPOCH,
    Puzzle,
    Step,
    StepKind,
    line_position,
    puzzle_of_the_day,
    shipped_pool,
    step,
)

log = logging.getLogger(__name__)

DAY_SECONDS = 86_400
# Days until a drill comes back after its 1st, 2nd and 3rd right answer in a row.
DRILL_INTERVALS = (1, 3, 7)
# Right answers in a row that make a drill learned: the first comes at once, then one after
# each interval.
LEARNED_AFTER = len(DRILL_INTERVALS) + 1
# A drill answered wrong comes back this soon (seconds): the same day, after other drills.
AGAIN_AFTER_WRONG = 600

# What a button no puzzle or drill message carries gets: a hand-made one, or one of a pool
# changed since.
NOT_THIS_PUZZLE = N_("That button is not part of this puzzle: `/ttt puzzle today` shows today's.")
# A click that ends an attempt already counted: a second click at the same moment, or a message
# drawn before another attempt of the day was counted.
ALREADY_COUNTED = N_(
    "That answer came after another one was counted: `/ttt puzzle today` shows the puzzle "
    "again, and `/ttt puzzle stats` your result."
)
NOT_THIS_DRILL = N_("That button is not part of this drill: `/ttt drill` asks your next one.")
NOT_YOUR_DRILL = N_("This drill is someone else's: `/ttt drill` asks you yours.")
DRILL_ANSWERED = N_("This drill was already answered: `/ttt drill` asks your next one.")


def day_of(epoch: float) -> datetime.date:
    """The day in UTC of the moment ``epoch``: a daily puzzle's day."""
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).date()


@dataclass(frozen=True, slots=True)
class Streak:
    """Days in a row with the puzzle solved: ``current`` ends today, or yesterday while today's
    is still to solve; ``best`` is the longest ever."""

    current: int
    best: int


def streak(solved_days: Iterable[datetime.date], today: datetime.date) -> Streak:
    """The streaks of the days in ``solved_days`` (any order), as of ``today``.

    >>> d = datetime.date
    >>> streak([d(2026, 3, 1), d(2026, 3, 2), d(2026, 3, 4)], d(2026, 3, 5))
    Streak(current=1, best=2)
    >>> streak([d(2026, 3, 1), d(2026, 3, 2)], d(2026, 3, 4))
    Streak(current=0, best=2)
    """
    days = sorted(set(solved_days))
    best = run = 0
    previous: datetime.date | None = None
    for day in days:
        run = run + 1 if previous is not None and (day - previous).days == 1 else 1
        best = max(best, run)
        previous = day
    current = run if previous is not None and (today - previous).days <= 1 else 0
    return Streak(current, best)


class Counted(Enum):
    """What an ended attempt did to the member's result of its day."""

    COUNTED = "counted"  # a try added, or the day solved
    SOLVED_BEFORE = "solved before"  # the day was solved already: it stays as it was
    DAY_OVER = "day over"  # an earlier day's puzzle: played out, counted nowhere


@dataclass(frozen=True, slots=True)
class PuzzleView:
    """A daily puzzle as one message shows it: the position to play after ``moves`` (the
    solver's moves, the last answer's included), the last answer's step, and once an attempt
    ended what it did to the day's result, the result and the member's streak."""

    day: datetime.date
    puzzle: Puzzle
    # The attempts of the day counted when the message was drawn: its buttons carry it, so
    # that the attempt they end is counted once (PuzzleAttempt.tries_before).
    tries: int
    moves: tuple[int, ...]
    position: Board
    remaining: int | None  # a win puzzle's moves still allowed; None for a hold
    step: Step | None = None
    counted: Counted | None = None  # once the attempt ended
    result: PuzzleResult | None = None  # counted or solved before: the day's result
    streak: Streak | None = None  # a day solved by this attempt

    @property
    def is_over(self) -> bool:
        """Whether this attempt ended: solved, or a wrong move refuted."""
        return self.counted is not None


@dataclass(frozen=True, slots=True)
class PuzzleStats:
    """A member's daily puzzles, and a server's solvers of the day (none outside servers)."""

    today: datetime.date
    days: int  # days answered
    solved: int
    first_tries: int
    streak: Streak
    solved_today: bool
    in_server: bool
    solvers: tuple[PuzzleResult, ...]


@dataclass(frozen=True, slots=True)
class DrillView:
    """A drill as one message shows it: the stored drill and its position, the answer just
    given (None while it is asked), how many drills a "Practise this" click made of its game
    (kept ones included), the member's queue after an answer, and whether its game is still
    kept (finished games may be removed after a while: the drill keeps its own position)."""

    record: DrillRecord
    drill: Drill
    answer: DrillAnswer | None = None
    from_game: int | None = None
    queue: DrillQueue | None = None
    game_kept: bool = True


class PracticeService:
    """The daily puzzle and drills, for one bot process."""

    def __init__(
        self, storage: Storage, clock: Clock, pool: Sequence[Puzzle] | None = None
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.pool = tuple(pool) if pool is not None else shipped_pool()

    def today(self) -> datetime.date:
        return day_of(self.clock.now())

    # -- the daily puzzle -------------------------------------------------------------------

    async def puzzle(
        self, user_id: int, day: datetime.date | None = None, puzzle_id: str | None = None
    ) -> PuzzleView:
        """The puzzle of ``day`` (today by default) for ``user_id``, from its start;
        ``puzzle_id``, the one a message showed for that day, must still be that day's."""
        day = day or self.today()
        puzzle = self._puzzle_of(day) if puzzle_id is None else self.daily(day, puzzle_id)
        result = await self.storage.puzzle_result(user_id, day)
        position, remaining = line_position(puzzle, ())
        return PuzzleView(day, puzzle, result.tries if result else 0, (), position, remaining)

    def daily(self, day: datetime.date, puzzle_id: str) -> Puzzle:
        """``day``'s puzzle, which a button names as ``puzzle_id``: a sentence if it is not
        (a hand-made button, or a message drawn before the pool changed)."""
        puzzle = self._puzzle_of(day)
        if puzzle.id != puzzle_id:
            raise UserError(NOT_THIS_PUZZLE)
        return puzzle

    def _puzzle_of(self, day: datetime.date) -> Puzzle:
        # A day from a button: one before the first puzzle or after today is hand-made.
        if not DAILY_EPOCH <= day <= self.today():
            raise UserError(NOT_THIS_PUZZLE)
        return puzzle_of_the_day(day, self.pool)

    async def answer_puzzle(
        self,
        user_id: int,
        guild_id: int,
        day: datetime.date,
        puzzle_id: str,
        tries: int,
        moves: Sequence[int],
        cell: int,
    ) -> PuzzleView:
        """The solver's ``cell`` after ``moves`` in ``day``'s puzzle (``puzzle_id``: the one
        the message showed, drawn after ``tries`` attempts were counted). An attempt that ends
        on its puzzle's own day is counted in the member's result of the day, once, and one
        that solves it comes with the streak."""
        puzzle = self.daily(day, puzzle_id)
        played = tuple(moves)
        try:
            answered = await think(puzzle.size, lambda: step(puzzle, played, cell))
        except ValueError:
            # The buttons only offer free cells along the line: these came from elsewhere.
            raise UserError(NOT_THIS_PUZZLE) from None
        # The move goes into the buttons' line: a second click on the same cell, racing the
        # edit, then names a line no button shows any more, and counts nothing.
        moves_now = (*played, cell)
        if answered.kind is StepKind.GOES_ON:
            position = answered.next_position
            assert position is not None  # a step that goes on has the defender's answer
            remaining = None if answered.remaining is None else answered.remaining - 1
            return PuzzleView(day, puzzle, tries, moves_now, position, remaining, answered)
        ended = functools.partial(
            PuzzleView,
            day,
            puzzle,
            tries,
            moves_now,
            answered.position,
            answered.remaining,
            answered,
        )
        if day != self.today():
            # Played out, but counted on its own day only: a message kept open must not fill
            # in a missed day of a streak.
            return ended(Counted.DAY_OVER)
        solved = answered.kind is StepKind.SOLVED
        result, changed = await self.storage.record_puzzle(
            PuzzleAttempt(user_id, day, puzzle.id, guild_id, solved, self.clock.now(), tries)
        )
        log.info(
            "puzzle %s of %s answered by user %s: %s", puzzle.id, day, user_id, answered.kind.value
        )
        if not changed and result.tries != tries:
            # Another attempt was counted since this message was drawn (a second click at the
            # same moment, another message): this one is not, and its message stays as it is.
            raise UserError(ALREADY_COUNTED)
        if not changed:
            return ended(Counted.SOLVED_BEFORE, result)
        streak = None
        if solved:
            try:
                streak = await self._streak(user_id)
            except DatabaseUnavailableError as error:
                # Counted already: the answer must not say nothing was done, and shows the
                # solve without its streak (/ttt puzzle stats has it).
                log.warning("could not read user %s's streak after a solve: %s", user_id, error)
        return ended(Counted.COUNTED, result, streak)

    async def _streak(self, user_id: int) -> Streak:
        results = await self.storage.puzzle_results(user_id)
        return streak((result.day for result in results if result.solved), self.today())

    async def puzzle_stats(self, user_id: int, guild_id: int | None) -> PuzzleStats:
        """``user_id``'s puzzle record, and in a server (``guild_id``) today's solvers there."""
        today = self.today()
        results = await self.storage.puzzle_results(user_id)
        solved = [result for result in results if result.solved]
        solvers = await self.storage.puzzle_solvers(guild_id, today) if guild_id else []
        return PuzzleStats(
            today=today,
            days=len(results),
            solved=len(solved),
            first_tries=sum(result.first_try for result in solved),
            streak=streak((result.day for result in solved), today),
            solved_today=any(result.day == today for result in solved),
            in_server=bool(guild_id),
            solvers=tuple(solvers),
        )

    # -- drills ---------------------------------------------------------------------------

    async def practise(self, review: Review, user_id: int) -> DrillView:
        """Make drills of ``user_id``'s moves that lost value in the reviewed game, and show the
        first of them. Only the game's players have moves of their own to practise."""
        game = review.game
        mark = game.mark_of(user_id)
        if mark is None:
            raise UserError("Only the game's players can practise its mistakes.")
        drills = drills_of(review.moves, mark)
        if not drills:
            raise UserError(
                "You made no mistake in game #{}: there is nothing to practise.", str(game.id)
            )
        now = self.clock.now()
        stored = await self.storage.add_drills(
            [NewDrill(user_id, game.guild_id, game.id, drill.line(), now) for drill in drills]
        )
        log.info("user %s practises game %s: %d drills", user_id, game.id, len(stored))
        waiting = [record for record in stored if record.learned_at is None]
        due = [record for record in waiting if record.due_at <= now]
        if due:
            return DrillView(due[0], Drill.from_line(due[0].position), from_game=len(stored))
        # Kept before: asked again on their schedule, not sooner.
        if not waiting:
            raise UserError(
                "You learned the drills of game #{} already: `/ttt drill` asks your next one.",
                str(game.id),
            )
        raise UserError(
            "The drills of game #{} are kept already: the next is due {}.",
            str(game.id),
            when(min(record.due_at for record in waiting)),
        )

    async def next_drill(self, user_id: int) -> DrillView:
        """The member's next due drill; a sentence saying when one is due if none is now."""
        now = self.clock.now()
        queue = await self.storage.drill_queue(user_id, now)
        upcoming = queue.next
        if upcoming is None and not queue.learned:
            raise UserError(
                "You have no drills yet: in the review of a game you played (its Review button, "
                "or `/ttt review`), click Practise this."
            )
        if upcoming is None:
            raise UserError(
                "Every drill of yours is learned: review another game you played and click "
                "Practise this for new ones."
            )
        if upcoming.due_at > now:
            raise UserError("No drill is due now: your next one is due {}.", when(upcoming.due_at))
        kept = await self._game_kept(upcoming)
        return DrillView(upcoming, Drill.from_line(upcoming.position), game_kept=kept)

    async def answer_drill(
        self,
        user_id: int,
        drill_id: int,
        answers: int,
        cell: int,
        *,
        shown_at: Callable[[int], None] | None = None,
    ) -> DrillView:
        """``user_id``'s ``cell`` for the drill asked after ``answers`` answers: judged, and its
        schedule moved (see the module). ``shown_at`` refuses, given the drill's board size,
        a drill its answer could not be shown in place of (a hand-made button's)."""
        record = await self.storage.get_drill(drill_id)
        if record is None:
            raise UserError(
                "This drill is no longer kept (deleted with its server's or your data)."
            )
        if record.user_id != user_id:
            raise UserError(NOT_YOUR_DRILL)
        if record.answers != answers or record.learned_at is not None:
            raise UserError(DRILL_ANSWERED)
        now = self.clock.now()
        if record.due_at > now:
            raise UserError("This drill is not due yet: it comes back {}.", when(record.due_at))
        drill = Drill.from_line(record.position)
        if shown_at is not None:
            shown_at(drill.position.size)
        if cell not in drill.position.legal_moves:
            raise UserError(NOT_THIS_DRILL)
        judged = await think(drill.position.size, lambda: answer(drill, cell))
        right_in_row, due_at, learned_at = schedule(record.right_in_row, judged.right, now)
        saved = await self.storage.answer_drill(
            drill_id, answers + 1, right_in_row, due_at, learned_at
        )
        if saved is None:  # another answer to the same question came first
            raise UserError(DRILL_ANSWERED)
        try:
            queue = await self.storage.drill_queue(user_id, now)
            kept = await self._game_kept(saved)
        except DatabaseUnavailableError as error:
            # Saved already: the answer must not say nothing was done, and shows the
            # judgement without the queue (/ttt drill has it).
            log.warning("could not read user %s's drills after an answer: %s", user_id, error)
            return DrillView(saved, drill, judged)
        return DrillView(saved, drill, judged, queue=queue, game_kept=kept)

    async def _game_kept(self, record: DrillRecord) -> bool:
        """Whether the game ``record`` was made from is still stored: the only way a drill
        outlives its game is the game's removal for its age (a server's erase and a member's
        forgetting delete the drills with it)."""
        return await self.storage.get_game(record.game_id) is not None


def schedule(right_in_row: int, right: bool, now: float) -> tuple[int, float, float | None]:
    """A drill's schedule after an answer: right answers in a row, when it is next due, and
    when it was learned (None: not yet).

    >>> schedule(0, True, 0.0)  # the first right answer: back tomorrow
    (1, 86400.0, None)
    >>> schedule(3, True, 0.0)  # the fourth in a row: learned
    (4, 0.0, 0.0)
    >>> schedule(2, False, 0.0)  # wrong: back in ten minutes, from the start
    (0, 600.0, None)
    """
    if not right:
        return 0, now + AGAIN_AFTER_WRONG, None
    in_row = right_in_row + 1
    if in_row >= LEARNED_AFTER:
        return in_row, now, now
    return in_row, now + DRILL_INTERVALS[in_row - 1] * DAY_SECONDS, None
