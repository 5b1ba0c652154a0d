package playground

import (
	"context"
	"strings"
	"testing"
)

// TestLeaseExpiry_LateAckWithTheLatestReceiptHandleDeletes: the
// lease-expiry scenario's broker is SQS's, as its sources say. A delete
// after the visibility timeout carries the most recent receipt handle
// until someone else receives the message, and deletes it; once B has
// received it, A's delete carries a stale handle and deletes nothing.
func TestLeaseExpiry_LateAckWithTheLatestReceiptHandleDeletes(t *testing.T) {
	sc, err := LookupScenario("lease-expiry")
	if err != nil {
		t.Fatal(err)
	}
	cited := false
	for _, src := range sc.Sources {
		cited = cited || strings.Contains(src.URL, "API_DeleteMessage")
	}
	if !cited || !strings.Contains(sc.Story, "SQS") {
		t.Errorf("lease-expiry names no broker or cites no DeleteMessage reference: %q %+v", sc.Story, sc.Sources)
	}
	for _, c := range []struct {
		script, kind string
		verdict      string
	}{
		{"start msg-1 on A; expire msg-1; finish A", StepAck, VerdictOK},
		{"start msg-1 on A; expire msg-1; redeliver msg-1 to B; finish A", StepAckRefused, VerdictOK},
	} {
		tr, err := Run(context.Background(), Request{Scenario: "lease-expiry", Handlers: []string{"dedupe-tx"}, Script: c.script})
		if err != nil {
			t.Fatal(err)
		}
		h := tr.Handlers[0]
		last := ""
		for _, st := range h.Steps {
			if st.Worker == "A" && (st.Kind == StepAck || st.Kind == StepAckRefused) {
				last = st.Kind
			}
		}
		if last != c.kind || h.Verdict != c.verdict {
			t.Errorf("%q: A's ack %s, verdict %s %+v; want %s, %s", c.script, last, h.Verdict, h.InFlight, c.kind, c.verdict)
		}
	}
}
