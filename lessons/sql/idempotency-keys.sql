-- One row per key: what the first request asked for, whether it is still
-- running, and the response to replay once it has finished.
CREATE TABLE idempotency_keys (
  key           TEXT PRIMARY KEY,
  request_hash  TEXT NOT NULL,
  locked_at     INTEGER,
  response_code INTEGER,
  response_body TEXT,
  created_at    INTEGER NOT NULL
);

-- The first request claims the key and takes the lock.
INSERT INTO idempotency_keys (key, request_hash, locked_at, created_at)
VALUES ('k-1', 'hash-of-amount-100', 1000, 1000)
ON CONFLICT (key) DO NOTHING;
-- expect: changes=1

-- A concurrent retry cannot claim it, and finds it locked: answer 409.
INSERT INTO idempotency_keys (key, request_hash, locked_at, created_at)
VALUES ('k-1', 'hash-of-amount-100', 1001, 1001)
ON CONFLICT (key) DO NOTHING;
-- expect: changes=0
SELECT request_hash, locked_at IS NOT NULL, response_code FROM idempotency_keys WHERE key = 'k-1';
-- expect rows: hash-of-amount-100, 1, NULL

-- The first request finishes: release the lock and store the response,
-- in the same transaction as the work itself.
UPDATE idempotency_keys
   SET locked_at = NULL, response_code = 201, response_body = '{"payment":"pay_1"}'
 WHERE key = 'k-1' AND locked_at = 1000;
-- expect: changes=1

-- A later retry replays the stored response.
SELECT response_code, response_body FROM idempotency_keys
 WHERE key = 'k-1' AND request_hash = 'hash-of-amount-100';
-- expect rows: 201, {"payment":"pay_1"}

-- The same key with a different payload matches nothing: answer 422.
SELECT response_code FROM idempotency_keys
 WHERE key = 'k-1' AND request_hash = 'hash-of-amount-200';
-- expect rows: none

-- Expiry, at time 87401: finished keys older than 24 hours (86,400 s) go.
-- The cutoff is 87401 - 86400 = 1001.
DELETE FROM idempotency_keys WHERE created_at < 1001 AND locked_at IS NULL;
-- expect: changes=1
