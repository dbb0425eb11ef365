-- A channel holds one pending challenge or one live game, never both: the database enforces it,
-- so that /ttt start and /ttt vs-ai racing in one channel cannot create one of each, from one
-- process or several. Triggers keep the table in step with games and challenges, whatever code
-- writes them.
--
-- Under READ COMMITTED, a transaction inserting a channel_id that another one has inserted (or
-- deleted) but not committed waits for it, then fails on the primary key or goes ahead: the
-- race is decided by this one key, with no SERIALIZABLE retries.

CREATE TABLE channel_occupants (
    -- Named: the storage tells "channel busy" by this name.
    channel_id   BIGINT CONSTRAINT channel_occupants_one_per_channel PRIMARY KEY,
    game_id      BIGINT UNIQUE REFERENCES games (id),
    challenge_id BIGINT UNIQUE REFERENCES challenges (id),
    CHECK ((game_id IS NULL) <> (challenge_id IS NULL))
);

-- As in SQLite's 0002 (where old databases needed it): live games first, then pending
-- challenges in channels still free.
INSERT INTO channel_occupants (channel_id, game_id)
    SELECT channel_id, id FROM games WHERE status = 'active';
INSERT INTO channel_occupants (channel_id, challenge_id)
    SELECT channel_id, id FROM challenges WHERE status = 'pending'
    ON CONFLICT DO NOTHING;

CREATE FUNCTION game_occupies_channel() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO channel_occupants (channel_id, game_id) VALUES (NEW.channel_id, NEW.id);
    RETURN NULL;
END;
$$;

CREATE FUNCTION game_frees_channel() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM channel_occupants WHERE game_id = OLD.id;
    RETURN NULL;
END;
$$;

CREATE FUNCTION challenge_occupies_channel() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO channel_occupants (channel_id, challenge_id) VALUES (NEW.channel_id, NEW.id);
    RETURN NULL;
END;
$$;

CREATE FUNCTION challenge_frees_channel() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM channel_occupants WHERE challenge_id = OLD.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER game_occupies_channel AFTER INSERT ON games
    FOR EACH ROW WHEN (NEW.status = 'active') EXECUTE FUNCTION game_occupies_channel();

CREATE TRIGGER game_frees_channel AFTER UPDATE OF status ON games
    FOR EACH ROW WHEN (OLD.status = 'active' AND NEW.status <> 'active')
    EXECUTE FUNCTION game_frees_channel();

CREATE TRIGGER challenge_occupies_channel AFTER INSERT ON challenges
    FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION challenge_occupies_channel();

CREATE TRIGGER challenge_frees_channel AFTER UPDATE OF status ON challenges
    FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status <> 'pending')
    EXECUTE FUNCTION challenge_frees_channel();
