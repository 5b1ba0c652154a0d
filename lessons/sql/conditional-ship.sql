-- A state machine: pending -> paid -> shipped. Each transition names the
-- state it starts from, so it can only happen once.
CREATE TABLE orders (
  id         TEXT PRIMARY KEY,
  state      TEXT NOT NULL CHECK (state IN ('pending', 'paid', 'shipped')),
  shipped_at INTEGER
);
INSERT INTO orders VALUES ('order-1', 'paid', NULL), ('order-2', 'pending', NULL);

-- ship-1 for order-1: the order is paid, so the transition happens.
UPDATE orders SET state = 'shipped', shipped_at = 1767225600
 WHERE id = 'order-1' AND state = 'paid';
-- expect: changes=1

-- ship-1 redelivered: the order is no longer 'paid', so nothing matches.
UPDATE orders SET state = 'shipped', shipped_at = 1767229200
 WHERE id = 'order-1' AND state = 'paid';
-- expect: changes=0

-- The first shipping time survives the duplicate.
SELECT state, shipped_at FROM orders WHERE id = 'order-1';
-- expect rows: shipped, 1767225600

-- ship-2 for order-2, which was never paid: also nothing matches.
UPDATE orders SET state = 'shipped', shipped_at = 1767225600
 WHERE id = 'order-2' AND state = 'paid';
-- expect: changes=0

-- Zero rows has two meanings; one read tells them apart.
SELECT id, state FROM orders ORDER BY id;
-- expect rows: order-1, shipped; order-2, pending
