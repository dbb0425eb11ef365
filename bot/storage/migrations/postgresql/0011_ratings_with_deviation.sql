-- What SQLite's 0011 means. Ratings that know how sure they are (bot/results.py): beside each
-- rating, its deviation and when its last rated game ended (the deviation grows from then).
-- The values are recomputed by replaying every stored rated game in the order they finished,
-- in this same transaction (bot/storage/migrations: DataStep.REPLAY_RATINGS). 350 is
-- bot.results.INITIAL_DEVIATION: a rating whose games were all pruned keeps its value and
-- becomes as unsure as a newcomer's.
ALTER TABLE ratings ADD COLUMN deviation DOUBLE PRECISION NOT NULL DEFAULT 350;
ALTER TABLE ratings ADD COLUMN last_played DOUBLE PRECISION;
