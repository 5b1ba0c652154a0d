package playground

import (
	"context"
	"strings"
	"testing"
)

// TestVerdict_StaleAbsoluteWriteIsNotADuplicate: an absolute balance
// written out of order is named as what it is. Ahead of its predecessors
// (msg-2's 170 already holds msg-1's credit) nothing was applied twice;
// an older value written after a newer one overwrote the newer message's
// effect, and the verdict says which message's and by which.
func TestVerdict_StaleAbsoluteWriteIsNotADuplicate(t *testing.T) {
	for _, c := range []struct {
		scenario, script, verdict, message, detail string
	}{
		{"lost-ack", "deliver msg-2", VerdictOK, "", ""},
		{"lost-ack", "deliver msg-2; deliver msg-1", VerdictLost, "msg-2", "msg-2's effect was overwritten by msg-1, whose absolute balance 150 is older: a stale write"},
		{"producer-retry", "deliver msg-3; deliver msg-2", VerdictLost, "msg-3", "msg-3's effect was overwritten by msg-2, whose absolute balance 575 is older: a stale write"},
		{"producer-retry", "deliver msg-3", VerdictOK, "", ""},
		{"topic-replay", "deliver msg-1; deliver msg-2; deliver msg-3; replay", VerdictOK, "", ""},
	} {
		tr, err := Run(context.Background(), Request{Scenario: c.scenario, Handlers: []string{"set-value"}, Script: c.script})
		if err != nil {
			t.Fatal(err)
		}
		h := tr.Handlers[0]
		if h.Verdict != c.verdict {
			t.Errorf("%s %q: verdict %s %+v, want %s", c.scenario, c.script, h.Verdict, h.Violations, c.verdict)
			continue
		}
		if c.message == "" {
			continue
		}
		v := h.Violations[0]
		if v.MessageID != c.message || !strings.HasPrefix(v.Detail, c.detail) {
			t.Errorf("%s %q: violation %+v, want %s: %q", c.scenario, c.script, v, c.message, c.detail)
		}
	}
}
