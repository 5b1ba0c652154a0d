// A loyalty service awards points for purchase events. onceForEvent wraps any
// database effect in a transaction that first files a receipt for the event;
// when the receipt is already on file, the effect is not run at all.
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
CREATE TABLE members (id TEXT PRIMARY KEY, points INTEGER NOT NULL);
CREATE TABLE processed_messages (
	message_id   TEXT PRIMARY KEY,
	processed_at INTEGER NOT NULL
);
INSERT INTO members VALUES ('m-7', 300);`

// onceForEvent runs effect inside one transaction together with the receipt
// for eventID. It reports whether effect ran and committed; false with a nil
// error means an earlier delivery already committed this event, and the
// caller should ack.
func onceForEvent(ctx context.Context, db *sql.DB, eventID string, at int64,
	effect func(*sql.Tx) error) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	// Until Commit succeeds, leaving this function discards the receipt and
	// the effect alike; after Commit, Rollback does nothing.
	defer tx.Rollback()

	filed, err := tx.ExecContext(ctx, `
		INSERT INTO processed_messages (message_id, processed_at) VALUES (?, ?)
		ON CONFLICT (message_id) DO NOTHING`, eventID, at)
	if err != nil {
		return false, err
	}
	if n, err := filed.RowsAffected(); err != nil || n != 1 {
		return false, err // n == 0: the receipt exists, the points were awarded
	}
	if err := effect(tx); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// award adds points; dieAfterUpdate stands in for a process that is killed
// after its UPDATE and before the COMMIT reaches the database.
func award(member string, points int, dieAfterUpdate bool) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE members SET points = points + ? WHERE id = ?`,
			points, member); err != nil {
			return err
		}
		if dieAfterUpdate {
			return errors.New("killed before commit")
		}
		return nil
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

	// Two purchase events, delivered five times between them.
	type delivery struct {
		event  string
		points int
		dies   bool
	}
	queue := []delivery{
		{"purchase-5001", 120, false},
		{"purchase-5002", 40, true},   // killed mid-transaction
		{"purchase-5001", 120, false}, // its ack had gone missing
		{"purchase-5002", 40, false},  // sent again after the kill
		{"purchase-5002", 40, false},  // and once more, for good measure
	}
	for i, d := range queue {
		ran, err := onceForEvent(ctx, db, d.event, int64(60*i), award("m-7", d.points, d.dies))
		var points int
		if err := db.QueryRowContext(ctx, `SELECT points FROM members WHERE id = 'm-7'`).Scan(&points); err != nil {
			log.Fatal(err)
		}
		verdict := map[bool]string{true: "awarded", false: "receipt on file, ack"}[ran]
		if err != nil {
			verdict = "no commit (" + err.Error() + "), redeliver"
		}
		fmt.Printf("#%d %s: %s -> m-7 has %d points\n", i+1, d.event, verdict, points)
	}
}

// Output:
// #1 purchase-5001: awarded -> m-7 has 420 points
// #2 purchase-5002: no commit (killed before commit), redeliver -> m-7 has 420 points
// #3 purchase-5001: receipt on file, ack -> m-7 has 420 points
// #4 purchase-5002: awarded -> m-7 has 460 points
// #5 purchase-5002: receipt on file, ack -> m-7 has 460 points
