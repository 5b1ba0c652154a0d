-- An event's number holds a chaos re-run's push id, and event ids start at
-- Unix milliseconds × 1000 (raiseEventIDs): past 32 bits. integer refused
-- every chaos_run on PostgreSQL.
ALTER TABLE events ALTER COLUMN number TYPE bigint;
