package playground

import (
	"context"
	"slices"
	"testing"
)

// TestPostgresLedger_RetryAndFlowStoriesAgreeWithSQLite: the outage and
// order-flow stories give the same verdicts and figures on PostgreSQL as on
// SQLite. The backoff, the outage and the provider live in the engine, not
// in either database; the flow's phases are sequential here.
func TestPostgresLedger_RetryAndFlowStoriesAgreeWithSQLite(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	cases := []struct{ scenario, script string }{
		{"outage-requeue", ""},
		{"outage-backoff", ""},
		{"outage-jitter", ""},
		{"order-flow", "deliver ord-1 crash-after 5; redeliver ord-1"},
		{"order-flow", "deliver ord-1 crash-after 6; redeliver ord-1"},
		{"order-flow", "deliver ord-1 crash-after 8; redeliver ord-1; deliver ord-2"},
		{"order-flow", "deliver ord-1 crash-after 6; advance 1440; redeliver ord-1"},
	}
	for _, ledger := range []string{"postgres-rc", "postgres-serializable"} {
		lg, err := ParseLedger(ledger, pg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			for _, name := range []string{"charge-key", "flow-restart", "flow-phases"} {
				req := Request{Scenario: c.scenario, Handlers: []string{name}, Script: c.script}
				lite, err := Run(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				req.Ledger = lg
				onPG, err := Run(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				h, want := onPG.Handlers[0], lite.Handlers[0]
				if h.Verdict != want.Verdict || !slices.Equal(h.Actual, want.Actual) {
					t.Errorf("%s %s %q × %s: %s %v, SQLite %s %v", ledger, c.scenario, c.script, h.Name, h.Verdict, h.Actual, want.Verdict, want.Actual)
				}
			}
		}
	}
}
