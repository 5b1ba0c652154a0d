package playground

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A goal is a predicate on the state of a run at an event cursor, which a
// lesson sets the learner ("make increment credit msg-1 twice") and the
// engine checks, so that a page only says whether it is met. Its language,
// one line of words separated by spaces:
//
//	goal   = clause { "and" clause }
//	clause = HANDLER "is" ["not"] VERDICT        increment is duplicate-effect
//	       | HANDLER "applies" MESSAGE COUNT      check-then-insert applies msg-1 twice
//	       | HANDLER KEY COMPARISON "expected"     increment acc-1 above expected
//	COUNT  = ["at least"] ("never" | "once" | "twice" | N "times")
//	COMPARISON = "above" | "below" | "at"
//
// HANDLER is a handler of the run, VERDICT one of the Verdict… words, MESSAGE
// a message of the scenario, KEY an account or order of it. "applies" counts
// the times the message's effect is in the committed ledger (the engine's
// per-message account: a credit in a balance, a shipment row); a message
// whose figure nobody can explain applies no count. A figure compares its
// value (a balance, an order's shipments) with the expected ledger's.
type Goal struct {
	Clauses []GoalClause
}

// GoalClause is one clause of a goal.
type GoalClause struct {
	Handler string
	Kind    string // "is", "applies" or "figure"
	Not     bool   // is not VERDICT
	Verdict string // for "is"
	Message string // for "applies"
	AtLeast bool   // for "applies": at least Times rather than exactly
	Times   int    // for "applies"
	Key     string // for "figure"
	Compare string // for "figure": above, below or at
}

// MaxGoalBytes bounds a goal's text.
const MaxGoalBytes = 400

// goalVerdicts are the verdict words a goal may name.
var goalVerdicts = []string{VerdictOK, VerdictDuplicate, VerdictLost, VerdictUnexpected, VerdictPending, VerdictDeadLettered}

