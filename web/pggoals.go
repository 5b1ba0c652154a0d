package web

import (
	"fmt"
	"net/url"

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
func newGoalViews(v *siteView, pv *playgroundView) []goalView {
	if pv.spec == nil || !pv.place.inLesson() {
		return nil
	}
	var out []goalView
	for i, g := range pv.spec.Goals {
		gv := goalView{ID: g.ID, Number: i + 1, TaskHTML: v.siteHTML(g.TaskHTML), DoneHTML: v.siteHTML(g.DoneHTML),
			Check: g.Check.String(), Met: g.Check.Met(pv.trace, pv.scenario, pv.at)}
		if script, err := playground.ParseScript(g.Solution); err == nil { // lint ran it
			solved := pv.place.home
			solved.events = script.Events
			gv.Solution = v.path(pv.place.href(solved))
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
	Asking       bool           // no answer yet: the form is shown
	Hiding       bool           // asking at the block's own run: the verdicts wait
	Action       string         // the form's action (site path, base included)
	Fields       []hiddenField  // the state, carried through the form
	Guess        int            // 1-based, when answered
	Picked       lessons.Choice // the learner's choice, when answered
	Answer       lessons.Choice // the correct one
	Name         string         // the radio group's name
}

// checkPlaceParams refuses what the decoder cannot judge alone: an
// exercise= the course does not have, a guess the place's question does
// not have (the decoder knows only the bound shared by every block).
func checkPlaceParams(v *siteView, place pgPlace, state State) error {
	if state.exercise != "" {
		if _, spec := findExercise(v.course, state.exercise); spec == nil {
			return &playground.InputError{Field: keyExercise, Msg: fmt.Sprintf("there is no exercise %q to go back to", english.Truncate(state.exercise, 40))}
		}
	}
	if state.guess == 0 || place.kind == placePage || place.kind == placePageEmbed {
		return nil
	}
	switch {
	case place.spec == nil || place.spec.Predict == nil:
		return &playground.InputError{Field: keyGuess, Msg: "this playground asks no question to answer"}
	case state.guess > len(place.spec.Predict.Choices):
		return &playground.InputError{Field: keyGuess, Msg: fmt.Sprintf("this question has %d answers; there is no answer %d", len(place.spec.Predict.Choices), state.guess)}
	}
	return nil
}

// newPredictView reads the block's prediction against the state's guess
// (checkGuess has bounded it).
func newPredictView(v *siteView, pv *playgroundView) *predictView {
	if pv.spec == nil || pv.spec.Predict == nil || !pv.place.inLesson() {
		return nil
	}
	p := pv.spec.Predict
	view := &predictView{QuestionHTML: v.siteHTML(p.QuestionHTML), Name: pv.id + "-guess",
		Action: v.path(pv.place.path), Fields: pv.place.formFields(pv.state, keyGuess)}
	for _, c := range p.Choices {
		c.HTML, c.WhyHTML = v.siteHTML(c.HTML), v.siteHTML(c.WhyHTML)
		view.Choices = append(view.Choices, c)
		if c.Correct {
			view.Answer = c
		}
	}
	switch g := pv.state.guess; {
	case g == 0:
		view.Asking = true
		view.Hiding = pv.state.sameRun(pv.place.home)
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

func newExerciseBack(v *siteView, pv *playgroundView) *exerciseBack {
	if pv.state.exercise == "" {
		return nil
	}
	_, spec := findExercise(v.course, pv.state.exercise)
	if spec == nil {
		return nil // checkPlaceParams refused it already
	}
	href := exercisePath(spec.ID)
	if spec.IsInverse() {
		href += breakBackQuery(pv.state.events)
	} else if pv.state.custom != "" {
		href += "?handler=" + url.QueryEscape(pv.state.custom)
	}
	return &exerciseBack{Title: exerciseTitle(spec), Href: v.path(href + "#" + exerciseDOMID(spec.ID))}
}
