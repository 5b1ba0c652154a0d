package playground

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Inverse exercises turn the checker around: the exercise gives the
// handler (a built-in one, break: NAME, or one written in the block,
// break_handler: |) and one scenario, and the learner writes the shortest
// script that breaks it, that is, a script whose run ends in a state that
// breaks one of the exercise's invariants (or a rule every exercise
// enforces: see broken). CheckBreak runs the learner's script through the
// engine, as the explorer runs its own schedules; ShortestBreak finds the
// shortest breaking script within the bounds, by iterative deepening: the
// explorer is run with a limit of 1, 2, 3 … events, and the first limit at
// which it finds a schedule is the length of the shortest one.
//
// The learner's script may use only what the bounds let the explorer use
// (the workers and messages in scope, the faults within their budgets,
// start and step only with interleave), so that "as short as the
// shortest" compares like with like.
//
//	id: break-dedupe-by-id
//	title: Two ids, one payment
//	goal: Write the shortest script after which pay-7 has taken effect twice.
//	scenarios: [producer-retry]
//	invariants: [exactly-once]
//	break: dedupe-tx
//	bounds: {max_events: 4, lost_acks: 1}
//	start: deliver msg-1   # optional: the script the editor opens with

// IsInverse reports whether the learner breaks the exercise's handler
// instead of writing one.
func (e *Exercise) IsInverse() bool { return e.Break != "" || e.BreakHandler != "" }

// inverseProblem reports the first problem of an inverse exercise's own
// fields: the field to blame and what is wrong, or "", "".
func (e *Exercise) inverseProblem() (string, string) {
	switch {
	case e.Break != "" && e.BreakHandler != "":
		return "break", "give break (a built-in handler) or break_handler (a handler script), not both"
	case e.Break != "":
		if _, err := LookupHandler(e.Break); err != nil {
			return "break", inputMessage(err)
		}
	default:
		if _, err := ParseHandler(exerciseHandlerName, e.BreakHandler); err != nil {
			return "break_handler", inputMessage(err)
		}
	}
	switch {
	case len(e.Scenarios) != 1:
		return "scenarios", fmt.Sprintf("%d scenarios; an inverse exercise has one, the scenario the learner's script runs on", len(e.Scenarios))
	case !reflect.ValueOf(e.Overlap).IsZero():
		return "overlap", "an inverse exercise is checked under bounds only"
	case !reflect.ValueOf(e.Storage).IsZero():
		return "storage", "an inverse exercise is checked under bounds only"
	case e.Bounds.Interleave:
		return "bounds.interleave", "an inverse exercise's scripts deliver whole, so that the learner's script and the shortest one count events alike: leave interleave out"
	case strings.TrimSpace(e.Solution) != "":
		return "solution", "an inverse exercise has no written solution: the checker finds the shortest breaking script itself"
	}
	if strings.TrimSpace(e.Start) != "" {
		if _, err := ParseScript(e.Start); err != nil {
			return "start", inputMessage(err)
		}
	}
	return "", ""
}

func inputMessage(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Msg
	}
	return err.Error()
}

// breakHandler is the handler the learner must break.
func (e *Exercise) breakHandler() (*Handler, error) {
	if e.Break != "" {
		return LookupHandler(e.Break)
	}
	return ParseHandler(exerciseHandlerName, e.BreakHandler)
}

// BreakResult is the checker's answer to a learner's breaking script.
type BreakResult struct {
	Exercise string `json:"exercise"`
	// Script is the learner's script, printed canonically; Events its length.
	Script   string  `json:"script"`
	Events   int     `json:"events"`
	Schedule []Event `json:"-"`
	// Error is set when the script does not parse, leaves the bounds, or
	// has an event that could not happen; nothing else is then set.
	Error *ScriptError `json:"error,omitempty"`
	// Broken: the run ends in a state that breaks Invariant, as Violation says.
	Broken    bool   `json:"broken"`
	Invariant string `json:"invariant,omitempty"`
	Violation string `json:"violation,omitempty"`
	// Settled: no worker holds a message and the broker owes no copy.
	Settled bool `json:"settled"`
	// Held says, when the script does not break the handler, what held.
	Held string `json:"held,omitempty"`
	// Story tells the run in one line, as a counterexample's story does.
	Story string `json:"story"`
	// Shortest is the shortest breaking script the explorer finds, set
	// when the learner's script breaks the handler.
	Shortest *Counterexample `json:"shortest,omitempty"`
}

// AsShortAsShortest reports whether a breaking script is no longer than
// the shortest one the explorer finds.
func (r *BreakResult) AsShortAsShortest() bool {
	return r.Broken && r.Shortest != nil && r.Events <= r.Shortest.Events
}

