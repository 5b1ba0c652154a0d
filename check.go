package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"idemlab/lessons"
	"idemlab/playground"
	"idemlab/web"
)

// checkStdin is where `idemlab check EXERCISE -` reads the handler; tests
// replace it.
var checkStdin io.Reader = os.Stdin

// maxHandlerFileBytes bounds what check reads: the playground refuses far
// smaller scripts, and a mistaken path to a large file should not be slurped.
const maxHandlerFileBytes = 1 << 20

// checkExercise checks a handler script against an exercise of the course:
//
//	idemlab check [-lessons DIR] [-json] [-ledger L -ledger-database URL] EXERCISE FILE
//
// With -ledger postgres-rc, postgres-rr or postgres-serializable the
// handler is checked on PostgreSQL at that isolation level, on schemas the
// command makes on the -ledger-database server and drops after.
//
// It exits 0 when the handler holds in all schedules, 1 when the checker
// found a schedule that breaks it (or its SQL failed), and 2 for bad input:
// an unknown exercise (the ids are listed), a file it cannot read, a course
// folder that does not load.
// cliCheckTimeout bounds one `idemlab check`.
const cliCheckTimeout = time.Minute

// checkLedgerPool is how many PostgreSQL ledgers `idemlab check -ledger
// postgres-…` makes: the checker explores that many subtrees at once.
const checkLedgerPool = 8

func checkExercise(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("check")
	dir := fs.String("lessons", "", "read the course from `DIR` instead of the built-in one")
	asJSON := fs.Bool("json", false, "print the checker's result as JSON")
	ledgerName := fs.String("ledger", "sqlite", "the ledgers' database: "+strings.Join(playground.LedgerNames(), ", "))
	ledgerDatabase := fs.String("ledger-database", "", "a PostgreSQL server for postgres-* ledgers (postgres://…); its user creates schemas and roles for the check and drops them after")
	// Flags may come before, between or after the two arguments.
	var positional []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional, args = append(positional, args[0]), args[1:]
	}
	if len(positional) != 2 {
		return usagef("check: want EXERCISE FILE (FILE - reads stdin), got %d argument(s)", len(positional))
	}
	id, file := positional[0], positional[1]

	course, err := loadExercises(*dir)
	if err != nil {
		var loadErr *lessons.LoadError
		if errors.As(err, &loadErr) {
			return &inputError{fmt.Errorf("check: %s does not load (%s; 'idemlab lint %s' lists every problem)",
				courseSource(*dir), loadErr.Problems[0], *dir)}
		}
		return &inputError{fmt.Errorf("check: %w", err)}
	}
	exercise := course.Exercise(id)
	if exercise == nil {
		var ids []string
		for _, e := range course.Exercises() {
			ids = append(ids, e.ID)
		}
		known := "the course has no exercises"
		if len(ids) > 0 {
			known = "exercises are " + strings.Join(ids, ", ")
		}
		return &inputError{fmt.Errorf("check: unknown exercise %q; %s", id, known)}
	}
	if exercise.IsInverse() {
		return &inputError{fmt.Errorf("check: exercise %s asks for a script that breaks its handler, not for a handler; open it in the browser at /exercises/%s", id, id)}
	}
	source, name, err := readHandlerFile(file)
	if err != nil {
		return &inputError{fmt.Errorf("check: %w", err)}
	}
	pg, err := openRunLedgers(ctx, "check", *ledgerName, *ledgerDatabase, checkLedgerPool)
	if err != nil {
		return err
	}
	if pg != nil {
		defer pg.Close()
	}
	lg, err := playground.ParseLedger(*ledgerName, pg)
	if err != nil {
		return &inputError{fmt.Errorf("check: %w", err)}
	}

	// The learner's own machine, their own handler: a minute, as lint
	// allows, rather than the few seconds the server gives a check.
	ctx, cancel := context.WithTimeout(ctx, cliCheckTimeout)
	defer cancel()
	started := time.Now()
	res, err := playground.CheckOn(ctx, exercise.Exercise, source, lg)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	elapsed := time.Since(started)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // the query's & stays readable
		if err := enc.Encode(web.NewCheckReport(res, source)); err != nil {
			return err
		}
	} else {
		writeCheckResult(stdout, res, name, source, elapsed)
	}
	if !res.Passed {
		return &reportedError{fmt.Sprintf("check: %s does not hold for exercise %s", name, id)}
	}
	return nil
}

