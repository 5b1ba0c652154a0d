-- One row per (caller, key): what the first request asked for, whether it is
-- still running, and the response to replay once it has finished. The key is
-- scoped to the caller, so two clients that happen to pick the same key never
-- see each other's responses.
CREATE TABLE idempotency_keys (
  caller        TEXT NOT NULL,
  key           TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  locked_at     INTEGER,
  response_code INTEGER,
  response_body TEXT,
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (caller, key)
);

-- The shop's first request claims its key and takes the lock.
INSERT INTO idempotency_keys (caller, key, request_hash, locked_at, created_at)
VALUES ('acct_shop', 'k-1', 'hash-of-amount-100', 1000, 1000)
ON CONFLICT (caller, key) DO NOTHING;
-- expect: changes=1

-- The cafe chose the same key string. It is a different caller: a new row.
INSERT INTO idempotency_keys (caller, key, request_hash, locked_at, created_at)
VALUES ('acct_cafe', 'k-1', 'hash-of-amount-7', 1000, 1000)
ON CONFLICT (caller, key) DO NOTHING;
-- expect: changes=1

-- A concurrent retry from the shop cannot claim it, and finds it locked: 409.
INSERT INTO idempotency_keys (caller, key, request_hash, locked_at, created_at)
VALUES ('acct_shop', 'k-1', 'hash-of-amount-100', 1001, 1001)
ON CONFLICT (caller, key) DO NOTHING;
-- expect: changes=0
SELECT request_hash, locked_at IS NOT NULL, response_code FROM idempotency_keys
 WHERE caller = 'acct_shop' AND key = 'k-1';
-- expect rows: hash-of-amount-100, 1, NULL

-- The first request finishes: release the lock and store the response, in the
-- same transaction as the work. The update is fenced on the lock it took; a
-- request whose stale lock was taken over (locked_at changed) matches nothing
-- and must roll its work back.
UPDATE idempotency_keys
   SET locked_at = NULL, response_code = 201, response_body = '{"payment":"pay_1"}'
 WHERE caller = 'acct_shop' AND key = 'k-1' AND locked_at = 1000;
-- expect: changes=1

-- A takeover: the cafe's request died. After the lock timeout a retry moves
-- the lock to itself, and the old request's fenced finish then matches nothing.
UPDATE idempotency_keys SET locked_at = 1200
 WHERE caller = 'acct_cafe' AND key = 'k-1' AND locked_at = 1000;
-- expect: changes=1
UPDATE idempotency_keys
   SET locked_at = NULL, response_code = 201, response_body = '{"payment":"pay_2"}'
 WHERE caller = 'acct_cafe' AND key = 'k-1' AND locked_at = 1000;
-- expect: changes=0

-- A later retry from the shop replays the stored response.
SELECT response_code, response_body FROM idempotency_keys
 WHERE caller = 'acct_shop' AND key = 'k-1' AND request_hash = 'hash-of-amount-100';
-- expect rows: 201, {"payment":"pay_1"}

-- The same key with a different payload matches nothing: answer 422.
SELECT response_code FROM idempotency_keys
 WHERE caller = 'acct_shop' AND key = 'k-1' AND request_hash = 'hash-of-amount-200';
-- expect rows: none

-- Expiry, at time 87401: finished keys older than 24 hours (86,400 s) go.
-- The cutoff is 87401 - 86400 = 1001.
DELETE FROM idempotency_keys WHERE created_at < 1001 AND locked_at IS NULL;
-- expect: changes=1
