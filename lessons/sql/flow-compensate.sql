-- An order flow with three steps: reserve stock, charge the card (at a
-- provider, outside this database), mark the order confirmed. The order's
-- state is its recovery point, and every write below names the state it
-- needs, so running any step twice changes nothing the second time.
CREATE TABLE stock (sku TEXT PRIMARY KEY, free INTEGER NOT NULL, reserved INTEGER NOT NULL);
CREATE TABLE orders (id TEXT PRIMARY KEY, sku TEXT NOT NULL, qty INTEGER NOT NULL,
                     state TEXT NOT NULL, updated_at INTEGER NOT NULL);
INSERT INTO stock VALUES ('lamp-3', 10, 0);

-- Step 1, one transaction: the reservation commits with the order row that
-- records it. A second run of this step finds the order and reserves nothing.
BEGIN;
UPDATE stock SET free = free - 2, reserved = reserved + 2
 WHERE sku = 'lamp-3' AND NOT EXISTS (SELECT 1 FROM orders WHERE id = 'ord-41');
-- expect: changes=1
INSERT INTO orders VALUES ('ord-41', 'lamp-3', 2, 'reserved', 100) ON CONFLICT (id) DO NOTHING;
-- expect: changes=1
COMMIT;

-- The charge is declined, so step 2 cannot happen. The compensation undoes
-- step 1's business effect in one transaction with the state that says so.
BEGIN;
UPDATE stock SET free = free + 2, reserved = reserved - 2
 WHERE sku = 'lamp-3' AND EXISTS (SELECT 1 FROM orders WHERE id = 'ord-41' AND state = 'reserved');
-- expect: changes=1
UPDATE orders SET state = 'cancelled', updated_at = 160 WHERE id = 'ord-41' AND state = 'reserved';
-- expect: changes=1
COMMIT;

-- The message is redelivered and the compensation runs again: the state is
-- no longer 'reserved', so it releases nothing a second time.
BEGIN;
UPDATE stock SET free = free + 2, reserved = reserved - 2
 WHERE sku = 'lamp-3' AND EXISTS (SELECT 1 FROM orders WHERE id = 'ord-41' AND state = 'reserved');
-- expect: changes=0
UPDATE orders SET state = 'cancelled', updated_at = 220 WHERE id = 'ord-41' AND state = 'reserved';
-- expect: changes=0
COMMIT;

SELECT free, reserved FROM stock WHERE sku = 'lamp-3';
-- expect rows: 10, 0
