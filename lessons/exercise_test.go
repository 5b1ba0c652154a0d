package lessons

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"gopkg.in/yaml.v3"

	"idemlab/playground"
)

// TestEmbedded_ExercisesHoldAndFail is the promise the course makes: every
// exercise's solution holds in all schedules and its starting script fails
// (Options.CheckExercises runs playground.Check on both).
func TestEmbedded_ExercisesHoldAndFail(t *testing.T) {
	course, err := Load(Embedded(), Options{CheckExercises: true})
	if err != nil {
		t.Fatalf("Load(Embedded(), CheckExercises):\n%v", err)
	}
	want := []struct{ id, lesson string }{
		{"dedupe-credit", "the-dedupe-table"},
		{"conditional-ship", "conditional-writes"},
		{"race-check-then-insert", "check-then-insert-race"},
		{"reorder-mark", "ordering-around-a-crash"},
		{"dedupe-retention", "pruning-the-dedupe-table"},
		{"break-message-id", "producer-duplicates-and-business-keys"},
		{"break-shipping", "testing-a-consumer"},
	}
	all := course.Exercises()
	if len(all) != len(want) {
		t.Fatalf("got %d exercises, want %d", len(all), len(want))
	}
	for i, w := range want {
		e := all[i]
		if e.ID != w.id || e.Lesson != w.lesson {
			t.Errorf("exercise %d is %s in %s, want %s in %s", i+1, e.ID, e.Lesson, w.id, w.lesson)
		}
		if course.Exercise(e.ID) != e {
			t.Errorf("Exercise(%q) does not find it", e.ID)
		}
		if e.Title == "" || len(e.Hints) == 0 || e.Line < 1 {
			t.Errorf("exercise %s incomplete: %+v", e.ID, e)
		}
		l := course.Lesson(e.Lesson)
		if l == nil || !slices.Contains(l.Exercises, e) {
			t.Fatalf("lesson %q does not list exercise %s", e.Lesson, e.ID)
		}
		// The block sits in the body right after the "Exercise" section's lead-in.
		i := slices.IndexFunc(l.Body, func(b Block) bool { return b.Exercise == e })
		if i < 1 || !strings.Contains(l.Body[i-1].HTML, `<h2 id="exercise">Exercise`) {
			t.Errorf("exercise %s: want a block after an Exercise heading, at body index %d", e.ID, i)
		}
	}
	if course.Exercise("no-such-exercise") != nil {
		t.Error("Exercise(unknown) is not nil")
	}
}

func TestCourse_ExerciseOnAHandBuiltCourse(t *testing.T) {
	specA := &ExerciseSpec{Lesson: "one"}
	specA.Exercise = mustExercise(t, "ex-a")
	specB := &ExerciseSpec{Lesson: "two"}
	specB.Exercise = mustExercise(t, "ex-b")
	course := &Course{Lessons: []*Lesson{{Slug: "one", Exercises: []*ExerciseSpec{specA}}, {Slug: "two", Exercises: []*ExerciseSpec{specB}}}}
	if course.Exercise("ex-b") != specB || course.Exercise("ex-c") != nil {
		t.Error("Exercise on a Course built by hand")
	}
	if got := course.Exercises(); len(got) != 2 || got[0] != specA || got[1] != specB {
		t.Errorf("Exercises() = %v", got)
	}
}

func mustExercise(t *testing.T, id string) *playground.Exercise {
	t.Helper()
	spec, err := ParseExerciseSpec([]byte(strings.ReplaceAll(minimalExercise, "ex-a", id)), "a.md", 1)
	if err != nil {
		t.Fatal(err)
	}
	return spec.Exercise
}

// minimalExercise is a valid block body; its start fails and its solution
// holds under these bounds.
const minimalExercise = `id: ex-a
title: T
goal: Credit once.
scenarios: [lost-ack]
invariants: [exactly-once]
bounds:
  max_events: 4
  lost_acks: 1
start: |
  @on credit
  UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
solution: |
  @on credit
  BEGIN;
  INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;
  @stop-if-no-rows
  UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
  COMMIT;
hints:
  - Remember the id.
`

func TestParseExerciseSpec_LinesAndFields(t *testing.T) {
	const fence = 20
	spec, err := ParseExerciseSpec([]byte(minimalExercise), "a.md", fence)
	if err != nil {
		t.Fatal(err)
	}
	if spec.ID != "ex-a" || spec.Bounds.MaxEvents != 4 || spec.Bounds.LostAcks != 1 || len(spec.Hints) != 1 || !strings.Contains(spec.Solution, "COMMIT;") {
		t.Errorf("decoded %+v", spec.Exercise)
	}
	for field, want := range map[string]int{"id": fence + 1, "bounds.lost_acks": fence + 8, "bounds.crashes": fence + 6, "start": fence + 9, "hints": fence + 19, "nothing": fence} {
		if got := spec.FieldLine(field); got != want {
			t.Errorf("FieldLine(%q) = %d, want %d", field, got, want)
		}
	}
	if got := spec.scriptLine("solution", 3); got != fence+15 {
		t.Errorf("line 3 of the solution is file line %d, want %d", got, fence+15)
	}
}

