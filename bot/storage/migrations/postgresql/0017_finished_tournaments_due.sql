-- A finished tournament is due until its podium is marked posted (due_at: when it finished,
-- cleared by the mark): a process killed, or a database failing, between the end's save and
-- that mark leaves the podium, and the message's final standings, to the next sweep rather
-- than to nobody. The sweeper's query reads these beside tournaments_due's.
CREATE INDEX tournaments_finishing ON tournaments (due_at)
    WHERE status = 'finished' AND due_at IS NOT NULL;
