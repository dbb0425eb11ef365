-- Members' data (/ttt my-data, /ttt forget-me): what SQLite's 0008 means. Everything of one
-- member is found by their id, without reading every game, challenge and stats row; the
-- primary keys of player_stats and ratings start with the guild, so they cannot serve it.
CREATE INDEX games_by_x ON games (x_id);
CREATE INDEX games_by_o ON games (o_id);
CREATE INDEX challenges_by_challenger ON challenges (challenger_id);
CREATE INDEX challenges_by_opponent ON challenges (opponent_id) WHERE opponent_id IS NOT NULL;
CREATE INDEX player_stats_by_user ON player_stats (user_id);
CREATE INDEX ratings_by_user ON ratings (user_id);
