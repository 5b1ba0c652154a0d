package playground

import (
	"errors"
	"sort"
)

// evaluate runs a whole schedule on a fresh ledger and reports whether it
// is a real schedule that breaks a rule (broken); s is returned for
// the story (the caller closes it).
func (x *explorer) evaluate(events []Event) (*sim, *exploreFailure, error) {
	s, err := x.newSim()
	if err != nil {
		return nil, nil, err
	}
	for _, ev := range events {
		ok, err := x.step(s, ev)
		if err == errExploreStop {
			x.refused = nil // a shrink candidate, not the schedule that was found
			err, ok = nil, false
		}
		if err != nil || !ok {
			x.release(s)
			return nil, nil, err
		}
	}
	inv, detail := x.judge(events, s, x.settled(s))
	if inv == "" || x.shrinking && x.scheduleOutOfBounds(events, s) != "" {
		x.release(s)
		return nil, nil, nil
	}
	return s, &exploreFailure{events: events, invariant: inv, detail: detail}, nil
}

// shrinkBudget caps the runs spent on shrinking one counterexample.
const shrinkBudget = 400

// shrink makes the failing schedule minimal: it repeatedly tries, in a
// fixed order, to drop one event, to merge two steps of one worker, or to
// turn a started delivery into a whole one, and keeps the first change that
// still breaks an invariant, until no change does.
func (x *explorer) shrink(f *exploreFailure) (*exploreFailure, error) {
	x.shrinking = true
	defer func() { x.shrinking = false }()
	runs := 0
	for {
		improved := false
		for _, cand := range x.shrinkCandidates(f.events) {
			if runs >= shrinkBudget {
				return f, nil
			}
			runs++
			s, nf, err := x.evaluate(cand)
			if err != nil {
				return nil, err
			}
			if nf != nil {
				x.release(s)
				f, improved = nf, true
				break
			}
		}
		if !improved {
			return f, nil
		}
	}
}

// scheduleRank orders schedules for shrinking: fewer events first, then
// plainer ones (deliver before redeliver before publish), then the earlier
// messages and workers of the scenario, so that the counterexample reads
// "msg-1 to A" when that shows the failure as well.
func (x *explorer) scheduleRank(evs []Event) [4]int {
	r := [4]int{len(evs)}
	for _, e := range evs {
		switch e.Kind {
		case EventRedeliver:
			r[1]++
		case EventPublish:
			r[1] += 2
		}
		for i, m := range x.sc.Messages {
			if m.ID == e.Message {
				r[2] += i
			}
		}
		for i, w := range x.sc.Workers {
			if w == e.Worker {
				r[3] += i
			}
		}
	}
	return r
}

func rankLess(a, b [4]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// shrinkCandidates lists the schedules one change away from evs that rank
// lower, lowest first.
func (x *explorer) shrinkCandidates(evs []Event) [][]Event {
	out := shrinkEdits(evs)
	used := map[string]bool{}
	for _, e := range evs {
		used[e.Message] = true
		used[e.Worker] = true
	}
	rename := func(from, to string, worker bool) []Event {
		c := append([]Event(nil), evs...)
		for i := range c {
			if worker && c[i].Worker == from {
				c[i].Worker = to
			}
			if !worker && c[i].Message == from {
				c[i].Message = to
			}
		}
		return c
	}
	for _, m := range x.msgs {
		for _, to := range x.msgs {
			if used[m] && !used[to] && to < m {
				out = append(out, rename(m, to, false))
			}
		}
	}
	for _, w := range x.workers {
		for _, to := range x.workers {
			if used[w] && !used[to] && to < w {
				out = append(out, rename(w, to, true))
			}
		}
	}
	// A message's first appearance reads best as a plain deliver.
	seen := map[string]bool{}
	for i, e := range evs {
		if !seen[e.Message] && (e.Kind == EventPublish || e.Kind == EventRedeliver) {
			c := append([]Event(nil), evs...)
			c[i].Kind = EventDeliver
			out = append(out, c)
		}
		seen[e.Message] = true
	}
	cur := x.scheduleRank(evs)
	kept := out[:0]
	for _, c := range out {
		if rankLess(x.scheduleRank(c), cur) {
			kept = append(kept, c)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return rankLess(x.scheduleRank(kept[i]), x.scheduleRank(kept[j])) })
	return kept
}

// shrinkEdits lists the schedules with one event dropped, two steps (or
// two clock jumps) merged, or a started delivery made whole.
func shrinkEdits(evs []Event) [][]Event {
	var out [][]Event
	without := func(i, n int) []Event {
		c := make([]Event, 0, len(evs)-n)
		c = append(c, evs[:i]...)
		return append(c, evs[i+n:]...)
	}
	for i := range evs {
		out = append(out, without(i, 1))
	}
	for i := 0; i+1 < len(evs); i++ {
		a, b := evs[i], evs[i+1]
		if a.Kind == EventStep && b.Kind == EventStep && a.Worker == b.Worker {
			c := without(i, 1)
			c[i].N = max(a.N, 1) + max(b.N, 1)
			out = append(out, c)
		}
		if a.Kind == EventAdvance && b.Kind == EventAdvance {
			c := without(i, 1)
			c[i].N = a.N + b.N
			out = append(out, c)
		}
	}
	// start M on W followed (anywhere later) by W's steps up to its finish:
	// a whole delivery instead.
	for i, a := range evs {
		if a.Kind != EventStart {
			continue
		}
		c := make([]Event, 0, len(evs))
		c = append(c, evs[:i]...)
		c = append(c, Event{Kind: EventDeliver, Message: a.Message, Worker: a.Worker})
		for _, e := range evs[i+1:] {
			if e.Worker == a.Worker && (e.Kind == EventStep || e.Kind == EventFinish) {
				continue
			}
			c = append(c, e)
		}
		out = append(out, c)
	}
	return out
}

// errNotReproduced: a fresh run of the schedule the search found does not
// break the rule it broke in the search. The search's state differed from
// a fresh replay's: checkBounds searches again on fresh ledgers.
var errNotReproduced = errors.New("explore: the counterexample did not reproduce")

// counterexample shrinks the failure and tells it.
func (x *explorer) counterexample() (*Counterexample, error) {
	f, err := x.shrink(x.failure)
	if err != nil {
		return nil, err
	}
	s, nf, err := x.evaluate(f.events)
	if err != nil {
		return nil, err
	}
	if nf == nil {
		return nil, errNotReproduced
	}
	defer x.release(s)
	script := (&Script{Events: f.events}).String()
	ce := &Counterexample{
		Scenario: x.sc.Name, Script: script, Events: len(f.events),
		Invariant: nf.invariant, Violation: nf.detail,
		Story:    exploreStory(s, f.events) + x.deadLetters(s) + " → " + nf.detail,
		Schedule: f.events,
	}
	for _, st := range s.steps {
		if st.Kind == StepSQL && st.Error != "" {
			ce.SQLError = &HandlerError{Line: st.Line, Message: cleanSQLError(st.Error)}
			break
		}
	}
	return ce, nil
}
