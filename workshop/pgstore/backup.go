package pgstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/workshop"
)

// backupTables are copied in this order, so that a restore meets every
// foreign key's row before the rows that point at it.
var backupTables = []string{"schema_migrations", "rooms", "learners", "events"}

// BackupFile writes a consistent copy of the workshop store at url, which
// running servers may be writing to, to dest (which must not exist): every
// table read in one REPEATABLE READ, READ ONLY transaction (one snapshot,
// so a learner and their joined event, say, are both in it or both not),
// with COPY … TO STDOUT. The file is plain SQL that psql restores into an
// empty database (or schema) —
//
//	psql -v ON_ERROR_STOP=1 --single-transaction -f FILE postgres://…
//
// — the schema as this build's migrations make it, the rows, and each
// identity's next value, so ids are never reused (a class view's
// Last-Event-ID stays valid). A server started on the restored database
// finds its migrations applied. A database a newer Idemlab wrote is refused.
func BackupFile(ctx context.Context, url, dest string) (err error) {
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("pgstore: backup: %s exists; choose a new file name", dest)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("pgstore: backup: %s: %w", Describe(url), unavailable(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*")
	if err != nil {
		return fmt.Errorf("pgstore: backup: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return writeBackup(ctx, tx, w, Describe(url))
	})
	if err != nil {
		return fmt.Errorf("pgstore: backup: %w", unavailable(err))
	}
	if err = w.Flush(); err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dest)
	}
	if err != nil {
		return fmt.Errorf("pgstore: backup: %w", err)
	}
	return nil
}

// writeBackup writes the SQL of a backup from inside its snapshot.
func writeBackup(ctx context.Context, tx pgx.Tx, w io.Writer, from string) error {
	known, err := Migrations()
	if err != nil {
		return err
	}
	applied, err := appliedMigrations(ctx, tx)
	if err != nil {
		return fmt.Errorf("no workshop store here (%w)", err)
	}
	pending, err := workshop.PendingMigrations(applied, known)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "-- Idemlab workshop store, copied from %s at %s in one snapshot.\n", from, time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "-- Restore into an empty database or schema:\n--   psql -v ON_ERROR_STOP=1 --single-transaction -f FILE postgres://…\n")
	fmt.Fprintf(w, "SET client_encoding = 'UTF8';\nSET standard_conforming_strings = on;\n\n")
	fmt.Fprintf(w, "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL);\n\n")
	for _, m := range known[:len(known)-len(pending)] {
		fmt.Fprintf(w, "-- migration %04d_%s\n%s\n", m.Version, m.Name, strings.TrimSpace(m.SQL))
	}
	for _, table := range backupTables {
		if err := copyTable(ctx, tx, w, table); err != nil {
			return fmt.Errorf("copying %s: %w", table, err)
		}
	}
	// Sequences are outside any snapshot: now's value is at least the
	// snapshot's, which is all that matters (an id is never handed out twice).
	for _, table := range backupTables[1:] {
		var next int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence($1, 'id')), 0) + 1`, table).Scan(&next); err != nil {
			return err
		}
		fmt.Fprintf(w, "SELECT setval(pg_get_serial_sequence('%s', 'id'), %d, false);\n", table, next)
	}
	return nil
}

// copyTable writes a COPY … FROM stdin block of every row of table, in
// text format, as psql reads it.
func copyTable(ctx context.Context, tx pgx.Tx, w io.Writer, table string) error {
	rows, _ := tx.Query(ctx, `SELECT column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(columns) == 0 {
		return errors.New("no such table")
	}
	for i, c := range columns {
		columns[i] = pgx.Identifier{c}.Sanitize()
	}
	list := strings.Join(columns, ", ")
	name := pgx.Identifier{table}.Sanitize()
	fmt.Fprintf(w, "\nCOPY %s (%s) FROM stdin;\n", name, list)
	order := "id"
	if table == "schema_migrations" {
		order = "version"
	}
	if _, err := tx.Conn().PgConn().CopyTo(ctx, w, fmt.Sprintf("COPY (SELECT %s FROM %s ORDER BY %s) TO STDOUT", list, name, order)); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\\.\n")
	return err
}
