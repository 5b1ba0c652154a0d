package web

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/playground"
)

// The one codec of playground state. A state (pgState) holds typed values,
// the script as parsed events among them; it becomes text only here, when
// a URL (or the hidden fields of a GET form, which make one) is written,
// and it is read back only here, from a page's query, a form's answer or
// the JSON API's query. Links to counterexamples are written here too.

// Query keys of a playground URL.
const (
	keyScenario = "scenario" // the full-size playground's scenario
	keyBlock    = "pg"       // a lesson block's id
	keyHandlers = "handlers" // built-in handlers, comma-separated
	keyScript   = "script"   // the script's canonical text
	keyHandler  = "handler"  // a learner's handler source, run as learnerHandlerName
	keySeed     = "seed"
	keyAt       = "at"       // event cursor
	keyTo       = "to"       // the worker the delivery controls name
	keyShow     = "show"     // the panels shown, when not the place's default (pgPanels)
	keyOpen     = "open"     // the control panels drawn open (morePanels)
	keyPanel    = "panel"    // one control panel alone, for playground.js: never in a link
	keyGuess    = "guess"    // the learner's answer to a lesson block's prediction
	keyExercise = "exercise" // the exercise a replay came from: the way back
	keyLedger   = "ledger"   // a PostgreSQL ledger (postgres-rc…); absent: SQLite

	// What forms send, folded into a state and redirected away.
	keyChecked = "h"  // a checked handler box
	keyOp      = "op" // advance or prune, with n
	keyN       = "n"
	keyWas     = "was" // the script the script form started from: a rejected edit falls back to it
)

// learnerHandlerName names the handler a link brings as source (handler=…),
// as the exercises name it.
const learnerHandlerName = "mine"

// fields is the encoder: a state's query fields, in a fixed, readable order.
func (p pgPlace) fields(s State) []hiddenField {
	return p.appendFields(make([]hiddenField, 0, 12), s, s.scriptText())
}

// appendFields appends a state's fields to out, with script as the
// script's text (appendQuery writes it from the view's linkCache).
func (p pgPlace) appendFields(out []hiddenField, s State, script string) []hiddenField {
	if p.block != "" {
		out = append(out, hiddenField{keyBlock, p.block})
	} else {
		out = append(out, hiddenField{keyScenario, s.scenario})
	}
	out = append(out, hiddenField{keyHandlers, p.links.handlersText(s.handlers)}, hiddenField{keyScript, script})
	if s.custom != "" {
		out = append(out, hiddenField{keyHandler, s.custom})
	}
	if s.exercise != "" && p.block == "" {
		out = append(out, hiddenField{keyExercise, s.exercise})
	}
	if s.seed != 0 {
		out = append(out, hiddenField{keySeed, strconv.FormatInt(s.seed, 10)})
	}
	if s.ledger != p.home.ledger { // a PostgreSQL block's home names its ledger
		out = append(out, hiddenField{keyLedger, cmp.Or(s.ledger, "sqlite")})
	}
	if s.at >= 0 {
		out = append(out, hiddenField{keyAt, strconv.Itoa(s.at)})
	}
	if s.to != "" {
		out = append(out, hiddenField{keyTo, s.to})
	}
	if s.panels != p.home.panels {
		out = append(out, hiddenField{keyShow, s.panels.String()})
	}
	if s.open != 0 {
		out = append(out, hiddenField{keyOpen, s.open.String()})
	}
	if s.guess > 0 && p.block != "" { // only a lesson block asks
		out = append(out, hiddenField{keyGuess, strconv.Itoa(s.guess)})
	}
	return out
}

// formFields are the hidden inputs that carry a state through a GET form,
// minus the keys the form itself sets.
func (p pgPlace) formFields(s State, omit ...string) []hiddenField {
	return slices.DeleteFunc(p.fields(s), func(f hiddenField) bool { return slices.Contains(omit, f.Name) })
}

// query writes a state's query string.
func (p pgPlace) query(s State) string { return string(p.appendQuery(nil, s)) }

