package lessons

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"idemlab/playground"
)

// PostgreSQL blocks. A ```playground block with `ledger: postgres-rc` (or
// postgres-rr, postgres-serializable) runs on a PostgreSQL ledger at that
// isolation level. Its claims are proved on a real server when the course
// is loaded with Options.Ledgers (a server started with -ledger-database,
// `idemlab lint -ledger-database URL`, the lessons tests in CI). Without
// one, the block is checked against its recording: a run made on a real
// server and committed beside the lessons as recorded/SLUG.ID.json, which
// the site shows, labelled as recorded, instead of running the block on
// SQLite. A recording that no longer matches a live run is a problem when
// a server is at hand; `go test ./lessons -run TestPostgresBlocks -update`
// (with IDEMLAB_TEST_DATABASE) writes them again.

// RecordingsDir is the folder, beside the lessons, that holds recordings.
const RecordingsDir = "recorded"

// Recording is a PostgreSQL block's run, recorded on a real server.
type Recording struct {
	Path  string            // in the lessons folder: recorded/SLUG.ID.json
	Trace *playground.Trace // decoded
	data  []byte            // as committed, to compare with a live run's
}

// RecordingPath is where the recording of a lesson's block lives.
func RecordingPath(slug, blockID string) string {
	return path.Join(RecordingsDir, slug+"."+blockID+".json")
}

// postgresLedgers are the ledger names a block may give: ParseLedger's,
// with sqlite (the default, left unspelled in the spec).
func postgresLedgers() []string { return playground.LedgerNames() }

// ledgerValue reads a block's ledger: "" for SQLite.
func ledgerValue(v *yaml.Node) (string, string) {
	name, msg := stringValue("ledger", v)
	if msg != "" {
		return "", msg
	}
	if !slices.Contains(postgresLedgers(), name) {
		return "", unknownWord("ledger", name, postgresLedgers())
	}
	return strings.TrimPrefix(name, "sqlite"), ""
}

// loadRecording reads a PostgreSQL block's recording from the lessons
// folder, if it has one: a missing file is not a problem here (a server
// with PostgreSQL needs none); one that cannot be read is.
func loadRecording(fsys fs.FS, p string) (*Recording, error) {
	data, err := fs.ReadFile(fsys, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &FieldError{Field: "ledger", Err: fmt.Errorf("recording %s: %v", p, err)}
	}
	tr, err := playground.DecodeTrace(data)
	if err != nil {
		return nil, &FieldError{Field: "ledger", Err: fmt.Errorf("recording %s: %v; %s", p, err, recordHowTo)}
	}
	return &Recording{Path: p, Trace: tr, data: data}, nil
}

const recordHowTo = "record it again on a PostgreSQL server with `go test ./lessons -run TestPostgresBlocks -update` (IDEMLAB_TEST_DATABASE set)"

// CheckWithEngineOn is CheckWithEngine with a PostgreSQL server for the
// blocks that name one: pg nil checks those against their recordings.
func CheckWithEngineOn(pg *playground.PostgresLedgers) func(*PlaygroundSpec) error {
	return func(spec *PlaygroundSpec) error { return checkWithEngine(spec, pg) }
}

// checkRecorded checks a PostgreSQL block without a server: it must have a
// recording of this very run, and its claims must be the recording's.
// Goals are proved only live (they ask for runs nobody recorded).
func checkRecorded(spec *PlaygroundSpec) error {
	rec := spec.Recorded
	if rec == nil {
		return &FieldError{Field: "ledger", Err: fmt.Errorf("%s runs on PostgreSQL and has no recording (%s): prove it on a server with `idemlab lint -ledger-database URL`, and %s",
			spec.Ledger, spec.recordingPath, recordHowTo)}
	}
	if err := recordingOf(spec, rec.Trace); err != nil {
		return err
	}
	return claimsHold(spec, rec.Trace)
}

// recordingOf says whether a recorded trace is of the block's run.
func recordingOf(spec *PlaygroundSpec, tr *playground.Trace) error {
	script, err := playground.ParseScript(spec.Script)
	if err != nil {
		return &FieldError{Field: "script", Err: err}
	}
	var names []string
	for _, h := range tr.Handlers {
		names = append(names, h.Name)
	}
	var differs string
	switch {
	case tr.Ledger != spec.Ledger:
		differs = "its ledger is " + tr.Ledger
	case tr.Scenario != spec.Scenario:
		differs = "its scenario is " + tr.Scenario
	case !slices.Equal(names, spec.Handlers):
		differs = "its handlers are " + strings.Join(names, ", ")
	case tr.Script != script.String():
		differs = "its script is " + tr.Script
	}
	if differs != "" {
		return &FieldError{Field: "ledger", Err: fmt.Errorf("the recording %s is of another run (%s): %s", spec.Recorded.Path, differs, recordHowTo)}
	}
	return nil
}

// claimsHold checks the block's expect claims against a trace.
func claimsHold(spec *PlaygroundSpec, tr *playground.Trace) error {
	var wrong []error
	for _, h := range tr.Handlers {
		claim, ok := spec.Expect[h.Name]
		if ok && claim != h.Verdict {
			where := "the engine shows"
			if tr.Ledger != "" {
				where = "PostgreSQL (" + tr.Ledger + ") shows"
			}
			wrong = append(wrong, &FieldError{Field: "expect." + h.Name,
				Err: fmt.Errorf("lesson claims %s: %s but %s %s", h.Name, claim, where, h.Verdict)})
		}
	}
	return errors.Join(wrong...)
}

// RecordLive runs a PostgreSQL block on pg and returns its recording's
// bytes: what TestPostgresBlocks writes with -update.
func RecordLive(ctx context.Context, spec *PlaygroundSpec, pg *playground.PostgresLedgers) ([]byte, error) {
	lg, err := playground.ParseLedger(spec.Ledger, pg)
	if err != nil {
		return nil, err
	}
	tr, err := playground.Run(ctx, playground.Request{Scenario: spec.Scenario, Handlers: spec.Handlers, Script: spec.Script, Ledger: lg})
	if err != nil {
		return nil, err
	}
	return playground.EncodeTrace(tr)
}
