// The check-then-insert race on SQLite, with two connections standing in for
// two workers that received the same message. Each act interleaves their
// statements in a fixed order and shows what SQLite does.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var codeNames = map[int]string{
	sqlite3.SQLITE_BUSY:                  "SQLITE_BUSY",
	sqlite3.SQLITE_BUSY_SNAPSHOT:         "SQLITE_BUSY_SNAPSHOT",
	sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY: "SQLITE_CONSTRAINT_PRIMARYKEY",
}

// describe names a SQLite error by its extended result code.
func describe(err error) string {
	var e *sqlite.Error
	if errors.As(err, &e) {
		if name, ok := codeNames[e.Code()]; ok {
			return name
		}
	}
	if err == nil {
		return "ok"
	}
	return err.Error()
}

type worker struct {
	name string
	conn *sql.Conn
}

func (w worker) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := w.conn.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// seen is the "check": does a row for msg-1 exist?
func (w worker) seen(ctx context.Context) bool {
	var n int
	if err := w.conn.QueryRowContext(ctx,
		`SELECT count(*) FROM processed WHERE message_id = 'msg-1'`).Scan(&n); err != nil {
		log.Fatal(err)
	}
	return n > 0
}

// setup opens a fresh WAL database file with a 2 s busy timeout and returns
// two workers, each with its own connection.
func setup(ctx context.Context, dir, name, table string) (a, b worker, closeAll func()) {
	dsn := "file:" + filepath.Join(dir, name) + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(2000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, table); err != nil {
		log.Fatal(err)
	}
	ca, err := db.Conn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	cb, err := db.Conn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return worker{"A", ca}, worker{"B", cb}, func() { ca.Close(); cb.Close(); db.Close() }
}

func count(ctx context.Context, w worker) int {
	var n int
	if err := w.conn.QueryRowContext(ctx, `SELECT count(*) FROM processed`).Scan(&n); err != nil {
		log.Fatal(err)
	}
	return n
}

const insert = `INSERT INTO processed (message_id) VALUES ('msg-1')`

func main() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "race-sqlite")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	fmt.Println("1. No key; SELECT and INSERT as separate statements")
	a, b, done := setup(ctx, dir, "1.db", `CREATE TABLE processed (message_id TEXT)`)
	fmt.Println("   A sees msg-1:", a.seen(ctx), "| B sees msg-1:", b.seen(ctx))
	_, errA := a.exec(ctx, insert)
	_, errB := b.exec(ctx, insert)
	fmt.Println("   A inserts:", describe(errA), "| B inserts:", describe(errB))
	fmt.Println("   rows for msg-1:", count(ctx, a), "(both did the work)")
	done()

	fmt.Println("2. Primary key; SELECT and INSERT as separate statements")
	a, b, done = setup(ctx, dir, "2.db", `CREATE TABLE processed (message_id TEXT PRIMARY KEY)`)
	fmt.Println("   A sees msg-1:", a.seen(ctx), "| B sees msg-1:", b.seen(ctx))
	_, errA = a.exec(ctx, insert)
	_, errB = b.exec(ctx, insert)
	fmt.Println("   A inserts:", describe(errA), "| B inserts:", describe(errB))
	done()

	fmt.Println("3. Deferred transactions: read first, then write")
	a, b, done = setup(ctx, dir, "3.db", `CREATE TABLE processed (message_id TEXT PRIMARY KEY)`)
	a.exec(ctx, "BEGIN")
	b.exec(ctx, "BEGIN")
	fmt.Println("   A sees msg-1:", a.seen(ctx), "| B sees msg-1:", b.seen(ctx))
	_, errA = a.exec(ctx, insert)
	_, errB = b.exec(ctx, insert) // fails at once: waiting could not help B's old snapshot
	fmt.Println("   A inserts:", describe(errA), "| B inserts:", describe(errB))
	_, errA = a.exec(ctx, "COMMIT")
	_, errB = b.exec(ctx, insert)
	fmt.Println("   A commits:", describe(errA), "| B tries again:", describe(errB))
	b.exec(ctx, "ROLLBACK")
	done()

	fmt.Println("4. BEGIN IMMEDIATE: take the write lock before reading")
	a, b, done = setup(ctx, dir, "4.db", `CREATE TABLE processed (message_id TEXT PRIMARY KEY)`)
	a.exec(ctx, "BEGIN IMMEDIATE")
	var aCommitting atomic.Bool
	bResult := make(chan string)
	go func() {
		// B blocks here, inside busy_timeout, until A commits.
		if _, err := b.exec(ctx, "BEGIN IMMEDIATE"); err != nil {
			bResult <- describe(err)
			return
		}
		waited := aCommitting.Load()
		sawRow := b.seen(ctx)
		b.exec(ctx, "COMMIT")
		bResult <- fmt.Sprintf("waited for A: %v, then sees msg-1: %v, skips", waited, sawRow)
	}()
	fmt.Println("   A sees msg-1:", a.seen(ctx))
	_, errA = a.exec(ctx, insert)
	aCommitting.Store(true)
	a.exec(ctx, "COMMIT")
	fmt.Println("   A inserts and commits:", describe(errA))
	fmt.Println("   B:", <-bResult)
	done()

	fmt.Println("5. No check at all: INSERT … ON CONFLICT DO NOTHING decides")
	a, b, done = setup(ctx, dir, "5.db", `CREATE TABLE processed (message_id TEXT PRIMARY KEY)`)
	const upsert = insert + ` ON CONFLICT (message_id) DO NOTHING`
	a.exec(ctx, "BEGIN")
	nA, errA := a.exec(ctx, upsert) // A now holds the write lock, uncommitted
	var aCommitted atomic.Bool
	bRows := make(chan string)
	go func() {
		// B's first statement is a write, so it waits (busy_timeout) for the lock.
		n, err := b.exec(ctx, upsert)
		bRows <- fmt.Sprintf("waited for A: %v, then %d rows (%s)", aCommitted.Load(), n, describe(err))
	}()
	aCommitted.Store(true)
	a.exec(ctx, "COMMIT")
	fmt.Printf("   A: %d row (%s), commits\n", nA, describe(errA))
	fmt.Println("   B:", <-bRows)
	done()
}

// Output:
// 1. No key; SELECT and INSERT as separate statements
//    A sees msg-1: false | B sees msg-1: false
//    A inserts: ok | B inserts: ok
//    rows for msg-1: 2 (both did the work)
// 2. Primary key; SELECT and INSERT as separate statements
//    A sees msg-1: false | B sees msg-1: false
//    A inserts: ok | B inserts: SQLITE_CONSTRAINT_PRIMARYKEY
// 3. Deferred transactions: read first, then write
//    A sees msg-1: false | B sees msg-1: false
//    A inserts: ok | B inserts: SQLITE_BUSY
//    A commits: ok | B tries again: SQLITE_BUSY_SNAPSHOT
// 4. BEGIN IMMEDIATE: take the write lock before reading
//    A sees msg-1: false
//    A inserts and commits: ok
//    B: waited for A: true, then sees msg-1: true, skips
// 5. No check at all: INSERT … ON CONFLICT DO NOTHING decides
//    A: 1 row (ok), commits
//    B: waited for A: true, then 0 rows (ok)