// ParseGoal parses a goal. An error is an *InputError on field "goal" that
// names the clause and the word at fault.
func ParseGoal(text string) (*Goal, error) {
	if len(text) > MaxGoalBytes {
		return nil, &InputError{Field: "goal", Msg: fmt.Sprintf("the goal is %d bytes; the limit is %d", len(text), MaxGoalBytes)}
	}
	words := strings.Fields(text)
	if len(words) == 0 {
		return nil, &InputError{Field: "goal", Msg: "the goal is empty: want e.g. \"increment applies msg-1 twice\""}
	}
	g := &Goal{}
	var clause []string
	flush := func() error {
		n := len(g.Clauses) + 1
		c, err := parseGoalClause(clause)
		if err != nil {
			return &InputError{Field: "goal", Msg: fmt.Sprintf("clause %d (%q): %s", n, clip(strings.Join(clause, " ")), err)}
		}
		g.Clauses = append(g.Clauses, c)
		clause = nil
		return nil
	}
	for _, w := range words {
		if w == "and" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		clause = append(clause, w)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return g, nil
}

func parseGoalClause(w []string) (GoalClause, error) {
	const forms = `want "HANDLER is VERDICT", "HANDLER applies MESSAGE twice" or "HANDLER KEY above expected"`
	if len(w) == 0 {
		return GoalClause{}, fmt.Errorf("nothing before or after \"and\": %s", forms)
	}
	if len(w) < 3 {
		return GoalClause{}, fmt.Errorf("too short: %s", forms)
	}
	c := GoalClause{Handler: w[0]}
	switch w[1] {
	case "is":
		c.Kind = "is"
		rest := w[2:]
		if rest[0] == "not" {
			c.Not, rest = true, rest[1:]
		}
		if len(rest) != 1 {
			return c, fmt.Errorf("want one verdict after %q (%s)", strings.Join(w[:len(w)-len(rest)], " "), strings.Join(goalVerdicts, ", "))
		}
		if !slices.Contains(goalVerdicts, rest[0]) {
			return c, fmt.Errorf("%q is not a verdict (want %s)", clip(rest[0]), strings.Join(goalVerdicts, ", "))
		}
		c.Verdict = rest[0]
	case "applies":
		c.Kind, c.Message = "applies", w[2]
		count := w[3:]
		if len(count) >= 2 && count[0] == "at" && count[1] == "least" {
			c.AtLeast, count = true, count[2:]
		}
		switch {
		case len(count) == 1 && count[0] == "never" && !c.AtLeast:
			c.Times = 0
		case len(count) == 1 && count[0] == "once":
			c.Times = 1
		case len(count) == 1 && count[0] == "twice":
			c.Times = 2
		case len(count) == 2 && count[1] == "times":
			n, err := strconv.Atoi(count[0])
			if err != nil || n < 0 || n > 100 {
				return c, fmt.Errorf("%q is not a count from 0 to 100", clip(count[0]))
			}
			c.Times = n
		default:
			return c, fmt.Errorf("want how many times after %s: never, once, twice or N times (optionally after \"at least\")", clip(c.Message))
		}
	default:
		c.Kind, c.Key = "figure", w[1]
		if len(w) != 4 || w[3] != "expected" || !slices.Contains([]string{"above", "below", "at"}, w[2]) {
			return c, fmt.Errorf("%s", forms)
		}
		c.Compare = w[2]
	}
	return c, nil
}

// String is the goal in its canonical text.
func (g *Goal) String() string {
	parts := make([]string, len(g.Clauses))
	for i, c := range g.Clauses {
		parts[i] = c.String()
	}
	return strings.Join(parts, " and ")
}

func (c GoalClause) String() string {
	switch c.Kind {
	case "is":
		if c.Not {
			return c.Handler + " is not " + c.Verdict
		}
		return c.Handler + " is " + c.Verdict
	case "applies":
		count := strconv.Itoa(c.Times) + " times"
		switch c.Times {
		case 0:
			count = "never"
		case 1:
			count = "once"
		case 2:
			count = "twice"
		}
		if c.AtLeast {
			count = "at least " + count
		}
		return c.Handler + " applies " + c.Message + " " + count
	default:
		return c.Handler + " " + c.Key + " " + c.Compare + " expected"
	}
}

// Check reports a name in the goal that the run cannot have: a handler
// not in handlers, a message, account or order the scenario lacks.
func (g *Goal) Check(sc *Scenario, handlers []string) error {
	for i, c := range g.Clauses {
		bad := func(msg string) error {
			return &InputError{Field: "goal", Msg: fmt.Sprintf("clause %d (%q): %s", i+1, clip(c.String()), msg)}
		}
		if !slices.Contains(handlers, c.Handler) {
			return bad(fmt.Sprintf("handler %q is not in this playground (it has %s)", clip(c.Handler), strings.Join(handlers, ", ")))
		}
		switch c.Kind {
		case "applies":
			if !slices.ContainsFunc(sc.Messages, func(m Message) bool { return m.ID == c.Message }) {
				return bad(fmt.Sprintf("scenario %s has no message %q", sc.Name, clip(c.Message)))
			}
		case "figure":
			if !slices.ContainsFunc(sc.InitialFigures(), func(f Figure) bool { return f.Key == c.Key }) {
				return bad(fmt.Sprintf("scenario %s has no account or order %q", sc.Name, clip(c.Key)))
			}
		}
	}
	return nil
}

// Met reports whether the goal holds after the first at events of the run
// (at < 0: after the last). A clause about a handler the trace lacks is
// not met.
func (g *Goal) Met(tr *Trace, sc *Scenario, at int) bool {
	for _, c := range g.Clauses {
		if !c.met(tr, sc, at) {
			return false
		}
	}
	return true
}

func (c GoalClause) met(tr *Trace, sc *Scenario, at int) bool {
	i := slices.IndexFunc(tr.Handlers, func(h *HandlerTrace) bool { return h.Name == c.Handler })
	if i < 0 {
		return false
	}
	h := tr.Handlers[i]
	if at < 0 || at > len(h.Frames) {
		at = len(h.Frames)
	}
	switch c.Kind {
	case "is":
		return (h.VerdictAt(at) == c.Verdict) != c.Not
	case "applies":
		times := 0
		if at > 0 {
			times = h.Frames[at-1].Effects[c.Message]
		}
		if times < 0 {
			return false
		}
		if c.AtLeast {
			return times >= c.Times
		}
		return times == c.Times
	default:
		expected, actual := h.FiguresAt(sc, at)
		for j := range expected {
			if expected[j].Key != c.Key || j >= len(actual) {
				continue
			}
			switch c.Compare {
			case "above":
				return actual[j].Value > expected[j].Value
			case "below":
				return actual[j].Value < expected[j].Value
			default:
				return actual[j] == expected[j]
			}
		}
		return false
	}
}
