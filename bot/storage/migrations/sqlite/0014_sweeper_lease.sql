-- The sweeper's lease (issue 40): under `python -m bot serve` every worker could sweep every
-- server, so a worker sweeps only while it holds this row: it takes the row when it is free
-- or its time ran out, and renews it each sweep. A worker killed mid-sweep is replaced when
-- its lease runs out; each swept item's own compare-and-set makes the half-done sweep safe to
-- redo. A lease, not data: a copy to PostgreSQL leaves it behind.
CREATE TABLE leases (
    name       TEXT NOT NULL PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at REAL NOT NULL
);
