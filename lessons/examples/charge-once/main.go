// Charging a card once when the message that asks for it arrives twice. The
// charge happens at a payment provider, outside our database, so our dedupe
// transaction cannot roll it back. The provider's idempotency key can.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"

	_ "modernc.org/sqlite"
)

// provider is a fake payment API that honours idempotency keys the way real
// ones do: the same key returns the first result instead of charging again.
type provider struct {
	charges int               // money actually taken
	byKey   map[string]string // idempotency key -> charge id
}

func (p *provider) charge(orderID string, amount int, idempotencyKey string) string {
	if idempotencyKey != "" {
		if id, ok := p.byKey[idempotencyKey]; ok {
			return id
		}
	}
	p.charges++
	id := fmt.Sprintf("ch_%d", p.charges)
	if idempotencyKey != "" {
		p.byKey[idempotencyKey] = id
	}
	return id
}

type chargeRequested struct {
	MessageID string
	OrderID   string
	Amount    int
}

var errCrash = errors.New("crashed after the charge, before commit")

// handle charges the order and records the charge, once per message. The key
// sent to the provider is derived from the message, so every copy of the
// message sends the same key.
func handle(ctx context.Context, db *sql.DB, p *provider, m chargeRequested, useKey, crash bool) error {
	var done int
	if err := db.QueryRowContext(ctx,
		`SELECT count(*) FROM payments WHERE message_id = ?`, m.MessageID).Scan(&done); err != nil {
		return err
	}
	if done > 0 {
		return nil // fast path only; the primary key below is what decides
	}
	key := ""
	if useKey {
		key = "charge:" + m.MessageID
	}
	chargeID := p.charge(m.OrderID, m.Amount, key) // outside any transaction
	if crash {
		return errCrash
	}
	_, err := db.ExecContext(ctx, `
		INSERT INTO payments (message_id, order_id, charge_id) VALUES (?, ?, ?)
		ON CONFLICT (message_id) DO NOTHING`, m.MessageID, m.OrderID, chargeID)
	return err
}

func main() {
	ctx := context.Background()
	m := chargeRequested{MessageID: "msg-1", OrderID: "order-42", Amount: 4999}
	for _, useKey := range []bool{false, true} {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			log.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		if _, err := db.ExecContext(ctx, `CREATE TABLE payments (
			message_id TEXT PRIMARY KEY, order_id TEXT NOT NULL, charge_id TEXT NOT NULL)`); err != nil {
			log.Fatal(err)
		}
		p := &provider{byKey: make(map[string]string)}

		err = handle(ctx, db, p, m, useKey, true) // first delivery: crash
		fmt.Printf("idempotency key %-5v first delivery: %v\n", useKey, err)
		if err := handle(ctx, db, p, m, useKey, false); err != nil { // redelivery
			log.Fatal(err)
		}
		if err := handle(ctx, db, p, m, useKey, false); err != nil { // a late copy
			log.Fatal(err)
		}
		var chargeID string
		if err := db.QueryRowContext(ctx, `SELECT charge_id FROM payments`).Scan(&chargeID); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("idempotency key %-5v cards charged: %d, recorded charge: %s\n", useKey, p.charges, chargeID)
		db.Close()
	}
}

// Output:
// idempotency key false first delivery: crashed after the charge, before commit
// idempotency key false cards charged: 2, recorded charge: ch_2
// idempotency key true  first delivery: crashed after the charge, before commit
// idempotency key true  cards charged: 1, recorded charge: ch_1
