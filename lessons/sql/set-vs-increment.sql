-- One warehouse fact, sent two ways. The picker scanned 2 units of sku-7
-- out of a bin that held 40.
CREATE TABLE stock (sku TEXT PRIMARY KEY, on_hand INTEGER NOT NULL);
INSERT INTO stock VALUES ('sku-7', 40);

-- As a change, "2 were picked": each copy of the message subtracts again.
UPDATE stock SET on_hand = on_hand - 2 WHERE sku = 'sku-7';
UPDATE stock SET on_hand = on_hand - 2 WHERE sku = 'sku-7';
SELECT on_hand FROM stock WHERE sku = 'sku-7';
-- expect rows: 36

-- As a result, "38 are left": every copy writes the number already there.
UPDATE stock SET on_hand = 40 WHERE sku = 'sku-7';
UPDATE stock SET on_hand = 38 WHERE sku = 'sku-7';
UPDATE stock SET on_hand = 38 WHERE sku = 'sku-7';
SELECT on_hand FROM stock WHERE sku = 'sku-7';
-- expect rows: 38
