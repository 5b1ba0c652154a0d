CREATE TABLE orders (id TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE outbox (
  id           TEXT PRIMARY KEY,  -- the message id consumers will dedupe on
  topic        TEXT NOT NULL,
  payload      TEXT NOT NULL,
  published_at INTEGER            -- NULL until the relay has sent it
);
INSERT INTO orders VALUES ('order-1', 'paid');

-- The handler: the state change and the outgoing message, in one transaction.
BEGIN;
UPDATE orders SET state = 'shipped' WHERE id = 'order-1' AND state = 'paid';
-- expect: changes=1
INSERT INTO outbox (id, topic, payload)
VALUES ('order-1:shipped', 'orders', '{"order":"order-1"}');
-- expect: changes=1
COMMIT;

-- The relay: find what has not been sent yet, oldest first.
SELECT id, topic FROM outbox WHERE published_at IS NULL ORDER BY rowid;
-- expect rows: order-1:shipped, orders

-- After the broker confirms the publish, mark the row.
UPDATE outbox SET published_at = 1767225600
 WHERE id = 'order-1:shipped' AND published_at IS NULL;
-- expect: changes=1

SELECT id FROM outbox WHERE published_at IS NULL;
-- expect rows: none