// appendQuery appends a state's query string to b. The script, most of
// a link's length, is written from the view's linkCache when it can be.
func (p pgPlace) appendQuery(b []byte, s State) []byte {
	var kept [12]hiddenField
	for i, f := range p.appendFields(kept[:0], s, "") {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(append(b, f.Name...), '=')
		if f.Name == keyScript {
			b = p.links.appendScript(b, s.events)
		} else {
			b = appendQueryEscaped(b, f.Value)
		}
	}
	return b
}

// queryEscape escapes a query value but keeps commas readable.
func queryEscape(s string) string { return string(appendQueryEscaped(nil, s)) }

// appendQueryEscaped appends s escaped as url.QueryEscape does (a space is
// "+", every byte but letters, digits and "-_.~" is %XX), but keeping
// commas readable.
func appendQueryEscaped(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~', c == ',':
			b = append(b, c)
		case c == ' ':
			b = append(b, '+')
		default:
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return b
}

// href is the site path (without the base) of a state in this place. A
// lesson block's initial state is the pre-rendered lesson itself.
func (p pgPlace) href(s State) string {
	if p.inLesson() && s.equal(p.home) {
		return p.path + "#" + p.block
	}
	b := p.appendQuery(append(append(make([]byte, 0, 256), p.path...), '?'), s)
	if p.block != "" {
		b = append(append(b, '#'), p.block...)
	}
	return string(b) // one allocation for the whole URL: a click draws dozens
}

// queryHref is href with the query always spelled out, even for a lesson
// block's initial state: what app.js fetches a fragment from.
func (p pgPlace) queryHref(s State) string {
	return string(p.appendQuery(append(append(make([]byte, 0, 256), p.path...), '?'), s))
}

// fullSizeHref opens a state in the full-size playground.
func fullSizeHref(s State) string {
	return pgPlace{kind: placePage, path: "/playground"}.href(s)
}

