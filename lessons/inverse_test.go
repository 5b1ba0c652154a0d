package lessons

import (
	"context"
	"errors"
	"strings"
	"testing"
)

const minimalInverse = `id: inv-a
title: Break it
goal: Break dedupe by message id.
scenarios: [producer-retry]
invariants: [exactly-once]
break: dedupe-tx
bounds:
  max_events: 4
start: |
  deliver msg-1
hints:
  - Two ids.
`

func TestParseExerciseSpec_Inverse(t *testing.T) {
	spec, err := ParseExerciseSpec([]byte(minimalInverse), "a.md", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.IsInverse() || spec.Break != "dedupe-tx" || strings.TrimSpace(spec.Start) != "deliver msg-1" || spec.Solution != "" {
		t.Errorf("decoded %+v", spec.Exercise)
	}
}

// TestParseExerciseSpec_InverseProblems: each mistake in an inverse
// block's own fields is reported at the file line to blame.
func TestParseExerciseSpec_InverseProblems(t *testing.T) {
	const fence = 10 // the YAML's line n is file line fence+n
	withHandler := strings.Replace(minimalInverse, "break: dedupe-tx\n",
		"break_handler: |\n  @on credit\n  BEGIN;\n  UPDATE accounts SET balance = balance + :amout WHERE id = :account_id;\n  COMMIT;\n", 1)
	cases := []struct {
		name, body, want string
	}{
		{"BadBreakHandlerLine", withHandler, "a.md:19: exercise inv-a: break_handler: unknown parameter :amout"},
		{"BadStartEvent", strings.Replace(minimalInverse, "  deliver msg-1\n", "  deliver msg-1\n  deliver msg-2 lose-akc\n", 1),
			"a.md:21: exercise inv-a: start: event 2: unexpected \"lose-akc\" after deliver msg-2"},
		{"UnknownBuiltin", strings.Replace(minimalInverse, "break: dedupe-tx", "break: dedupe-txx", 1),
			"a.md:16: exercise inv-a: break: unknown handler \"dedupe-txx\""},
		{"WrittenSolution", minimalInverse + "solution: deliver msg-1; deliver msg-2\n",
			"a.md:23: exercise inv-a: solution: an inverse exercise has no written solution"},
		{"Interleave", strings.Replace(minimalInverse, "  max_events: 4\n", "  max_events: 4\n  workers: 2\n  interleave: true\n", 1),
			"a.md:20: exercise inv-a: bounds.interleave: an inverse exercise's scripts deliver whole"},
		{"TwoScenarios", strings.Replace(minimalInverse, "[producer-retry]", "[producer-retry, lost-ack]", 1),
			"a.md:14: exercise inv-a: scenarios: 2 scenarios; an inverse exercise has one"},
		{"MissingTitle", strings.Replace(minimalInverse, "title: Break it\n", "", 1), "a.md:10: exercise: missing \"title\""},
		{"BreakTypo", strings.Replace(minimalInverse, "break: dedupe-tx", "brake: dedupe-tx", 1),
			"a.md:16: exercise: unknown key \"brake\": did you mean \"break\"?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseExerciseSpec([]byte(c.body), "a.md", fence)
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want a LoadError", err)
			}
			if got := le.Error(); !strings.Contains(got, c.want) {
				t.Errorf("got\n%s\nwant it to contain\n%s", got, c.want)
			}
		})
	}
}

// TestCheckInverse_Problems: lint refuses an inverse exercise whose
// handler cannot be broken within the bounds, or whose starting script
// breaks it already.
func TestCheckInverse_Problems(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"NothingToBreak", strings.Replace(minimalInverse, "break: dedupe-tx", "break: dedupe-key", 1),
			"a.md:17: exercise inv-a: the handler holds in every schedule within the bounds"},
		{"StartBreaksIt", strings.Replace(minimalInverse, "  deliver msg-1\n", "  deliver msg-1\n  deliver msg-2\n", 1),
			"a.md:19: exercise inv-a: the starting script already breaks the handler (payment pay-7 credited 2 times"},
		{"StartCannotHappen", strings.Replace(minimalInverse, "  deliver msg-1\n", "  deliver msg-1\n  redeliver msg-1\n", 1),
			"a.md:21: exercise inv-a: start: event 2 (redeliver msg-1) could not happen"},
		{"Fine", minimalInverse, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := ParseExerciseSpec([]byte(c.body), "a.md", 10)
			if err != nil {
				t.Fatal(err)
			}
			p := checkInverse(context.Background(), spec)
			switch {
			case c.want == "" && p != nil:
				t.Errorf("a problem: %v", p)
			case c.want != "" && (p == nil || !strings.Contains(p.Error(), c.want)):
				t.Errorf("got %v, want %q", p, c.want)
			}
		})
	}
}

// TestEmbedded_InverseExercises: the course has at least two inverse
// exercises, in the lessons on producer duplicates and on testing a
// consumer, one breaking a built-in handler and one a handler written in
// its block.
func TestEmbedded_InverseExercises(t *testing.T) {
	course, err := Load(Embedded(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	byLesson := map[string][]*ExerciseSpec{}
	builtin, written := 0, 0
	for _, e := range course.Exercises() {
		if !e.IsInverse() {
			continue
		}
		byLesson[e.Lesson] = append(byLesson[e.Lesson], e)
		if e.Break != "" {
			builtin++
		} else {
			written++
		}
	}
	if len(byLesson["producer-duplicates-and-business-keys"])+len(byLesson["testing-a-consumer"]) < 2 || builtin == 0 || written == 0 {
		t.Errorf("inverse exercises by lesson %v: %d break a built-in handler, %d one written in the block", byLesson, builtin, written)
	}
}
