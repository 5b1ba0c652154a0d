package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"idemlab/playground"
)

// inputError is input the engine refused (an unknown scenario, a script that
// does not parse, a limit exceeded): exit status 2 like a usage error, but
// without the usage text, since the command line itself was understood.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

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

// listScenarios prints the built-in scenarios with their default handlers
// and script, so that a workshop can pick one from the terminal.
func listScenarios(args []string, stdout io.Writer) error {
	fs := newFlagSet("scenarios")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("scenarios: unexpected argument %q", fs.Arg(0))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tTITLE\tHANDLERS\tDEFAULT SCRIPT")
	for _, sc := range playground.Scenarios() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sc.Name, sc.Title, strings.Join(sc.Handlers, ","), sc.DefaultScript)
	}
	return tw.Flush()
}

// listHandlers prints the built-in handlers, whether each is idempotent, and
// why.
func listHandlers(args []string, stdout io.Writer) error {
	fs := newFlagSet("handlers")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("handlers: unexpected argument %q", fs.Arg(0))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HANDLER\tIDEMPOTENT\tDESCRIPTION")
	for _, h := range playground.Handlers() {
		idem := "no"
		if h.Idempotent {
			idem = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Name, idem, h.Description)
	}
	return tw.Flush()
}
