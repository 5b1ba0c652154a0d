-- Seat holds at a venue: a hold is 'held' until the payment for it is
-- confirmed, or 'released' when its ten minutes run out. Confirming is the
-- arrow held -> confirmed, and it records which message drew it.
CREATE TABLE seat_holds (
  id           TEXT PRIMARY KEY,
  status       TEXT NOT NULL CHECK (status IN ('held', 'confirmed', 'released')),
  confirmed_by TEXT,
  confirmed_at INTEGER
);
INSERT INTO seat_holds (id, status) VALUES ('hold-A12', 'held'), ('hold-B03', 'released');

-- pay-881 confirms hold-A12. The row is still 'held', so the arrow is drawn,
-- and RETURNING hands back the row this statement moved.
UPDATE seat_holds SET status = 'confirmed', confirmed_by = 'pay-881', confirmed_at = 1767300000
 WHERE id = 'hold-A12' AND status = 'held'
RETURNING id;
-- expect rows: hold-A12

-- pay-881 arrives again. The row has left 'held', so the same statement
-- matches nothing, returns nothing, and leaves the first confirmation alone.
UPDATE seat_holds SET status = 'confirmed', confirmed_by = 'pay-881', confirmed_at = 1767300420
 WHERE id = 'hold-A12' AND status = 'held'
RETURNING id;
-- expect rows: none
SELECT status, confirmed_by, confirmed_at FROM seat_holds WHERE id = 'hold-A12';
-- expect rows: confirmed, pay-881, 1767300000

-- pay-907 comes for hold-B03, whose time ran out: no row either, for a
-- different reason. The recorded confirmed_by tells the two apart.
UPDATE seat_holds SET status = 'confirmed', confirmed_by = 'pay-907', confirmed_at = 1767300500
 WHERE id = 'hold-B03' AND status = 'held'
RETURNING id;
-- expect rows: none
SELECT id, status, confirmed_by FROM seat_holds ORDER BY id;
-- expect rows: hold-A12, confirmed, pay-881; hold-B03, released, NULL
