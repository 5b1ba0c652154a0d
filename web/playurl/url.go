package playurl

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
	KeyScenario = "scenario" // the full-size playground's scenario
	KeyBlock    = "pg"       // a lesson block's id
	KeyHandlers = "handlers" // built-in handlers, comma-separated
	KeyScript   = "script"   // the script's canonical text
	KeyHandler  = "handler"  // a learner's handler source, run as learnerHandlerName
	KeySeed     = "seed"
	KeyAt       = "at"       // event cursor
	KeyTo       = "to"       // the worker the delivery controls name
	KeyShow     = "show"     // the panels shown, when not the place's default (pgPanels)
	KeyOpen     = "open"     // the control panels drawn open (morePanels)
	KeyPanel    = "panel"    // one control panel alone, for playground.js: never in a link
	KeyGuess    = "guess"    // the learner's answer to a lesson block's prediction, or GuessSkip
	KeyExercise = "exercise" // the exercise a replay came from: the way back
	KeyLedger   = "ledger"   // a PostgreSQL ledger (postgres-rc…); absent: SQLite

	// What forms send, folded into a state and redirected away.
	KeyChecked = "h"  // a checked handler box
	KeyOp      = "op" // advance or prune, with n
	KeyN       = "n"
	KeyWas     = "was" // the script the script form started from: a rejected edit falls back to it
)

// LearnerHandlerName names the handler a link brings as source (handler=…),
// as the exercises name it.
const LearnerHandlerName = "mine"

// fields is the encoder: a state's query fields, in a fixed, readable order.
func (p Place) Fields(s State) []Field {
	return p.appendFields(make([]Field, 0, 12), s, s.ScriptText())
}

// appendFields appends a state's fields to out, with script as the
// script's text (appendQuery writes it from the view's linkCache).
func (p Place) appendFields(out []Field, s State, script string) []Field {
	if p.Block != "" {
		out = append(out, Field{KeyBlock, p.Block})
	} else {
		out = append(out, Field{KeyScenario, s.Scenario})
	}
	out = append(out, Field{KeyHandlers, p.Links.handlersText(s.Handlers)}, Field{KeyScript, script})
	if s.Custom != "" {
		out = append(out, Field{KeyHandler, s.Custom})
	}
	if s.Exercise != "" && p.Block == "" {
		out = append(out, Field{KeyExercise, s.Exercise})
	}
	if s.Seed != 0 {
		out = append(out, Field{KeySeed, strconv.FormatInt(s.Seed, 10)})
	}
	if s.Ledger != p.Home.Ledger { // a PostgreSQL block's home names its ledger
		out = append(out, Field{KeyLedger, cmp.Or(s.Ledger, "sqlite")})
	}
	if s.At >= 0 {
		out = append(out, Field{KeyAt, strconv.Itoa(s.At)})
	}
	if s.To != "" {
		out = append(out, Field{KeyTo, s.To})
	}
	if s.Panels != p.Home.Panels {
		out = append(out, Field{KeyShow, s.Panels.String()})
	}
	if s.Open != 0 {
		out = append(out, Field{KeyOpen, s.Open.String()})
	}
	if s.Guess == GuessSkipped && p.Block != "" {
		out = append(out, Field{KeyGuess, GuessSkip})
	} else if s.Guess > 0 && p.Block != "" { // only a lesson block asks
		out = append(out, Field{KeyGuess, strconv.Itoa(s.Guess)})
	}
	return out
}

// formFields are the hidden inputs that carry a state through a GET form,
// minus the keys the form itself sets.
func (p Place) FormFields(s State, omit ...string) []Field {
	return slices.DeleteFunc(p.Fields(s), func(f Field) bool { return slices.Contains(omit, f.Name) })
}

// query writes a state's query string.
func (p Place) Query(s State) string { return string(p.AppendQuery(nil, s)) }

// appendQuery appends a state's query string to b. The script, most of
// a link's length, is written from the view's linkCache when it can be.
func (p Place) AppendQuery(b []byte, s State) []byte {
	var kept [12]Field
	for i, f := range p.appendFields(kept[:0], s, "") {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(append(b, f.Name...), '=')
		if f.Name == KeyScript {
			b = p.Links.appendScript(b, s.Events)
		} else {
			b = AppendQueryEscaped(b, f.Value)
		}
	}
	return b
}

