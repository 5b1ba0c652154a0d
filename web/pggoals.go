package web

import (
	"fmt"

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
		gv := goalView{ID: g.ID, Number: i + 1, TaskHTML: g.TaskHTML, DoneHTML: g.DoneHTML,
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
