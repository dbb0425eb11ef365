-- The difficulty ladder's hints and reviews: what SQLite's 0006 means. A game against the bot
-- in which its player asked for a hint is "assisted": shown as such, and counted in nobody's
-- stats (a win the bot handed over is no win). A game starts with no hint, as every game
-- before this migration had: the default.
ALTER TABLE games ADD COLUMN assisted BOOLEAN NOT NULL DEFAULT FALSE;

-- /ttt review finds a channel's finished games, the last one first, without reading the
-- games of every other channel.
CREATE INDEX games_finished_by_channel ON games (channel_id, id) WHERE status = 'finished';
