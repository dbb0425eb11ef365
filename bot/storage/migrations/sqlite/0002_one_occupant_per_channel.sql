-- A channel holds one pending challenge or one live game, never both: the database enforces it,
-- so that /ttt start and /ttt vs-ai racing in one channel cannot create one of each.
-- Triggers keep the table in step with games and challenges, whatever code writes them.

CREATE TABLE channel_occupants (
    channel_id   INTEGER PRIMARY KEY,
    game_id      INTEGER UNIQUE REFERENCES games (id),
    challenge_id INTEGER UNIQUE REFERENCES challenges (id),
    CHECK ((game_id IS NULL) <> (challenge_id IS NULL))
);

-- Databases from before this migration: live games first; a challenge that the old race left
-- beside a live game in the same channel keeps no claim (it still expires as usual).
INSERT INTO channel_occupants (channel_id, game_id)
    SELECT channel_id, id FROM games WHERE status = 'active';
INSERT OR IGNORE INTO channel_occupants (channel_id, challenge_id)
    SELECT channel_id, id FROM challenges WHERE status = 'pending';

CREATE TRIGGER game_occupies_channel AFTER INSERT ON games WHEN NEW.status = 'active'
BEGIN
    INSERT INTO channel_occupants (channel_id, game_id) VALUES (NEW.channel_id, NEW.id);
END;

CREATE TRIGGER game_frees_channel AFTER UPDATE OF status ON games
    WHEN OLD.status = 'active' AND NEW.status <> 'active'
BEGIN
    DELETE FROM channel_occupants WHERE game_id = OLD.id;
END;

CREATE TRIGGER challenge_occupies_channel AFTER INSERT ON challenges
    WHEN NEW.status = 'pending'
BEGIN
    INSERT INTO channel_occupants (channel_id, challenge_id) VALUES (NEW.channel_id, NEW.id);
END;

CREATE TRIGGER challenge_frees_channel AFTER UPDATE OF status ON challenges
    WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
BEGIN
    DELETE FROM channel_occupants WHERE challenge_id = OLD.id;
END;