// loadExercises loads the course whose exercises check uses: from dir, or
// the built-in one (loaded once per process: it cannot change).
func loadExercises(dir string) (*lessons.Course, error) {
	if dir == "" {
		return builtinCourse()
	}
	return loadCourseForCheck(dir)
}

var builtinCourse = sync.OnceValues(func() (*lessons.Course, error) { return loadCourseForCheck("") })

func loadCourseForCheck(dir string) (*lessons.Course, error) {
	fsys, opts, err := courseFS(dir)
	if err != nil {
		return nil, err
	}
	// Lint runs the playground blocks through the engine; check needs only
	// the exercises, and answers sooner without that.
	opts.CheckPlayground = func(*lessons.PlaygroundSpec) error { return nil }
	return lessons.Load(fsys, opts)
}

// readHandlerFile reads the learner's script from a file, or from stdin for
// "-"; name is how messages call it.
func readHandlerFile(file string) (source, name string, err error) {
	var r io.Reader
	name = file
	if file == "-" {
		r, name = checkStdin, "stdin"
	} else {
		f, err := os.Open(file)
		if err != nil {
			return "", "", fmt.Errorf("handler file %s: %w", file, errors.Unwrap(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxHandlerFileBytes+1))
	if err != nil {
		return "", "", fmt.Errorf("handler file %s: %w", name, err)
	}
	if len(data) > maxHandlerFileBytes {
		return "", "", fmt.Errorf("handler file %s: larger than %d bytes; a handler script is a few lines of SQL", name, maxHandlerFileBytes)
	}
	return string(data), name, nil
}

// writeCheckResult prints the checker's answer for a person: the pass line,
// or the counterexample as a story, its script and a playground link, and
// any SQL error at its line of the handler file.
func writeCheckResult(w io.Writer, res *playground.CheckResult, name, source string, elapsed time.Duration) {
	if res.Passed && res.Ledger != "" { // PostgreSQL: schedules are not counted (playground.CheckOn)
		fmt.Fprintf(w, "✓ holds on %s in every schedule within the bounds (%d distinct states explored, %v)\n",
			res.Ledger, res.DistinctStates, elapsed.Round(time.Millisecond))
		return
	}
	if res.Passed {
		fmt.Fprintf(w, "✓ holds in all %d schedules (%d distinct states explored, %v)\n",
			res.NaiveSchedules, res.DistinctStates, elapsed.Round(time.Millisecond))
		return
	}
	if res.Unfinished != "" {
		fmt.Fprintf(w, "? %s\n", res.Unfinished)
		return
	}
	if ce := res.Counterexample; ce != nil {
		fmt.Fprintf(w, "✗ %s (%s, scenario %s)\n\n", ce.Violation, ce.Invariant, ce.Scenario)
		fmt.Fprintf(w, "What happened:\n  %s\n\n", ce.Story)
		fmt.Fprintf(w, "The schedule (%d events, after %d schedules that held):\n  %s\n\n", ce.Events, res.Schedules, ce.Script)
		fmt.Fprintf(w, "Replay it step by step in the playground:\n  %s\n", web.PlaygroundLink(ce, source))
		if ce.SQLError != nil {
			fmt.Fprintf(w, "\n%s\n", handlerErrorLine(name, ce.SQLError))
		}
		return
	}
	if res.Error != nil {
		fmt.Fprintf(w, "✗ %s\n", handlerErrorLine(name, res.Error))
	}
}

// handlerErrorLine is "FILE:LINE: message", the form editors turn into a link.
func handlerErrorLine(name string, e *playground.HandlerError) string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", name, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", name, e.Message)
}
