-- What SQLite's 0010 means. Finished games removed for their age
-- (TTT_KEEP_FINISHED_GAMES_DAYS): the sweeper deletes a small batch at a time, the oldest
-- first, by when they were last saved (their end).
CREATE INDEX games_finished_by_age ON games (updated_at, id) WHERE status = 'finished';
-- Challenges closed without a game (declined, withdrawn, expired) go by their age too.
CREATE INDEX challenges_closed_by_age ON challenges (created_at, id)
    WHERE status <> 'pending' AND game_id IS NULL;
-- What points at a deleted game is found without reading the whole table, by the deletion and
-- by the foreign key checks it makes: the challenge that started it, and a reply route that
-- still had it to show (a rematch's rematch_of is unique, so indexed already).
CREATE INDEX challenges_by_game ON challenges (game_id) WHERE game_id IS NOT NULL;
CREATE INDEX reply_routes_by_unseen_game ON reply_routes (unseen_game_id)
    WHERE unseen_game_id IS NOT NULL;
