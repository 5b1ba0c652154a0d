// Package sqlitestore is the embedded workshop store: one SQLite database
// file (modernc.org/sqlite, pure Go) in write-ahead-log mode, with
// versioned, embedded, forward-only migrations checked when it opens.
//
// A server that never creates a room writes nothing: Open does not create
// the file. Until it exists, reads answer as an empty store does, and the
// first CreateRoom creates and migrates it.
//
// Writes go through one connection (SQLite has one writer at a time; a
// queue in Go is cheaper than SQLITE_BUSY retries), reads through a pool
// that WAL lets run beside the writer.
//
// synchronous=NORMAL, which in WAL mode is durable against a crash of the
// process: a transaction that returned has its WAL frames written (write(2)
// before COMMIT returns), so a 2xx survives kill -9, a panic or the OOM
// killer, and the database is never corrupted. Only a crash of the OS or a
// power cut may roll back the last transactions before the next checkpoint
// (https://www.sqlite.org/pragma.html#pragma_synchronous, and
// https://www.sqlite.org/wal.html, "Performance Considerations"). FULL
// would fsync every event: one writer, so every POST waits for every
// earlier POST's fsync, and on a disk shared with other work (fsync p50
// 1.7 ms, p99 90 ms, max 434 ms measured here) one slow fsync queues
// seconds of POSTs (POST p99 3 s at 100 events/s, against 50 ms wanted).
// A workshop that must survive power loss too uses PostgreSQL.
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"idemlab/workshop"
)

// FileName is the database's name inside the data folder.
const FileName = "workshop.db"

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations are this build's schema changes, in order.
func Migrations() ([]workshop.Migration, error) {
	return workshop.LoadMigrations(migrationFS, "migrations")
}

// Store is a workshop.Store on one SQLite file.
type Store struct {
	path string

	mu     sync.Mutex
	writer *sql.DB // one connection: every write
	reader *sql.DB // reads, beside the writer (WAL)
	closed bool

	// checkpointer copies the WAL into the database file in the
	// background (see checkpoints), so no writer waits for it.
	checkpointer    *sql.DB
	stopCheckpoints chan struct{}
	checkpointsDone chan struct{}
}

var _ workshop.Store = (*Store)(nil)

// Open returns the store kept in path. If the file exists it is opened and
// its migrations checked and applied now, so a database written by a newer
// Idemlab stops the start; if not, nothing is created until a room is.
func Open(ctx context.Context, path string) (*Store, error) {
	s := &Store{path: path}
	if _, err := os.Stat(path); err == nil {
		if _, _, err := s.dbs(ctx, false); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Connection roles.
const (
	roleWriter       = iota // the one writing connection
	roleReader              // the read pool: query_only
	roleBackup              // VACUUM INTO writes only the new file, but query_only forbids it
	roleCheckpointer        // the background checkpoints
)

// checkpointInterval is how often the WAL is copied into the database.
const checkpointInterval = 500 * time.Millisecond

// dsn is the connection string for the file: SQLite URI with its pragmas.
func dsn(path string, role int) string {
	p := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(path))
	q := "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)" // see the package comment
	switch role {
	case roleWriter:
		// No checkpoint in a commit: SQLite's automatic one runs in the
		// commit that fills 1,000 pages of WAL, and with it its fsyncs
		// (100-400 ms on a busy disk), while every other write waits for
		// the one writer. The checkpointer does it beside them instead.
		q += "&_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)&_txlock=immediate"
	case roleReader:
		q += "&_pragma=query_only(1)"
	}
	return "file:" + p + q
}

// dbs opens the database on first use. With create false and no file yet,
// it returns nil pools and no error: the store is empty.
func (s *Store) dbs(ctx context.Context, create bool) (writer, reader *sql.DB, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errors.New("sqlitestore: closed")
	}
	if s.writer != nil {
		return s.writer, s.reader, nil
	}
	if _, err := os.Stat(s.path); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, nil, nil
		}
		if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
			return nil, nil, fmt.Errorf("sqlitestore: %w", err)
		}
		// Created by us, readable by the owner only: it holds resume tokens.
		f, err := os.OpenFile(s.path, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("sqlitestore: %w", err)
		}
		f.Close()
	}
	w, err := sql.Open("sqlite", dsn(s.path, roleWriter))
	if err != nil {
		return nil, nil, fmt.Errorf("sqlitestore: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("sqlitestore: %s: %w", s.path, err)
	}
	if err := raiseEventIDs(ctx, w, time.Now()); err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("sqlitestore: %s: %w", s.path, err)
	}
	r, err := sql.Open("sqlite", dsn(s.path, roleReader))
	if err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("sqlitestore: %w", err)
	}
	r.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	c, err := sql.Open("sqlite", dsn(s.path, roleCheckpointer))
	if err != nil {
		w.Close()
		r.Close()
		return nil, nil, fmt.Errorf("sqlitestore: %w", err)
	}
	c.SetMaxOpenConns(1)
	s.writer, s.reader, s.checkpointer = w, r, c
	s.stopCheckpoints, s.checkpointsDone = make(chan struct{}), make(chan struct{})
	go s.checkpoints()
	return w, r, nil
}

