-- bot.threads' memory of games' threads, shared by every process (issue 40: any
-- `python -m bot serve` worker may be given the next start in a channel).
--
-- thread_suspects: threads off a channel that may be empty and the bot's, looked for before the
-- next thread there is opened, by whichever worker opens it: by name (`name`, the SHA-256 of
-- the name asked of Discord, bot.threads.name_digest: no player's name), those a dropped
-- connection may have made (their ids unknown); by id (`thread_id`), those whose game may not be
-- stored. Exactly one of the two is set. Taken (deleted) by the one worker that looks. Written
-- only after a dropped connection or a failed start, so the table is empty almost always; the
-- sweeper removes rows older than Discord keeps an idle thread active (by then it is archived
-- and no longer listed).
--
-- thread_claims: threads just opened or taken for a game, spared by that search while the game
-- is stored. One row per thread, written when a thread is opened; the sweeper removes the rows
-- older than a claim lasts (bot.threads.CLAIM_SECONDS). Neither table is data: a copy to
-- PostgreSQL leaves them behind.
CREATE TABLE thread_suspects (
    channel_id INTEGER NOT NULL,
    name       TEXT,
    thread_id  INTEGER,
    noted_at   REAL    NOT NULL,
    CHECK ((name IS NULL) <> (thread_id IS NULL))
);
CREATE INDEX thread_suspects_by_channel ON thread_suspects (channel_id);

CREATE TABLE thread_claims (
    thread_id  INTEGER NOT NULL PRIMARY KEY,
    channel_id INTEGER NOT NULL,
    claimed_at REAL    NOT NULL
);
CREATE INDEX thread_claims_by_channel ON thread_claims (channel_id);
