-- Several consumers share one database. Each must dedupe on its own:
-- the same event can be new to the mailer and already done for billing.
CREATE TABLE processed_messages (
  consumer     TEXT NOT NULL,
  message_id   TEXT NOT NULL,
  processed_at INTEGER NOT NULL,
  PRIMARY KEY (consumer, message_id)
);

INSERT INTO processed_messages VALUES ('billing', 'evt-7', 1767225600)
ON CONFLICT (consumer, message_id) DO NOTHING;
-- expect: changes=1

INSERT INTO processed_messages VALUES ('mailer', 'evt-7', 1767225601)
ON CONFLICT (consumer, message_id) DO NOTHING;
-- expect: changes=1

INSERT INTO processed_messages VALUES ('billing', 'evt-7', 1767225700)
ON CONFLICT (consumer, message_id) DO NOTHING;
-- expect: changes=0
