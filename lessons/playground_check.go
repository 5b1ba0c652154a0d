package lessons

import (
	"context"
	"errors"
	"fmt"
	"time"

	"idemlab/playground"
)

// engineCheckTimeout bounds one playground run at load time: the built-in
// scenarios take milliseconds, so a run this long is a bug worth reporting
// rather than a start that hangs.
const engineCheckTimeout = 10 * time.Second

// CheckWithEngine is the default Options.CheckPlayground: it runs the spec
// through the playground engine, so that a lesson cannot name a scenario,
// handler, message or worker the engine does not have, nor claim a verdict
// the engine does not show. Bad input comes back as a *FieldError on the
// field to blame; each wrong claim as a *FieldError on its expect entry.
// The block must also fit the server's budget for one run (DefaultBudget,
// its counts: CPU and wall time depend on the machine lint runs on), since
// the server refuses a run over it.
func CheckWithEngine(spec *PlaygroundSpec) error { return checkWithEngine(spec, nil) }

// checkWithEngine runs the block on its ledger: SQLite, or PostgreSQL on
// pg; a PostgreSQL block without pg is checked against its recording
// (pgblock.go).
func checkWithEngine(spec *PlaygroundSpec, pg *playground.PostgresLedgers) error {
	if spec.Ledger != "" && pg == nil {
		return checkRecorded(spec)
	}
	ledger, err := playground.ParseLedger(spec.Ledger, pg)
	if err != nil {
		return &FieldError{Field: "ledger", Err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineCheckTimeout)
	defer cancel()
	budget := playground.DefaultBudget()
	budget.CPU, budget.Wall = 0, 0
	run := func(script string) (*playground.Trace, error) {
		return playground.Run(ctx, playground.Request{Scenario: spec.Scenario, Handlers: spec.Handlers, Script: script, Budget: &budget, Ledger: ledger})
	}
	trace, err := run(spec.Script)
	var over *playground.BudgetError
	if errors.As(err, &over) {
		return &FieldError{Field: "script", Err: fmt.Errorf("the server would refuse this block: %s", over.Error())}
	}
	if err != nil {
		var input *playground.InputError
		if errors.As(err, &input) {
			field := input.Field
			if field == "handler" {
				field = "handlers"
			}
			return &FieldError{Field: field, Err: errors.New(input.Msg)}
		}
		return fmt.Errorf("the playground engine failed on this block: %w", err)
	}
	return errors.Join(claimsHold(spec, trace), checkGoals(spec, trace, run))
}
