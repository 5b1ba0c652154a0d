package playground

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CheckResult is the checker's answer for one learner handler.
type CheckResult struct {
	Exercise string `json:"exercise"`
	Passed   bool   `json:"passed"`
	// Schedules is the number of complete schedules checked against the
	// invariants: a schedule that reaches a state already seen is not
	// checked (nor extended) again, its future being the same.
	Schedules int `json:"schedules"`
	// DistinctStates is the number of distinct (ledger, broker, workers,
	// budget) states the exploration reached.
	DistinctStates int `json:"distinct_states"`
	// NaiveSchedules is the number of complete schedules within the bounds:
	// what an enumeration without pruning checks one by one, and what "holds
	// in all N schedules" counts. It is counted on the state graph (equal
	// states have equal futures) and known when the check passed, else 0.
	NaiveSchedules int64 `json:"naive_schedules"`
	// Runs is the number of fresh ledgers the exploration used: the search
	// replays a schedule's prefix from scratch when it backtracks.
	Runs           int             `json:"runs"`
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	// Error is set when the handler does not parse, or when its SQL was
	// refused or failed in every schedule; Passed is then false.
	Error *HandlerError `json:"error,omitempty"`
	// Ledger names the database the check ran on when it is not SQLite
	// ("postgres-rc"); see CheckOn.
	Ledger string `json:"ledger,omitempty"`
	// Unfinished is set when a check on PostgreSQL ran out of time: it says
	// in the exercise page's words which bounds were covered and which were
	// not. Passed is then false, with no counterexample.
	Unfinished string `json:"unfinished,omitempty"`
}

// HandlerError is a problem in the learner's handler, with its line.
type HandlerError struct {
	Line    int    `json:"line,omitempty"` // 1-based line in the handler source; 0 when not tied to a line
	Message string `json:"message"`
}