// ScriptError is a problem in the learner's script: the 1-based line of
// the text and event number it is about (0 when none), and what is wrong.
type ScriptError struct {
	Line    int    `json:"line,omitempty"`
	Event   int    `json:"event,omitempty"`
	Message string `json:"message"`
}

func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// CheckBreak runs the learner's script against the exercise's handler and
// says whether it breaks it, and, when it does, how it compares with the
// shortest breaking script. A script that does not parse, leaves the
// bounds or asks for an event that cannot happen gives a result with
// Error set; the error is for an exercise that is not inverse or invalid,
// the deadline or ctx.
func CheckBreak(ctx context.Context, ex *Exercise, scriptText string) (*BreakResult, error) {
	if err := ex.Validate(); err != nil {
		return nil, err
	}
	if !ex.IsInverse() {
		return nil, fmt.Errorf("exercise %s: not an inverse exercise: it asks for a handler, not a script", ex.ID)
	}
	res := &BreakResult{Exercise: ex.ID}
	script, err := ParseScript(scriptText)
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) {
			return nil, err
		}
		res.Error = &ScriptError{Line: ie.Line, Message: ie.Msg}
		return res, nil
	}
	if len(script.Events) == 0 {
		res.Error = &ScriptError{Message: "the script is empty; write events such as deliver msg-1, one per line or separated by ;"}
		return res, nil
	}
	res.Schedule, res.Events, res.Script = script.Events, len(script.Events), script.String()
	ctx, cancel := withCheckDeadline(ctx)
	defer cancel()
	x, err := inverseExplorer(ctx, ex, ex.Bounds.withDefaults())
	if err != nil {
		return nil, err
	}
	defer x.close()
	if n, msg := x.outOfBounds(script.Events); n > 0 {
		res.Error = &ScriptError{Line: scriptEventLine(scriptText, n), Event: n, Message: fmt.Sprintf("event %d (%s): %s", n, script.Events[n-1], msg)}
		return res, nil
	}
	s, serr, err := x.runScript(script.Events)
	if err != nil {
		return nil, err
	}
	if serr != nil {
		serr.Line = scriptEventLine(scriptText, serr.Event)
		res.Error = serr
		return res, nil
	}
	defer x.release(s)
	res.Settled = x.settled(s)
	res.Story = exploreStory(s, script.Events) + x.deadLetters(s)
	res.Invariant, res.Violation = x.judge(script.Events, s, res.Settled)
	if res.Broken = res.Invariant != ""; !res.Broken {
		res.Held = x.held(s, res.Settled)
		return res, nil
	}
	res.Shortest, err = ShortestBreak(ctx, ex)
	return res, err
}

// withCheckDeadline gives ctx the checker's deadline when it has none.
func withCheckDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, checkTimeout)
}

// ShortestBreak finds the shortest script within the exercise's bounds
// that breaks its handler, shrunk to read plainly, or nil when the handler
// holds in every schedule within the bounds.
func ShortestBreak(ctx context.Context, ex *Exercise) (*Counterexample, error) {
	if err := ex.Validate(); err != nil {
		return nil, err
	}
	if !ex.IsInverse() {
		return nil, fmt.Errorf("exercise %s: not an inverse exercise", ex.ID)
	}
	ctx, cancel := withCheckDeadline(ctx)
	defer cancel()
	b := ex.Bounds.withDefaults()
	for limit := 1; limit <= b.MaxEvents; limit++ {
		bk := b
		bk.MaxEvents = limit
		ce, err := shortestWithin(ctx, ex, bk)
		if err != nil || ce != nil {
			return ce, err
		}
	}
	return nil, nil
}

// shortestWithin explores every schedule within b and returns the first
// that breaks the handler, shrunk, or nil.
func shortestWithin(ctx context.Context, ex *Exercise, b ExploreBounds) (*Counterexample, error) {
	x, err := inverseExplorer(ctx, ex, b)
	if err != nil {
		return nil, err
	}
	defer x.close()
	if err := x.explore(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("finding the shortest breaking script took too long; it was stopped: %w", context.DeadlineExceeded)
		}
		return nil, err
	}
	if x.failure == nil {
		return nil, nil
	}
	return x.counterexample()
}

// inverseExplorer is an explorer of the exercise's one scenario with the
// handler to break.
func inverseExplorer(ctx context.Context, ex *Exercise, b ExploreBounds) (*explorer, error) {
	h, err := ex.breakHandler()
	if err != nil {
		return nil, err
	}
	sc, err := LookupScenario(ex.Scenarios[0])
	if err != nil {
		return nil, err
	}
	return newExplorer(ctx, sc, h, b, ex.Invariants, true)
}

