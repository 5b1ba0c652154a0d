package playground

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// InputError is bad input: an unknown scenario or handler, a script or
// handler that does not parse, or a request over a limit. The web layer
// answers it with 400, the CLI with exit status 2.
type InputError struct {
	Field string // scenario, handlers, handler, script, seed
	Msg   string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

// Request is what a run is a pure function of.
type Request struct {
	Scenario string
	Handlers []string // built-in names; empty means the scenario's handlers
	Script   string   // empty means the scenario's default script
	Seed     int64
	Custom   []*Handler // learner handlers (from ParseHandler), run after Handlers
}

// RequestFromQuery reads scenario=…&handlers=a,b&script=…&seed=…
func RequestFromQuery(q url.Values) (Request, error) {
	req := Request{Scenario: strings.TrimSpace(q.Get("scenario")), Script: q.Get("script")}
	if req.Scenario == "" {
		return req, &InputError{Field: "scenario", Msg: "missing; pass scenario=NAME"}
	}
	if hs := strings.TrimSpace(q.Get("handlers")); hs != "" {
		for _, h := range strings.Split(hs, ",") {
			if h = strings.TrimSpace(h); h != "" {
				req.Handlers = append(req.Handlers, h)
			}
		}
	}
	if s := strings.TrimSpace(q.Get("seed")); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return req, &InputError{Field: "seed", Msg: fmt.Sprintf("%q is not a whole number", clip(s))}
		}
		req.Seed = n
	}
	return req, nil
}

// resolve looks up the scenario, the handlers and the script, applying the
// scenario's defaults and the limits.
func (req Request) resolve() (*Scenario, []*Handler, *Script, error) {
	sc, err := LookupScenario(req.Scenario)
	if err != nil {
		return nil, nil, nil, err
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
	text := req.Script
	if strings.TrimSpace(text) == "" {
		text = sc.DefaultScript
	}
	script, err := ParseScript(text)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(script.Events) == 0 {
		return nil, nil, nil, &InputError{Field: "script", Msg: "no events; try " + sc.DefaultScript}
	}
	if err := sc.CheckScript(script); err != nil {
		return nil, nil, nil, err
	}
	return sc, hs, script, nil
}
