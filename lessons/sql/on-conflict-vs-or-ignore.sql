-- Name the conflict you expect. ON CONFLICT (message_id) DO NOTHING skips only
-- a duplicate id; INSERT OR IGNORE also hides unrelated mistakes.
CREATE TABLE processed_messages (
  message_id   TEXT PRIMARY KEY,
  processed_at INTEGER NOT NULL
);

-- A bug: processed_at is missing. The upsert still reports it.
INSERT INTO processed_messages (message_id, processed_at)
VALUES ('msg-1', NULL)
ON CONFLICT (message_id) DO NOTHING;
-- expect: error NOT NULL constraint failed

-- INSERT OR IGNORE swallows the same bug and silently inserts nothing.
INSERT OR IGNORE INTO processed_messages (message_id, processed_at)
VALUES ('msg-1', NULL);
-- expect: changes=0
