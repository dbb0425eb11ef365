-- Tournaments: one row each, its whole state (entrants, rounds, pairings, results, what the
-- organiser did) as one JSON document that bot.tournaments.state reads and writes. A tournament
-- is changed as a whole, by compare-and-set on version: of two processes acting on one at the
-- same moment (pairing a round, say), one wins and the other reads again. status and due_at
-- are the document's own, kept beside it for the sweeper's query: when it next needs looking
-- at (a start time; NULL: only when one of its games ends, or while it runs).
CREATE TABLE tournaments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    guild_id   INTEGER NOT NULL,
    channel_id INTEGER NOT NULL,
    status     TEXT    NOT NULL
        CHECK (status IN ('registering', 'running', 'paused', 'finished', 'cancelled')),
    due_at     REAL,
    version    INTEGER NOT NULL DEFAULT 1,
    state      TEXT    NOT NULL,
    created_at REAL    NOT NULL,
    updated_at REAL    NOT NULL
);
CREATE INDEX tournaments_of_guild ON tournaments (guild_id, status);
-- One tournament going at a time in a channel: its announcement and standings are there.
CREATE UNIQUE INDEX one_live_tournament_per_channel ON tournaments (channel_id)
    WHERE status IN ('registering', 'running', 'paused');
CREATE INDEX tournaments_due ON tournaments (status, due_at)
    WHERE status IN ('registering', 'running');

-- Each pairing's game: at most one game a table of a round (the primary key), so no process
-- can start one twice. A game removed for its age takes its row with it; its result was
-- copied into the tournament's state when it ended.
CREATE TABLE tournament_games (
    tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    round         INTEGER NOT NULL CHECK (round > 0),
    board         INTEGER NOT NULL CHECK (board > 0),
    game_id       INTEGER NOT NULL UNIQUE REFERENCES games (id) ON DELETE CASCADE,
    PRIMARY KEY (tournament_id, round, board)
);
