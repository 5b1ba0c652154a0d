// Stale absolute writes: price updates arrive out of order and one arrives
// twice. A plain SET is idempotent but lets a late, older value win; a SET
// guarded by the producer's version number ignores anything not newer.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	_ "modernc.org/sqlite"
)

type priceChanged struct {
	version int // assigned by the producer, one higher for every change
	price   int // in cents
}

const (
	plainSet = `UPDATE products SET price = ?, version = ? WHERE id = 'sku-1'`
	// The guard: apply only if this change is newer than what we hold.
	guardedSet = `UPDATE products SET price = ?, version = ?
	               WHERE id = 'sku-1' AND version < ?`
)

func run(ctx context.Context, update string, arrivals []priceChanged) (int, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection, so the in-memory database is shared
	if _, err := db.ExecContext(ctx, `
		CREATE TABLE products (id TEXT PRIMARY KEY, price INTEGER, version INTEGER);
		INSERT INTO products VALUES ('sku-1', 900, 1);`); err != nil {
		return 0, err
	}
	for _, m := range arrivals {
		args := []any{m.price, m.version}
		if update == guardedSet {
			args = append(args, m.version)
		}
		res, err := db.ExecContext(ctx, update, args...)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		fmt.Printf("  v%d price %d: %d row(s) changed\n", m.version, m.price, n)
	}
	var price int
	err = db.QueryRowContext(ctx, `SELECT price FROM products WHERE id = 'sku-1'`).Scan(&price)
	return price, err
}

func main() {
	ctx := context.Background()
	// Published in order v2, v3. Delivered: v3, v3 again (a lost ack), and
	// last of all a delayed copy of v2.
	arrivals := []priceChanged{{3, 1200}, {3, 1200}, {2, 1000}}
	for _, c := range []struct{ name, update string }{
		{"plain set", plainSet},
		{"guarded set", guardedSet},
	} {
		fmt.Println(c.name)
		price, err := run(ctx, c.update, arrivals)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("  final price %d (latest is 1200)\n", price)
	}
}

// Output:
// plain set
//   v3 price 1200: 1 row(s) changed
//   v3 price 1200: 1 row(s) changed
//   v2 price 1000: 1 row(s) changed
//   final price 1000 (latest is 1200)
// guarded set
//   v3 price 1200: 1 row(s) changed
//   v3 price 1200: 0 row(s) changed
//   v2 price 1000: 0 row(s) changed
//   final price 1200 (latest is 1200)
