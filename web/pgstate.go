package web

import (
	"slices"

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
	events   []playground.Event // the script, parsed; printed only when a URL is written
	custom   string             // a learner's handler source (handler=…), run as "mine" after the built-ins
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
	p.home = pgState{scenario: spec.Scenario, handlers: spec.Handlers, at: -1}
	if script, err := playground.ParseScript(spec.Script); err == nil {
		p.home.events = script.Events // else the run reports the scenario's default, and the lesson check the error
	}
	return p
}

// pagePlace is the full-size (or embedded) playground's place; home is the
// scenario's own defaults.
func pagePlace(sc *playground.Scenario, embed bool) pgPlace {
	p := pgPlace{kind: placePage, path: "/playground"}
	if embed {
		p.kind, p.path = placePageEmbed, "/embed/playground"
	}
	p.home = pgState{scenario: sc.Name, handlers: sc.Handlers, events: sc.DefaultEvents(), at: -1}
	return p
}

func (s pgState) equal(o pgState) bool {
	return s.sameRun(o) && s.at == o.at && s.to == o.to
}

// sameRun reports that two states run the same thing (they may differ in
// the cursor and in where deliveries go next).
func (s pgState) sameRun(o pgState) bool {
	return s.scenario == o.scenario && slices.Equal(s.handlers, o.handlers) && slices.Equal(s.events, o.events) && s.custom == o.custom && s.seed == o.seed
}

// cursor is the number of events shown, given how many the script has.
func (s pgState) cursor(total int) int {
	if s.at < 0 || s.at > total {
		return total
	}
	return s.at
}

// appendEvent is the next state: the events up to the cursor plus ev.
// Events after the cursor are dropped, as typing after an undo does.
func (s pgState) appendEvent(ev playground.Event) pgState {
	c := s.cursor(len(s.events))
	s.events = append(s.events[:c:c], ev)
	s.at = -1
	return s
}

// amendLast replaces the last event before the cursor. The events after
// it stay (they run again on top of the changed one) and so does the cursor.
func (s pgState) amendLast(ev playground.Event) pgState {
	c := s.cursor(len(s.events))
	if c == 0 {
		return s.appendEvent(ev)
	}
	s.events = slices.Concat(s.events[:c-1], []playground.Event{ev}, s.events[c:])
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

// scriptText is the state's script in its canonical text.
func (s pgState) scriptText() string { return (&playground.Script{Events: s.events}).String() }
