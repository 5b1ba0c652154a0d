-- processed_at is in hours since the start of the story, to keep numbers small.
CREATE TABLE processed_messages (
  message_id   TEXT PRIMARY KEY,
  processed_at INTEGER NOT NULL
);
INSERT INTO processed_messages VALUES ('evt-1', 0), ('evt-2', 30), ('evt-3', 50);

-- Hour 60: the nightly job prunes with a 24-hour retention, so cutoff = 60 - 24 = 36.
DELETE FROM processed_messages WHERE processed_at < 36;
-- expect: changes=2

-- Also hour 60: a retry of evt-1 arrives. The sender retries for up to 72 hours,
-- so this copy is on schedule. Its row is gone: it looks new, and the effect runs again.
INSERT INTO processed_messages VALUES ('evt-1', 60)
ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=1

-- A row still inside the retention protects its message as before.
INSERT INTO processed_messages VALUES ('evt-3', 60)
ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=0
