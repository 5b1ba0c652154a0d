-- An account and an order, as the handlers see them.
CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE orders (id TEXT PRIMARY KEY, state TEXT NOT NULL);
INSERT INTO accounts VALUES ('acct-1', 100);
INSERT INTO orders VALUES ('order-1', 'paid');

-- A relative change: the same message applied twice moves the balance twice.
UPDATE accounts SET balance = balance + 10 WHERE id = 'acct-1';
UPDATE accounts SET balance = balance + 10 WHERE id = 'acct-1';
SELECT balance FROM accounts WHERE id = 'acct-1';
-- expect rows: 120

-- An absolute write: the second run writes what is already there.
UPDATE orders SET state = 'shipped' WHERE id = 'order-1';
UPDATE orders SET state = 'shipped' WHERE id = 'order-1';
SELECT state FROM orders WHERE id = 'order-1';
-- expect rows: shipped
