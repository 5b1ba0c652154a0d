package playground

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Exercise is a handler the learner must fix, and the delivery schedules it
// is checked under. The lessons package reads it from a fenced ```exercise
// block written in YAML; the field names below are the YAML keys:
//
//	id: dedupe-credit                 # unique, a-z 0-9 '-'
//	title: Make the credit idempotent # short, for the course index
//	goal: >-                          # one sentence, shown above the editor
//	  Credit each payment exactly once, however often it is delivered.
//	scenarios: [lost-ack]             # built-in scenarios, checked in order
//	invariants: [exactly-once]        # see the Invariant… constants
//	bounds:                           # see ExploreBounds
//	  workers: 1
//	  max_events: 6
//	  crashes: 1
//	  lost_acks: 1
//	overlap:                          # optional: a second check, same scenarios
//	  workers: 2
//	  interleave: true
//	  expiries: 1
//	start: |                          # the handler script the editor opens with
//	  UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
//	solution: |                       # revealed on request; must pass
//	  BEGIN;
//	  …
//	hints:                            # revealed one at a time
//	  - What does the handler remember about a message it has handled?
type Exercise struct {
	ID         string        `yaml:"id" json:"id"`
	Title      string        `yaml:"title" json:"title"`
	Goal       string        `yaml:"goal" json:"goal"`
	Scenarios  []string      `yaml:"scenarios" json:"scenarios"`
	Invariants []string      `yaml:"invariants" json:"invariants"`
	Bounds     ExploreBounds `yaml:"bounds" json:"bounds"`
	// Overlap is a second set of bounds, checked on the same scenarios
	// after Bounds: the schedules in which a copy arrives while the first
	// is still running (a lease that runs out under a slow handler, a
	// second copy), statement by statement. Every built-in exercise has
	// one; zero (no workers) means none.
	Overlap ExploreBounds `yaml:"overlap" json:"overlap"`
	// Storage is a third set of bounds, checked last: the long schedules
	// (days on the clock, a later message that runs the handler) in which
	// bounds.max_id_age says how long an id may stay in the dedupe table.
	Storage  ExploreBounds `yaml:"storage" json:"storage"`
	Start    string        `yaml:"start" json:"start"`
	Solution string        `yaml:"solution" json:"solution"`
	Hints    []string      `yaml:"hints" json:"hints"`
	// Break or BreakHandler makes the exercise an inverse one (inverse.go):
	// the learner writes the shortest script that breaks this handler, a
	// built-in one by name or one written in the block.
	Break        string `yaml:"break" json:"break,omitempty"`
	BreakHandler string `yaml:"break_handler" json:"break_handler,omitempty"`
}

