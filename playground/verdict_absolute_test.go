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

// TestVerdict_AbsoluteRewriteIsNotAppliedTwice: an absolute balance
// written again (msg-1's 150 redelivered after msg-2's 170) changes the
// figure but applies nothing twice: the effects list msg-1 once, the
// violation is msg-2's overwritten effect. An increment's second credit is
// a second application.
func TestVerdict_AbsoluteRewriteIsNotAppliedTwice(t *testing.T) {
	const script = "deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1"
	tr, err := Run(context.Background(), Request{Scenario: "lost-ack", Handlers: []string{"set-value", "increment"}, Script: script})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := LookupScenario("lost-ack")
	for _, c := range []struct {
		handler string
		steps   int // msg-1's applications
		verdict string
	}{{"set-value", 1, VerdictLost}, {"increment", 2, VerdictDuplicate}} {
		h := tr.Handlers[0]
		if tr.Handlers[1].Name == c.handler {
			h = tr.Handlers[1]
		}
		if h.Verdict != c.verdict {
			t.Errorf("%s: verdict %s, want %s", c.handler, h.Verdict, c.verdict)
		}
		changed := 0
		for _, st := range h.Steps {
			if st.Effect && st.Message == "msg-1" {
				changed++
			}
		}
		for _, e := range h.Effects(sc, len(h.Frames)) {
			if e.Key == "msg-1" && len(e.Steps) != c.steps {
				t.Errorf("%s: msg-1 applied at steps %v (it changed the balance %d times), want %d applications", c.handler, e.Steps, changed, c.steps)
			}
		}
		if changed != 2 {
			t.Errorf("%s: msg-1's commits changed the balance %d times, want 2", c.handler, changed)
		}
	}
}

// TestVerdict_ReplayedAbsoluteValuesAreAppliedOnce: a topic replayed from
// offset 0 through set-value writes each absolute balance again; a stale
// one takes the newer credits out and the next puts them back, but no
// credit is ever in the balance twice, so each message has one
// application. increment applies each twice.
func TestVerdict_ReplayedAbsoluteValuesAreAppliedOnce(t *testing.T) {
	tr, err := Run(context.Background(), Request{Scenario: "topic-replay", Handlers: []string{"set-value", "increment"},
		Script: "deliver msg-1; deliver msg-2; deliver msg-3; replay"})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := LookupScenario("topic-replay")
	for i, want := range []int{1, 2} {
		h := tr.Handlers[i]
		for _, e := range h.Effects(sc, len(h.Frames)) {
			if len(e.Steps) != want {
				t.Errorf("%s: %s applied at steps %v, want %d applications", h.Name, e.Key, e.Steps, want)
			}
		}
	}
}
