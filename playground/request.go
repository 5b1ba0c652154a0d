package playground

import (
	"fmt"
	"strings"
)

// InputError is bad input: an unknown scenario or handler, a script or
// handler that does not parse, or a request over a limit. The web layer
// answers it with 400, the CLI with exit status 2.
type InputError struct {
	Field string // scenario, handlers, handler, script, seed
	Msg   string
	Line  int // 1-based line of the field's text the message is about; 0 when it is not about one line
}

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

// Request is what a run is a pure function of.
type Request struct {
	Scenario string
	Handlers []string // built-in names; empty means the scenario's handlers
	// Events is the script, parsed; when nil, Script is parsed (text, as
	// the CLI and the lessons give it); both empty mean the scenario's
	// default script.
	Events []Event
	Script string
	Seed   int64
	Custom []*Handler // learner handlers (from ParseHandler), run after Handlers
	// Probe, if not nil, asks the run which events could happen next after
	// a number of the script's events; the answers are Trace.Refusals.
	Probe *Probe

	// Budget caps the run's work (budget.go); nil: no cap. It is not part
	// of what the trace is a function of: a run either fits or stops with
	// a *BudgetError.
	Budget *Budget
	// Ledger is the database the run's ledgers live on; the zero value
	// is SQLite (pgledger.go).
	Ledger Ledger
	// Usage, if not nil, receives what the run used of its budget, whether
	// it finished or not (the server charges a client by it).
	Usage *Usage

	scenario *Scenario // looked up already (Scenario.NewRequest)
}

// Probe is a question put to a run: after the first At events of the
// script, could each of Events happen, or would the broker and workers
// refuse it (so that adding it would only record a skipped event)?
type Probe struct {
	At     int
	Events []Event
}

// NewRequest is a request for the scenario, which Run then need not look
// up again.
func (sc *Scenario) NewRequest() Request { return Request{Scenario: sc.Name, scenario: sc} }

// resolve looks up the scenario, the handlers and the script, applying the
// scenario's defaults and the limits.
func (req Request) resolve() (*Scenario, []*Handler, *Script, error) {
	sc := req.scenario
	if sc == nil || sc.Name != req.Scenario {
		var err error
		if sc, err = LookupScenario(req.Scenario); err != nil {
			return nil, nil, nil, err
		}
	}
	names := req.Handlers
	if len(names) == 0 && len(req.Custom) == 0 {
		names = sc.Handlers
	}
	if n := len(names) + len(req.Custom); n > MaxHandlers {
		return nil, nil, nil, &InputError{Field: "handlers", Msg: fmt.Sprintf("%d handlers; the limit is %d", n, MaxHandlers)}
	}
	var hs []*Handler
	seen := map[string]bool{}
	for _, name := range names {
		h, err := LookupHandler(name)
		if err != nil {
			return nil, nil, nil, err
		}
		hs = append(hs, h)
	}
	for _, h := range req.Custom {
		if h == nil {
			return nil, nil, nil, &InputError{Field: "handlers", Msg: "a custom handler is nil"}
		}
		hs = append(hs, h)
	}
	for _, h := range hs {
		if seen[h.Name] {
			return nil, nil, nil, &InputError{Field: "handlers", Msg: fmt.Sprintf("handler %s is listed twice", h.Name)}
		}
		seen[h.Name] = true
	}
	if len(sc.Workers) > MaxWorkers || len(sc.Messages) > MaxMessages {
		return nil, nil, nil, &InputError{Field: "scenario", Msg: fmt.Sprintf("at most %d workers and %d messages", MaxWorkers, MaxMessages)}
	}
	script := &Script{Events: req.Events}
	switch {
	case req.Events != nil:
		if len(req.Events) > MaxScriptEvents {
			return nil, nil, nil, &InputError{Field: "script", Msg: fmt.Sprintf("the script has more than %d events", MaxScriptEvents)}
		}
	case strings.TrimSpace(req.Script) != "":
		var err error
		if script, err = ParseScript(req.Script); err != nil {
			return nil, nil, nil, err
		}
	default:
		script = &Script{Events: sc.DefaultEvents()}
	}
	if len(script.Events) == 0 {
		return nil, nil, nil, &InputError{Field: "script", Msg: "no events; try " + sc.DefaultScript}
	}
	if err := sc.CheckScript(script); err != nil {
		return nil, nil, nil, err
	}
	if p := req.Probe; p != nil {
		if p.At < 0 || p.At > len(script.Events) {
			return nil, nil, nil, &InputError{Field: "probe", Msg: fmt.Sprintf("after event %d: the script has %d events", p.At, len(script.Events))}
		}
		if err := sc.CheckScript(&Script{Events: p.Events}); err != nil {
			return nil, nil, nil, &InputError{Field: "probe", Msg: err.(*InputError).Msg}
		}
	}
	return sc, hs, script, nil
}
