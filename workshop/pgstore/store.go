// Package pgstore is the workshop store for more than one replica: a
// PostgreSQL database shared by every server of a workshop, through pgx's
// connection pool, with versioned, embedded, forward-only migrations checked
// when it opens (as workshop/sqlitestore's are).
//
// Every write that adds an event also sends a NOTIFY in its transaction, so
// the notification goes out exactly when the event is committed; Listen
// turns the notifications of every replica into wake-ups of this replica's
// workshop.Hub. A notification carries the room, the event id and whether
// learners receive it, but no event: a woken follower reads the store, which
// stays the one truth, and after a lost connection Listen reconnects and
// wakes every follower to catch up from it.
//
// A connection error (the server restarting, the network gone) comes back
// as workshop.ErrStoreUnavailable, which web answers with 503 and
// Retry-After; the pool reconnects by itself once PostgreSQL is back.
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/workshop"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations are this build's schema changes, in order.
func Migrations() ([]workshop.Migration, error) {
	return workshop.LoadMigrations(migrationFS, "migrations")
}

// Store is a workshop.Store on a PostgreSQL database.
type Store struct {
	pool   *pgxpool.Pool
	config *pgxpool.Config
}

var _ workshop.Store = (*Store)(nil)

// defaultConnectTimeout bounds a connection attempt.
const defaultConnectTimeout = 5 * time.Second

// migrationLock is the advisory lock replicas starting at once take to
// migrate one at a time ("idemlab" in ASCII).
const migrationLock = 0x6964656d6c6162

// Open connects to the database at url (postgres://…), checks its applied
// migrations against this build's and applies the rest. A database written
// by a newer Idemlab, or one that cannot be reached, stops the start.
func Open(ctx context.Context, url string) (*Store, error) {
	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if config.ConnConfig.ConnectTimeout == 0 {
		// An unreachable host answers 503 in seconds, not when the client
		// gives up (the URL's connect_timeout overrides this).
		config.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %s: %w", Describe(url), err)
	}
	if err := raiseEventIDs(ctx, pool, time.Now()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %s: %w", Describe(url), unavailable(err))
	}
	return &Store{pool: pool, config: config}, nil
}

// raiseEventIDs moves the events' identity to at least now in Unix
// milliseconds × 1000 at each start, as sqlitestore does: a backup restored
// into a new database continues from the backup's ids, which the servers
// may have handed out again after the backup, and a class view resuming
// after one would miss new events. Only ever forward: while other replicas
// insert, the ids they draw meanwhile are far below the floor (unless more
// than a million events a second were stored since the last start).
func raiseEventIDs(ctx context.Context, pool *pgxpool.Pool, now time.Time) error {
	_, err := pool.Exec(ctx, `SELECT setval(seq, $1, false)
		FROM (SELECT pg_get_serial_sequence('events', 'id')::regclass AS seq) q
		WHERE COALESCE(pg_sequence_last_value(seq), 0) < $1`, now.UnixMilli()*1000)
	return err
}

// Describe names the database of url without its password, for logs.
func Describe(url string) string {
	c, err := pgconn.ParseConfig(url)
	if err != nil {
		return "PostgreSQL (unparsable URL)"
	}
	return fmt.Sprintf("PostgreSQL database %q on %s:%d as %s", c.Database, c.Host, c.Port, c.User)
}

// migrate applies the pending migrations in one transaction, under an
// advisory lock so that replicas starting together migrate once.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	known, err := Migrations()
	if err != nil {
		return err
	}
	return unavailable(pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`); err != nil {
			return err
		}
		applied, err := appliedMigrations(ctx, tx)
		if err != nil {
			return err
		}
		pending, err := workshop.PendingMigrations(applied, known)
		if err != nil {
			return err
		}
		for _, m := range pending {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())`, m.Version, m.Name); err != nil {
				return err
			}
		}
		return nil
	}))
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// unavailable marks the errors that mean the database cannot be reached
// (as opposed to a query it refused) with workshop.ErrStoreUnavailable.
func unavailable(err error) error {
	if err == nil || errors.Is(err, workshop.ErrStoreUnavailable) || !lostConnection(err) {
		return err
	}
	return fmt.Errorf("%w: %w", workshop.ErrStoreUnavailable, err)
}

func lostConnection(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false // the request went away, not the database
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 08: connection exception; 57P01-57P03: the server is shutting
		// down, crashed or is starting up.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "closed pool")
}

// ms is the store's time precision: times come back as they went in.
func ms(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// appliedMigrations reads the migrations a database has had.
func appliedMigrations(ctx context.Context, tx pgx.Tx) ([]workshop.AppliedMigration, error) {
	rows, _ := tx.Query(ctx, `SELECT version, name FROM schema_migrations`)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (workshop.AppliedMigration, error) {
		var a workshop.AppliedMigration
		return a, row.Scan(&a.Version, &a.Name)
	})
}
