package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"idemlab/lessons"
	"idemlab/playground"
)

// A playground's whole state lives in its URL: every control is a link (or
// a GET form) to the next state, so the playground works without
// JavaScript, every state is a permalink and the Back button is undo.

// pgState is what a playground URL holds.
type pgState struct {
	scenario string
	handlers []string
	script   string // canonical (events joined by "; ")
	custom   string // a learner's handler source (handler=…), run as "mine" after the built-ins
	seed     int64
	at       int    // event cursor: show the state after this many events; -1 = after the last
	to       string // the worker the delivery controls name; "" = the broker's choice
}

// placeKind is where a playground is drawn.
type placeKind int

const (
	placeLesson      placeKind = iota // a block inside /lessons/{slug}
	placeLessonEmbed                  // the same inside /embed/lessons/{slug}
	placePage                         // /playground
	placePageEmbed                    // /embed/playground
)

// pgPlace is where a playground lives, which decides the URLs its controls
// produce and what "reset" means.
type pgPlace struct {
	kind  placeKind
	path  string                  // site path the controls link to
	block string                  // "pg-1" for a lesson block, "" otherwise
	spec  *lessons.PlaygroundSpec // the lesson block, if any
	home  pgState                 // reset goes here
}

func (p pgPlace) embedded() bool { return p.kind == placeLessonEmbed || p.kind == placePageEmbed }
func (p pgPlace) inLesson() bool { return p.kind == placeLesson || p.kind == placeLessonEmbed }

// lessonPlace is a lesson block's place; home is the block's spec.
func lessonPlace(slug string, spec *lessons.PlaygroundSpec, embed bool) pgPlace {
	p := pgPlace{kind: placeLesson, path: lessonPath(slug), block: spec.ID, spec: spec}
	if embed {
		p.kind, p.path = placeLessonEmbed, embedPath(slug)
	}
	p.home = pgState{scenario: spec.Scenario, handlers: spec.Handlers, script: canonicalScript(spec.Script), at: -1}
	return p
}

// pagePlace is the full-size (or embedded) playground's place; home is the
// scenario's own defaults.
func pagePlace(sc *playground.Scenario, embed bool) pgPlace {
	p := pgPlace{kind: placePage, path: "/playground"}
	if embed {
		p.kind, p.path = placePageEmbed, "/embed/playground"
	}
	p.home = pgState{scenario: sc.Name, handlers: sc.Handlers, script: sc.DefaultScript, at: -1}
	return p
}

// canonicalScript prints a script canonically, or returns it unchanged when
// it does not parse (the run will report the error).
func canonicalScript(text string) string {
	s, err := playground.ParseScript(text)
	if err != nil {
		return text
	}
	return s.String()
}

// queryEscape escapes a query value but keeps commas readable.
func queryEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "%2C", ",")
}

// query writes a state's query string in a fixed, readable order.
func (p pgPlace) query(s pgState) string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k + "=" + queryEscape(v))
	}
	if p.block != "" {
		add("pg", p.block)
	} else {
		add("scenario", s.scenario)
	}
	add("handlers", strings.Join(s.handlers, ","))
	add("script", s.script)
	if s.custom != "" {
		add("handler", s.custom)
	}
	if s.seed != 0 {
		add("seed", strconv.FormatInt(s.seed, 10))
	}
	if s.at >= 0 {
		add("at", strconv.Itoa(s.at))
	}
	if s.to != "" {
		add("to", s.to)
	}
	return b.String()
}

// href is the site path (without the base) of a state in this place. A
// lesson block's initial state is the pre-rendered lesson itself.
func (p pgPlace) href(s pgState) string {
	if p.inLesson() && s.equal(p.home) {
		return p.path + "#" + p.block
	}
	u := p.path + "?" + p.query(s)
	if p.block != "" {
		u += "#" + p.block
	}
	return u
}

// queryHref is href with the query always spelled out, even for a lesson
// block's initial state: what app.js fetches a fragment from.
func (p pgPlace) queryHref(s pgState) string {
	return p.path + "?" + p.query(s)
}

// fullSizeHref opens a state in the full-size playground.
func fullSizeHref(s pgState) string {
	return pgPlace{kind: placePage, path: "/playground"}.href(s)
}

func (s pgState) equal(o pgState) bool {
	return s.scenario == o.scenario && slices.Equal(s.handlers, o.handlers) && s.script == o.script && s.custom == o.custom &&
		s.seed == o.seed && s.at == o.at && s.to == o.to
}

