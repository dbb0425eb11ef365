-- What SQLite's 0013 means. Seasons (bot/seasons.py). A season's table is replayed from its
-- rated games: the games between members of a guild on one size, found by when they
-- finished, without reading the guild's other games.
CREATE INDEX games_rated_by_guild_and_end ON games (guild_id, size, updated_at, id)
    WHERE status = 'finished' AND ai_mark IS NULL;

-- A guild's season whose end was seen to (its top three announced, or nothing to announce):
-- the process that inserts the row is the one that announces it, so that each season is
-- announced once however many processes sweep, and after a restart.
CREATE TABLE season_announcements (
    guild_id     BIGINT           NOT NULL,
    season       TEXT             NOT NULL,
    announced_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (guild_id, season)
);
-- The sweeper looks for those seasons every few seconds: the guilds with a channel for
-- announcements, found without reading every server's every setting.
CREATE INDEX guild_settings_by_key ON guild_settings (key, changed_at) WHERE value IS NOT NULL;
