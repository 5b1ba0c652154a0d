package playground

import (
	"context"
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
	for _, builtin := range Handlers() {
		for _, lg := range ledgers {
			h := lg.forLedger(builtin)
			if lg.check([]*Handler{builtin}) != nil {
				continue // SQLite's syntax: refused before it runs on PostgreSQL
			}
			name := lg.Name()
			if name == "" {
				name = "sqlite"
			}
			t.Run(builtin.Name+"/"+name, func(t *testing.T) {
				claim := builtin.IdempotentOn(lg.Name())
				checked, failed := 0, []string{}
				for _, sc := range Scenarios() {
					if !offeredOn(builtin, sc) || sc.Partition != nil || sc.Outage != nil {
						// A partition's handlers are proved by offsets_test.go; a
						// downstream outage fails every handler until it ends.
						continue
					}
					checked++
					res, err := checkOn(context.Background(), catalogueExercise(sc, h), h.Source, true, lg)
					if err != nil {
						t.Fatalf("%s: %v", sc.Name, err)
					}
					if res.Error != nil {
						t.Fatalf("%s: %+v", sc.Name, res.Error)
					}
					if ce := res.Counterexample; ce != nil {
						failed = append(failed, sc.Name+": "+ce.Script+" → "+ce.Violation)
					}
				}
				switch {
				case checked == 0:
				case claim && len(failed) > 0:
					t.Errorf("the catalogue says %q, but it fails: %s", builtin.IdempotentText(), strings.Join(failed, "; "))
				case !claim && len(failed) == 0:
					t.Errorf("the catalogue says %q, but it holds on every scenario that offers it", builtin.IdempotentText())
				}
			})
		}
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
