-- Reconciling an order flow with the payment provider. Our side: orders and
-- the state each reached. The provider's side: the charges it made, listed
-- through its API and loaded here, each with the idempotency key we sent
-- (the order id).
CREATE TABLE orders (id TEXT PRIMARY KEY, amount INTEGER NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE provider_charges (charge_id TEXT PRIMARY KEY, idempotency_key TEXT NOT NULL, amount INTEGER NOT NULL);

-- ord-51 finished. ord-52 was charged, and the worker died before it
-- recorded 'charged'. ord-53 is still waiting for its charge, too long.
-- ord-54 says 'charged', but the provider has no such charge.
INSERT INTO orders VALUES ('ord-51', 900, 'confirmed', 100), ('ord-52', 450, 'reserved', 110),
  ('ord-53', 300, 'reserved', 120), ('ord-54', 700, 'charged', 130);
INSERT INTO provider_charges VALUES ('ch_1', 'ord-51', 900), ('ch_2', 'ord-52', 450);

-- Flows stuck in the middle: not finished, not cancelled, and untouched for
-- longer than a redelivery would take (here: before tick 1000 - 600).
SELECT id, state FROM orders
 WHERE state NOT IN ('confirmed', 'cancelled') AND updated_at < 1000 - 600 ORDER BY id;
-- expect rows: ord-52, reserved; ord-53, reserved; ord-54, charged

-- Charged at the provider but not recorded here: the crash window after the
-- call. Moving the recovery point on is safe, guarded by the state.
UPDATE orders SET state = 'charged', updated_at = 1000
 WHERE state = 'reserved' AND id IN (SELECT idempotency_key FROM provider_charges);
-- expect: changes=1

-- Recorded as charged with no charge at the provider: a bug or a refund, for
-- a person to look at, never for a script to "fix".
SELECT o.id FROM orders o
 WHERE o.state IN ('charged', 'confirmed')
   AND NOT EXISTS (SELECT 1 FROM provider_charges p WHERE p.idempotency_key = o.id);
-- expect rows: ord-54
