package playground

import (
	"context"
	"slices"
	"testing"
)

// The provider's stories give the same verdicts, charges and emails on
// PostgreSQL as on SQLite: the calls are outside either database, and the
// inbox and outbox tables exist on both.
func TestPostgresLedger_ProviderStoriesAgreeWithSQLite(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	cases := []struct{ scenario, script string }{
		{"card-charge", "deliver pay-1 crash-after 3; redeliver pay-1"},
		{"card-charge", "deliver pay-1 crash-after 6; advance 30; redeliver pay-1; deliver pay-2"},
		{"receipt-email", "deliver pay-1 crash-after 4; redeliver pay-1"},
		{"receipt-email", "deliver pay-1 crash-after 6; redeliver pay-1"},
	}
	handlers := []string{"charge-no-key", "charge-key", "charge-after-commit", "charge-inbox", "charge-outbox", "email-in-tx", "email-after-commit", "email-outbox"}
	for _, ledger := range []string{"postgres-rc", "postgres-serializable"} {
		lg, err := ParseLedger(ledger, pg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			for _, name := range handlers {
				lite, err := Run(context.Background(), Request{Scenario: c.scenario, Handlers: []string{name}, Script: c.script})
				if err != nil {
					t.Fatal(err)
				}
				onPG, err := Run(context.Background(), Request{Scenario: c.scenario, Handlers: []string{name}, Script: pgCrashShifted(name, c.script), Ledger: lg})
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

// pgCrashShifted moves a script's crash-after points past the statements
// a handler's PostgreSQL variant adds: charge-outbox's locks the account
// row after its BEGIN, so SQLite's statement N (N ≥ 2) is its N+1.
func pgCrashShifted(handler, script string) string {
	if handler != "charge-outbox" {
		return script
	}
	s, err := ParseScript(script)
	if err != nil {
		return script
	}
	for i, ev := range s.Events {
		if ev.Fault == FaultCrashAfter && ev.FaultAfter >= 2 {
			s.Events[i].FaultAfter++
		}
	}
	return s.String()
}
