// Counting what the dedupe table sees. Every delivery is classified by two
// facts the consumer already has: did the dedupe insert change a row, and
// which delivery attempt does the broker say this is (SQS's
// ApproximateReceiveCount, Pub/Sub's delivery_attempt, RabbitMQ's
// x-delivery-count). Together they say where a copy came from, and the
// counters are what a dashboard and an alert are built on.
package main

import (
	"database/sql"
	"expvar"
	"fmt"
	"log"

	_ "modernc.org/sqlite"
)

// outcomes is exported by expvar at /debug/vars when the process serves
// HTTP; a Prometheus client would keep the same counters with labels.
var outcomes = expvar.NewMap("consumer_deliveries")

// classify names a delivery from the dedupe insert's row count and the
// broker's attempt number.
func classify(inserted bool, attempt int) string {
	switch {
	case inserted && attempt == 1:
		return "applied_first_try"
	case inserted:
		// Earlier attempts never committed: they failed or crashed before
		// the COMMIT, or the dedupe row was pruned too soon.
		return "applied_after_retry"
	case attempt > 1:
		// The broker redelivered a message this consumer had committed:
		// a lost or late ack.
		return "duplicate_redelivered"
	default:
		// A first attempt that finds its row: the copy is a new message
		// to the broker (a producer retry, a redrive, a replay).
		return "duplicate_new_copy"
	}
}

func main() {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE processed_messages (
		message_id TEXT PRIMARY KEY, processed_at INTEGER NOT NULL)`); err != nil {
		log.Fatal(err)
	}

	deliveries := []struct {
		id      string
		attempt int
	}{
		{"inv-101", 1},
		{"inv-102", 1},
		{"inv-101", 2}, // its ack was lost
		{"inv-103", 3}, // two attempts died before COMMIT
		{"inv-102", 1}, // the producer published it again
		{"inv-101", 1}, // redriven from the dead-letter queue
	}
	for i, d := range deliveries {
		res, err := db.Exec(`INSERT INTO processed_messages VALUES (?, ?)
			ON CONFLICT (message_id) DO NOTHING`, d.id, i)
		if err != nil {
			log.Fatal(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			log.Fatal(err)
		}
		kind := classify(n == 1, d.attempt)
		outcomes.Add(kind, 1)
		fmt.Printf("%s attempt %d: %s\n", d.id, d.attempt, kind)
	}
	fmt.Println(outcomes.String())
}

// Output:
// inv-101 attempt 1: applied_first_try
// inv-102 attempt 1: applied_first_try
// inv-101 attempt 2: duplicate_redelivered
// inv-103 attempt 3: applied_after_retry
// inv-102 attempt 1: duplicate_new_copy
// inv-101 attempt 1: duplicate_new_copy
// {"applied_after_retry": 1, "applied_first_try": 2, "duplicate_new_copy": 2, "duplicate_redelivered": 1}