// ExploreBounds limit the schedules the checker enumerates. Every count is
// a budget over one whole schedule; zero turns that fault off. The checker
// delivers every message of the scenario (or the first Messages of them)
// and, after any fault, keeps redelivering until every message is acked:
// only schedules that settle like that are checked.
type ExploreBounds struct {
	// Workers is how many of the scenario's workers receive messages (1–3,
	// default 1). With 2 or more, each delivery names its worker.
	Workers int `yaml:"workers" json:"workers"`
	// Messages is how many of the scenario's messages take part (default all).
	Messages int `yaml:"messages" json:"messages"`
	// MaxEvents bounds the length of a schedule in script events (default 8).
	MaxEvents int `yaml:"max_events" json:"max_events"`
	// Crashes: a worker dies at a step boundary (crash-after N for every N,
	// crash-before-ack, or crash W between two interleaved steps).
	Crashes int `yaml:"crashes" json:"crashes"`
	// LostAcks: a delivery's ack never reaches the broker.
	LostAcks int `yaml:"lost_acks" json:"lost_acks"`
	// Expiries: a lease runs out while its worker is still running.
	Expiries int `yaml:"expiries" json:"expiries"`
	// Duplicates: the broker hands out a second copy of a message that is
	// still leased to another worker.
	Duplicates int `yaml:"duplicates" json:"duplicates"`
	// Publishes: the producer sends a message again (a retried webhook).
	Publishes int `yaml:"publishes" json:"publishes"`
	// Replays: the consumer rewinds to offset 0.
	Replays int `yaml:"replays" json:"replays"`
	// Restarts: an idle worker restarts and loses its in-process filter.
	Restarts int `yaml:"restarts" json:"restarts"`
	// Prunes: the janitor deletes dedupe rows older than the scenario's retention.
	Prunes int `yaml:"prunes" json:"prunes"`
	// Interleave runs deliveries statement by statement (start, step), so
	// that two workers interleave in every order.
	Interleave bool `yaml:"interleave" json:"interleave"`
	// Advance lists the clock jumps (ticks) the checker may insert.
	Advance []int64 `yaml:"advance" json:"advance"`
	// MaxClock is the last tick a schedule may reach through Advance:
	// the time within which retries and replays happen.
	MaxClock int64 `yaml:"max_clock" json:"max_clock"`
	// RetryWindow: the producer only retries (publish) up to this tick (0: any time).
	RetryWindow int64 `yaml:"retry_window" json:"retry_window"`
	// ReplayWindow: the consumer only rewinds (replay) up to this tick (0: any time).
	ReplayWindow int64 `yaml:"replay_window" json:"replay_window"`
	// MaxIDAge bounds the dedupe table's storage: once a handler has run
	// this many ticks after an id was recorded, the id must be gone
	// (0: no bound).
	MaxIDAge int64 `yaml:"max_id_age" json:"max_id_age"`
}

// Invariants an exercise can require of every settled schedule.
const (
	// InvariantExactlyOnce: the ledger equals the one where each distinct
	// delivered message was applied exactly once.
	InvariantExactlyOnce = "exactly-once"
	// InvariantNoLostEffect: no delivered message's effect is missing.
	InvariantNoLostEffect = "no-lost-effect"
	// InvariantNoDuplicateEffect: no message's effect was applied twice.
	InvariantNoDuplicateEffect = "no-duplicate-effect"
	// InvariantShippedOnceIfPaid: every order has at most one shipment,
	// only a paid order is shipped, and a paid order whose ship message was
	// delivered is shipped.
	InvariantShippedOnceIfPaid = "shipped-once-if-paid"
)

var invariantNames = []string{InvariantExactlyOnce, InvariantNoLostEffect, InvariantNoDuplicateEffect, InvariantShippedOnceIfPaid}

// Limits of the checker: bounds beyond them would take too long to explore.
const (
	exerciseMaxEvents = 24
	exerciseMaxBudget = 3
	exerciseMaxHints  = 10
)