// close gives back the ledger the explorer keeps for its next run.
func (x *explorer) close() {
	if x.spare != nil {
		releaseLedger(x.spare, true)
		x.spare = nil
	}
}

// outOfBounds reports the first event (1-based) of a learner's script that
// the explorer could not have chosen within its bounds, and why; 0 when
// every event is within them. Second copies handed out under a live lease
// are counted as the run goes (runScript).
func (x *explorer) outOfBounds(events []Event) (int, string) {
	left := x.budget()
	var clock int64
	for i, ev := range events {
		n := i + 1
		if left.events == 0 {
			return n, fmt.Sprintf("the script may have at most %d events", x.b.MaxEvents)
		}
		var cost exploreBudget
		switch ev.Kind {
		case EventDeliver, EventRedeliver:
		case EventStart, EventStep, EventFinish:
			if !x.b.Interleave {
				return n, "this exercise runs each delivery whole: use deliver or redeliver, not start, step or finish"
			}
		case EventCrash:
			cost.crashes = 1
		case EventExpire:
			cost.expiries = 1
		case EventPublish:
			cost.publishes = 1
		case EventReplay:
			cost.replays = 1
		case EventRestart:
			cost.restarts = 1
		case EventPrune:
			cost.prunes = 1
		case EventAdvance:
			clock += ev.N
			if len(x.b.Advance) == 0 {
				return n, "this exercise does not move the clock"
			}
			if clock > x.b.MaxClock {
				return n, fmt.Sprintf("the clock may reach tick %d at most", x.b.MaxClock)
			}
		default:
			return n, fmt.Sprintf("%s is not one of this exercise's events", ev.Kind)
		}
		switch ev.Fault {
		case FaultLoseAck:
			cost.lostAcks++
		case FaultCrashAfter, FaultCrashBeforeAck:
			cost.crashes++
		}
		if ev.Message != "" && !contains(x.msgs, ev.Message) {
			return n, fmt.Sprintf("%s is not part of this exercise; its messages are %s", ev.Message, strings.Join(x.msgs, ", "))
		}
		if ev.Worker != "" && !contains(x.workers, ev.Worker) {
			return n, fmt.Sprintf("worker %s is not part of this exercise; its workers are %s", ev.Worker, strings.Join(x.workers, ", "))
		}
		left = left.minus(cost)
		for _, over := range []struct {
			left int
			what string
			max  int
		}{{left.crashes, "crashes", x.b.Crashes}, {left.lostAcks, "lost acks", x.b.LostAcks}, {left.expiries, "lease expiries", x.b.Expiries},
			{left.publishes, "publishes", x.b.Publishes}, {left.replays, "replays", x.b.Replays}, {left.restarts, "restarts", x.b.Restarts},
			{left.prunes, "prunes", x.b.Prunes}} {
			if over.left < 0 {
				if over.max == 0 {
					return n, fmt.Sprintf("this exercise allows no %s", over.what)
				}
				return n, fmt.Sprintf("this exercise allows at most %d %s", over.max, over.what)
			}
		}
	}
	return 0, ""
}

// runScript runs a learner's script on a fresh ledger. An event that could
// not happen, or a second copy beyond bounds.duplicates, is a ScriptError
// naming the event (its Line is left to the caller).
func (x *explorer) runScript(events []Event) (*sim, *ScriptError, error) {
	s, err := x.newSim()
	if err != nil {
		return nil, nil, err
	}
	copies := 0
	for i, ev := range events {
		before := len(s.steps)
		ok, err := x.step(s, ev)
		if err == errExploreStop { // the sandbox refused a statement of the handler
			x.release(s)
			return nil, &ScriptError{Event: i + 1, Message: fmt.Sprintf("event %d (%s): the handler's line %d was refused: %s", i+1, ev, x.refused.Line, x.refused.Message)}, nil
		}
		if err != nil {
			x.release(s)
			return nil, nil, err
		}
		for _, st := range s.steps[before:] {
			if !ok && st.Kind == StepSkip {
				x.release(s)
				return nil, &ScriptError{Event: i + 1, Message: fmt.Sprintf("event %d (%s) could not happen: %s", i+1, ev, st.Note)}, nil
			}
			if st.Kind == StepDeliver && strings.Contains(st.Note, "second copy") {
				copies++
			}
		}
		if copies > x.b.Duplicates {
			x.release(s)
			return nil, &ScriptError{Event: i + 1, Message: fmt.Sprintf("event %d (%s) hands out a second copy of a message that is still leased, and this exercise allows %s", i+1, ev, atMost(x.b.Duplicates, "such copy", "such copies"))}, nil
		}
	}
	return s, nil, nil
}

