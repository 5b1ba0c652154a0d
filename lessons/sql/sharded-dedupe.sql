-- Two shards of a wallet service, drawn as two sets of tables (s1_, s2_) in
-- one file. Each shard holds some accounts and its own dedupe table; nothing
-- commits across shards. Transfer tr-88 moves 30 from w-1 (shard 1) to w-7
-- (shard 2), so it has two legs, and each leg is deduplicated on the shard
-- where its effect lands, keyed by (message, leg).
CREATE TABLE s1_wallets (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE s1_processed (message_id TEXT, leg TEXT, processed_at INTEGER NOT NULL,
                           PRIMARY KEY (message_id, leg));
CREATE TABLE s2_wallets (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE s2_processed (message_id TEXT, leg TEXT, processed_at INTEGER NOT NULL,
                           PRIMARY KEY (message_id, leg));
INSERT INTO s1_wallets VALUES ('w-1', 100);
INSERT INTO s2_wallets VALUES ('w-7', 0);

-- Leg 1, on shard 1: receipt and debit in one transaction of shard 1.
BEGIN;
INSERT INTO s1_processed VALUES ('tr-88', 'debit', 1000) ON CONFLICT DO NOTHING;
-- expect: changes=1
UPDATE s1_wallets SET balance = balance - 30 WHERE id = 'w-1';
-- expect: changes=1
COMMIT;

-- Leg 2, on shard 2, in shard 2's own transaction.
BEGIN;
INSERT INTO s2_processed VALUES ('tr-88', 'credit', 1001) ON CONFLICT DO NOTHING;
-- expect: changes=1
UPDATE s2_wallets SET balance = balance + 30 WHERE id = 'w-7';
-- expect: changes=1
COMMIT;

-- tr-88 is redelivered. Each leg finds its own receipt on its own shard and
-- stops; a crash between the legs would have left exactly one of them to do.
INSERT INTO s1_processed VALUES ('tr-88', 'debit', 1060) ON CONFLICT DO NOTHING;
-- expect: changes=0
INSERT INTO s2_processed VALUES ('tr-88', 'credit', 1061) ON CONFLICT DO NOTHING;
-- expect: changes=0

SELECT (SELECT balance FROM s1_wallets WHERE id = 'w-1'), (SELECT balance FROM s2_wallets WHERE id = 'w-7');
-- expect rows: 70, 30
