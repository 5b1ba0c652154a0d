-- The producer numbers every change to a product: version 1, 2, 3, ...
CREATE TABLE products (
  id      TEXT PRIMARY KEY,
  price   INTEGER NOT NULL,
  version INTEGER NOT NULL
);
INSERT INTO products VALUES ('sku-1', 900, 1);

-- Version 3 arrives first (version 2 was delayed): it is newer, so it applies.
UPDATE products SET price = 1200, version = 3
 WHERE id = 'sku-1' AND version < 3;
-- expect: changes=1

-- Version 2 arrives late. It is stale: the guard turns it into a no-op.
UPDATE products SET price = 1000, version = 2
 WHERE id = 'sku-1' AND version < 2;
-- expect: changes=0

-- A redelivered copy of version 3 is also a no-op.
UPDATE products SET price = 1200, version = 3
 WHERE id = 'sku-1' AND version < 3;
-- expect: changes=0

SELECT price, version FROM products WHERE id = 'sku-1';
-- expect rows: 1200, 3
