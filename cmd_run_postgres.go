package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"idemlab/playground"
)

// openRunLedgers opens the PostgreSQL ledgers a command (`idemlab run` or
// `idemlab check` with -ledger postgres-…) plays on: size schemas with
// names of their own, dropped when the command ends. It returns nil for a
// SQLite ledger.
func openRunLedgers(ctx context.Context, cmd, ledger, database string, size int) (*playground.PostgresLedgers, error) {
	if !strings.HasPrefix(ledger, "postgres") {
		if database != "" {
			return nil, usagef("%s: -ledger-database is for the postgres-* ledgers, and -ledger is %s", cmd, ledger)
		}
		return nil, nil
	}
	if database == "" {
		return nil, usagef("%s: -ledger %s needs -ledger-database postgres://…", cmd, ledger)
	}
	var b [4]byte
	rand.Read(b[:])
	pg, err := playground.OpenPostgresLedgers(ctx, database, size, "idemlab_"+cmd+"_"+hex.EncodeToString(b[:]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return pg, nil
}

// serveLedgerPool is how many PostgreSQL ledgers a server keeps by default
// (-ledger-pool): runs on PostgreSQL at once (a run holds one ledger at a
// time, one handler after the other); web queues the others for one
// (web/admitpg.go).
const serveLedgerPool = 4

// ledgerFlags are serve's PostgreSQL ledger settings.
type ledgerFlags struct {
	Database string // -ledger-database: the ledgers' server
	// InWorkshopDatabase puts the ledgers on the workshop store's
	// -database: schemas and roles of their own beside the store's tables,
	// which a ledger's role cannot read.
	InWorkshopDatabase bool
	Prefix             string // names of the server's schemas and roles (playground/pgprefix.go)
	Pool               int    // ledgers in the pool
	poolEnv            string // IDEMLAB_LEDGER_POOL as given
}

// addLedgerFlags declares serve's ledger flags on fs.
func addLedgerFlags(fs *flag.FlagSet, getenv func(string) string, f *ledgerFlags) {
	f.Pool = serveLedgerPool
	if v := getenv("IDEMLAB_LEDGER_POOL"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			n = -1 // resolve refuses it
		}
		f.Pool, f.poolEnv = n, v
	}
	fs.IntVar(&f.Pool, "ledger-pool", f.Pool, "PostgreSQL ledgers the server keeps, 1 to 64: runs on PostgreSQL at once, the others queue for one (env IDEMLAB_LEDGER_POOL)")
	fs.StringVar(&f.Database, "ledger-database", getenv("IDEMLAB_LEDGER_DATABASE"), "a PostgreSQL server for playground ledgers, postgres://… (env IDEMLAB_LEDGER_DATABASE; default: SQLite only); playgrounds gain a ledger switch")
	fs.BoolVar(&f.InWorkshopDatabase, "ledgers-in-workshop-database", getenv("IDEMLAB_LEDGERS_IN_WORKSHOP_DATABASE") == "1", "keep playground ledgers on the workshop store's PostgreSQL (-database), in schemas and roles of their own that cannot read the store (env IDEMLAB_LEDGERS_IN_WORKSHOP_DATABASE=1); instead of -ledger-database")
	fs.StringVar(&f.Prefix, "ledger-prefix", getenv("IDEMLAB_LEDGER_PREFIX"), "names of this server's ledger schemas and roles, PREFIX_1…, so that servers sharing a PostgreSQL keep apart; a restart with the same prefix drops what a crash left (env IDEMLAB_LEDGER_PREFIX; default: idemlab_ and a random id per process)")
}

// resolve picks the ledgers' server (-ledger-database, or the workshop
// store's with -ledgers-in-workshop-database, never both) and the prefix.
func (f *ledgerFlags) resolve(workshopDatabase string) error {
	if f.InWorkshopDatabase {
		switch {
		case f.Database != "":
			return usagef("serve: -ledgers-in-workshop-database and -ledger-database (or IDEMLAB_LEDGER_DATABASE) both say where ledgers live; give one")
		case workshopDatabase == "":
			return usagef("serve: -ledgers-in-workshop-database needs a PostgreSQL workshop store (-database postgres://…); without one the store is SQLite, so give ledgers a server with -ledger-database")
		}
		f.Database = workshopDatabase
	}
	if f.Database == "" {
		if f.Prefix != "" {
			return usagef("serve: -ledger-prefix names PostgreSQL ledgers, and there are none (-ledger-database or -ledgers-in-workshop-database)")
		}
		return nil
	}
	if f.Pool < 1 || f.Pool > 64 {
		if f.Pool == -1 && f.poolEnv != "" {
			return usagef("serve: IDEMLAB_LEDGER_POOL=%q: want a number of ledgers, 1 to 64", f.poolEnv)
		}
		return usagef("serve: -ledger-pool %d: want 1 to 64 ledgers", f.Pool)
	}
	if f.Prefix == "" {
		var b [4]byte
		rand.Read(b[:])
		f.Prefix = "idemlab_" + hex.EncodeToString(b[:])
	}
	if err := playground.CheckLedgerPrefix(f.Prefix); err != nil {
		return usagef("serve: -ledger-prefix: %v", err)
	}
	return nil
}

// openServeLedgers opens the server's PostgreSQL ledgers, or returns nil
// without them. Their schemas and roles are named PREFIX_1…, made at start
// and dropped at shutdown.
func openServeLedgers(ctx context.Context, f ledgerFlags) (*playground.PostgresLedgers, error) {
	if f.Database == "" {
		return nil, nil
	}
	pg, err := playground.OpenPostgresLedgers(ctx, f.Database, f.Pool, f.Prefix)
	if err != nil {
		return nil, fmt.Errorf("serve: %s: %w", f.source(), err)
	}
	return pg, nil
}

// source names the flag the ledgers' server came from, for messages.
func (f ledgerFlags) source() string {
	if f.InWorkshopDatabase {
		return "-ledgers-in-workshop-database"
	}
	return "-ledger-database"
}
