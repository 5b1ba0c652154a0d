package playground

import (
	"context"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Privileges: the second wall around a learner's SQL on PostgreSQL, which
// holds with the parser switched off (pgattack_test.go). A ledger role
// reads and writes its own schema's tables and nothing else (pgledger.go's
// create); what PostgreSQL grants to PUBLIC by default is revoked in the
// ledger database by hardenLedgerDatabase, so that no role of the database
// can:
//
//   - create temporary tables (TEMP on the database), which could shadow a
//     ledger table for the next learner on the same pooled session;
//   - use the public schema;
//   - read or write large objects (pg_largeobject grows, and outlives the
//     run);
//   - change a setting for the session (set_config: SET itself cannot be
//     revoked, so every session is reset at release, pgLedger.release);
//   - send notifications (pg_notify: a workshop store's channel is one);
//   - take, test or release advisory locks other than through the
//     ledger's own pg_advisory_xact_lock (below);
//   - see other sessions' activity (pg_stat_activity and the functions
//     under it), cancel or terminate a session.
//
// These revocations are per database and apply to every non-superuser
// role in it: ledgers want a database of their own (CREATE DATABASE
// idemlab_ledgers), never the workshop store's, whose user needs
// pg_notify.
//
// Advisory locks are the database's, shared by every ledger: one learner's
// pg_advisory_xact_lock(hashtext(:message_id)) would block another's run on
// another ledger. So each ledger's schema has a function of the same name
// that takes the lock in the two-key form, with the ledger's own number as
// the first key (lockNumber); the role's search_path puts the schema before
// pg_catalog, so a handler's unqualified call is the ledger's, with the
// parser on or off, and the catalog's functions are not the role's to run.

// pgRevokedFunctions selects, in pg_proc, what hardenLedgerDatabase
// revokes from PUBLIC.
const pgRevokedFunctions = `pronamespace = 'pg_catalog'::regnamespace AND (
	proname ~ '^lo_' OR proname IN ('loread', 'lowrite')
	OR proname IN ('set_config', 'pg_notify', 'pg_cancel_backend', 'pg_terminate_backend', 'pg_stat_get_activity')
	OR proname ~ '^pg_(try_)?advisory_'
	OR proname ~ '^pg_stat_get_backend_')`

// hardenLedgerDatabase revokes from PUBLIC, in the database admin is
// connected to, what a ledger role must not have. It is idempotent, and
// needs a superuser (the catalog's functions belong to the bootstrap
// superuser).
func hardenLedgerDatabase(ctx context.Context, admin *pgconn.PgConn) error {
	sql := `DO $$
DECLARE f regprocedure;
BEGIN
	EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
	REVOKE ALL ON SCHEMA public FROM PUBLIC;
	REVOKE SELECT ON pg_catalog.pg_stat_activity FROM PUBLIC;
	FOR f IN SELECT oid::regprocedure FROM pg_catalog.pg_proc WHERE ` + pgRevokedFunctions + ` LOOP
		EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
	END LOOP;
END $$`
	if err := execCatalog(ctx, admin, sql); err != nil {
		return fmt.Errorf("ledger database: revoking PUBLIC's defaults (needs a superuser; give ledgers a database of their own): %w", err)
	}
	return nil
}

// lockNumber is the first key of the ledger's advisory locks: a number of
// its own among the ledgers of every pool on the database (schema names are
// unique there).
func (pl *pgLedger) lockNumber() int32 {
	n := int32(crc32.ChecksumIEEE([]byte(pl.schema)))
	if n == pgPrefixLockKey {
		n++ // never the key that pools take their prefix's lock under (pgprefix.go)
	}
	return n
}

// execCatalog runs sql that changes the catalog's privileges or drops
// roles: two pools opening or closing at once on one database may take
// the same catalog rows in opposite orders, and PostgreSQL then aborts one
// of them with a deadlock (40P01), which is retried.
func execCatalog(ctx context.Context, c *pgconn.PgConn, sql string) error {
	var err error
	for attempt := range 5 {
		if err = execAll(ctx, c, sql); pgSQLState(err) != "40P01" {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
	}
	return err
}