// stateFromQuery is the decoder: it reads a state on top of defaults (the
// place's home). Parameters the forms send (h=…, op=…) are folded in; the
// bool reports that the URL was not canonical, so the caller redirects.
func stateFromQuery(q url.Values, home State, workers []string) (State, bool, error) {
	s := home
	s.at, s.to = -1, ""
	redirect := false
	if _, ok := q[keyHandlers]; ok {
		s.handlers = nil
		for _, h := range strings.Split(q.Get(keyHandlers), ",") {
			if h = strings.TrimSpace(h); h != "" {
				s.handlers = append(s.handlers, h)
			}
		}
	}
	if src, ok := q[keyHandler]; ok { // a learner's handler, as exercises link it
		s.custom = strings.TrimSpace(src[0])
		if _, given := q[keyHandlers]; !given && s.custom != "" {
			s.handlers = beside(home.handlers)
		}
	}
	if hs, ok := q[keyChecked]; ok { // checkboxes of the handler form
		s.handlers = nil
		for _, h := range hs {
			if h = strings.TrimSpace(h); h != "" && !slices.Contains(s.handlers, h) {
				s.handlers = append(s.handlers, h)
			}
		}
		n := len(s.handlers)
		if s.custom != "" {
			n++
		}
		if n < 2 || n > playground.MaxHandlers {
			return s, false, &playground.InputError{Field: "handlers",
				Msg: fmt.Sprintf("%d chosen; compare between 2 and %d handlers", n, playground.MaxHandlers)}
		}
		redirect = true
	}
	if _, ok := q[keyScript]; ok {
		text := q.Get(keyScript)
		if strings.TrimSpace(text) != "" {
			script, err := playground.ParseScript(text)
			if err != nil {
				return s, false, err
			}
			// Only comments: no events, which the engine refuses; a page
			// redirects first, to script= (the place's own script).
			s.events = append([]playground.Event{}, script.Events...)
			redirect = redirect || s.scriptText() != text
		}
	}
	if v := strings.TrimSpace(q.Get(keySeed)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s, false, &playground.InputError{Field: "seed", Msg: fmt.Sprintf("%q is not a whole number", english.Truncate(v, 40))}
		}
		s.seed = n
	}
	if vs, ok := q[keyLedger]; ok {
		v := strings.TrimSpace(vs[0])
		if !slices.Contains(playground.LedgerNames(), v) {
			return s, false, &playground.InputError{Field: keyLedger, Msg: fmt.Sprintf("unknown ledger %q; ledgers are %s", english.Truncate(v, 40), strings.Join(playground.LedgerNames(), ", "))}
		}
		s.ledger = strings.TrimPrefix(v, "sqlite") // the default goes unspelled
		// Spelled only when it is not the place's: sqlite only for a
		// PostgreSQL block's SQLite state.
		redirect = redirect || len(vs) > 1 || s.ledger == home.ledger || vs[0] != cmp.Or(s.ledger, "sqlite")
	}
	if v := strings.TrimSpace(q.Get(keyAt)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s, false, &playground.InputError{Field: "at", Msg: fmt.Sprintf("%q is not an event number (0 or more)", english.Truncate(v, 40))}
		}
		s.at = n
	}
	if v := strings.TrimSpace(q.Get(keyTo)); v != "" {
		if !slices.Contains(workers, v) {
			return s, false, &playground.InputError{Field: "to", Msg: fmt.Sprintf("unknown worker %s; workers are %s", english.Truncate(v, 20), strings.Join(workers, ", "))}
		}
		s.to = v
	}
	if vs, ok := q[keyShow]; ok {
		ps, err := parsePanels(vs[0])
		if err != nil {
			return s, false, err
		}
		s.panels = ps
		// Spelled otherwise, or spelled though it is the default: one URL per state.
		redirect = redirect || len(vs) > 1 || vs[0] != ps.String() || ps == home.panels
	}
	if vs, ok := q[keyOpen]; ok {
		ps, err := parseMorePanels(vs[0])
		if err != nil {
			return s, false, err
		}
		s.open = ps
		redirect = redirect || len(vs) > 1 || vs[0] != ps.String() || ps == home.open
	}
	if v := strings.TrimSpace(q.Get(keyExercise)); v != "" {
		if len(v) > 64 { // the page checks that the course has it (checkPlaceParams)
			return s, false, &playground.InputError{Field: keyExercise, Msg: fmt.Sprintf("%q is not an exercise id", english.Truncate(v, 40))}
		}
		s.exercise = v
	}
	if v := strings.TrimSpace(q.Get(keyGuess)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > lessons.MaxChoices {
			return s, false, &playground.InputError{Field: "guess", Msg: fmt.Sprintf("%q is not a choice: pick one of the answers (1 to %d)", english.Truncate(v, 40), lessons.MaxChoices)}
		}
		s.guess = n
	}
	if op := q.Get(keyOp); op != "" {
		ev, err := eventFromForm(q)
		if err != nil {
			return s, false, err
		}
		s = s.appendEvent(ev)
		redirect = true
	}
	return s, redirect, nil
}

// beside is the built-in handlers a learner's handler is compared with:
// the place's, within the limit.
func beside(handlers []string) []string {
	return handlers[:min(len(handlers), playground.MaxHandlers-1)]
}

// eventFromForm builds the one event a form adds: op=advance&n=… or
// op=prune&n=….
func eventFromForm(q url.Values) (playground.Event, error) {
	op := q.Get(keyOp)
	n, err := strconv.ParseInt(strings.TrimSpace(q.Get(keyN)), 10, 64)
	bad := func(what string) error {
		return &playground.InputError{Field: keyN, Msg: fmt.Sprintf("%q is not %s", english.Truncate(q.Get(keyN), 40), what)}
	}
	switch op {
	case "advance":
		if err != nil || n < 1 || n > 1_000_000 {
			return playground.Event{}, bad("a number of ticks between 1 and 1000000")
		}
		return playground.Event{Kind: playground.EventAdvance, N: n}, nil
	case "prune":
		if err != nil || n < 0 || n > 1_000_000 {
			return playground.Event{}, bad("an age in ticks between 0 and 1000000")
		}
		return playground.Event{Kind: playground.EventPrune, N: n, OlderThan: true}, nil
	}
	return playground.Event{}, &playground.InputError{Field: keyOp, Msg: fmt.Sprintf("unknown operation %q; forms send advance or prune", english.Truncate(op, 40))}
}

