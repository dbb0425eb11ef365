-- Larger boards (4x4, 5x5): a challenge says the size of the game it starts, and stats and
-- ratings are kept per size, so that a 5x5 win against the bot does not pass for a 3x3 one
-- and each size has its own Elo ladder. Everything before this migration was played on 3x3.

-- ADD COLUMN needs a default for NOT NULL; the storage always writes the size itself.
ALTER TABLE challenges ADD COLUMN size INTEGER NOT NULL DEFAULT 3 CHECK (size > 0);

-- SQLite cannot change a primary key in place: each table is rebuilt with size in its key.
CREATE TABLE player_stats_by_size (
    guild_id INTEGER NOT NULL,
    user_id  INTEGER NOT NULL,
    size     INTEGER NOT NULL CHECK (size > 0),
    opponent TEXT    NOT NULL,
    wins     INTEGER NOT NULL DEFAULT 0,
    losses   INTEGER NOT NULL DEFAULT 0,
    draws    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (guild_id, user_id, size, opponent)
);
INSERT INTO player_stats_by_size (guild_id, user_id, size, opponent, wins, losses, draws)
    SELECT guild_id, user_id, 3, opponent, wins, losses, draws FROM player_stats;
DROP TABLE player_stats;
ALTER TABLE player_stats_by_size RENAME TO player_stats;

CREATE TABLE ratings_by_size (
    guild_id INTEGER NOT NULL,
    user_id  INTEGER NOT NULL,
    size     INTEGER NOT NULL CHECK (size > 0),
    rating   REAL    NOT NULL,
    games    INTEGER NOT NULL DEFAULT 0,
    wins     INTEGER NOT NULL DEFAULT 0,
    losses   INTEGER NOT NULL DEFAULT 0,
    draws    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (guild_id, user_id, size)
);
INSERT INTO ratings_by_size (guild_id, user_id, size, rating, games, wins, losses, draws)
    SELECT guild_id, user_id, 3, rating, games, wins, losses, draws FROM ratings;
-- Dropping the table drops its leaderboard index too; it comes back with size in it.
DROP TABLE ratings;
ALTER TABLE ratings_by_size RENAME TO ratings;
CREATE INDEX ratings_leaderboard ON ratings (guild_id, size, rating DESC, games DESC, user_id);
