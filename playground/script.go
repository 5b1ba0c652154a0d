package playground

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// Limits on what one request may ask for. Over a limit is an InputError,
// never a silent truncation.
const (
	MaxScriptBytes   = 8 << 10
	MaxScriptEvents  = 200
	MaxHandlers      = 4
	MaxWorkers       = 3
	MaxMessages      = 50
	maxStepCount     = 100
	maxCrashAfter    = 100
	maxAdvanceTicks  = 1_000_000
	maxHandlerBytes  = 4 << 10
	maxHandlerStmts  = 32
	maxSchedulerRuns = 10_000
)

// Event kinds of the script grammar (see the package documentation).
const (
	EventDeliver   = "deliver"
	EventRedeliver = "redeliver"
	EventPublish   = "publish"
	EventStart     = "start"
	EventStep      = "step"
	EventFinish    = "finish"
	EventCrash     = "crash"
	EventExpire    = "expire"
	EventRestart   = "restart"
	EventReplay    = "replay"
	EventPrune     = "prune"
	EventAdvance   = "advance"
	EventRedrive   = "redrive"
	// A Kafka-style partition's events (offsets.go).
	EventPoll      = "poll"
	EventRebalance = "rebalance"
)

// Fault kinds that may follow deliver, redeliver and publish.
const (
	FaultLoseAck        = "lose-ack"
	FaultCrashBeforeAck = "crash-before-ack"
	FaultCrashAfter     = "crash-after"
	// FaultCrashAt may follow poll: the consumer dies just before it
	// handles the record at offset N (Event.N).
	FaultCrashAt = "crash-at"
	// PollTimerAt may follow poll: an auto-commit timer fires just before
	// the consumer handles the record at offset Event.TimerAt (offsets.go).
	PollTimerAt = "timer-at"
)

// Event is one parsed script event. Zero values mean "not given": Worker ""
// is the scenario's first (idle) worker, N 0 is the event's default.
type Event struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
	Worker  string `json:"worker,omitempty"`
	Fault   string `json:"fault,omitempty"`
	// FaultAfter is N of crash-after N.
	FaultAfter int `json:"fault_after,omitempty"`
	// N is the count of step, the ticks of advance, the older-than of
	// prune and the offset of poll's crash-at.
	N int64 `json:"n,omitempty"`
	// OlderThan tells whether prune was given older-than (0 is a valid T).
	OlderThan bool `json:"older_than,omitempty"`
	// Timer tells whether poll was given timer-at, and TimerAt is its
	// offset (0 is a valid offset).
	Timer   bool  `json:"timer,omitempty"`
	TimerAt int64 `json:"timer_at,omitempty"`
}

// Script is the ordered list of events a learner triggered.
type Script struct {
	Events []Event
}

