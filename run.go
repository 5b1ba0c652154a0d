package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"idemlab/playground"
)

// runScenario is `idemlab run`: it plays a scenario in the terminal:
//
//	idemlab run SCENARIO [-handlers a,b] [-script TEXT] [-seed N] [-json]
//
// It prints the verdict table (or the whole trace as JSON) and succeeds
// whatever the verdict: a handler that applies a message twice is a lesson,
// not a failure of the command.
func runScenario(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("run")
	handlers := fs.String("handlers", "", "handlers to compare, comma separated (default: the scenario's)")
	script := fs.String("script", "", "the events to play, e.g. 'deliver msg-1 lose-ack; redeliver msg-1' (default: the scenario's)")
	seed := fs.Int64("seed", 0, "seed for the scheduler's choices between workers")
	asJSON := fs.Bool("json", false, "print the whole trace as JSON instead of the verdict table")
	ledgerName := fs.String("ledger", "sqlite", "the ledgers' database: "+strings.Join(playground.LedgerNames(), ", "))
	ledgerDatabase := fs.String("ledger-database", "", "a PostgreSQL server for postgres-* ledgers (postgres://…); its user creates a schema and a role for the run and drops them after")
	// The scenario may come before or after the flags.
	var scenario string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		scenario, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	rest := fs.Args()
	if scenario == "" && len(rest) > 0 {
		scenario, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return usagef("run: unexpected argument %q", rest[0])
	}
	if scenario == "" {
		return usagef("run: name a scenario; 'idemlab scenarios' lists them")
	}
	req := playground.Request{Scenario: scenario, Script: *script, Seed: *seed}
	for _, h := range strings.Split(*handlers, ",") {
		if h = strings.TrimSpace(h); h != "" {
			req.Handlers = append(req.Handlers, h)
		}
	}
	pg, err := openRunLedgers(ctx, "run", *ledgerName, *ledgerDatabase, 1)
	if err != nil {
		return err
	}
	if pg != nil {
		defer pg.Close()
	}
	if req.Ledger, err = playground.ParseLedger(*ledgerName, pg); err != nil {
		return &inputError{fmt.Errorf("run: %w", err)}
	}
	trace, err := playground.Run(ctx, req)
	if err != nil {
		var in *playground.InputError
		if errors.As(err, &in) {
			return &inputError{fmt.Errorf("run: %w", err)}
		}
		return fmt.Errorf("run: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(trace)
	}
	return trace.WriteTable(stdout)
}

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
