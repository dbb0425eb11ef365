-- Games, challenges, per-opponent stats, Elo ratings and bot settings.
-- Snowflakes are INTEGER (64-bit signed; Discord ids fit). Times are epoch seconds (REAL).

CREATE TABLE games (
    -- AUTOINCREMENT: ids end up in button custom ids, so one must never be reused.
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    guild_id      INTEGER NOT NULL,
    channel_id    INTEGER NOT NULL,
    x_id          INTEGER NOT NULL,
    o_id          INTEGER NOT NULL,
    x_name        TEXT    NOT NULL,
    o_name        TEXT    NOT NULL,
    ai_difficulty TEXT,
    ai_mark       TEXT    CHECK (ai_mark IN ('X', 'O')),
    size          INTEGER NOT NULL CHECK (size > 0),
    moves         TEXT    NOT NULL DEFAULT '',  -- comma-separated cell numbers, in play order
    status        TEXT    NOT NULL CHECK (status IN ('active', 'finished')),
    winner        TEXT    CHECK (winner IN ('X', 'O')),
    end_reason    TEXT    CHECK (end_reason IN ('line', 'draw', 'resign', 'timeout', 'ended')),
    message_id    INTEGER,
    deadline      REAL,
    version       INTEGER NOT NULL DEFAULT 1,
    created_at    REAL    NOT NULL,
    updated_at    REAL    NOT NULL,
    rematch_of    INTEGER UNIQUE REFERENCES games (id),
    CHECK ((ai_difficulty IS NULL) = (ai_mark IS NULL))
);

-- The database, not the bot, guarantees one live game per channel: two racing commands
-- cannot both start one.
CREATE UNIQUE INDEX games_one_active_per_channel ON games (channel_id) WHERE status = 'active';
CREATE INDEX games_active_by_deadline ON games (deadline) WHERE status = 'active';

CREATE TABLE challenges (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    guild_id        INTEGER NOT NULL,
    channel_id      INTEGER NOT NULL,
    challenger_id   INTEGER NOT NULL,
    challenger_name TEXT    NOT NULL,
    opponent_id     INTEGER,  -- NULL: an open challenge
    opponent_name   TEXT,
    status          TEXT    NOT NULL
        CHECK (status IN ('pending', 'accepted', 'declined', 'withdrawn', 'expired')),
    message_id      INTEGER,
    expires_at      REAL    NOT NULL,
    game_id         INTEGER REFERENCES games (id),
    created_at      REAL    NOT NULL
);

CREATE UNIQUE INDEX challenges_one_pending_per_channel ON challenges (channel_id)
    WHERE status = 'pending';
CREATE INDEX challenges_pending_by_expiry ON challenges (expires_at) WHERE status = 'pending';

-- opponent is 'member' or the bot's difficulty.
CREATE TABLE player_stats (
    guild_id INTEGER NOT NULL,
    user_id  INTEGER NOT NULL,
    opponent TEXT    NOT NULL,
    wins     INTEGER NOT NULL DEFAULT 0,
    losses   INTEGER NOT NULL DEFAULT 0,
    draws    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (guild_id, user_id, opponent)
);

CREATE TABLE ratings (
    guild_id INTEGER NOT NULL,
    user_id  INTEGER NOT NULL,
    rating   REAL    NOT NULL,
    games    INTEGER NOT NULL DEFAULT 0,
    wins     INTEGER NOT NULL DEFAULT 0,
    losses   INTEGER NOT NULL DEFAULT 0,
    draws    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (guild_id, user_id)
);

CREATE INDEX ratings_leaderboard ON ratings (guild_id, rating DESC, games DESC, user_id);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
