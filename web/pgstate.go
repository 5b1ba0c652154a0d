package web

import (
	"slices"

	"idemlab/lessons"
	"idemlab/playground"
)

// A playground's whole state lives in its URL: every control is a link (or
// a GET form) to the next state, so the playground works without
// JavaScript, every state is a permalink and the Back button is undo.

// State is what a playground URL holds.
type State struct {
	scenario string
	handlers []string
	events   []playground.Event // the script, parsed; printed only when a URL is written
	custom   string             // a learner's handler source (handler=…), run as "mine" after the built-ins
	seed     int64
	at       int    // event cursor: show the state after this many events; -1 = after the last
	to       string // the worker the delivery controls name; "" = the broker's choice
	panels   pgPanels
	open     morePanels // the control panels drawn open (pgmore.go)
	guess    int        // the learner's answer to the block's prediction (1-based); 0: not asked yet
	exercise string     // the exercise a replay came from (exercise=…), for the way back
	ledger   string     // a PostgreSQL ledger's name (ledger=…, playground.ParseLedger); "" = SQLite
}

// pgPanels are the parts of a playground drawn only when asked for
// (show=rows,diagram): a closed panel costs neither rendering nor bytes.
// Without JavaScript, a panel's toggle is a link to the same state with
// the panel open (or closed); app.js fetches that state's fragment.
type pgPanels uint8

const (
	panelRows    pgPanels = 1 << iota // each ledger's rows, and how its handler works
	panelChart                        // each ledger's key figure after every event
	panelDiagram                      // the sequence diagram
	panelSteps                        // the step list
	panelSQL                          // the step list's SQL, bound values and changed rows
)

type panelName = namedBit[pgPanels]

// panelNames are the panels in the order a URL spells them.
var panelNames = [...]panelName{{panelRows, "rows"}, {panelChart, "chart"}, {panelDiagram, "diagram"}, {panelSteps, "steps"}, {panelSQL, "sql"}}

func (ps pgPanels) has(p pgPanels) bool { return ps&p != 0 }

// String is the canonical text of a set: its names in panelNames' order.
func (ps pgPanels) String() string { return panelTexts()[ps] }

// parsePanels reads a comma-separated set of panel names.
func parsePanels(text string) (pgPanels, error) {
	return parseBits(panelNames[:], text, keyShow, "panel", "rows, chart, diagram, steps and sql")
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
	home  State                 // reset goes here
	links *linkCache              // what one view's links share (pglinks.go); nil: none
}

func (p pgPlace) inLesson() bool { return p.kind == placeLesson || p.kind == placeLessonEmbed }

// lessonPlace is a lesson block's place; home is the block's spec.
func lessonPlace(slug string, spec *lessons.PlaygroundSpec, embed bool) pgPlace {
	p := pgPlace{kind: placeLesson, path: lessonPath(slug), block: spec.ID, spec: spec}
	if embed {
		p.kind, p.path = placeLessonEmbed, embedPath(slug)
	}
	p.home = State{scenario: spec.Scenario, handlers: spec.Handlers, at: -1, ledger: spec.Ledger} // every panel closed: one screen
	if script, err := playground.ParseScript(spec.Script); err == nil {
		p.home.events = script.Events // else the run reports the scenario's default, and the lesson check the error
	}
	return p
}

// pagePlace is the full-size (or embedded) playground's place; home is the
// scenario's own defaults.
func pagePlace(sc *playground.Scenario, embed bool) pgPlace {
	p := pgPlace{kind: placePage, path: "/playground"}
	panels := panelRows | panelChart | panelDiagram | panelSteps // room for them all
	if embed {
		p.kind, p.path = placePageEmbed, "/embed/playground"
		panels = panelRows | panelChart | panelDiagram
	}
	p.home = State{scenario: sc.Name, handlers: sc.Handlers, events: sc.DefaultEvents(), at: -1, panels: panels}
	return p
}

func (s State) equal(o State) bool {
	return s.sameRun(o) && s.at == o.at && s.to == o.to && s.panels == o.panels && s.open == o.open && s.guess == o.guess && s.exercise == o.exercise
}

// sameRun reports that two states run the same thing (they may differ in
// the cursor, in where deliveries go next and in the panels shown).
func (s State) sameRun(o State) bool {
	return s.scenario == o.scenario && slices.Equal(s.handlers, o.handlers) && slices.Equal(s.events, o.events) && s.custom == o.custom && s.seed == o.seed && s.ledger == o.ledger
}

// cursor is the number of events shown, given how many the script has.
func (s State) cursor(total int) int {
	if s.at < 0 || s.at > total {
		return total
	}
	return s.at
}

// appendEvent is the next state: the events up to the cursor plus ev.
// Events after the cursor are dropped, as typing after an undo does.
func (s State) appendEvent(ev playground.Event) State {
	c := s.cursor(len(s.events))
	s.events = append(s.events[:c:c], ev)
	s.at = -1
	return s
}

// amendLast replaces the last event before the cursor. The events after
// it stay (they run again on top of the changed one) and so does the cursor.
func (s State) amendLast(ev playground.Event) State {
	c := s.cursor(len(s.events))
	if c == 0 {
		return s.appendEvent(ev)
	}
	s.events = slices.Concat(s.events[:c-1], []playground.Event{ev}, s.events[c:])
	return s
}

// withAt moves the cursor; the last event is "latest" (no at in the URL).
func (s State) withAt(at, total int) State {
	if at >= total {
		at = -1
	}
	s.at = at
	return s
}

// toggled is the state with panel p opened, or closed if it was open.
func (s State) toggled(p pgPanels) State {
	s.panels ^= p
	return s
}

// scriptText is the state's script in its canonical text.
func (s State) scriptText() string { return (&playground.Script{Events: s.events}).String() }