func TestLoad_ExerciseBlockInTheBody(t *testing.T) {
	lesson := "---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\n---\n\nBefore.\n\n```exercise\n" + minimalExercise + "```\n\nAfter.\n"
	course, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(lesson)}}, Options{DisplayRoot: "lessons"})
	if err != nil {
		t.Fatal(err)
	}
	l := course.Lessons[0]
	if len(l.Body) != 3 || l.Body[1].Exercise == nil || l.Body[1].Exercise != l.Exercises[0] {
		t.Fatalf("body %+v", l.Body)
	}
	e := l.Body[1].Exercise
	if e.Lesson != "a" || e.File != "lessons/01-a.md" || e.Line != 11 || course.Exercise("ex-a") != e {
		t.Errorf("spec %+v", e)
	}
}

func FuzzExerciseBlock(f *testing.F) {
	f.Add([]byte(minimalExercise))
	files, _ := filepath.Glob("[0-9][0-9]-*.md")
	fixtures, _ := filepath.Glob(filepath.Join("testdata", "invalid", "exercise-*", "*.md"))
	inverse, _ := filepath.Glob(filepath.Join("..", "playground", "testdata", "inverse", "*.yaml"))
	for _, name := range inverse { // the inverse exercises' own fields: break, break_handler, a script as start
		data, _ := os.ReadFile(name)
		f.Add(data)
	}
	for _, name := range append(files, fixtures...) {
		data, _ := os.ReadFile(name)
		if _, block, ok := bytes.Cut(data, []byte("```exercise\n")); ok {
			block, _, _ = bytes.Cut(block, []byte("```"))
			f.Add(block)
		}
	}
	f.Add([]byte("id: &a [*a]\n"))
	f.Add([]byte("bounds: {workers: 9, advance: [1, x]}\n"))
	f.Add([]byte("start: 12\nsolution: |\n  @on\n"))
	f.Add([]byte("- 1\n"))
	f.Add([]byte(""))
	const fenceLine = 10
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, err := ParseExerciseSpec(body, "a.md", fenceLine)
		if err != nil {
			checkLoadError(t, err, "a.md", fenceLine+bytes.Count(normalizeNewlines(body), []byte("\n"))+1)
			if spec != nil {
				t.Error("a spec returned with an error")
			}
			return
		}
		if err := spec.Validate(); err != nil {
			t.Errorf("accepted an exercise Validate refuses: %v", err)
		}
		if spec.Title == "" || spec.File != "a.md" || spec.Line != fenceLine {
			t.Errorf("incomplete spec accepted: %+v", spec)
		}
	})
}

// TestEmbedded_ExerciseFixturesMatchTheLessons: playground's test copies of
// the exercises (playground/testdata/exercises, which its mutation suite
// and benchmarks check) have the lessons' scenarios, invariants, bounds
// and solution, so what those tests prove is what a learner is checked by.
func TestEmbedded_ExerciseFixturesMatchTheLessons(t *testing.T) {
	course, err := Load(Embedded(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range course.Exercises() {
		dir := "exercises"
		if e.IsInverse() {
			dir = "inverse"
		}
		b, err := os.ReadFile(filepath.Join("..", "playground", "testdata", dir, e.ID+".yaml"))
		if err != nil {
			t.Fatalf("exercise %s has no fixture: %v", e.ID, err)
		}
		fx := &playground.Exercise{}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(fx); err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
		if !reflect.DeepEqual(fx.Scenarios, e.Scenarios) || !reflect.DeepEqual(fx.Invariants, e.Invariants) ||
			!reflect.DeepEqual(fx.Bounds, e.Bounds) || !reflect.DeepEqual(fx.Overlap, e.Overlap) || !reflect.DeepEqual(fx.Storage, e.Storage) ||
			strings.TrimSpace(fx.Solution) != strings.TrimSpace(e.Solution) ||
			fx.Break != e.Break || strings.TrimSpace(fx.BreakHandler) != strings.TrimSpace(e.BreakHandler) || strings.TrimSpace(fx.Start) != strings.TrimSpace(e.Start) && e.IsInverse() {
			t.Errorf("exercise %s: the fixture differs from the lesson:\nfixture %+v %+v %+v %v\nlesson  %+v %+v %+v %v", e.ID,
				fx.Bounds, fx.Overlap, fx.Storage, fx.Scenarios, e.Bounds, e.Overlap, e.Storage, e.Scenarios)
		}
	}
}
