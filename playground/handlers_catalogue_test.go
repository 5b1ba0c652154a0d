package playground

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// catalogueExercise holds a built-in handler to its "idempotent" claim:
// copies of one message, however the broker hands them out (a lost ack, a
// crash at any point, a lease that runs out, a second copy while the first
// runs), change nothing. Not a producer's new message for the same
// payment, messages out of order, a replay, a prune or a restart, which
// some scenarios add on purpose to show what idempotency does not cover.
func catalogueExercise(sc *Scenario, h *Handler) *Exercise {
	inv := InvariantExactlyOnce
	if len(sc.Orders) > 0 {
		inv = InvariantShippedOnceIfPaid
	}
	ex := &Exercise{ID: "catalogue", Goal: "the handler's claim", Scenarios: []string{sc.Name}, Invariants: []string{inv},
		Bounds: ExploreBounds{Workers: 1, Messages: 1, MaxEvents: 5, Crashes: 1, LostAcks: 1},
		Start:  h.Source, Solution: h.Source}
	if len(sc.Workers) > 1 {
		ex.Overlap = ExploreBounds{Workers: 2, Messages: 1, Interleave: true, MaxEvents: 8, Crashes: 1, Expiries: 1, Duplicates: 1}
	}
	return ex
}

// TestHandlers_CatalogueIsProved: every built-in handler is checked on
// every queue scenario that offers it, on SQLite and (with
// IDEMLAB_TEST_DATABASE) at each PostgreSQL level, under
// catalogueExercise's bounds. One the catalogue calls idempotent on a
// ledger (IdempotentOn) holds on every scenario there; one it calls not
// idempotent fails on at least one; and `idemlab handlers` says which
// (IdempotentText).
func TestHandlers_CatalogueIsProved(t *testing.T) {
	relaxCheckTimeout(t)
	ledgers := []Ledger{{}}
	if os.Getenv("IDEMLAB_TEST_DATABASE") != "" && !testing.Short() {
		pg := testPostgresLedgers(t, 8)
		for _, name := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
			lg, err := ParseLedger(name, pg)
			if err != nil {
				t.Fatal(err)
			}
			ledgers = append(ledgers, lg)
		}
	}
	// Every handler on every ledger, checked side by side (a PostgreSQL
	// check mostly waits on the server), then reported one by one.
	type job struct {
		builtin, h *Handler
		lg         Ledger
		name       string
		checked    int
		failed     []string
		err        string
	}
	var jobs []*job
	for _, builtin := range Handlers() {
		for _, lg := range ledgers {
			if lg.check([]*Handler{builtin}) != nil {
				continue // SQLite's syntax: refused before it runs on PostgreSQL
			}
			name := lg.Name()
			if name == "" {
				name = "sqlite"
			}
			jobs = append(jobs, &job{builtin: builtin, h: lg.forLedger(builtin), lg: lg, name: name})
		}
	}
	inParallel(len(jobs), pgChecksAtOnce, func(i int) {
		j := jobs[i]
		for _, sc := range Scenarios() {
			if !offeredOn(j.builtin, sc) || sc.Partition != nil || sc.Outage != nil {
				// A partition's handlers are proved by offsets_test.go; a
				// downstream outage fails every handler until it ends.
				continue
			}
			j.checked++
			res, err := checkOn(context.Background(), catalogueExercise(sc, j.h), j.h.Source, true, j.lg)
			switch {
			case err != nil:
				j.err = fmt.Sprintf("%s: %v", sc.Name, err)
				return
			case res.Error != nil:
				j.err = fmt.Sprintf("%s: %+v", sc.Name, res.Error)
				return
			case res.Counterexample != nil:
				j.failed = append(j.failed, sc.Name+": "+res.Counterexample.Script+" → "+res.Counterexample.Violation)
			}
		}
	})
	for _, j := range jobs {
		t.Run(j.builtin.Name+"/"+j.name, func(t *testing.T) {
			claim := j.builtin.IdempotentOn(j.lg.Name())
			switch {
			case j.err != "":
				t.Fatal(j.err)
			case j.checked == 0:
			case claim && len(j.failed) > 0:
				t.Errorf("the catalogue says %q, but it fails: %s", j.builtin.IdempotentText(), strings.Join(j.failed, "; "))
			case !claim && len(j.failed) == 0:
				t.Errorf("the catalogue says %q, but it holds on every scenario that offers it", j.builtin.IdempotentText())
			}
		})
	}
}

// offeredOn: the scenario lists the handler, or the handler calls the
// outside system the scenario has (the charge handlers on card-charge, the
// email ones on receipt-email: lessons 12 and 15 compare them there).
func offeredOn(h *Handler, sc *Scenario) bool {
	if contains(sc.Handlers, h.Name) {
		return true
	}
	// Every outside system of the scenario (order-flow has two): a
	// handler that reaches only one of them loses the other's effect.
	for _, o := range sc.Outside {
		if !strings.Contains(h.Source, "provider."+o) {
			return false
		}
	}
	return len(sc.Outside) > 0
}
