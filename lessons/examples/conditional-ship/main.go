// A guarded transition on a seat hold: a payment message may move a hold
// from 'held' to 'confirmed', and only while it is still held. The UPDATE
// returns the row it moved, so "did this run do it?" is answered by the write
// itself; a miss is explained afterwards from what the row records.
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
CREATE TABLE seat_holds (
	id           TEXT PRIMARY KEY,
	status       TEXT NOT NULL,   -- held, confirmed or released
	confirmed_by TEXT             -- the payment message that confirmed it
);
INSERT INTO seat_holds (id, status) VALUES ('hold-A12', 'held'), ('hold-B03', 'released');`

// outcome is what the consumer does next. Only a database error makes it
// return an error (and the broker retry); every outcome here is acked.
type outcome string

const (
	confirmedNow   outcome = "confirmed by this run: send the ticket"
	sameMessage    outcome = "this payment confirmed it before: ack"
	otherMessage   outcome = "another payment confirmed it: ack, refund this one"
	holdReleased   outcome = "hold released before payment: ack, refund"
	holdNotPresent outcome = "no such hold: ack, report"
)

func confirm(ctx context.Context, db *sql.DB, holdID, paymentMsg string) (outcome, error) {
	var moved string
	err := db.QueryRowContext(ctx, `
		UPDATE seat_holds SET status = 'confirmed', confirmed_by = ?
		 WHERE id = ? AND status = 'held'
		RETURNING id`, paymentMsg, holdID).Scan(&moved)
	if err == nil {
		return confirmedNow, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	// The guard refused. One read says which refusal this was.
	var status string
	var by sql.NullString
	err = db.QueryRowContext(ctx,
		`SELECT status, confirmed_by FROM seat_holds WHERE id = ?`, holdID).Scan(&status, &by)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return holdNotPresent, nil
	case err != nil:
		return "", err
	case status == "confirmed" && by.String == paymentMsg:
		return sameMessage, nil
	case status == "confirmed":
		return otherMessage, nil
	default:
		return holdReleased, nil
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
	for _, m := range [][2]string{
		{"hold-A12", "pay-881"},
		{"hold-A12", "pay-881"}, // the same message, redelivered
		{"hold-A12", "pay-882"}, // a second payment for the same seat
		{"hold-B03", "pay-907"},
		{"hold-Z99", "pay-910"},
	} {
		got, err := confirm(ctx, db, m[0], m[1])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s for %s: %s\n", m[1], m[0], got)
	}
}

// Output:
// pay-881 for hold-A12: confirmed by this run: send the ticket
// pay-881 for hold-A12: this payment confirmed it before: ack
// pay-882 for hold-A12: another payment confirmed it: ack, refund this one
// pay-907 for hold-B03: hold released before payment: ack, refund
// pay-910 for hold-Z99: no such hold: ack, report