// request is the engine's request for a state of the scenario sc: the
// learner's handler, if any, parsed (for its ledger) and run after the
// built-ins; a PostgreSQL ledger needs the server's, pg.
func (s State) request(sc *playground.Scenario, pg *playground.PostgresLedgers) (playground.Request, error) {
	req := sc.NewRequest()
	req.Handlers, req.Events, req.Seed = s.handlers, s.events, s.seed
	var err error
	if req.Ledger, err = playground.ParseLedger(s.ledger, pg); err != nil {
		return req, err
	}
	if s.custom != "" {
		mine, err := playground.ParseHandlerFor(learnerHandlerName, s.custom, req.Ledger)
		if err != nil {
			return req, err
		}
		req.Custom = []*playground.Handler{mine}
	}
	return req, nil
}

// requestFromQuery reads the JSON API's query
// (scenario=…&handlers=a,b&script=…&seed=…) with the same decoder, on top
// of the scenario's defaults.
func requestFromQuery(q url.Values, pg *playground.PostgresLedgers) (playground.Request, error) {
	name := strings.TrimSpace(q.Get(keyScenario))
	if name == "" {
		return playground.Request{}, &playground.InputError{Field: keyScenario, Msg: "missing; pass scenario=NAME"}
	}
	sc, err := playground.LookupScenario(name)
	if err != nil {
		return playground.Request{}, err
	}
	s, _, err := stateFromQuery(q, pagePlace(sc, false).home, sc.Workers)
	if err != nil {
		return playground.Request{}, err
	}
	return s.request(sc, pg)
}

// counterexampleHref opens a counterexample in the full-size playground:
// its scenario and schedule, with the learner's handler beside the
// scenario's built-ins, and a way back to the exercise (if named).
func counterexampleHref(ce *playground.Counterexample, source, exercise string) string {
	s := State{scenario: ce.Scenario, events: ce.Schedule, at: -1, exercise: exercise, ledger: ce.Ledger}
	if strings.TrimSpace(source) != "" {
		s.custom = source // as written: the page trims it when it reads it
	}
	if sc, err := playground.LookupScenario(ce.Scenario); err == nil {
		s.handlers = sc.Handlers
		if s.custom != "" {
			s.handlers = beside(sc.Handlers)
		}
	}
	return fullSizeHref(s)
}

// PlaygroundLink is the site path that replays a checker's counterexample
// in the playground with the learner's handler source, for the CLI.
func PlaygroundLink(ce *playground.Counterexample, handlerSource string) string {
	return counterexampleHref(ce, handlerSource, "")
}

// sharedPlaygroundQuery reads a playground state a page sent from
// elsewhere (a learner's failed check, for the class view) with the one
// decoder, refuses what the playground would refuse (an unknown scenario,
// a bad script, a handler that does not parse), and writes it back
// canonically: the query of the full-size playground, which fullSizeHref
// opens. The text is a query string (what follows "?" in a link).
func sharedPlaygroundQuery(text string) (string, error) {
	q, err := url.ParseQuery(strings.TrimPrefix(text, "?"))
	if err != nil {
		return "", &playground.InputError{Field: "playground", Msg: "not a query string: " + err.Error()}
	}
	sc, err := playground.LookupScenario(strings.TrimSpace(q.Get(keyScenario)))
	if err != nil {
		return "", &playground.InputError{Field: "playground", Msg: err.Error()}
	}
	place := pagePlace(sc, false)
	s, _, err := stateFromQuery(q, place.home, sc.Workers)
	if err == nil {
		_, err = s.request(sc, nil) // a shared state is replayed on SQLite
	}
	if err != nil {
		return "", &playground.InputError{Field: "playground", Msg: err.Error()}
	}
	if len(s.events) == 0 {
		return "", &playground.InputError{Field: "playground", Msg: "a counterexample's script has events; this one has none"}
	}
	s.at, s.to = -1, ""
	return place.query(s), nil
}
