// A conditional write as a state-machine transition: ship an order only if
// it is paid. The rows-affected count says whether this run did the
// transition; when it did not, one read says why.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	_ "modernc.org/sqlite"
)

const schema = `
CREATE TABLE orders (id TEXT PRIMARY KEY, state TEXT NOT NULL, shipped_at INTEGER);
INSERT INTO orders VALUES ('order-1', 'paid', NULL), ('order-2', 'pending', NULL);`

// ship handles a "ship this order" message. Every outcome it returns is
// final: retrying the message would produce the same answer, so the caller
// acks in all of them and only an error leads to a redelivery.
func ship(ctx context.Context, db *sql.DB, orderID string, now int64) (string, error) {
	res, err := db.ExecContext(ctx, `
		UPDATE orders SET state = 'shipped', shipped_at = ?
		 WHERE id = ? AND state = 'paid'`, now, orderID)
	if err != nil {
		return "", err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return "", err
	}
	if n == 1 {
		return "shipped by this run", nil
	}
	// Zero rows: find out which precondition failed, for the log.
	var state string
	err = db.QueryRowContext(ctx, `SELECT state FROM orders WHERE id = ?`, orderID).Scan(&state)
	switch {
	case err == sql.ErrNoRows:
		return "no such order: ack and report", nil
	case err != nil:
		return "", err
	case state == "shipped":
		return "already shipped: a duplicate, ack", nil
	default:
		return "not shipped, order is " + state + ": ack and report", nil
	}
}

func main() {
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		log.Fatal(err)
	}
	for i, orderID := range []string{"order-1", "order-1", "order-2", "order-9"} {
		outcome, err := ship(ctx, db, orderID, int64(1000+i))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("ship %s: %s\n", orderID, outcome)
	}
	var shippedAt int64
	if err := db.QueryRowContext(ctx,
		`SELECT shipped_at FROM orders WHERE id = 'order-1'`).Scan(&shippedAt); err != nil {
		log.Fatal(err)
	}
	fmt.Println("order-1 shipped_at:", shippedAt)
}

// Output:
// ship order-1: shipped by this run
// ship order-1: already shipped: a duplicate, ack
// ship order-2: not shipped, order is pending: ack and report
// ship order-9: no such order: ack and report
// order-1 shipped_at: 1000
