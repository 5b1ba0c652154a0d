// The dedupe table: record the message id and apply the effect in one
// transaction, and let the rows-affected count of the insert decide whether
// this delivery is the first.
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
CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE processed_messages (
	message_id   TEXT PRIMARY KEY,
	processed_at INTEGER NOT NULL
);
INSERT INTO accounts VALUES ('acct-1', 0);`

type credit struct {
	MessageID string // stable across redeliveries
	AccountID string
	Amount    int
}

var errCrash = errors.New("worker crashed")

// applyCredit credits the account at most once per message id. It returns
// whether this delivery applied the effect. The caller acks after it returns
// without error, whether or not the effect was applied.
func applyCredit(ctx context.Context, db *sql.DB, m credit, now int64, crash bool) (applied bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() // a no-op after Commit; undoes everything on any early return

	res, err := tx.ExecContext(ctx, `
		INSERT INTO processed_messages (message_id, processed_at) VALUES (?, ?)
		ON CONFLICT (message_id) DO NOTHING`, m.MessageID, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, nil // seen before: nothing to do, safe to ack
	}

	if _, err := tx.ExecContext(ctx,
		`UPDATE accounts SET balance = balance + ? WHERE id = ?`,
		m.Amount, m.AccountID); err != nil {
		return false, err
	}
	if crash {
		return false, errCrash // dies before commit: both writes roll back together
	}
	return true, tx.Commit()
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

	deliveries := []struct {
		m     credit
		crash bool
		note  string
	}{
		{credit{"msg-1", "acct-1", 50}, false, "first delivery"},
		{credit{"msg-1", "acct-1", 50}, false, "redelivered: the ack was lost"},
		{credit{"msg-2", "acct-1", 25}, true, "crashes before commit"},
		{credit{"msg-2", "acct-1", 25}, false, "redelivered after the crash"},
	}
	for i, d := range deliveries {
		applied, err := applyCredit(ctx, db, d.m, int64(1000+i), d.crash)
		var balance int
		if err := db.QueryRowContext(ctx, `SELECT balance FROM accounts`).Scan(&balance); err != nil {
			log.Fatal(err)
		}
		outcome := "skipped"
		switch {
		case err != nil:
			outcome = "failed: " + err.Error()
		case applied:
			outcome = "applied"
		}
		fmt.Printf("%s (%s): %s, balance %d\n", d.m.MessageID, d.note, outcome, balance)
	}
}

// Output:
// msg-1 (first delivery): applied, balance 50
// msg-1 (redelivered: the ack was lost): skipped, balance 50
// msg-2 (crashes before commit): failed: worker crashed, balance 50
// msg-2 (redelivered after the crash): applied, balance 75
