-- Larger boards (4x4, 5x5): what SQLite's 0003 means, in place. A challenge says the size of
-- the game it starts, and stats and ratings are kept per size, so that a 5x5 win against the
-- bot does not pass for a 3x3 one and each size has its own Elo ladder. Everything before this
-- migration was played on 3x3: the default fills the existing rows, then goes, so that nothing
-- can be written without its size.

ALTER TABLE challenges ADD COLUMN size INTEGER NOT NULL DEFAULT 3 CHECK (size > 0);
ALTER TABLE challenges ALTER COLUMN size DROP DEFAULT;

ALTER TABLE player_stats ADD COLUMN size INTEGER NOT NULL DEFAULT 3 CHECK (size > 0);
ALTER TABLE player_stats ALTER COLUMN size DROP DEFAULT;
ALTER TABLE player_stats DROP CONSTRAINT player_stats_pkey;
ALTER TABLE player_stats ADD PRIMARY KEY (guild_id, user_id, size, opponent);

ALTER TABLE ratings ADD COLUMN size INTEGER NOT NULL DEFAULT 3 CHECK (size > 0);
ALTER TABLE ratings ALTER COLUMN size DROP DEFAULT;
ALTER TABLE ratings DROP CONSTRAINT ratings_pkey;
ALTER TABLE ratings ADD PRIMARY KEY (guild_id, user_id, size);

DROP INDEX ratings_leaderboard;
CREATE INDEX ratings_leaderboard ON ratings (guild_id, size, rating DESC, games DESC, user_id);