// Validate reports the first problem of an exercise, naming the field:
// "exercise dedupe-credit: bounds.workers: 4; the scenario lost-ack has 2 workers".
func (e *Exercise) Validate() error {
	if e == nil {
		return fmt.Errorf("exercise: missing")
	}
	fail := func(field, format string, args ...any) error {
		return fmt.Errorf("exercise %s: %s: %s", clip(e.ID), field, fmt.Sprintf(format, args...))
	}
	if err := checkHandlerName(e.ID); err != nil {
		return fmt.Errorf("exercise: id %q: %v", clip(e.ID), err)
	}
	if strings.TrimSpace(e.Goal) == "" {
		return fail("goal", "missing; say in one sentence what the handler must do")
	}
	if len(e.Scenarios) == 0 {
		return fail("scenarios", "missing; name at least one built-in scenario")
	}
	for _, name := range e.Scenarios {
		sc, err := LookupScenario(name)
		if err != nil {
			return fail("scenarios", "%v", err)
		}
		if sc.Partition != nil { // the explorer plays a queue's deliveries, not polls
			return fail("scenarios", "%s reads a partition with poll and rebalance, which the checker does not explore; name a queue scenario", sc.Name)
		}
	}
	if len(e.Invariants) == 0 {
		return fail("invariants", "missing; use %s", strings.Join(invariantNames, ", "))
	}
	for _, inv := range e.Invariants {
		if !contains(invariantNames, inv) {
			return fail("invariants", "unknown invariant %q; invariants are %s", clip(inv), strings.Join(invariantNames, ", "))
		}
	}
	if e.IsInverse() {
		if field, msg := e.inverseProblem(); field != "" {
			return fail(field, "%s", msg)
		}
	}
	for _, c := range e.checks() {
		if err := c.bounds.validate(c.field, e.Scenarios); err != nil {
			return fail(err.field, "%s", err.msg)
		}
	}
	if len(e.Hints) > exerciseMaxHints {
		return fail("hints", "%d hints; at most %d", len(e.Hints), exerciseMaxHints)
	}
	for i, h := range e.Hints {
		if strings.TrimSpace(h) == "" {
			return fail(fmt.Sprintf("hints[%d]", i), "empty")
		}
	}
	if e.IsInverse() {
		return nil // inverseProblem checked its scripts
	}
	for _, src := range []struct{ field, text string }{{"start", e.Start}, {"solution", e.Solution}} {
		if strings.TrimSpace(src.text) == "" {
			return fail(src.field, "missing handler script")
		}
		if _, err := ParseHandler(exerciseHandlerName, src.text); err != nil {
			var ie *InputError
			if errors.As(err, &ie) {
				return fail(src.field, "%s", ie.Msg)
			}
			return fail(src.field, "%v", err)
		}
	}
	return nil
}

// exerciseCheck is one set of bounds an exercise is checked under, with the
// YAML field it came from.
type exerciseCheck struct {
	field  string
	bounds ExploreBounds
}

// checks lists the exercise's bounds, with defaults: Bounds, then Overlap
// and Storage when they set anything.
func (e *Exercise) checks() []exerciseCheck {
	out := []exerciseCheck{{"bounds", e.Bounds.withDefaults()}}
	for _, c := range []exerciseCheck{{"overlap", e.Overlap}, {"storage", e.Storage}} {
		if !reflect.ValueOf(c.bounds).IsZero() {
			out = append(out, exerciseCheck{c.field, c.bounds.withDefaults()})
		}
	}
	return out
}

type boundsError struct{ field, msg string }

// validate reports the first problem of a set of bounds (given with
// defaults), naming its field under prefix ("bounds", "overlap").
func (b ExploreBounds) validate(prefix string, scenarios []string) *boundsError {
	bf := func(field, format string, args ...any) *boundsError {
		if field != "" {
			field = prefix + "." + field
		} else {
			field = prefix
		}
		return &boundsError{field, fmt.Sprintf(format, args...)}
	}
	for _, name := range scenarios {
		sc, _ := LookupScenario(name)
		if b.Workers < 1 || b.Workers > len(sc.Workers) {
			return bf("workers", "%d; the scenario %s has %d worker(s)", b.Workers, sc.Name, len(sc.Workers))
		}
		if b.Messages < 0 || b.Messages > len(sc.Messages) {
			return bf("messages", "%d; the scenario %s has %d message(s)", b.Messages, sc.Name, len(sc.Messages))
		}
	}
	if b.MaxEvents < 1 || b.MaxEvents > exerciseMaxEvents {
		return bf("max_events", "%d; it must be from 1 to %d", b.MaxEvents, exerciseMaxEvents)
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"crashes", b.Crashes}, {"lost_acks", b.LostAcks}, {"expiries", b.Expiries}, {"duplicates", b.Duplicates},
		{"publishes", b.Publishes}, {"replays", b.Replays}, {"restarts", b.Restarts}, {"prunes", b.Prunes}} {
		if c.n < 0 || c.n > exerciseMaxBudget {
			return bf(c.name, "%d; it must be from 0 to %d", c.n, exerciseMaxBudget)
		}
	}
	if b.Interleave && b.Workers < 2 {
		return bf("interleave", "needs at least 2 workers")
	}
	if len(b.Advance) > 4 {
		return bf("advance", "at most 4 clock jumps")
	}
	for _, t := range b.Advance {
		if t < 1 || t > maxAdvanceTicks {
			return bf("advance", "%d; a jump is from 1 to %d ticks", t, maxAdvanceTicks)
		}
	}
	if len(b.Advance) > 0 && b.MaxClock <= 0 {
		return bf("max_clock", "needed with advance: the last tick a schedule may reach")
	}
	if b.MaxClock < 0 || b.RetryWindow < 0 || b.ReplayWindow < 0 || b.MaxIDAge < 0 {
		return bf("", "max_clock, retry_window, replay_window and max_id_age cannot be negative")
	}
	return nil
}

