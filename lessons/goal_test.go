package lessons

import (
	"context"
	"testing"

	"idemlab/playground"
)

// Every numbered lesson sets its learner a task at a playground (its
// "Try this" became goals), and every goal is reachable: its solution,
// run by the engine, meets it, and the block's own script does not.
func TestCourse_EveryLessonHasReachableGoals(t *testing.T) {
	course, err := Load(Embedded(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range course.Lessons {
		if l.IsReference() {
			continue
		}
		goals := 0
		for _, spec := range l.Playgrounds {
			sc, err := playground.LookupScenario(spec.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range spec.Goals {
				goals++
				for _, tc := range []struct {
					script string
					want   bool
				}{{spec.Script, false}, {g.Solution, true}} {
					tr, err := playground.Run(context.Background(), playground.Request{Scenario: spec.Scenario, Handlers: spec.Handlers, Script: tc.script})
					if err != nil {
						t.Fatalf("%s goal %s: %v", l.Slug, g.ID, err)
					}
					if got := g.Check.Met(tr, sc, -1); got != tc.want {
						t.Errorf("%s goal %s: after %q met = %v, want %v", l.Slug, g.ID, tc.script, got, tc.want)
					}
				}
				if g.TaskHTML == "" {
					t.Errorf("%s goal %s: no task", l.Slug, g.ID)
				}
			}
		}
		if goals == 0 {
			t.Errorf("lesson %s sets no goal", l.Slug)
		}
	}
}
