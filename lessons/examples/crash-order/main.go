// Ordering around a crash: three handlers write the same two things, a dedupe
// mark and a credit of 10, and the worker dies between the two. The broker
// then redelivers the message, and the handler runs again without a crash.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"

	_ "modernc.org/sqlite"
)

const (
	mark   = `INSERT INTO processed (message_id) VALUES ('msg-1') ON CONFLICT (message_id) DO NOTHING`
	credit = `UPDATE accounts SET balance = balance + 10 WHERE id = 'acct-1'`
)

var errCrash = errors.New("crash")

// execer is what both *sql.DB (autocommit) and *sql.Tx offer.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// firstRun reports whether the mark was new, i.e. whether this run should act.
func firstRun(ctx context.Context, db execer) (bool, error) {
	res, err := db.ExecContext(ctx, mark)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// markBefore commits the mark, then the credit: a crash between loses the credit.
func markBefore(ctx context.Context, db *sql.DB, crash bool) error {
	first, err := firstRun(ctx, db)
	if err != nil || !first {
		return err
	}
	if crash {
		return errCrash
	}
	_, err = db.ExecContext(ctx, credit)
	return err
}

// markAfter commits the credit, then the mark: a crash between repeats the credit.
func markAfter(ctx context.Context, db *sql.DB, crash bool) error {
	var n int
	if err := db.QueryRowContext(ctx,
		`SELECT count(*) FROM processed WHERE message_id = 'msg-1'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	if _, err := db.ExecContext(ctx, credit); err != nil {
		return err
	}
	if crash {
		return errCrash
	}
	_, err := firstRun(ctx, db)
	return err
}

// sameTx writes both in one transaction: a crash between undoes both.
func sameTx(ctx context.Context, db *sql.DB, crash bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	first, err := firstRun(ctx, tx)
	if err != nil || !first {
		return err
	}
	if crash {
		return errCrash // the deferred Rollback removes the mark too
	}
	if _, err := tx.ExecContext(ctx, credit); err != nil {
		return err
	}
	return tx.Commit()
}

func main() {
	ctx := context.Background()
	handlers := []struct {
		name string
		run  func(context.Context, *sql.DB, bool) error
	}{
		{"mark before", markBefore},
		{"mark after", markAfter},
		{"same transaction", sameTx},
	}
	for _, h := range handlers {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			log.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		if _, err := db.ExecContext(ctx, `
			CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
			CREATE TABLE processed (message_id TEXT PRIMARY KEY);
			INSERT INTO accounts VALUES ('acct-1', 0);`); err != nil {
			log.Fatal(err)
		}
		if err := h.run(ctx, db, true); !errors.Is(err, errCrash) {
			log.Fatalf("%s: expected the injected crash, got %v", h.name, err)
		}
		if err := h.run(ctx, db, false); err != nil { // the redelivery
			log.Fatal(err)
		}
		var balance int
		if err := db.QueryRowContext(ctx, `SELECT balance FROM accounts`).Scan(&balance); err != nil {
			log.Fatal(err)
		}
		verdict := "ok"
		switch {
		case balance < 10:
			verdict = "effect lost"
		case balance > 10:
			verdict = "effect applied twice"
		}
		fmt.Printf("%-17s balance %2d: %s\n", h.name, balance, verdict)
		db.Close()
	}
}

// Output:
// mark before       balance  0: effect lost
// mark after        balance 20: effect applied twice
// same transaction  balance 10: ok
