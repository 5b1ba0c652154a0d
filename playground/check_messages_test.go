package playground

import (
	"context"
	"strings"
	"testing"
)

// TestExercises_EveryExerciseChecksTwoMessages: every check exercise has
// a set of bounds with at least two messages of different ids in each of
// its scenarios, so that a handler keyed on anything but the message (a
// constant, the account) meets a second message; conditional-ship's
// reaches an order in every state never-paid names.
func TestExercises_EveryExerciseChecksTwoMessages(t *testing.T) {
	for _, ex := range exerciseFixtures(t) {
		for _, name := range ex.Scenarios {
			sc, _ := LookupScenario(name)
			most := 0
			for _, c := range ex.checks() {
				n := c.bounds.Messages
				if n == 0 || n > len(sc.Messages) {
					n = len(sc.Messages)
				}
				ids := map[string]bool{}
				for _, m := range sc.Messages[:n] {
					ids[m.ID] = true
				}
				most = max(most, len(ids))
				if name == "never-paid" && n == len(sc.Messages) {
					states := map[string]bool{}
					for _, o := range sc.Orders {
						states[o.State] = true
					}
					for _, want := range []string{"paid", "pending", "cancelled"} {
						if !states[want] {
							t.Errorf("%s: never-paid has no %s order", ex.ID, want)
						}
					}
				}
			}
			if most < 2 {
				t.Errorf("%s: on %s no set of bounds has two messages", ex.ID, name)
			}
		}
	}
}

// TestCheck_KeysThatAreNotTheMessageFailOnTheSecondMessage: a dedupe key
// that is a constant, or the account, and a shipping guard on the wrong
// states, pass a check of one message; each exercise refuses them, with a
// counterexample that names the message whose effect is missing or wrong.
func TestCheck_KeysThatAreNotTheMessageFailOnTheSecondMessage(t *testing.T) {
	relaxCheckTimeout(t)
	handler := map[string]string{}
	for _, h := range hiddenStyleHandlers {
		handler[h.name] = h.source
	}
	for _, c := range []struct {
		exercise, handler, script, violation string
	}{
		{"dedupe-credit", "constant-key", "deliver msg-1; deliver msg-2", "msg-2 was acked but its effect is not in the ledger"},
		{"dedupe-credit", "account-key", "deliver msg-1; deliver msg-2", "msg-2 was acked but its effect is not in the ledger"},
		{"race-check-then-insert", "constant-key", "deliver msg-1; deliver msg-2", "msg-2 was acked but its effect is not in the ledger"},
		{"reorder-mark", "constant-key", "deliver msg-1; deliver msg-2", "msg-2 was acked but its effect is not in the ledger"},
		{"dedupe-retention", "constant-key", "deliver pay-1; deliver pay-2", "pay-2 was acked but its effect is not in the ledger"},
		{"conditional-ship", "ship-not-in", "deliver ship-2", "ship-2 shipped order ord-2, which was not paid"},
	} {
		res, err := Check(context.Background(), exerciseByID(t, c.exercise), handler[c.handler])
		if err != nil {
			t.Fatalf("%s/%s: %v", c.exercise, c.handler, err)
		}
		ce := res.Counterexample
		if res.Passed || ce == nil || ce.Script != c.script || !strings.HasPrefix(ce.Violation, c.violation) {
			t.Errorf("%s/%s: passed %v, counterexample %+v; want %q → %q", c.exercise, c.handler, res.Passed, ce, c.script, c.violation)
			continue
		}
		if !strings.Contains(ce.Story, "stops at line") && c.handler != "ship-not-in" {
			t.Errorf("%s/%s: the story %q does not say where the handler stopped", c.exercise, c.handler, ce.Story)
		}
	}
}
