package playground

import (
	"fmt"
	"strings"
)

// scheduleOutOfBounds says how a schedule, run as s, goes beyond the
// explorer's bounds ("" when it does not): an event or fault its budget
// does not allow (outOfBounds), or a second copy handed out under a live
// lease beyond bounds.duplicates. The shrinker keeps only candidates
// within the bounds, so a counterexample never needs a fault the exercise
// does not allow (a second copy whose lease expiry was dropped, say).
func (x *explorer) scheduleOutOfBounds(events []Event, s *sim) string {
	if n, msg := x.outOfBounds(events); n > 0 {
		return fmt.Sprintf("event %d (%s): %s", n, events[n-1], msg)
	}
	copies := 0
	for _, st := range s.steps {
		if st.Kind == StepDeliver && isSecondCopy(st) {
			copies++
		}
	}
	if copies > x.b.Duplicates {
		return fmt.Sprintf("%d second copies under a live lease, and the bounds allow %d", copies, x.b.Duplicates)
	}
	return ""
}

// isSecondCopy: the delivery step handed out a copy of a message still
// leased to another worker (what bounds.duplicates pays for).
func isSecondCopy(st Step) bool { return strings.Contains(st.Note, "second copy") }
