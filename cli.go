package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// The command line: run, the usage, the dispatch to one function per
// command (each in cmd_NAME.go) and the flag handling they share.

const usageText = `Idemlab: an interactive course on idempotent message consumers.

Usage:
  idemlab [serve] [flags]   serve the course (the default command)
  idemlab lint [-ledger-database URL] [DIR]
                            check every lesson of DIR (default: the built-in course)
  idemlab health [-url URL] exit 0 when URL/healthz answers 200 (container health check)
  idemlab run SCENARIO [-handlers a,b] [-script TEXT] [-seed N] [-json]
          [-ledger sqlite|postgres-rc|postgres-rr|postgres-serializable -ledger-database URL]
                            play a scenario in the terminal and print the verdicts
  idemlab check [-lessons DIR] [-json] [-ledger L -ledger-database URL] EXERCISE FILE
                            check a handler script (FILE, or - for stdin) against an exercise
  idemlab scenarios         list the built-in scenarios
  idemlab handlers          list the built-in handlers
  idemlab backup [-data DIR | -database URL] FILE
                            copy the workshop store to FILE, safely while servers run
  idemlab version           print the version
  idemlab load [-target URL] [-learners N] [-duration D] [-expensive N] [-closed-loop D]
                            play virtual learners against a server on this machine and measure it

Flags of serve (each has an environment variable; a flag given on the command line wins):
  -addr HOST:PORT           listen address (IDEMLAB_ADDR, else PORT as :PORT; default 127.0.0.1:8080)
  -lessons DIR              serve lessons from DIR, re-rendered when a file changes (IDEMLAB_LESSONS)
  -public-url URL           absolute URL the site is reached at, behind a proxy (IDEMLAB_PUBLIC_URL)
  -frame-ancestors ORIGINS  origins allowed to embed pages, space or comma separated (IDEMLAB_FRAME_ANCESTORS; default 'self')
  -log-format text|json     log format on stderr (IDEMLAB_LOG_FORMAT; default text)
  -trust-proxy              behind a reverse proxy: a client is the last X-Forwarded-For address (IDEMLAB_TRUST_PROXY=1)
  -debug-addr HOST:PORT     serve net/http/pprof on a separate listener (IDEMLAB_DEBUG_ADDR; default off)
  -instructor-key KEY       secret of the instructor link (IDEMLAB_INSTRUCTOR_KEY; default: random, printed at start)
  -data DIR                 workshop database folder, created with the first room (IDEMLAB_DATA; default: the user's state folder)
  -database URL             keep workshops in PostgreSQL, shared by replicas (IDEMLAB_DATABASE; default: SQLite in -data)
  -retention AGE            delete rooms this long after creation, e.g. 30d (IDEMLAB_RETENTION; default 30d)
  -ledger-database URL      a PostgreSQL for playground ledgers: a ledger switch on every playground (IDEMLAB_LEDGER_DATABASE)
  -ledgers-in-workshop-database
                            put the ledgers on -database's PostgreSQL instead (IDEMLAB_LEDGERS_IN_WORKSHOP_DATABASE=1)
  -ledger-prefix PREFIX     names of this server's ledger schemas and roles (IDEMLAB_LEDGER_PREFIX; default: random)
  -ledger-pool N            PostgreSQL ledgers, runs on PostgreSQL at once (IDEMLAB_LEDGER_POOL; default 4)

Run 'idemlab COMMAND -h' for the flags of one command.
`

// usageError is a command line that could not be understood: exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// reportedError is an error whose details run has already printed (lint
// problems); only its summary goes on the last line.
type reportedError struct{ summary string }

func (e *reportedError) Error() string { return e.summary }

// run is the whole program minus signal handling and os.Exit. It prints a
// failure as one line "idemlab: message" on stderr (plus the usage for a
// command line it could not understand) and returns the error, so that main
// can choose the exit status and tests can inspect it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "idemlab: %v\n", err)
		var usage *usageError
		if errors.As(err, &usage) {
			fmt.Fprintf(stderr, "\n%s", usageText)
		}
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	command := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve":
		return serve(ctx, args, stdout, stderr)
	case "lint":
		return lint(args, stdout)
	case "backup":
		return backupCommand(ctx, args, stdout)
	case "health":
		return health(ctx, args, stdout)
	case "version":
		return printVersion(args, stdout)
	case "check":
		return checkExercise(ctx, args, stdout)
	case "run":
		return runScenario(ctx, args, stdout)
	case "load":
		return load(ctx, args, stdout)
	case "scenarios":
		return listScenarios(args, stdout)
	case "handlers":
		return listHandlers(args, stdout)
	case "help":
		fmt.Fprint(stdout, usageText)
		return nil
	default:
		return usagef("unknown command %q", command)
	}
}

// newFlagSet returns a flag set that reports problems through the returned
// error instead of printing them, so that run prints one message only.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // parseFlags prints the usage for -h; run for errors
	return fs
}

// parseFlags parses args into fs, prints the command's flags on stdout for
// -h, and turns a parse failure into a usage error.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "Usage of idemlab %s:\n", fs.Name())
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return err
	case err != nil:
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}