func (e *HandlerError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// Counterexample is the smallest schedule found that breaks an invariant.
type Counterexample struct {
	Scenario  string `json:"scenario"`
	Script    string `json:"script"` // canonical script text
	Events    int    `json:"events"`
	Invariant string `json:"invariant"`
	Violation string `json:"violation"` // "acc-1 balance 200, expected 150"
	// Story tells the schedule in one line:
	// "deliver msg-1 to A; A's ack is lost; redeliver msg-1 to A → acc-1 balance 200, expected 150".
	Story string `json:"story"`
	// Schedule is the script's events, for a link that replays it in the
	// playground with the learner's handler (the web writes the URL).
	Schedule []Event `json:"-"`
	// Ledger is the ledger the schedule breaks the handler on, as
	// CheckResult.Ledger names it ("" for SQLite): its replay runs there.
	Ledger string `json:"ledger,omitempty"`
	// SQLError is the first statement of the handler that failed in this
	// schedule (a constraint, say), with its line; nil when none did.
	SQLError *HandlerError `json:"sql_error,omitempty"`
}

// The checker's model. A schedule is a script of events (the playground's
// grammar) chosen by the explorer, depth first, in a fixed order: deliver
// each message in scope (to each idle worker when there are several), with
// every fault the budget still allows (lose-ack, crash-after N for every
// statement N, crash-before-ack); with Interleave, start a delivery and
// step each busy worker one statement at a time, crash a busy worker,
// expire a lease, hand out a second copy; publish again, replay, restart,
// prune, advance the clock (between deliveries, and only while the broker
// owes no copy). A step that no other event can tell apart from the next
// one (a deferred BEGIN, the COMMIT of a transaction that wrote nothing)
// runs together with it ("step W 2"): a partial-order reduction that
// leaves out only schedules with the same outcomes. An exercise is checked
// under its bounds, then its overlap and storage bounds when it has them.
// A schedule is complete ("settled") when no
// worker holds a message and every delivered message is acked (or
// dead-lettered): before that the broker still owes a redelivery, and a
// missing effect is not yet lost. Each settled state is checked against the
// exercise's invariants. Two schedules that reach the same state (hashed:
// clock, broker, workers, uncommitted and committed rows) have the same
// future, so the second is not extended unless it has more budget left.
// A failing schedule is shrunk (drop an event, merge steps or clock jumps,
// a started delivery made whole, earlier messages and workers) while it
// still fails, and told as a story.

// Check parses the learner's handler and checks it against every schedule
// within the exercise's bounds, in each of its scenarios. It stops at the
// first schedule that breaks an invariant and shrinks it to a minimal one.
// The answer is deterministic. A handler that does not parse, or whose SQL
// the sandbox refuses, gives a result with Error set (not an error); the
// error is for an invalid exercise, the check deadline or ctx.
func Check(ctx context.Context, ex *Exercise, handlerSource string) (*CheckResult, error) {
	return check(ctx, ex, handlerSource, true)
}

// checkTimeout is the wall-clock limit of a check whose caller set no
// deadline of its own. A caller that sets one decides: the web checker
// keeps a learner's check to a few seconds, while lint, which proves the
// course's own solutions, allows a minute so that a busy machine (a race
// build in CI) does not turn a slow proof into a false failure. The
// mutation suite, which judges verdicts and not speed (the benchmarks do),
// raises it on a loaded machine. A -race binary allows ten times as long
// (sandboxSlowdown), as it does a statement.
var checkTimeout = sandboxCheckTimeout * sandboxSlowdown

func check(ctx context.Context, ex *Exercise, source string, prune bool) (*CheckResult, error) {
	return checkOn(ctx, ex, source, prune, Ledger{})
}

func checkOn(ctx context.Context, ex *Exercise, source string, prune bool, lg Ledger) (*CheckResult, error) {
	if err := ex.Validate(); err != nil {
		return nil, err
	}
	if ex.IsInverse() {
		return nil, fmt.Errorf("exercise %s asks for a script that breaks its handler, not for a handler: check it with CheckBreak", ex.ID)
	}
	res := &CheckResult{Exercise: ex.ID}
	sqlCheck := checkSQL
	if lg.Postgres != nil {
		res.Ledger, sqlCheck = lg.Name(), pgCheckSQL
	}
	h, line, err := parseHandlerChecked(exerciseHandlerName, source, sqlCheck)
	if err != nil {
		res.Error = &HandlerError{Line: line, Message: err.Error()}
		return res, nil
	}
	limit := checkTimeout
	if deadline, ok := ctx.Deadline(); ok {
		limit = time.Until(deadline)
	}
	if !prune {
		limit = 10 * time.Minute // the naive enumeration is only measured, in tests
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for i, c := range ex.checks() {
		done, err := checkBounds(ctx, parent, res, ex, h, c.bounds, prune, limit, lg)
		if err != nil {
			if lg.Postgres != nil && errors.Is(err, context.DeadlineExceeded) {
				return pgUnfinished(res, ex, lg, i), nil
			}
			return nil, err
		}
		if done {
			return res, nil
		}
	}
	res.Passed = true
	return res, nil
}

// checkBounds explores every scenario of the exercise under one set of
// bounds, adding to res. It reports done when res is final (a
// counterexample, or a handler error).
func checkBounds(ctx, parent context.Context, res *CheckResult, ex *Exercise, h *Handler, b ExploreBounds, prune bool, limit time.Duration, lg Ledger) (bool, error) {
	for _, name := range ex.Scenarios {
		sc, _ := LookupScenario(name)
		x, err := newExplorer(ctx, sc, h, b, ex.Invariants, prune)
		if err != nil {
			return false, err
		}
		x.lg = lg
		err = x.run()
		if err == nil && x.failure != nil {
			x.ce, err = x.counterexample()
		}
		if errors.Is(err, errNotReproduced) && lg.Postgres == nil {
			// The search's state was not a fresh replay's (a bug
			// TestExplore_EveryStateEqualsAFreshReplay looks for): search
			// again with every run on a new ledger, whose states are.
			x.releaseSpare()
			if x, err = newExplorer(ctx, sc, h, b, ex.Invariants, prune); err != nil {
				return false, err
			}
			x.fresh = true
			err = x.run()
			if err == nil && x.failure != nil {
				x.ce, err = x.counterexample()
			}
		}
		x.releaseSpare()
		res.Schedules += x.schedules
		res.DistinctStates += len(x.nodes)
		res.Runs += x.runs
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return false, fmt.Errorf("the check took longer than %v; it was stopped: %w", limit.Round(time.Millisecond), context.DeadlineExceeded)
			}
			if parent.Err() != nil {
				return false, parent.Err()
			}
			return false, err
		}
		if x.refused != nil {
			res.Error = x.refused
			return true, nil
		}
		if x.ce != nil {
			res.Counterexample = x.ce
			x.ce.Ledger = res.Ledger
			return true, nil
		}
		if x.schedules == 0 {
			msg := "no schedule completed: every delivery of the handler failed"
			line := 0
			if x.firstError != nil {
				msg += ": " + x.firstError.Message
				line = x.firstError.Line
			}
			res.Error = &HandlerError{Line: line, Message: msg}
			return true, nil
		}
		if lg.Postgres != nil {
			// Not counted: the search leaves mirror images out (explore_pg.go).
		} else if prune {
			res.NaiveSchedules += x.naiveCount()
		} else {
			res.NaiveSchedules += int64(x.schedules)
		}
	}
	return false, nil
}
