package playground

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A pool's prefix is its server's on the cluster: several servers may share
// one PostgreSQL, each with a prefix of its own (serve -ledger-prefix, else a
// random one per process). While a pool is open, a session of its own holds
// a session advisory lock named after the prefix; PostgreSQL releases it
// when that session ends, the process's death included. So at start:
//
//   - a prefix whose lock another session holds belongs to a live server,
//     and the pool refuses to start rather than drop that server's ledgers;
//   - with the lock taken, every schema and role named prefix_N (whatever N:
//     the earlier process may have had a larger pool) is what a dead holder
//     of the prefix left, and is dropped. Nothing of another prefix is
//     touched.
//
// Advisory locks belong to one database and roles to the whole cluster: two
// servers on different databases of one cluster need different prefixes
// (the random default gives them that).

// pgPrefixLockKey is the first key of every pool's prefix lock; a ledger's
// advisory locks take another (pgLedger.lockNumber).
const pgPrefixLockKey int32 = 0x1de31ab

// prefixWait is how long a start waits for a prefix's lock before it holds
// the prefix to be a live server's.
const prefixWait = 3 * time.Second

// claimPrefix takes prefix's lock on owner, a session the pool keeps open
// for its life, then drops what a dead holder of the prefix left.
func claimPrefix(ctx context.Context, owner *pgconn.PgConn, prefix string) error {
	// The prefix is checked (letters, digits, '_') before it reaches SQL.
	// The lock is waited for, briefly: a holder that has just died (a
	// restart right after a kill, a closed connection) holds it until its
	// backend has exited, which the server learns a moment after the client.
	_, err := owner.Exec(ctx, fmt.Sprintf(`SET idle_session_timeout = 0; SET lock_timeout = '%dms';
SELECT pg_advisory_lock(%d, hashtext('%s'));
RESET lock_timeout`, prefixWait.Milliseconds(), pgPrefixLockKey, prefix)).ReadAll()
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "55P03" {
		return fmt.Errorf("ledger pool: prefix %q is in use by another live server on this database; give each server its own prefix (serve -ledger-prefix)", prefix)
	}
	if err != nil {
		return fmt.Errorf("ledger pool %s: %w", prefix, err)
	}
	stale, err := owner.Exec(ctx, fmt.Sprintf(`SELECT rolname FROM pg_roles WHERE rolname ~ '^%[1]s_[0-9]+$'
UNION SELECT nspname FROM pg_namespace WHERE nspname ~ '^%[1]s_[0-9]+$' ORDER BY 1`, prefix)).ReadAll()
	if err != nil {
		return fmt.Errorf("ledger pool %s: %w", prefix, err)
	}
	for _, row := range stale[0].Rows {
		if err := execCatalog(ctx, owner, (&pgLedger{schema: string(row[0])}).dropSQL()); err != nil {
			return fmt.Errorf("ledger pool %s: dropping what an earlier server left: %w", prefix, err)
		}
	}
	return nil
}

// CheckLedgerPrefix says what is wrong with a pool's prefix: letters,
// digits and '_', at most 40, not starting with a digit (PostgreSQL folds
// it to lower case).
func CheckLedgerPrefix(prefix string) error {
	if prefix == "" || len(prefix) > 40 || strings.Trim(strings.ToLower(prefix), "abcdefghijklmnopqrstuvwxyz0123456789_") != "" || prefix[0] >= '0' && prefix[0] <= '9' {
		return fmt.Errorf("prefix %q: letters, digits and '_', at most 40, not starting with a digit", prefix)
	}
	return nil
}