// stateFromQuery reads a state on top of defaults (the place's home).
// Parameters the forms send (h=…, op=…) are folded in; the bool
// reports that the URL was not canonical, so the caller redirects.
func stateFromQuery(q url.Values, home pgState, workers []string) (pgState, bool, error) {
	s := home
	s.at, s.to = -1, ""
	redirect := false
	if _, ok := q["handlers"]; ok {
		s.handlers = nil
		for _, h := range strings.Split(q.Get("handlers"), ",") {
			if h = strings.TrimSpace(h); h != "" {
				s.handlers = append(s.handlers, h)
			}
		}
	}
	if src, ok := q["handler"]; ok { // a learner's handler, as exercises link it
		s.custom = strings.TrimSpace(src[0])
		if _, given := q["handlers"]; !given && s.custom != "" {
			// Compare it with the scenario's handlers, within the limit.
			s.handlers = home.handlers[:min(len(home.handlers), playground.MaxHandlers-1)]
		}
	}
	if hs, ok := q["h"]; ok { // checkboxes of the handler form
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
	if _, ok := q["script"]; ok {
		text := q.Get("script")
		if strings.TrimSpace(text) != "" {
			script, err := playground.ParseScript(text)
			if err != nil {
				return s, false, err
			}
			s.script = script.String()
			redirect = redirect || s.script != text
		}
	}
	if v := strings.TrimSpace(q.Get("seed")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s, false, &playground.InputError{Field: "seed", Msg: fmt.Sprintf("%q is not a whole number", truncate(v, 40))}
		}
		s.seed = n
	}
	if v := strings.TrimSpace(q.Get("at")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s, false, &playground.InputError{Field: "at", Msg: fmt.Sprintf("%q is not an event number (0 or more)", truncate(v, 40))}
		}
		s.at = n
	}
	if v := strings.TrimSpace(q.Get("to")); v != "" {
		if !slices.Contains(workers, v) {
			return s, false, &playground.InputError{Field: "to", Msg: fmt.Sprintf("unknown worker %s; workers are %s", truncate(v, 20), strings.Join(workers, ", "))}
		}
		s.to = v
	}
	if op := q.Get("op"); op != "" {
		ev, err := eventFromForm(q)
		if err != nil {
			return s, false, err
		}
		s = s.appendEvent(ev)
		redirect = true
	}
	return s, redirect, nil
}

// eventFromForm builds the one event a form adds: op=advance&n=… or
// op=prune&n=….
func eventFromForm(q url.Values) (playground.Event, error) {
	op := q.Get("op")
	n, err := strconv.ParseInt(strings.TrimSpace(q.Get("n")), 10, 64)
	bad := func(what string) error {
		return &playground.InputError{Field: "n", Msg: fmt.Sprintf("%q is not %s", truncate(q.Get("n"), 40), what)}
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
	return playground.Event{}, &playground.InputError{Field: "op", Msg: fmt.Sprintf("unknown operation %q; forms send advance or prune", truncate(op, 40))}
}

// events parses the state's script (already canonical, so it parses).
func (s pgState) events() []playground.Event {
	script, err := playground.ParseScript(s.script)
	if err != nil {
		return nil
	}
	return script.Events
}

// cursor is the number of events shown, given how many the script has.
func (s pgState) cursor(total int) int {
	if s.at < 0 || s.at > total {
		return total
	}
	return s.at
}

func joinEvents(evs []playground.Event) string {
	return (&playground.Script{Events: evs}).String()
}

// appendEvent is the next state: the events up to the cursor plus ev.
// Events after the cursor are dropped, as typing after an undo does.
func (s pgState) appendEvent(ev playground.Event) pgState {
	evs := s.events()
	evs = append(evs[:s.cursor(len(evs)):s.cursor(len(evs))], ev)
	s.script, s.at = joinEvents(evs), -1
	return s
}

// amendLast replaces the last event before the cursor.
func (s pgState) amendLast(ev playground.Event) pgState {
	evs := s.events()
	c := s.cursor(len(evs))
	if c == 0 {
		return s.appendEvent(ev)
	}
	out := append(append([]playground.Event(nil), evs[:c-1]...), ev)
	s.script, s.at = joinEvents(out), -1
	return s
}

// withAt moves the cursor; the last event is "latest" (no at in the URL).
func (s pgState) withAt(at, total int) pgState {
	if at >= total {
		at = -1
	}
	s.at = at
	return s
}