// QueryEscape escapes a query value but keeps commas readable.
func QueryEscape(s string) string { return string(AppendQueryEscaped(nil, s)) }

// AppendQueryEscaped appends s escaped as url.QueryEscape does (a space is
// "+", every byte but letters, digits and "-_.~" is %XX), but keeping
// commas readable.
func AppendQueryEscaped(b []byte, s string) []byte {
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
func (p Place) Href(s State) string {
	if p.InLesson() && s.Equal(p.Home) {
		return p.Path + "#" + p.Block
	}
	b := p.AppendQuery(append(append(make([]byte, 0, 256), p.Path...), '?'), s)
	if p.Block != "" {
		b = append(append(b, '#'), p.Block...)
	}
	return string(b) // one allocation for the whole URL: a click draws dozens
}

// queryHref is href with the query always spelled out, even for a lesson
// block's initial state: what app.js fetches a fragment from.
func (p Place) QueryHref(s State) string {
	return string(p.AppendQuery(append(append(make([]byte, 0, 256), p.Path...), '?'), s))
}

// FullSizeHref opens a state in the full-size playground.
func FullSizeHref(s State) string {
	return Place{Kind: PlacePage, Path: "/playground"}.Href(s)
}

// StateFromQuery is the decoder: it reads a state on top of defaults (the
// place's home). Parameters the forms send (h=…, op=…) are folded in; the
// bool reports that the URL was not canonical, so the caller redirects.
func StateFromQuery(q url.Values, home State, workers []string) (State, bool, error) {
	s := home
	s.At, s.To = -1, ""
	redirect := false
	if _, ok := q[KeyHandlers]; ok {
		s.Handlers = nil
		for _, h := range strings.Split(q.Get(KeyHandlers), ",") {
			if h = strings.TrimSpace(h); h != "" {
				s.Handlers = append(s.Handlers, h)
			}
		}
	}
	if src, ok := q[KeyHandler]; ok { // a learner's handler, as exercises link it
		s.Custom = strings.TrimSpace(src[0])
		if _, given := q[KeyHandlers]; !given && s.Custom != "" {
			s.Handlers = Beside(home.Handlers)
		}
	}
	if hs, ok := q[KeyChecked]; ok { // checkboxes of the handler form
		s.Handlers = nil
		for _, h := range hs {
			if h = strings.TrimSpace(h); h != "" && !slices.Contains(s.Handlers, h) {
				s.Handlers = append(s.Handlers, h)
			}
		}
		n := len(s.Handlers)
		if s.Custom != "" {
			n++
		}
		if n < 2 || n > playground.MaxHandlers {
			return s, false, &playground.InputError{Field: "handlers",
				Msg: fmt.Sprintf("%d chosen; compare between 2 and %d handlers", n, playground.MaxHandlers)}
		}
		redirect = true
	}
	if _, ok := q[KeyScript]; ok {
		text := q.Get(KeyScript)
		if strings.TrimSpace(text) != "" {
			script, err := playground.ParseScript(text)
			if err != nil {
				return s, false, err
			}
			// Only comments: no events, which the engine refuses; a page
			// redirects first, to script= (the place's own script).
			s.Events = append([]playground.Event{}, script.Events...)
			redirect = redirect || s.ScriptText() != text
		}
	}
	if v := strings.TrimSpace(q.Get(KeySeed)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s, false, &playground.InputError{Field: "seed", Msg: fmt.Sprintf("%q is not a whole number", english.Truncate(v, 40))}
		}
		s.Seed = n
	}
	if vs, ok := q[KeyLedger]; ok {
		v := strings.TrimSpace(vs[0])
		if !slices.Contains(playground.LedgerNames(), v) {
			return s, false, &playground.InputError{Field: KeyLedger, Msg: fmt.Sprintf("unknown ledger %q; ledgers are %s", english.Truncate(v, 40), strings.Join(playground.LedgerNames(), ", "))}
		}
		s.Ledger = strings.TrimPrefix(v, "sqlite") // the default goes unspelled
		// Spelled only when it is not the place's: sqlite only for a
		// PostgreSQL block's SQLite state.
		redirect = redirect || len(vs) > 1 || s.Ledger == home.Ledger || vs[0] != cmp.Or(s.Ledger, "sqlite")
	}
	if v := strings.TrimSpace(q.Get(KeyAt)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s, false, &playground.InputError{Field: "at", Msg: fmt.Sprintf("%q is not an event number (0 or more)", english.Truncate(v, 40))}
		}
		s.At = n
	}
	if v := strings.TrimSpace(q.Get(KeyTo)); v != "" {
		if !slices.Contains(workers, v) {
			return s, false, &playground.InputError{Field: "to", Msg: fmt.Sprintf("unknown worker %s; workers are %s", english.Truncate(v, 20), strings.Join(workers, ", "))}
		}
		s.To = v
	}
	if vs, ok := q[KeyShow]; ok {
		ps, err := ParsePanels(vs[0])
		if err != nil {
			return s, false, err
		}
		s.Panels = ps
		// Spelled otherwise, or spelled though it is the default: one URL per state.
		redirect = redirect || len(vs) > 1 || vs[0] != ps.String() || ps == home.Panels
	}
	if vs, ok := q[KeyOpen]; ok {
		ps, err := ParseMorePanels(vs[0])
		if err != nil {
			return s, false, err
		}
		s.Open = ps
		redirect = redirect || len(vs) > 1 || vs[0] != ps.String() || ps == home.Open
	}
	if v := strings.TrimSpace(q.Get(KeyExercise)); v != "" {
		if len(v) > 64 { // the page checks that the course has it (checkPlaceParams)
			return s, false, &playground.InputError{Field: KeyExercise, Msg: fmt.Sprintf("%q is not an exercise id", english.Truncate(v, 40))}
		}
		s.Exercise = v
	}
	if slices.Contains(q[KeyGuess], GuessSkip) {
		// The form's Skip button: it wins over a choice ticked but not sent.
		s.Guess = GuessSkipped
	} else if v := strings.TrimSpace(q.Get(KeyGuess)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > lessons.MaxChoices {
			return s, false, &playground.InputError{Field: "guess", Msg: fmt.Sprintf("%q is not a choice: pick one of the answers (1 to %d)", english.Truncate(v, 40), lessons.MaxChoices)}
		}
		s.Guess = n
	}
	if op := q.Get(KeyOp); op != "" {
		ev, err := EventFromForm(q)
		if err != nil {
			return s, false, err
		}
		s = s.AppendEvent(ev)
		redirect = true
	}
	return s, redirect, nil
}

