-- One row per message this consumer has applied. The primary key is the
-- whole point: the database refuses a second row for the same id.
CREATE TABLE processed_messages (
  message_id   TEXT PRIMARY KEY,
  processed_at INTEGER NOT NULL  -- unix seconds; used for pruning later
);

-- First delivery of msg-1: the row goes in.
INSERT INTO processed_messages (message_id, processed_at)
VALUES ('msg-1', 1767225600)
ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=1

-- The redelivery: no error, and no row. Zero rows affected means "seen before".
INSERT INTO processed_messages (message_id, processed_at)
VALUES ('msg-1', 1767225660)
ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=0

-- With RETURNING, the same answer arrives as a row or no row.
INSERT INTO processed_messages (message_id, processed_at)
VALUES ('msg-2', 1767225700)
ON CONFLICT (message_id) DO NOTHING
RETURNING message_id;
-- expect rows: msg-2

INSERT INTO processed_messages (message_id, processed_at)
VALUES ('msg-2', 1767225760)
ON CONFLICT (message_id) DO NOTHING
RETURNING message_id;
-- expect rows: none
