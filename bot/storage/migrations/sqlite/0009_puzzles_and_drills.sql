-- The daily puzzle's results: one row a member a day (UTC, 'YYYY-MM-DD'), whatever the server
-- they answered in. tries counts the attempts that ended (a wrong move, or the solution);
-- solved_at is when the solution came (NULL: not solved yet); first_try, whether it came on the
-- first attempt. guild_id is where the member last answered it (0: outside servers; NULL once
-- that server's data was erased): a server's solvers of the day are read by it.
CREATE TABLE puzzle_results (
    user_id   INTEGER NOT NULL,
    day       TEXT    NOT NULL,
    puzzle_id TEXT    NOT NULL,
    guild_id  INTEGER,
    tries     INTEGER NOT NULL CHECK (tries > 0),
    solved_at REAL,
    first_try INTEGER NOT NULL CHECK (first_try IN (0, 1)),
    PRIMARY KEY (user_id, day),
    CHECK (first_try = 0 OR solved_at IS NOT NULL)
);
CREATE INDEX puzzle_solvers ON puzzle_results (guild_id, day) WHERE solved_at IS NOT NULL;

-- Drills: positions of a member's finished games where their move lost value, asked again on a
-- spaced schedule until learned. position is game.drills' line (the board, the line length,
-- what it held and the move played), one drill per member and position. answers counts the
-- answers taken: an answer is saved only against the count it was asked at, so a second click
-- on the same drill cannot count twice. The game may be deleted since (its server's data
-- erased deletes its drills too; a member forgotten, theirs).
CREATE TABLE drills (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL,
    guild_id     INTEGER NOT NULL,
    game_id      INTEGER NOT NULL,
    position     TEXT    NOT NULL,
    right_in_row INTEGER NOT NULL DEFAULT 0 CHECK (right_in_row >= 0),
    answers      INTEGER NOT NULL DEFAULT 0 CHECK (answers >= 0),
    due_at       REAL    NOT NULL,
    learned_at   REAL,
    created_at   REAL    NOT NULL,
    UNIQUE (user_id, position)
);
CREATE INDEX drills_due ON drills (user_id, due_at) WHERE learned_at IS NULL;
CREATE INDEX drills_by_guild ON drills (guild_id);
