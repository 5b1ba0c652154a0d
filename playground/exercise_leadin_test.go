package playground

import (
	"strings"
	"testing"
)

// TestExercise_LeadInCannotContradictTheCard: a lead-in that promises
// what no set of the exercise's bounds checks is refused, as lessons 4
// and 5 did with their bounds of one message (six events against ten; a
// lost ack the bounds left out); the lead-ins as the lessons have them now
// hold.
func TestExercise_LeadInCannotContradictTheCard(t *testing.T) {
	old := &Exercise{ID: "dedupe-credit", Scenarios: []string{"lost-ack"}, Bounds: ExploreBounds{Workers: 2, Messages: 1, Interleave: true, MaxEvents: 10, Crashes: 1, LostAcks: 1, Expiries: 1}}
	lesson4 := "Now write it yourself: the handler below credits every copy it receives, and **Check** runs your version through every schedule of up to six events: deliveries, redeliveries, at most one lost ack and at most one crash."
	if got := old.LeadInContradiction(lesson4); !strings.Contains(got, `"up to six events"`) {
		t.Errorf("lesson 4's old bounds: %q", got)
	}
	oldShip := &Exercise{ID: "conditional-ship", Scenarios: []string{"order-shipping"}, Bounds: ExploreBounds{Workers: 2, Messages: 1, Interleave: true, MaxEvents: 9, Crashes: 1, Expiries: 1, Duplicates: 1}}
	lesson5 := "Write the shipping transition yourself: the handler below ships on every copy of `order.paid`, and **Check** tries it with two workers, a lost ack and a crash at every step."
	if got := oldShip.LeadInContradiction(lesson5); !strings.Contains(got, `"lost ack"`) {
		t.Errorf("lesson 5's old bounds: %q", got)
	}
	for _, c := range []struct{ id, text string }{{"dedupe-credit", lesson4}, {"conditional-ship", lesson5}} {
		if got := exerciseByID(t, c.id).LeadInContradiction(c.text); got != "" {
			t.Errorf("%s: %s", c.id, got)
		}
	}
}
