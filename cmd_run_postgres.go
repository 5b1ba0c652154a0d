package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"idemlab/playground"
)

// openRunLedgers opens the PostgreSQL ledger `idemlab run -ledger
// postgres-…` plays on: one schema (the handlers run one after the other)
// with a name of its own, dropped when the command ends. It returns nil for
// a SQLite ledger.
func openRunLedgers(ctx context.Context, ledger, database string) (*playground.PostgresLedgers, error) {
	if !strings.HasPrefix(ledger, "postgres") {
		if database != "" {
			return nil, usagef("run: -ledger-database is for the postgres-* ledgers, and -ledger is %s", ledger)
		}
		return nil, nil
	}
	if database == "" {
		return nil, usagef("run: -ledger %s needs -ledger-database postgres://…", ledger)
	}
	var b [4]byte
	rand.Read(b[:])
	pg, err := playground.OpenPostgresLedgers(ctx, database, 1, "idemlab_run_"+hex.EncodeToString(b[:]))
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return pg, nil
}
