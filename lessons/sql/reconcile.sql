-- Reconciling marks with effects. Each credit row names the message that
-- caused it, so a nightly query can find the two failures a counter cannot:
-- a mark whose effect never committed, and an effect applied more than once.
CREATE TABLE processed_messages (message_id TEXT PRIMARY KEY, processed_at INTEGER NOT NULL);
CREATE TABLE credits (id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, account_id TEXT NOT NULL, amount INTEGER NOT NULL);

-- inv-201 went well; inv-202's mark committed but its credit did not (a mark
-- written in its own transaction, then a crash); inv-203 was credited twice by
-- a handler that had no mark at all on one of its paths.
INSERT INTO processed_messages VALUES ('inv-201', 100), ('inv-202', 160), ('inv-203', 220);
INSERT INTO credits (message_id, account_id, amount) VALUES
  ('inv-201', 'acc-9', 40), ('inv-203', 'acc-9', 15), ('inv-203', 'acc-9', 15);

-- Marks without an effect: lost work, invisible to a duplicate counter,
-- because every later copy of inv-202 was counted as a harmless duplicate.
SELECT p.message_id FROM processed_messages p
 WHERE NOT EXISTS (SELECT 1 FROM credits c WHERE c.message_id = p.message_id);
-- expect rows: inv-202

-- Effects applied more than once: what a duplicate that slipped through costs.
SELECT message_id, count(*) FROM credits GROUP BY message_id HAVING count(*) > 1;
-- expect rows: inv-203, 2
