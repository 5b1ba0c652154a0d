package exercise

import (
	"net/http"
	"strings"

	"idemlab/lessons"
	"idemlab/playground"
	"idemlab/web/playurl"
	"idemlab/workshop"
)

// recorded hands a check the server ran to the workshop, which records it
// for a learner in a room (Deps.RecordCheck; nil: nobody records).
// A check stopped before its verdict (unfinished) is no attempt: the
// learner is told to check again, and the class view must not show a
// right handler as failing because the server was busy.
func (c *Checker) recorded(r *http.Request, check workshop.Check, unfinished bool) {
	if c.deps.RecordCheck != nil && !unfinished {
		c.deps.RecordCheck(r, check)
	}
}

// checkRecord is what a check of a handler says for the room: the verdict,
// the counterexample's script and, as the playground state, the
// counterexample's query for a failure or the passing handler's for a pass.
func checkRecord(spec *lessons.ExerciseSpec, handler string, res *playground.CheckResult) workshop.Check {
	c := workshop.Check{Exercise: spec.ID, Passed: res.Passed}
	handler = strings.TrimSpace(handler) // as the playground reads it
	switch ce := res.Counterexample; {
	case ce != nil:
		c.Counterexample = ce.Script
		c.Playground = hrefQuery(playurl.CounterexampleHref(ce, handler, spec.ID))
	case res.Passed && len(spec.Scenarios) > 0:
		st := playurl.State{Scenario: spec.Scenarios[0], At: -1, Exercise: spec.ID, Custom: handler}
		if sc, err := playground.LookupScenario(st.Scenario); err == nil {
			st.Handlers = playurl.Beside(sc.Handlers)
		}
		c.Playground = hrefQuery(playurl.FullSizeHref(st))
	}
	return c
}

// breakRecord is what a check of an inverse exercise's script says: it
// passes when the script breaks the handler; the playground replays it.
func breakRecord(spec *lessons.ExerciseSpec, res *playground.BreakResult) workshop.Check {
	c := workshop.Check{Exercise: spec.ID, Passed: res.Error == nil && res.Broken}
	if res.Error == nil && len(res.Schedule) > 0 {
		c.Playground = hrefQuery(breakHref(spec, res.Schedule))
	}
	return c
}

// hrefQuery is the query of a site path, what follows "?".
func hrefQuery(href string) string {
	_, q, _ := strings.Cut(href, "?")
	return q
}
