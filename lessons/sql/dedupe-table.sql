-- A receipt per message that has taken effect. No code compares ids: the
-- primary key makes a second receipt for the same message impossible.
CREATE TABLE processed_messages (
  message_id   TEXT PRIMARY KEY,
  processed_at INTEGER NOT NULL  -- unix seconds; used for pruning later
);

-- First delivery of msg-1: the row goes in.
INSERT INTO processed_messages (message_id, processed_at)
VALUES ('msg-1', 1767225600)
ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=1

-- The copy: no error, no new row, and a count of 0 that says "an earlier run got here".
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
