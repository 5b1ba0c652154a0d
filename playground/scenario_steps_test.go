package playground

import (
	"strings"
	"testing"
)

// stepsVerdicts extends TestRun_Verdicts with the flow's handlers in every
// other scenario and every handler in order-flow.
// It is a function: the handlers of later files register in init.
func stepsVerdicts() map[string]map[string]string {
	const (
		ok   = VerdictOK
		dup  = VerdictDuplicate
		lost = VerdictLost
	)
	flow := func(restart, phases string) map[string]string {
		return map[string]string{"flow-restart": restart, "flow-phases": phases}
	}
	orderFlow := map[string]string{}
	for _, h := range Handlers() {
		orderFlow[h.Name] = lost // no handler but the flow's charges and emails
	}
	orderFlow["email-outbox"] = dup // crash-after 6 lands after its email, before it is marked sent
	orderFlow["flow-restart"] = dup
	orderFlow["flow-phases"] = ok
	return map[string]map[string]string{
		"order-flow": orderFlow,
		"lost-ack":   flow(ok, ok), "crash-before-ack": flow(ok, ok), "lease-expiry": flow(ok, ok),
		"topic-replay": flow(ok, ok), "restart-filter": flow(ok, ok), "crash-mid-handler": flow(ok, ok),
		"order-shipping": flow(ok, ok), "never-paid": flow(ok, ok), "partition-crash": flow(ok, ok),
		"card-charge": flow(ok, ok), "receipt-email": flow(ok, ok),
		// Two copies at once: both send the email (no lock, no key).
		"webhook-retry": flow(dup, dup), "concurrent-duplicate": flow(dup, dup),
		// The dedupe rows are pruned, or a redriven copy is new: the
		// order row still knows the order.
		"early-prune": flow(dup, ok), "dlq-redrive": flow(dup, ok),
		"producer-retry": flow(dup, dup),
		// No section for price changes.
		"stale-price": flow(lost, lost),
	}
}

// TestSteps_ResumeAfterEachPhase kills the worker after every statement of
// the flow and redelivers: flow-phases resumes and books, charges and
// confirms once, except when the crash falls between the email and the
// state that records it; flow-restart books the amount again whenever the
// crash falls after the booking committed.
func TestSteps_ResumeAfterEachPhase(t *testing.T) {
	tests := []struct {
		crashAfter      string
		restart, phases string
		phasesEmails    int
	}{
		{"1", VerdictOK, VerdictOK, 1},
		{"3", VerdictOK, VerdictOK, 1},
		{"4", VerdictOK, VerdictOK, 1},
		{"5", VerdictDuplicate, VerdictOK, 1}, // the booking committed
		{"6", VerdictDuplicate, VerdictOK, 1}, // after the charge
		{"7", VerdictDuplicate, VerdictOK, 1},
		{"8", VerdictOK, VerdictDuplicate, 2}, // phases: after the email, before 'confirmed'
		{"9", VerdictOK, VerdictOK, 1},
	}
	for _, tt := range tests {
		t.Run("crash-after "+tt.crashAfter, func(t *testing.T) {
			script := "deliver ord-1 crash-after " + tt.crashAfter + "; redeliver ord-1"
			restart := runOne(t, "order-flow", "flow-restart", script)
			phases := runOne(t, "order-flow", "flow-phases", script)
			if restart.Verdict != tt.restart {
				t.Errorf("flow-restart: %s, want %s (%+v)", restart.Verdict, tt.restart, restart.Violations)
			}
			if phases.Verdict != tt.phases {
				t.Errorf("flow-phases: %s, want %s (%+v)", phases.Verdict, tt.phases, phases.Violations)
			}
			charges, emails := 0, 0
			for _, st := range phases.Steps {
				switch {
				case st.Kind == StepProvider && strings.HasPrefix(st.Note, "charged"):
					charges++
				case st.Kind == StepEmail:
					emails++
				}
			}
			if charges != 1 || emails != tt.phasesEmails {
				t.Errorf("flow-phases: %d charges and %d emails, want 1 and %d", charges, emails, tt.phasesEmails)
			}
		})
	}
}

// TestSteps_OrderStateIsTheRecoveryPoint: after a crash between the charge
// and its recovery point, the order row says 'booked'; the redelivery
// repeats the charge under the same key (the provider answers with the
// first charge) and moves the order to 'confirmed'.
func TestSteps_OrderStateIsTheRecoveryPoint(t *testing.T) {
	ht := runOne(t, "order-flow", "flow-phases", "deliver ord-1 crash-after 6")
	if got := orderState(ht.Ledger, "ord-1"); got != "booked" {
		t.Errorf("after the crash: ord-1 is %q, want booked", got)
	}
	ht = runOne(t, "order-flow", "flow-phases", "deliver ord-1 crash-after 6; redeliver ord-1")
	if got := orderState(ht.Ledger, "ord-1"); got != "confirmed" {
		t.Errorf("after the redelivery: ord-1 is %q, want confirmed", got)
	}
	replayed := false
	for _, st := range ht.Steps {
		if st.Kind == StepProvider && st.Attempt == 2 && strings.HasPrefix(st.Note, "provider returned the first result") {
			replayed = true
		}
	}
	if !replayed {
		t.Error("the redelivery's charge was not answered with the first charge")
	}
}

func orderState(ledger []TableRows, id string) string {
	for _, tr := range ledger {
		if tr.Table != "orders" {
			continue
		}
		for _, r := range tr.Rows {
			if r.Key == id {
				return valueText(r.Values[1])
			}
		}
	}
	return ""
}
