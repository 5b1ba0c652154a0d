package playurl

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
	Scenario string
	Handlers []string
	Events   []playground.Event // the script, parsed; printed only when a URL is written
	Custom   string             // a learner's handler source (handler=…), run as "mine" after the built-ins
	Seed     int64
	At       int    // event cursor: show the state after this many events; -1 = after the last
	To       string // the worker the delivery controls name; "" = the broker's choice
	Panels   Panels
	Open     MorePanels // the control panels drawn open (panels.go)
	Guess    int        // the learner's answer to the block's prediction (1-based); 0: not asked yet; GuessSkipped
	Exercise string     // the exercise a replay came from (exercise=…), for the way back
	Ledger   string     // a PostgreSQL ledger's name (ledger=…, playground.ParseLedger); "" = SQLite
}

// Panels are the parts of a playground drawn only when asked for
// (show=rows,diagram): a closed panel costs neither rendering nor bytes.
// Without JavaScript, a panel's toggle is a link to the same state with
// the panel open (or closed); app.js fetches that state's fragment.
type Panels uint8

const (
	PanelRows    Panels = 1 << iota // each ledger's rows, and how its handler works
	PanelChart                      // each ledger's key figure after every event
	PanelDiagram                    // the sequence diagram
	PanelSteps                      // the step list
	PanelSQL                        // the step list's SQL, bound values and changed rows
)

type PanelName = NamedBit[Panels]

// PanelNames are the panels in the order a URL spells them.
var PanelNames = [...]PanelName{{PanelRows, "rows"}, {PanelChart, "chart"}, {PanelDiagram, "diagram"}, {PanelSteps, "steps"}, {PanelSQL, "sql"}}

func (ps Panels) Has(p Panels) bool { return ps&p != 0 }

// String is the canonical text of a set: its names in panelNames' order.
func (ps Panels) String() string { return panelTexts()[ps] }

// ParsePanels reads a comma-separated set of panel names.
func ParsePanels(text string) (Panels, error) {
	return parseBits(PanelNames[:], text, KeyShow, "panel", "rows, chart, diagram, steps and sql")
}

// PlaceKind is where a playground is drawn.
type PlaceKind int

const (
	PlaceLesson      PlaceKind = iota // a block inside /lessons/{slug}
	PlaceLessonEmbed                  // the same inside /embed/lessons/{slug}
	PlacePage                         // /playground
	PlacePageEmbed                    // /embed/playground
)

// Place is where a playground lives, which decides the URLs its controls
// produce and what "reset" means.
type Place struct {
	Kind  PlaceKind
	Path  string                  // site path the controls link to
	Block string                  // "pg-1" for a lesson block, "" otherwise
	Spec  *lessons.PlaygroundSpec // the lesson block, if any
	Home  State                   // reset goes here
	Links *LinkCache              // what one view's links share (links.go); nil: none
}

func (p Place) InLesson() bool { return p.Kind == PlaceLesson || p.Kind == PlaceLessonEmbed }

// LessonPlace is a lesson block's place; home is the block's spec.
func LessonPlace(slug string, spec *lessons.PlaygroundSpec, embed bool) Place {
	p := Place{Kind: PlaceLesson, Path: LessonPath(slug), Block: spec.ID, Spec: spec}
	if embed {
		p.Kind, p.Path = PlaceLessonEmbed, EmbedPath(slug)
	}
	p.Home = State{Scenario: spec.Scenario, Handlers: spec.Handlers, At: -1, Ledger: spec.Ledger} // every panel closed: one screen
	if script, err := playground.ParseScript(spec.Script); err == nil {
		p.Home.Events = script.Events // else the run reports the scenario's default, and the lesson check the error
	}
	return p
}

// PagePlace is the full-size (or embedded) playground's place; home is the
// scenario's own defaults.
func PagePlace(sc *playground.Scenario, embed bool) Place {
	p := Place{Kind: PlacePage, Path: "/playground"}
	panels := PanelRows | PanelChart | PanelDiagram | PanelSteps // room for them all
	if embed {
		p.Kind, p.Path = PlacePageEmbed, "/embed/playground"
		panels = PanelRows | PanelChart | PanelDiagram
	}
	p.Home = State{Scenario: sc.Name, Handlers: sc.Handlers, Events: sc.DefaultEvents(), At: -1, Panels: panels}
	return p
}

func (s State) Equal(o State) bool {
	return s.SameRun(o) && s.At == o.At && s.To == o.To && s.Panels == o.Panels && s.Open == o.Open && s.Guess == o.Guess && s.Exercise == o.Exercise
}

// sameRun reports that two states run the same thing (they may differ in
// the cursor, in where deliveries go next and in the panels shown).
func (s State) SameRun(o State) bool {
	return s.Scenario == o.Scenario && slices.Equal(s.Handlers, o.Handlers) && slices.Equal(s.Events, o.Events) && s.Custom == o.Custom && s.Seed == o.Seed && s.Ledger == o.Ledger
}

// cursor is the number of events shown, given how many the script has.
func (s State) Cursor(total int) int {
	if s.At < 0 || s.At > total {
		return total
	}
	return s.At
}

// appendEvent is the next state: the events up to the cursor plus ev.
// Events after the cursor are dropped, as typing after an undo does.
func (s State) AppendEvent(ev playground.Event) State {
	c := s.Cursor(len(s.Events))
	s.Events = append(s.Events[:c:c], ev)
	s.At = -1
	return s
}

// amendLast replaces the last event before the cursor. The events after
// it stay (they run again on top of the changed one) and so does the cursor.
func (s State) AmendLast(ev playground.Event) State {
	c := s.Cursor(len(s.Events))
	if c == 0 {
		return s.AppendEvent(ev)
	}
	s.Events = slices.Concat(s.Events[:c-1], []playground.Event{ev}, s.Events[c:])
	return s
}

// withAt moves the cursor; the last event is "latest" (no at in the URL).
func (s State) WithAt(at, total int) State {
	if at >= total {
		at = -1
	}
	s.At = at
	return s
}

// toggled is the state with panel p opened, or closed if it was open.
func (s State) Toggled(p Panels) State {
	s.Panels ^= p
	return s
}

// scriptText is the state's script in its canonical text.
func (s State) ScriptText() string { return (&playground.Script{Events: s.Events}).String() }

// A prediction the learner skipped: guess=skip in a URL (the form's Skip
// button, which needs no JavaScript), GuessSkipped in a State.
const (
	GuessSkip    = "skip"
	GuessSkipped = -1
)
