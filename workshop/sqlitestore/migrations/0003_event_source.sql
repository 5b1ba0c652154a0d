-- Who vouches for an event: 'server' (a check the server ran, a join, a
-- push) or 'browser' (a goal or quiz answer a learner's page reported).
-- Events stored before came from browsers.
ALTER TABLE events ADD COLUMN source TEXT NOT NULL DEFAULT 'browser';
