-- The difficulty ladder's hints and reviews. A game against the bot in which its player asked
-- for a hint is "assisted": shown as such, and counted in nobody's stats (a win the bot
-- handed over is no win). Every game before this migration had no hint: 0.
ALTER TABLE games ADD COLUMN assisted INTEGER NOT NULL DEFAULT 0 CHECK (assisted IN (0, 1));

-- /ttt review finds a channel's finished games, the last one first, without reading the
-- games of every other channel.
CREATE INDEX games_finished_by_channel ON games (channel_id, id) WHERE status = 'finished';