// ParseScript parses the script grammar. Errors name the event number
// (1-based): "event 3: step needs a worker, e.g. step A".
func ParseScript(text string) (*Script, error) {
	scriptParses.Add(1)
	if len(text) > MaxScriptBytes {
		return nil, &InputError{Field: "script", Msg: fmt.Sprintf("the script is %d bytes; the limit is %d", len(text), MaxScriptBytes)}
	}
	s := &Script{}
	err := splitScript(text, func(line int, fields []string) error {
		n := len(s.Events) + 1
		if n > MaxScriptEvents {
			return &InputError{Field: "script", Msg: fmt.Sprintf("event %d: the script has more than %d events", n, MaxScriptEvents), Line: line}
		}
		ev, err := parseEvent(fields)
		if err != nil {
			return &InputError{Field: "script", Msg: fmt.Sprintf("event %d: %s", n, err), Line: line}
		}
		s.Events = append(s.Events, ev)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// splitScript is the script grammar's one tokenizer: events are separated
// by ';' or a line break, and '#' starts a comment that runs to the end of
// the line. It calls event with each event's words, in order, and comment
// (if not nil) with each comment's text, after the events of its line.
func splitScript(text string, event func(line int, words []string) error, comment func(string)) error {
	for i, line := range strings.Split(text, "\n") {
		code, note, hasNote := strings.Cut(line, "#")
		for _, part := range strings.Split(code, ";") {
			if words := strings.Fields(part); len(words) > 0 {
				if err := event(i+1, words); err != nil {
					return err
				}
			}
		}
		if note = strings.TrimSpace(note); hasNote && note != "" && comment != nil {
			comment(note)
		}
	}
	return nil
}

// ScriptLines lays script text out one event per line for reading, with
// its comments on lines of their own. It only splits (splitScript), so it
// lays out text that does not parse as well.
func ScriptLines(text string) string {
	var out []string
	splitScript(text, func(_ int, words []string) error {
		out = append(out, strings.Join(words, " "))
		return nil
	}, func(note string) { out = append(out, "# "+note) })
	return strings.Join(out, "\n")
}

func parseEvent(f []string) (Event, error) {
	ev := Event{Kind: f[0]}
	args := f[1:]
	switch ev.Kind {
	case EventDeliver, EventRedeliver, EventPublish, EventRedrive:
		if len(args) == 0 {
			return ev, fmt.Errorf("%s needs a message id, e.g. %s msg-1", ev.Kind, ev.Kind)
		}
		if err := checkName("message id", args[0]); err != nil {
			return ev, err
		}
		ev.Message, args = args[0], args[1:]
		if len(args) >= 2 && args[0] == "to" {
			if err := checkName("worker", args[1]); err != nil {
				return ev, err
			}
			ev.Worker, args = args[1], args[2:]
		} else if len(args) == 1 && args[0] == "to" {
			return ev, fmt.Errorf("to needs a worker, e.g. to B")
		}
		if len(args) > 0 {
			switch args[0] {
			case FaultLoseAck, FaultCrashBeforeAck:
				ev.Fault, args = args[0], args[1:]
			case FaultCrashAfter:
				if len(args) < 2 {
					return ev, fmt.Errorf("crash-after needs a statement count, e.g. crash-after 2")
				}
				n, err := parseCount("crash-after", args[1], 1, maxCrashAfter)
				if err != nil {
					return ev, err
				}
				ev.Fault, ev.FaultAfter, args = FaultCrashAfter, int(n), args[2:]
			default:
				return ev, fmt.Errorf("unexpected %q after %s %s; expected to W, lose-ack, crash-before-ack or crash-after N", args[0], ev.Kind, ev.Message)
			}
		}
	case EventStart:
		if len(args) < 3 || args[1] != "on" {
			return ev, fmt.Errorf("start needs a message and a worker, e.g. start msg-1 on A")
		}
		if err := checkName("message id", args[0]); err != nil {
			return ev, err
		}
		if err := checkName("worker", args[2]); err != nil {
			return ev, err
		}
		ev.Message, ev.Worker, args = args[0], args[2], args[3:]
	case EventStep:
		if len(args) == 0 {
			return ev, fmt.Errorf("step needs a worker, e.g. step A")
		}
		if err := checkName("worker", args[0]); err != nil {
			return ev, err
		}
		ev.Worker, args = args[0], args[1:]
		if len(args) > 0 {
			n, err := parseCount("step", args[0], 1, maxStepCount)
			if err != nil {
				return ev, err
			}
			ev.N, args = n, args[1:]
		}
	case EventFinish, EventCrash, EventRestart:
		if len(args) == 0 {
			return ev, fmt.Errorf("%s needs a worker, e.g. %s A", ev.Kind, ev.Kind)
		}
		if err := checkName("worker", args[0]); err != nil {
			return ev, err
		}
		ev.Worker, args = args[0], args[1:]
	case EventExpire:
		if len(args) == 0 {
			return ev, fmt.Errorf("expire needs a message id, e.g. expire msg-1")
		}
		if err := checkName("message id", args[0]); err != nil {
			return ev, err
		}
		ev.Message, args = args[0], args[1:]
	case EventReplay:
	case EventPrune:
		if len(args) > 0 {
			if args[0] != "older-than" || len(args) < 2 {
				return ev, fmt.Errorf("prune takes an optional older-than T, e.g. prune older-than 24")
			}
			n, err := parseCount("older-than", args[1], 0, maxAdvanceTicks)
			if err != nil {
				return ev, err
			}
			ev.N, ev.OlderThan, args = n, true, args[2:]
		}
	case EventPoll, EventRebalance:
		var err error
		if args, err = parsePartitionEvent(&ev, args); err != nil {
			return ev, err
		}
	case EventAdvance:
		if len(args) == 0 {
			return ev, fmt.Errorf("advance needs a tick count, e.g. advance 30")
		}
		n, err := parseCount("advance", args[0], 1, maxAdvanceTicks)
		if err != nil {
			return ev, err
		}
		ev.N, args = n, args[1:]
	default:
		return ev, fmt.Errorf("unknown event %q; events are deliver, redeliver, publish, start, step, finish, crash, expire, restart, replay, prune, advance, redrive, poll, rebalance", clip(ev.Kind))
	}
	if len(args) > 0 {
		return ev, fmt.Errorf("unexpected %q at the end of %s", clip(args[0]), ev.Kind)
	}
	return ev, nil
}

func parseCount(what, s string, min, max int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < min || n > max {
		return 0, fmt.Errorf("%s needs a whole number from %d to %d, not %q", what, min, max, clip(s))
	}
	return n, nil
}

// checkName accepts the characters of message ids and worker names, so that
// a printed script never needs quoting.
func checkName(what, s string) error {
	if len(s) > 40 {
		return fmt.Errorf("%s %q is longer than 40 characters", what, clip(s))
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("%s %q may only contain letters, digits, '-', '_' and '.'", what, clip(s))
		}
	}
	switch s {
	case "to", "on", "older-than", FaultLoseAck, FaultCrashBeforeAck, FaultCrashAfter, FaultCrashAt, PollTimerAt:
		return fmt.Errorf("%s %q is a keyword", what, s)
	}
	return nil
}

// clip keeps error messages short when the input is long or binary.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// String prints the event in its canonical form.
func (e Event) String() string { return string(e.appendText(nil)) }

// appendText appends the event's canonical form to b.
func (e Event) appendText(b []byte) []byte {
	b = append(b, e.Kind...)
	switch e.Kind {
	case EventDeliver, EventRedeliver, EventPublish, EventRedrive:
		b = append(append(b, ' '), e.Message...)
		if e.Worker != "" {
			b = append(append(b, " to "...), e.Worker...)
		}
		if e.Fault != "" {
			b = append(append(b, ' '), e.Fault...)
			if e.Fault == FaultCrashAfter {
				b = strconv.AppendInt(append(b, ' '), int64(e.FaultAfter), 10)
			}
		}
	case EventStart:
		b = append(append(append(append(b, ' '), e.Message...), " on "...), e.Worker...)
	case EventStep:
		b = append(append(b, ' '), e.Worker...)
		if e.N != 0 {
			b = strconv.AppendInt(append(b, ' '), e.N, 10)
		}
	case EventFinish, EventCrash, EventRestart:
		b = append(append(b, ' '), e.Worker...)
	case EventExpire:
		b = append(append(b, ' '), e.Message...)
	case EventPrune:
		if e.OlderThan {
			b = strconv.AppendInt(append(b, " older-than "...), e.N, 10)
		}
	case EventAdvance:
		b = strconv.AppendInt(append(b, ' '), e.N, 10)
	case EventPoll, EventRebalance:
		b = e.appendPartitionText(b)
	}
	return b
}

// String prints the script canonically: events joined by "; ".
// ParseScript(s.String()) gives back the same events.
func (s *Script) String() string { return s.join("; ") }

// join prints the events separated by sep, in one allocation.
func (s *Script) join(sep string) string {
	b := make([]byte, 0, 24*len(s.Events))
	for i, e := range s.Events {
		if i > 0 {
			b = append(b, sep...)
		}
		b = e.appendText(b)
	}
	return string(b)
}

// Lines prints the script one event per line, for reading.
func (s *Script) Lines() string { return s.join("\n") }

// Work counters, for tests that prove a request does each thing once.
var scriptParses, scenarioLookups atomic.Int64

// WorkCounts returns how many scripts this process has parsed
// (ParseScript) and scenarios it has looked up (LookupScenario) so far: a
// test reads them before and after a request. They cost an atomic add.
func WorkCounts() (parses, lookups int64) {
	return scriptParses.Load(), scenarioLookups.Load()
}