// exerciseHandlerName names the learner's handler in traces and links.
const exerciseHandlerName = "mine"

func (b ExploreBounds) withDefaults() ExploreBounds {
	if b.Workers == 0 {
		b.Workers = 1
	}
	if b.MaxEvents == 0 {
		b.MaxEvents = 8
	}
	return b
}

// exerciseInvariantBroken evaluates the invariants on a settled run: it
// returns the first broken invariant and a short description, or "".
func exerciseInvariantBroken(invariants []string, sc *Scenario, expected, actual []Figure) (string, string) {
	for _, inv := range invariants {
		for i := range expected {
			e, a := expected[i], actual[i]
			if d := figureBroken(inv, sc, e, a); d != "" {
				return inv, d
			}
		}
	}
	return "", ""
}

func figureBroken(inv string, sc *Scenario, e, a Figure) string {
	if e.Table == "orders" {
		paid := false
		for _, o := range sc.Orders {
			if o.ID == e.Key {
				paid = o.State == "paid"
			}
		}
		switch inv {
		case InvariantShippedOnceIfPaid:
			switch {
			case a.Value > 1:
				return fmt.Sprintf("order %s shipped %d times, expected once", e.Key, a.Value)
			case a.Value > 0 && !paid:
				return fmt.Sprintf("order %s shipped but never paid", e.Key)
			case e.Value > 0 && paid && (a.Value == 0 || a.State != "shipped"):
				return fmt.Sprintf("order %s paid but not shipped (state %s, %d shipments)", e.Key, a.State, a.Value)
			}
			return ""
		case InvariantNoDuplicateEffect:
			if a.Value > e.Value {
				return fmt.Sprintf("order %s shipped %d times, expected %d", e.Key, a.Value, e.Value)
			}
			return ""
		case InvariantNoLostEffect:
			if a.Value < e.Value || e.State != a.State && e.Value > 0 {
				return fmt.Sprintf("order %s is %s with %d shipments, expected %s with %d", e.Key, a.State, a.Value, e.State, e.Value)
			}
			return ""
		}
		if e != a {
			return fmt.Sprintf("order %s is %s with %d shipments, expected %s with %d", e.Key, a.State, a.Value, e.State, e.Value)
		}
		return ""
	}
	// accounts: the scenarios only credit, so above the expected balance is
	// an effect applied twice and below one that is missing.
	switch inv {
	case InvariantShippedOnceIfPaid:
		return ""
	case InvariantNoDuplicateEffect:
		if a.Value <= e.Value {
			return ""
		}
	case InvariantNoLostEffect:
		if a.Value >= e.Value {
			return ""
		}
	}
	if a.Value != e.Value {
		return fmt.Sprintf("%s balance %d, expected %d", e.Key, a.Value, e.Value)
	}
	return ""
}

