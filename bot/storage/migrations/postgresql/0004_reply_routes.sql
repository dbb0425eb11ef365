-- Channels the bot is not in (a group DM, a DM between members, a server where only a member
-- installed the app): it can show and edit messages there only through an interaction's token,
-- valid 15 minutes. One row per such channel: the token of its latest interaction that showed
-- a game or challenge, the message that token can edit, and a game settled while no token was
-- valid, which the next interaction there shows.
CREATE TABLE reply_routes (
    channel_id     BIGINT PRIMARY KEY,
    token          TEXT             NOT NULL,
    expires_at     DOUBLE PRECISION NOT NULL,
    message_id     BIGINT           NOT NULL,
    unseen_game_id BIGINT REFERENCES games (id)
);
