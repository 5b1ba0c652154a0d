package playview

import (
	"fmt"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/url"
	"sync"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/playground"
)

// goalView is one of a lesson playground's goals at the current state:
// the engine says whether it is met (playground.Goal.Met); the page only
// ticks it. A met goal carries data-goal-met, which a workshop reports.
type goalView struct {
	ID       string
	Number   int
	TaskHTML string // rendered by lessons (goldmark, raw HTML off)
	DoneHTML string
	Check    string // the predicate, in the goal language
	Met      bool
	Current  bool   // the first goal not met yet: the one shown in full
	Solution string // href of the playground at a state that meets it
}

// newGoalViews checks each of the block's goals against the run at the
// cursor. Outside a lesson block there are none.
func newGoalViews(v *site.View, pv *View) []goalView {
	if pv.spec == nil || !pv.Place.InLesson() {
		return nil
	}
	var out []goalView
	for i, g := range pv.spec.Goals {
		gv := goalView{ID: g.ID, Number: i + 1, TaskHTML: v.SiteHTML(g.TaskHTML), DoneHTML: v.SiteHTML(g.DoneHTML),
			Check: g.Check.String(), Met: g.Check.Met(pv.trace, pv.scenario, pv.at)}
		if events, ok := goalSolution(g.Solution); ok { // lint ran it
			solved := pv.Place.Home
			solved.Events = events
			gv.Solution = v.Path(pv.Place.Href(solved))
		}
		out = append(out, gv)
	}
	for i := range out {
		if !out[i].Met {
			out[i].Current = true
			break
		}
	}
	return out
}

// goalSolutions holds each goal solution's parsed script (solution text
// → []playground.Event, nil when it does not parse): a click draws every
// goal of its block, and parses only its own script (the URL's).
var goalSolutions sync.Map

// goalSolution is a goal's solution script, parsed once per text.
func goalSolution(text string) ([]playground.Event, bool) {
	if events, ok := goalSolutions.Load(text); ok {
		return events.([]playground.Event), events.([]playground.Event) != nil
	}
	var events []playground.Event
	if script, err := playground.ParseScript(text); err == nil {
		events = script.Events
	}
	goalSolutions.Store(text, events)
	return events, events != nil
}

// goalsAnnouncement is the goals' standing in words, for the live region.
func goalsAnnouncement(goals []goalView) string {
	if len(goals) == 0 {
		return ""
	}
	return fmt.Sprintf(" Goals met: %d of %d.", goalsMet(goals), len(goals))
}

// goalsMet counts the met goals, for the panel's heading.
func goalsMet(goals []goalView) int {
	n := 0
	for _, g := range goals {
		if g.Met {
			n++
		}
	}
	return n
}

// predictView is a lesson block's "predict, then run" question at the
// current state: asked (a GET form of radios, so it works without
// JavaScript) until the learner answers, then the answer with its why.
type predictView struct {
	QuestionHTML string
	Choices      []lessons.Choice
	Asking       bool            // no answer yet: the form is shown
	Hiding       bool            // asking: the verdicts wait
	Skipped      bool            // the learner skipped the question (guess=skip)
	Action       string          // the form's action (site path, base included)
	Fields       []playurl.Field // the state, carried through the form
	Guess        int             // 1-based, when answered
	Picked       lessons.Choice  // the learner's choice, when answered
	Answer       lessons.Choice  // the correct one
	Name         string          // the radio group's name
}

// checkPlaceParams refuses what the decoder cannot judge alone: an
// exercise= the course does not have, a guess the place's question does
// not have (the decoder knows only the bound shared by every block).
func checkPlaceParams(v *site.View, place playurl.Place, state playurl.State) error {
	if state.Exercise != "" {
		if _, spec := site.FindExercise(v.Course, state.Exercise); spec == nil {
			return &playground.InputError{Field: playurl.KeyExercise, Msg: fmt.Sprintf("there is no exercise %q to go back to", english.Truncate(state.Exercise, 40))}
		}
	}
	if state.Guess == 0 || place.Kind == playurl.PlacePage || place.Kind == playurl.PlacePageEmbed {
		return nil
	}
	switch {
	case place.Spec == nil || place.Spec.Predict == nil:
		return &playground.InputError{Field: playurl.KeyGuess, Msg: "this playground asks no question to answer"}
	case state.Guess > len(place.Spec.Predict.Choices):
		return &playground.InputError{Field: playurl.KeyGuess, Msg: fmt.Sprintf("this question has %d answers; there is no answer %d", len(place.Spec.Predict.Choices), state.Guess)}
	}
	return nil
}

// newPredictView reads the block's prediction against the state's guess
// (checkGuess has bounded it).
func newPredictView(v *site.View, pv *View) *predictView {
	if pv.spec == nil || pv.spec.Predict == nil || !pv.Place.InLesson() {
		return nil
	}
	p := pv.spec.Predict
	view := &predictView{QuestionHTML: v.SiteHTML(p.QuestionHTML), Name: pv.id + "-guess",
		Action: v.Path(pv.Place.Path), Fields: pv.Place.FormFields(pv.state, playurl.KeyGuess)}
	for _, c := range p.Choices {
		c.HTML, c.WhyHTML = v.SiteHTML(c.HTML), v.SiteHTML(c.WhyHTML)
		view.Choices = append(view.Choices, c)
		if c.Correct {
			view.Answer = c
		}
	}
	switch g := pv.state.Guess; {
	case g == 0:
		// Whatever the learner clicked first, the verdicts wait for an
		// answer or a skip.
		view.Asking, view.Hiding = true, true
	case g == playurl.GuessSkipped:
		view.Skipped = true
	case g <= len(p.Choices):
		view.Guess, view.Picked = g, view.Choices[g-1]
	}
	return view
}

// exerciseBack is the way from a replayed counterexample back to its
// exercise, with the learner's handler in the editor again; nil when the
// playground was not opened from an exercise.
type exerciseBack struct {
	Title string
	Href  string
}

func newExerciseBack(v *site.View, pv *View) *exerciseBack {
	if pv.state.Exercise == "" {
		return nil
	}
	_, spec := site.FindExercise(v.Course, pv.state.Exercise)
	if spec == nil {
		return nil // checkPlaceParams refused it already
	}
	href := site.ExercisePath(spec.ID)
	if spec.IsInverse() {
		href += site.BreakBackQuery(pv.state.Events)
	} else if pv.state.Custom != "" {
		href += "?handler=" + url.QueryEscape(pv.state.Custom)
	}
	return &exerciseBack{Title: site.ExerciseTitle(spec), Href: v.Path(href + "#" + site.ExerciseDOMID(spec.ID))}
}