// Describe says in words which faults and schedules the checker explores,
// for the exercise's page: "Checked against every schedule of at most 10
// events with 2 workers …".
func (b ExploreBounds) Describe(sc []string) string {
	return b.schedules(sc, "The checker tries") + rulesEveryMessage
}

// rulesEveryMessage ends every description of an exercise's bounds.
const rulesEveryMessage = " Every message must be acked, never dead-lettered, and take effect exactly as its business rule says."

// DescribeChecks says in words every set of bounds the exercise is
// checked under (Bounds, then Overlap and Storage), for its page.
func (e *Exercise) DescribeChecks() string {
	out := ""
	for i, c := range e.checks() {
		lead := "The checker tries"
		if i > 0 {
			lead = " Separately, it tries"
		}
		out += c.bounds.schedules(e.Scenarios, lead)
	}
	return out + rulesEveryMessage
}

// schedules is Describe without its last sentence, starting with lead.
func (b ExploreBounds) schedules(sc []string, lead string) string {
	b = b.withDefaults()
	var parts []string
	parts = appendCount(parts, b.Crashes, "a worker that crashes at any point", "up to %d crashes at any point")
	parts = appendCount(parts, b.LostAcks, "an ack that never reaches the broker", "up to %d lost acks")
	parts = appendCount(parts, b.Expiries, "a lease that runs out while its worker is still running, so a second copy arrives while the first is still being handled", "up to %d leases that run out while their worker is still running")
	parts = appendCount(parts, b.Duplicates, "a second copy handed out while the first is still leased", "up to %d second copies handed out while the first is still leased")
	parts = appendCount(parts, b.Publishes, "the producer sending a message again", "up to %d republished messages")
	parts = appendCount(parts, b.Replays, "the topic replayed from the start", "up to %d replays from the start")
	parts = appendCount(parts, b.Restarts, "a worker restart that empties its memory", "up to %d worker restarts")
	parts = appendCount(parts, b.Prunes, "the janitor pruning the dedupe table", "up to %d prunes by the janitor")
	workers := "one worker"
	if b.Workers > 1 {
		workers = fmt.Sprintf("%d workers", b.Workers)
	}
	how := "each delivery runs whole"
	if b.Interleave {
		how = "their statements interleaved in every order"
	}
	messages := ""
	switch {
	case b.Messages == 1:
		messages = " and the first message"
	case b.Messages > 1:
		messages = fmt.Sprintf(" and the first %d messages", b.Messages)
	}
	out := fmt.Sprintf("%s every schedule of at most %d events on %s, with %s%s (%s)", lead, b.MaxEvents, strings.Join(sc, ", "), workers, messages, how)
	if len(parts) > 0 {
		out += ", including " + joinAnd(parts)
	}
	out += "."
	if len(b.Advance) > 0 {
		ticks := make([]string, len(b.Advance))
		for i, t := range b.Advance {
			ticks[i] = fmt.Sprint(t)
		}
		out += fmt.Sprintf(" The clock may jump by %s ticks between deliveries, while the broker owes no copy (it redelivers within a lease), up to tick %d", strings.Join(ticks, " or "), b.MaxClock)
		if b.RetryWindow > 0 {
			out += fmt.Sprintf("; the producer retries up to tick %d", b.RetryWindow)
		}
		if b.ReplayWindow > 0 {
			out += fmt.Sprintf("; a replay can happen up to tick %d", b.ReplayWindow)
		}
		out += "."
	}
	if b.MaxIDAge > 0 {
		out += fmt.Sprintf(" Storage is bounded: once the handler runs %d ticks after an id was recorded, that id must be gone.", b.MaxIDAge)
	}
	return out
}

// appendCount appends one when n is 1 and many (a format with one %d) when
// n is more; nothing when n is 0.
func appendCount(parts []string, n int, one, many string) []string {
	switch {
	case n == 1:
		return append(parts, one)
	case n > 1:
		return append(parts, fmt.Sprintf(many, n))
	}
	return parts
}
