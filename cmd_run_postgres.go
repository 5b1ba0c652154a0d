package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

// serveLedgerPool is how many PostgreSQL ledgers a server keeps: runs on
// PostgreSQL at once (a run holds one ledger per handler, one after the
// other); a run waits for a free one within its admission deadline.
const serveLedgerPool = 4

// openServeLedgers opens the server's PostgreSQL ledgers (-ledger-database),
// or returns nil without one. Their schemas and roles are named
// idemlab_ledger_N, made again at start and dropped at shutdown.
func openServeLedgers(ctx context.Context, database string) (*playground.PostgresLedgers, error) {
	if database == "" {
		return nil, nil
	}
	pg, err := playground.OpenPostgresLedgers(ctx, database, serveLedgerPool, "idemlab_ledger")
	if err != nil {
		return nil, fmt.Errorf("serve: -ledger-database: %w", err)
	}
	return pg, nil
}
