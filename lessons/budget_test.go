package lessons

import (
	"errors"
	"strings"
	"testing"
)

// A playground block over the server's budget for one run fails lint,
// naming the limit; every built-in block fits (the built-in course loads,
// which lessons_test.go checks, with the same CheckWithEngine).
func TestCheckWithEngine_BlockOverTheBudgetIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("deliver msg-1; deliver msg-2; deliver msg-3")
	for range 90 {
		b.WriteString("; publish msg-1; replay")
	}
	err := CheckWithEngine(&PlaygroundSpec{Scenario: "topic-replay", Handlers: []string{"increment", "dedupe-tx"}, Script: b.String()})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "script" || !strings.Contains(err.Error(), "server would refuse this block") || !strings.Contains(err.Error(), "1000 deliveries") {
		t.Errorf("err = %v; want a script error naming the deliveries limit", err)
	}
}

func TestBuiltinCourse_EveryBlockFitsTheBudget(t *testing.T) {
	course, err := Load(Embedded(), Options{DisplayRoot: "lessons"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range course.Lessons {
		for _, spec := range l.Playgrounds {
			if err := CheckWithEngine(spec); err != nil {
				t.Errorf("%s %s: %v", l.Slug, spec.ID, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no playground blocks in the built-in course")
	}
}
