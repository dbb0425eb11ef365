-- What SQLite's 0015 means. The interactions `python -m bot serve` was given (issue 40), by
-- Discord's id, with the timestamp Discord signed each with. A request sent again (a replay)
-- must change nothing whichever worker it reaches: each worker inserts the id before anything
-- acts on it, and the insert of an id already here inserts nothing, which refuses the request.
-- A row matters while a request signed at its time is still accepted
-- (bot.endpoint.STALE_AFTER); the sweeper then removes it. No index on signed_at: the table
-- holds a couple of minutes of interactions, so the sweeper's scan is cheap, and every
-- interaction would pay for the index. Not data: a copy from SQLite leaves it behind.
CREATE TABLE interactions_seen (
    id        BIGINT           NOT NULL PRIMARY KEY,
    signed_at DOUBLE PRECISION NOT NULL
);
