-- Server settings: what a server's admins chose (where games are played, who plays, timeouts,
-- language, limits, the default board size), one row a setting, with who changed it last and
-- when. A NULL value is a setting reset to its default: the row keeps who reset it.
CREATE TABLE guild_settings (
    guild_id   INTEGER NOT NULL,
    key        TEXT    NOT NULL,
    value      TEXT,
    changed_by INTEGER NOT NULL,
    changed_at REAL    NOT NULL,
    PRIMARY KEY (guild_id, key)
);

-- A game's turn clock, in seconds, as its server's settings had it when the game started: a
-- change of the setting applies to the games started after it, as a tournament's clock does.
-- NULL: the bot's own TTT_TURN_TIMEOUT (every game from before).
ALTER TABLE games ADD COLUMN turn_timeout REAL CHECK (turn_timeout > 0);

-- A game's marks for X and for O, as its server's settings had them when it started (an emoji
-- as Discord writes it in a message: a Unicode one, or <:name:id> for a custom one). NULL: the
-- bot's own, as every game from before has.
ALTER TABLE games ADD COLUMN mark_x TEXT;
ALTER TABLE games ADD COLUMN mark_o TEXT;

-- A game the bot opened a thread of its own for (a server's "games in threads" setting): that
-- thread is archived once the game is over. 0 for every game from before.
ALTER TABLE games ADD COLUMN own_thread INTEGER NOT NULL DEFAULT 0 CHECK (own_thread IN (0, 1));

-- The limits of a server count a member's live games and find their last challenge.
CREATE INDEX games_active_by_x ON games (guild_id, x_id) WHERE status = 'active';
CREATE INDEX games_active_by_o ON games (guild_id, o_id) WHERE status = 'active';
CREATE INDEX challenges_by_guild_and_challenger ON challenges (guild_id, challenger_id, created_at);
