package playground

import (
	"context"
	"strings"
)

// CheckOn checks the learner's handler as Check does, on the ledger lg.
// On PostgreSQL the handler's SQL is read by PostgreSQL's rules (SQLite-only
// syntax is an Error with its line and a hint), every schedule runs on real
// sessions of the server's ledgers at lg's isolation level (explore_pg.go),
// and the verdict is PostgreSQL's: a second INSERT of an id waits, then
// fails with 23505 and leaves its message unacked; a serialization failure
// (40001) does the same unless the handler declares @retry-on
// serialization_failure. A counterexample's script replays on the same
// ledger to the same break. A check that runs out of time on PostgreSQL
// does not fail with an error: its result says which bounds it covered
// (Unfinished), and never that the handler passed.
func CheckOn(ctx context.Context, ex *Exercise, handlerSource string, lg Ledger) (*CheckResult, error) {
	res, err := checkOn(ctx, ex, handlerSource, true, lg)
	if err == nil && lg.Postgres != nil {
		// Only what does not depend on timing (explore_pg.go): the states
		// and settled schedules of a pass.
		res.Runs = 0
		if !res.Passed {
			res.Schedules, res.DistinctStates = 0, 0
		}
	}
	return res, err
}

// pgUnfinished is the answer of a PostgreSQL check whose time ran out in
// its check number stopped (ex.checks()): the bounds before it were
// explored whole and held, the others were not.
func pgUnfinished(res *CheckResult, ex *Exercise, lg Ledger, stopped int) *CheckResult {
	out := &CheckResult{Exercise: ex.ID, Ledger: res.Ledger}
	var b strings.Builder
	b.WriteString("On PostgreSQL at " + strings.ToUpper(lg.Isolation) + " the check ran out of time before it had tried every schedule the exercise promises, so it does not say that the handler passes.")
	checks := ex.checks()
	for i, c := range checks[:stopped] {
		lead := " No schedule broke the handler where it tried"
		if i > 0 {
			lead = " Nor where it tried"
		}
		b.WriteString(c.bounds.schedules(ex.Scenarios, lead))
	}
	for i, c := range checks[stopped:] {
		lead := " It did not finish trying"
		if i > 0 {
			lead = " Nor did it try"
		}
		b.WriteString(c.bounds.schedules(ex.Scenarios, lead))
	}
	b.WriteString(" Check it again when the server is less busy, or on SQLite.")
	out.Unfinished = strings.TrimSpace(b.String())
	return out
}
