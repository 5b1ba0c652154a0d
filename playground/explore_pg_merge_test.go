package playground

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCheckOn_PostgresMergedMatchesUnmerged: at REPEATABLE READ and
// SERIALIZABLE, where snapshots and read dependencies outlive a statement,
// the checker merges two states with a transaction open when PostgreSQL
// has seen the same since the same quiet rows (explore_pg.go). A search
// that merges no such state (pgKeyPaths: each is keyed by its path from
// the last quiet state) must give the same verdict on the race exercise's
// handlers, and on a pass reach the same settled states (each is quiet,
// so keyed alike by both) through more states of its own.
func TestCheckOn_PostgresMergedMatchesUnmerged(t *testing.T) {
	if testing.Short() {
		t.Skip("checks the race exercise's handlers twice on PostgreSQL")
	}
	relaxCheckTimeout(t)
	checkTimeout = 5 * time.Minute // the unmerged search, on a loaded machine
	pg := testPostgresLedgers(t, 16)
	ex := exerciseByID(t, "race-check-then-insert")
	handlers := []struct{ name, source, levels string }{
		{"start", ex.Start, "rr serializable"},
		{"solution", ex.Solution, "rr serializable"},
		{"solution-with-retry", "@retry-on serialization_failure\n" + ex.Solution, "rr serializable"},
		// It passes at SERIALIZABLE too, through 1,529 states merged and
		// 9,334 unmerged: a minute more, left out.
		{"check-inside-with-retry", raceCheckInsideWithRetry, "rr"},
	}
	type check struct {
		name, source     string
		lg               Ledger
		merged, unmerged *CheckResult
		err              error
	}
	var checks []*check
	for _, level := range []string{"postgres-rr", "postgres-serializable"} {
		lg, _ := ParseLedger(level, pg)
		for _, h := range handlers {
			if slices.Contains(strings.Fields(h.levels), strings.TrimPrefix(level, "postgres-")) {
				checks = append(checks, &check{name: level + "/" + h.name, source: h.source, lg: lg})
			}
		}
	}
	// Every merged check, then every unmerged one, pgChecksAtOnce at a
	// time (pgKeyPaths is the package's, set for each phase).
	for _, paths := range []bool{false, true} {
		pgKeyPaths = paths
		inParallel(len(checks), pgChecksAtOnce, func(i int) {
			c := checks[i]
			res, err := CheckOn(context.Background(), ex, c.source, c.lg)
			if err == nil && res.Unfinished != "" {
				err = errors.New(res.Unfinished)
			}
			if err != nil {
				c.err = fmt.Errorf("merged=%v: %w", !paths, err)
			} else if paths {
				c.unmerged = res
			} else {
				c.merged = res
			}
		})
		pgKeyPaths = false
	}
	passes := 0
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.err != nil {
				t.Fatal(c.err)
			}
			merged, unmerged := c.merged, c.unmerged
			if merged.Passed != unmerged.Passed || (merged.Error == nil) != (unmerged.Error == nil) || (merged.Counterexample == nil) != (unmerged.Counterexample == nil) {
				t.Fatalf("merged: passed=%v %+v %+v; unmerged: passed=%v %+v %+v", merged.Passed, merged.Error, merged.Counterexample, unmerged.Passed, unmerged.Error, unmerged.Counterexample)
			}
			if ce, uce := merged.Counterexample, unmerged.Counterexample; ce != nil {
				if ce.Invariant != uce.Invariant {
					t.Errorf("merged breaks %s (%s), unmerged %s (%s)", ce.Invariant, ce.Violation, uce.Invariant, uce.Violation)
				}
				t.Logf("merged: %s → %s; unmerged: %s → %s", ce.Script, ce.Violation, uce.Script, uce.Violation)
			}
			if merged.Passed {
				passes++
				if merged.Schedules != unmerged.Schedules || merged.DistinctStates >= unmerged.DistinctStates {
					t.Errorf("settled states %d merged, %d unmerged; states %d merged, %d unmerged", merged.Schedules, unmerged.Schedules, merged.DistinctStates, unmerged.DistinctStates)
				}
				t.Logf("%d settled states; %d states merged, %d unmerged", merged.Schedules, merged.DistinctStates, unmerged.DistinctStates)
			}
		})
	}
	if passes == 0 {
		t.Error("no handler passed: the settled states were never compared")
	}
}
