-- Members' data (/ttt my-data, /ttt forget-me) finds everything of one member by their id:
-- without these, each lookup would read every game, challenge and stats row, holding up every
-- move queued behind it. The primary keys of player_stats and ratings start with the guild,
-- so they cannot serve a lookup by member alone.
CREATE INDEX games_by_x ON games (x_id);
CREATE INDEX games_by_o ON games (o_id);
CREATE INDEX challenges_by_challenger ON challenges (challenger_id);
CREATE INDEX challenges_by_opponent ON challenges (opponent_id) WHERE opponent_id IS NOT NULL;
CREATE INDEX player_stats_by_user ON player_stats (user_id);
CREATE INDEX ratings_by_user ON ratings (user_id);