func atMost(n int, one, many string) string {
	switch n {
	case 0:
		return "no " + many
	case 1:
		return "at most one " + one
	}
	return fmt.Sprintf("at most %d %s", n, many)
}

// held says what held at the end of a run that broke nothing.
func (x *explorer) held(s *sim, settled bool) string {
	if !settled {
		var owed []string
		for _, id := range x.msgs {
			for _, c := range s.msgs[id].copies {
				if c.deliveries > 0 && c.owed() {
					owed = append(owed, id)
					break
				}
			}
		}
		what := "a worker still holds a message"
		if len(owed) > 0 {
			what = "the broker still owes " + joinAnd(owed) + " a delivery"
		}
		return what + ": the run is not over, and an effect is not lost while a copy is still to come. Add the events that finish it"
	}
	delivered := 0
	for _, id := range x.msgs {
		if s.delivered[id] {
			delivered++
		}
	}
	if delivered == 0 {
		return "no message was delivered, so nothing could go wrong"
	}
	for _, inv := range x.invariants {
		if inv == InvariantShippedOnceIfPaid {
			return "every paid order whose message was delivered shipped once, and no other order shipped"
		}
	}
	carriers := map[string]int{} // business key → delivered credits that carry it
	for _, id := range x.msgs {
		if m := s.msgs[id].m; s.delivered[id] && m.Kind == KindCredit {
			if carriers[m.BusinessKey()]++; carriers[m.BusinessKey()] > 1 {
				return "every payment took effect once, though two of the messages delivered carry one payment"
			}
		}
	}
	return "every message took effect once"
}

// scriptEventLine is the 1-based line of the text on which event n
// (1-based) is written, or 0.
func scriptEventLine(text string, n int) int {
	line, count := 0, 0
	splitScript(text, func(l int, _ []string) error {
		if count++; count == n {
			line = l
		}
		return nil
	}, nil)
	return line
}

// BreakHandlerSource is the source of the handler the learner must break,
// for the exercise's page: its opening lines and the @on sections of the
// message kinds its scenario has (a built-in handler also handles kinds
// the scenario never sends).
func (e *Exercise) BreakHandlerSource() string {
	h, err := e.breakHandler()
	if err != nil {
		return ""
	}
	kinds := map[string]bool{}
	if sc, err := LookupScenario(e.Scenarios[0]); err == nil {
		for _, m := range sc.Messages {
			kinds[m.Kind] = true
		}
	}
	var kept []string
	keep := true
	for _, line := range strings.Split(h.Source, "\n") {
		if kind, ok := strings.CutPrefix(strings.TrimSpace(line), "@on "); ok {
			keep = kinds[strings.TrimSpace(kind)]
		}
		if keep {
			kept = append(kept, line)
		}
	}
	return strings.TrimRight(strings.Join(kept, "\n"), "\n") + "\n"
}

// DescribeBreak says in words what a learner's script may use and what
// counts as breaking the handler, for the exercise's page: "Write at most
// 5 events on producer-retry, …".
func (e *Exercise) DescribeBreak() string {
	b := e.Bounds.withDefaults()
	sc, err := LookupScenario(e.Scenarios[0])
	if err != nil {
		return ""
	}
	n := b.Messages
	if n == 0 || n > len(sc.Messages) {
		n = len(sc.Messages)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = sc.Messages[i].ID
	}
	workers := sc.Workers[:min(b.Workers, len(sc.Workers))]
	var faults []string
	faults = appendCount(faults, b.Crashes, "one crash", "%d crashes")
	faults = appendCount(faults, b.LostAcks, "one lost ack", "%d lost acks")
	faults = appendCount(faults, b.Expiries, "one lease expiry", "%d lease expiries")
	faults = appendCount(faults, b.Publishes, "one message published again", "%d messages published again")
	faults = appendCount(faults, b.Replays, "one replay", "%d replays")
	faults = appendCount(faults, b.Restarts, "one restart", "%d restarts")
	faults = appendCount(faults, b.Prunes, "one prune", "%d prunes")
	out := fmt.Sprintf("Write at most %d events on the scenario %s, with the messages %s and the worker%s %s; each delivery runs whole.",
		b.MaxEvents, sc.Name, joinAnd(ids), map[bool]string{true: "s", false: ""}[len(workers) > 1], joinAnd(workers))
	if len(faults) > 0 {
		out += " Faults: at most " + joinAnd(faults) + "."
	} else {
		out += " No faults."
	}
	return out + " The script breaks the handler when its run ends with an effect applied twice, an effect lost once the broker owes no more copies, an effect the business rule forbids, or a message the handler failed on."
}
