-- Turn a relative change into a set: record each credit as a row keyed by the
-- message that caused it, and derive the balance from the rows.
CREATE TABLE ledger_entries (
  message_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  amount     INTEGER NOT NULL
);

INSERT INTO ledger_entries VALUES ('msg-1', 'acct-1', 10)
  ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=1

-- The redelivered copy of msg-1 finds its row already there.
INSERT INTO ledger_entries VALUES ('msg-1', 'acct-1', 10)
  ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=0

INSERT INTO ledger_entries VALUES ('msg-2', 'acct-1', 25)
  ON CONFLICT (message_id) DO NOTHING;
-- expect: changes=1

SELECT account_id, SUM(amount) FROM ledger_entries GROUP BY account_id;
-- expect rows: acct-1, 35
