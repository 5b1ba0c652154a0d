-- A failed check's counterexample as a playground state (a query string the
-- web layer wrote), so the class view can open it on the projector.
ALTER TABLE events ADD COLUMN playground TEXT NOT NULL DEFAULT '';