// Beside is the built-in handlers a learner's handler is compared with:
// the place's, within the limit.
func Beside(handlers []string) []string {
	return handlers[:min(len(handlers), playground.MaxHandlers-1)]
}

// EventFromForm builds the one event a form adds: op=advance&n=… or
// op=prune&n=….
func EventFromForm(q url.Values) (playground.Event, error) {
	op := q.Get(KeyOp)
	n, err := strconv.ParseInt(strings.TrimSpace(q.Get(KeyN)), 10, 64)
	bad := func(what string) error {
		return &playground.InputError{Field: KeyN, Msg: fmt.Sprintf("%q is not %s", english.Truncate(q.Get(KeyN), 40), what)}
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
	return playground.Event{}, &playground.InputError{Field: KeyOp, Msg: fmt.Sprintf("unknown operation %q; forms send advance or prune", english.Truncate(op, 40))}
}

// Request is the engine's request for a state of the scenario sc: the
// learner's handler, if any, parsed (for its ledger) and run after the
// built-ins; a PostgreSQL ledger needs the server's, pg.
func (s State) Request(sc *playground.Scenario, pg *playground.PostgresLedgers) (playground.Request, error) {
	req := sc.NewRequest()
	req.Handlers, req.Events, req.Seed = s.Handlers, s.Events, s.Seed
	var err error
	if req.Ledger, err = playground.ParseLedger(s.Ledger, pg); err != nil {
		return req, err
	}
	if s.Custom != "" {
		mine, err := playground.ParseHandlerFor(LearnerHandlerName, s.Custom, req.Ledger)
		if err != nil {
			return req, err
		}
		req.Custom = []*playground.Handler{mine}
	}
	return req, nil
}

// RequestFromQuery reads the JSON API's query
// (scenario=…&handlers=a,b&script=…&seed=…) with the same decoder, on top
// of the scenario's defaults.
func RequestFromQuery(q url.Values, pg *playground.PostgresLedgers) (playground.Request, error) {
	name := strings.TrimSpace(q.Get(KeyScenario))
	if name == "" {
		return playground.Request{}, &playground.InputError{Field: KeyScenario, Msg: "missing; pass scenario=NAME"}
	}
	sc, err := playground.LookupScenario(name)
	if err != nil {
		return playground.Request{}, err
	}
	s, _, err := StateFromQuery(q, PagePlace(sc, false).Home, sc.Workers)
	if err != nil {
		return playground.Request{}, err
	}
	return s.Request(sc, pg)
}

// CounterexampleHref opens a counterexample in the full-size playground:
// its scenario and schedule, with the learner's handler beside the
// scenario's built-ins, and a way back to the exercise (if named).
func CounterexampleHref(ce *playground.Counterexample, source, exercise string) string {
	s := State{Scenario: ce.Scenario, Events: ce.Schedule, At: -1, Exercise: exercise, Ledger: ce.Ledger}
	if strings.TrimSpace(source) != "" {
		s.Custom = source // as written: the page trims it when it reads it
	}
	if sc, err := playground.LookupScenario(ce.Scenario); err == nil {
		s.Handlers = sc.Handlers
		if s.Custom != "" {
			s.Handlers = Beside(sc.Handlers)
		}
	}
	return FullSizeHref(s)
}

// PlaygroundLink is the site path that replays a checker's counterexample
// in the playground with the learner's handler source, for the CLI.
func PlaygroundLink(ce *playground.Counterexample, handlerSource string) string {
	return CounterexampleHref(ce, handlerSource, "")
}

// SharedQuery reads a playground state a page sent from
// elsewhere (a learner's failed check, for the class view) with the one
// decoder, refuses what the playground would refuse (an unknown scenario,
// a bad script, a handler that does not parse), and writes it back
// canonically: the query of the full-size playground, which fullSizeHref
// opens. The text is a query string (what follows "?" in a link).
func SharedQuery(text string) (string, error) {
	q, err := url.ParseQuery(strings.TrimPrefix(text, "?"))
	if err != nil {
		return "", &playground.InputError{Field: "playground", Msg: "not a query string: " + err.Error()}
	}
	sc, err := playground.LookupScenario(strings.TrimSpace(q.Get(KeyScenario)))
	if err != nil {
		return "", &playground.InputError{Field: "playground", Msg: err.Error()}
	}
	place := PagePlace(sc, false)
	s, _, err := StateFromQuery(q, place.Home, sc.Workers)
	if err == nil {
		_, err = s.Request(sc, nil) // a shared state is replayed on SQLite
	}
	if err != nil {
		return "", &playground.InputError{Field: "playground", Msg: err.Error()}
	}
	if len(s.Events) == 0 {
		return "", &playground.InputError{Field: "playground", Msg: "a counterexample's script has events; this one has none"}
	}
	s.At, s.To = -1, ""
	return place.Query(s), nil
}

// SharedHref opens in the full-size playground a state SharedQuery wrote
// (a learner's failed check, kept by the workshop): its site path.
func SharedHref(query string) string {
	return "/playground?" + strings.TrimPrefix(query, "?")
}

// ScenarioHref is the site path of the full-size playground of a scenario
// at its start, as the scenario picker links it: the scenario alone, which
// the page fills with the scenario's defaults.
func ScenarioHref(name string) string {
	return "/playground?" + KeyScenario + "=" + QueryEscape(name)
}

// EmbedHref is the embed view of a lesson or playground address given to
// oEmbed: embedPath with the address's query, re-encoded but not read (the
// embed page reads it, and redirects a non-canonical one to its canonical
// URL), and the lesson block's fragment.
func EmbedHref(embedPath string, q url.Values, fragment string) string {
	out := embedPath
	if len(q) > 0 {
		out += "?" + q.Encode()
	}
	if fragment != "" {
		out += "#" + url.PathEscape(fragment)
	}
	return out
}