// checkpoints copies the WAL into the database file every
// checkpointInterval, PASSIVE: it never blocks the writer or a reader and
// copies what no reader still needs; the writer then starts the WAL over.
func (s *Store) checkpoints() {
	defer close(s.checkpointsDone)
	tick := time.NewTicker(checkpointInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopCheckpoints:
			return
		case <-tick.C:
			// An error (the disk full, say) leaves the WAL to grow until the
			// next tick; writes go on, and SQLite checkpoints at close.
			s.checkpointer.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
}

// migrate checks the applied migrations against this build's and applies
// the rest, all in one write transaction (BEGIN IMMEDIATE), so that two
// processes opening a new file at once migrate it once.
func migrate(ctx context.Context, db *sql.DB) error {
	known, err := Migrations()
	if err != nil {
		return err
	}
	return inTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT version, name FROM schema_migrations`)
		if err != nil {
			return err
		}
		var applied []workshop.AppliedMigration
		for rows.Next() {
			var a workshop.AppliedMigration
			if err := rows.Scan(&a.Version, &a.Name); err != nil {
				rows.Close()
				return err
			}
			applied = append(applied, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		pending, err := workshop.PendingMigrations(applied, known)
		if err != nil {
			return err
		}
		for _, m := range pending {
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, time.Now().UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
}

// raiseEventIDs makes the next event id at least now in Unix milliseconds
// × 1000, each time the file is opened. A restored backup is an older file:
// its own next id may have been handed out before the restore, to events a
// class view has seen, and a view resuming after that id would miss every
// new event. Ids handed out since the last open are below this floor unless
// more than a million events a second were stored since, so a restored file
// never reuses one. AUTOINCREMENT keeps the next id in sqlite_sequence,
// which SQLite lets us raise. Ids stay below 2⁵³ (JavaScript's exact
// integers) until the year 2255.
func raiseEventIDs(ctx context.Context, db *sql.DB, now time.Time) error {
	floor := now.UnixMilli() * 1000
	return inTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq)
			SELECT 'events', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events')`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'`, floor)
		return err
	})
}

// inTx runs f in a transaction (BEGIN IMMEDIATE, from the DSN) and commits
// if it returns nil.
func inTx(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Close closes the database, if it was opened.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.writer == nil {
		return nil
	}
	close(s.stopCheckpoints)
	<-s.checkpointsDone
	return errors.Join(s.checkpointer.Close(), s.reader.Close(), s.writer.Close())
}

// Backup writes a consistent copy of the database to dest (which must not
// exist) with VACUUM INTO, while the store keeps serving.
func (s *Store) Backup(ctx context.Context, dest string) error {
	return BackupFile(ctx, s.path, dest)
}

// backup copies the database open in db to dest with VACUUM INTO: one read
// transaction, so the copy is consistent even while another process writes.
func backup(ctx context.Context, db *sql.DB, dest string) error {
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("sqlitestore: backup: %s exists; choose a new file name", dest)
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		return fmt.Errorf("sqlitestore: backup to %s: %w", dest, err)
	}
	return nil
}

// BackupFile copies the database file at path, which a running server may
// be using, to dest. It is what `idemlab backup` runs.
func BackupFile(ctx context.Context, path, dest string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sqlitestore: %s does not exist: no room was ever created there, nothing to back up", path)
	} else if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(path, roleBackup))
	if err != nil {
		return err
	}
	defer db.Close()
	return backup(ctx, db, dest)
}
