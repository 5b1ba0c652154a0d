// The transactional outbox: a handler that ships an order and must announce
// it. Publishing straight to the broker next to the database commit can lose
// the announcement; writing it to an outbox table in the same transaction
// cannot. A relay publishes the outbox, at least once.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"

	_ "modernc.org/sqlite"
)

const schema = `
CREATE TABLE orders (id TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE outbox (
	id           TEXT PRIMARY KEY,  -- becomes the message id downstream
	topic        TEXT NOT NULL,
	payload      TEXT NOT NULL,
	published_at INTEGER            -- NULL until the relay has sent it
);
INSERT INTO orders VALUES ('order-1', 'paid');`

var errCrash = errors.New("crash")

// broker records what was published; consumer dedupes on the message id.
type broker struct{ published []string }

type consumer struct {
	seen    map[string]bool
	applied int
}

func (c *consumer) receive(id string) {
	if c.seen[id] { // in a real consumer: the dedupe table of lesson 4
		return
	}
	c.seen[id] = true
	c.applied++
}

func open(ctx context.Context) *sql.DB {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		log.Fatal(err)
	}
	return db
}

// shipDualWrite commits, then publishes: a crash in between loses the event.
func shipDualWrite(ctx context.Context, db *sql.DB, b *broker, crash bool) error {
	res, err := db.ExecContext(ctx,
		`UPDATE orders SET state = 'shipped' WHERE id = 'order-1' AND state = 'paid'`)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // already shipped: this run did not make the transition
	}
	if crash {
		return errCrash
	}
	b.published = append(b.published, "order-1:shipped")
	return nil
}

// shipWithOutbox writes the transition and the outgoing message together.
func shipWithOutbox(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx,
		`UPDATE orders SET state = 'shipped' WHERE id = 'order-1' AND state = 'paid'`)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // already shipped (or not paid): nothing to announce
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO outbox (id, topic, payload) VALUES ('order-1:shipped', 'orders', '{"order":"order-1"}')`); err != nil {
		return err
	}
	return tx.Commit()
}

// relay publishes unsent outbox rows in order, marking each after sending.
// A crash between the send and the mark means the row is sent again later.
func relay(ctx context.Context, db *sql.DB, b *broker, crashAfterSend bool) error {
	rows, err := db.QueryContext(ctx,
		`SELECT id FROM outbox WHERE published_at IS NULL ORDER BY rowid`)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, id := range ids {
		b.published = append(b.published, id)
		if crashAfterSend {
			return errCrash
		}
		if _, err := db.ExecContext(ctx,
			`UPDATE outbox SET published_at = 1 WHERE id = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

func state(ctx context.Context, db *sql.DB) string {
	var s string
	if err := db.QueryRowContext(ctx, `SELECT state FROM orders`).Scan(&s); err != nil {
		log.Fatal(err)
	}
	return s
}

func main() {
	ctx := context.Background()

	db := open(ctx)
	b := &broker{}
	fmt.Println("dual write, first run:", shipDualWrite(ctx, db, b, true))   // dies before publishing
	fmt.Println("dual write, redelivery:", shipDualWrite(ctx, db, b, false)) // finds it shipped
	fmt.Printf("dual write: order %s, events published %d\n", state(ctx, db), len(b.published))
	db.Close()

	db = open(ctx)
	b = &broker{}
	c := &consumer{seen: map[string]bool{}}
	if err := shipWithOutbox(ctx, db); err != nil {
		log.Fatal(err)
	}
	if err := shipWithOutbox(ctx, db); err != nil { // a duplicate of the ship message
		log.Fatal(err)
	}
	fmt.Println("relay, first run:", relay(ctx, db, b, true)) // dies after sending
	fmt.Println("relay, restarted:", relay(ctx, db, b, false))
	for _, id := range b.published {
		c.receive(id)
	}
	fmt.Printf("outbox: order %s, events published %d, applied downstream %d\n",
		state(ctx, db), len(b.published), c.applied)
	db.Close()
}

// Output:
// dual write, first run: crash
// dual write, redelivery: <nil>
// dual write: order shipped, events published 0
// relay, first run: crash
// relay, restarted: <nil>
// outbox: order shipped, events published 2, applied downstream 1
