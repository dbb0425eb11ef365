"""Everything the bot shows: boards, challenges, reviews, hints, puzzles, drills, stats, the
leaderboard, help, settings and members' data.

Each function returns a :class:`Message`: the message as Discord's API takes it, its buttons
and layout written here once. Both ways of answering send that same payload: discord.py, through
a View that is only those components (:meth:`Message.send_kwargs`), and the hot path as JSON
(:meth:`Message.payload`). Names are escaped (markdown and mentions) and every message says
exactly whom it may ping.

One module for each part of what is shown, and one for the pieces they all share:

* :mod:`bot.render.parts`: the :class:`Message` payload and its classic or components-v2 frame,
  buttons and their rows, a position's cell buttons and emoji grid, names and times as shown
  (and why a 5x5 game's messages are components v2);
* :mod:`bot.render.games`: games' boards and challenges;
* :mod:`bot.render.reviews`: reviews and hints;
* :mod:`bot.render.practice`: the daily puzzle and drills;
* :mod:`bot.render.stats`: stats and the leaderboard;
* :mod:`bot.render.help`: how to play;
* :mod:`bot.render.settings`: a server's settings;
* :mod:`bot.render.members`: members' data, forgetting a member, erasing a server's data;
* :mod:`bot.render.tournaments`: a tournament's message, its standings, its rounds' pings.

The rest of the bot imports this package (``from bot import render``) and reads its public
names here; the modules inside it import from each other, never from here.
"""

from bot.render.games import (
    ASSISTED,
    BOARD_FOOTER,
    board_game_id,
    board_game_id_in,
    board_message,
    challenge_message,
    game_in_footers,
    last_answer_note,
    last_move_note,
    move_note,
    retired_board_message,
    retired_challenge_message,
    thread_pointer_message,
)
from bot.render.help import HELP_PRACTICE, HELP_TEXT, help_message, level_description
from bot.render.members import (
    cancelled_message,
    erase_server_confirmation,
    erased_message,
    erased_tournament_message,
    forget_confirmation,
    forgotten_message,
    forgotten_note,
    member_data_message,
    server_erased_message,
)
from bot.render.parts import (
    ACTION_ROW,
    ACTIONS,
    BUTTON,
    CLASSIC_ROWS,
    COLUMN_EMOJI,
    COMPONENTS_V2,
    CONTAINER,
    CORNER_EMOJI,
    EMPTY_EMOJI,
    FORGOTTEN_MEMBER,
    JSON,
    LAYOUT_FOOTER,
    LIVE_COLOUR,
    MARK_EMOJI,
    NO_PINGS,
    OVER_COLOUR,
    ROW_EMOJI,
    SIZE_LABELS,
    TEXT_DISPLAY,
    WIN_COLOUR,
    WINNING_EMOJI,
    MarksFallback,
    Message,
    escape,
    grid,
    mark_emoji,
    member,
    plain_text,
    player,
    size_label,
    timestamp,
    uses_layout,
)
from bot.render.practice import (
    MISSED_COLOUR,
    PUZZLE_COLOUR,
    PUZZLE_FOOTER,
    SOLVED_COLOUR,
    SOLVERS_SHOWN,
    drill_message,
    drill_task,
    puzzle_message,
    puzzle_stats_message,
    refutation_sentence,
    reply_sentence,
    task_sentence,
)
from bot.render.reviews import hint_message, move_sentence, review_message, ultimate_move_sentence
from bot.render.settings import duration, language_name, settings_message
from bot.render.stats import leaderboard_message, season_end_message, stats_message
from bot.render.tournaments import (
    final_message as tournament_final,
)
from bot.render.tournaments import (
    my_game_message as tournament_my_game,
)
from bot.render.tournaments import (
    standings_message as tournament_standings,
)
from bot.render.tournaments import (
    tournament_message,
)

__all__ = [
    "ACTIONS",
    "ACTION_ROW",
    "ASSISTED",
    "BOARD_FOOTER",
    "BUTTON",
    "CLASSIC_ROWS",
    "COLUMN_EMOJI",
    "COMPONENTS_V2",
    "CONTAINER",
    "CORNER_EMOJI",
    "EMPTY_EMOJI",
    "FORGOTTEN_MEMBER",
    "HELP_PRACTICE",
    "HELP_TEXT",
    "JSON",
    "LAYOUT_FOOTER",
    "LIVE_COLOUR",
    "MARK_EMOJI",
    "MISSED_COLOUR",
    "NO_PINGS",
    "OVER_COLOUR",
    "PUZZLE_COLOUR",
    "PUZZLE_FOOTER",
    "ROW_EMOJI",
    "SIZE_LABELS",
    "SOLVED_COLOUR",
    "SOLVERS_SHOWN",
    "TEXT_DISPLAY",
    "WINNING_EMOJI",
    "WIN_COLOUR",
    "MarksFallback",
    "Message",
    "board_game_id",
    "board_game_id_in",
    "board_message",
    "cancelled_message",
    "challenge_message",
    "drill_message",
    "drill_task",
    "duration",
    "erase_server_confirmation",
    "erased_message",
    "erased_tournament_message",
    "escape",
    "forget_confirmation",
    "forgotten_message",
    "forgotten_note",
    "game_in_footers",
    "grid",
    "help_message",
    "hint_message",
    "language_name",
    "last_answer_note",
    "last_move_note",
    "leaderboard_message",
    "level_description",
    "mark_emoji",
    "member",
    "member_data_message",
    "move_note",
    "move_sentence",
    "plain_text",
    "player",
    "puzzle_message",
    "puzzle_stats_message",
    "refutation_sentence",
    "reply_sentence",
    "retired_board_message",
    "retired_challenge_message",
    "review_message",
    "season_end_message",
    "server_erased_message",
    "settings_message",
    "size_label",
    "stats_message",
    "task_sentence",
    "thread_pointer_message",
    "timestamp",
    "tournament_final",
    "tournament_message",
    "tournament_my_game",
    "tournament_standings",
    "ultimate_move_sentence",
    "uses_layout",
]
