package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"idemlab/lessons"
	"idemlab/playground"
)

// embeddedExercises loads the built-in course's exercises.
func embeddedExercises(t *testing.T) []*lessons.ExerciseSpec {
	t.Helper()
	course, err := builtinCourse()
	if err != nil {
		t.Fatal(err)
	}
	var handlerExercises []*lessons.ExerciseSpec
	for _, e := range course.Exercises() {
		if !e.IsInverse() { // those ask for a script, in the browser
			handlerExercises = append(handlerExercises, e)
		}
	}
	if len(handlerExercises) == 0 {
		t.Fatal("the built-in course has no exercises")
	}
	return handlerExercises
}

func writeHandler(t *testing.T, source string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "handler.sql")
	if err := os.WriteFile(path, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRun_CheckSolutionPasses(t *testing.T) {
	for _, e := range embeddedExercises(t) {
		t.Run(e.ID, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"check", e.ID, writeHandler(t, e.Solution)}, &stdout, &stderr)
			if err != nil {
				t.Fatalf("run: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			if out := stdout.String(); !strings.HasPrefix(out, "✓ holds in all ") || !strings.Contains(out, "distinct states explored") {
				t.Errorf("output:\n%s", out)
			}
		})
	}
}

func TestRun_CheckStartFailsWithCounterexample(t *testing.T) {
	for _, e := range embeddedExercises(t) {
		t.Run(e.ID, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			file := writeHandler(t, e.Start)
			err := run(context.Background(), []string{"check", e.ID, file}, &stdout, &stderr)
			if err == nil || exitStatus(err) != 1 {
				t.Fatalf("err = %v (exit %d), want a failed check (exit 1)", err, exitStatus(err))
			}
			out := stdout.String()
			for _, want := range []string{"✗ ", "What happened:\n  ", " → ", "The schedule (", "/playground?", "scenario="} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if want := "idemlab: check: " + file + " does not hold for exercise " + e.ID + "\n"; stderr.String() != want {
				t.Errorf("stderr = %q, want %q", stderr.String(), want)
			}
		})
	}
}

func TestRun_CheckJSONIsTheResult(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "-json", "dedupe-credit", writeHandler(t, "@on credit\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n")}, &stdout, &stderr)
	if exitStatus(err) != 1 {
		t.Fatalf("err = %v, want exit 1", err)
	}
	var res playground.CheckResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	if res.Passed || res.Exercise != "dedupe-credit" || res.Counterexample == nil || res.Counterexample.Events > 4 || !strings.Contains(res.Counterexample.Script, "redeliver msg-1") {
		t.Errorf("result = %+v", res)
	}
}

func TestRun_CheckReadsStdinAndNamesTheLine(t *testing.T) {
	saved := checkStdin
	defer func() { checkStdin = saved }()
	checkStdin = strings.NewReader("@on credit\nUPDATE accounts SET balance = :amout;\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "dedupe-credit", "-"}, &stdout, &stderr)
	if exitStatus(err) != 1 {
		t.Fatalf("err = %v, want exit 1", err)
	}
	if out := stdout.String(); !strings.HasPrefix(out, "✗ stdin:2: unknown parameter :amout") {
		t.Errorf("output = %q", out)
	}
}

func TestRun_CheckLessonsFolder(t *testing.T) {
	e := embeddedExercises(t)[0]
	spec, err := os.ReadFile(filepath.Join("lessons", "04-the-dedupe-table.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(spec), "```exercise\n")
	block, _, _ = strings.Cut(block, "```")
	dir := t.TempDir()
	lesson := "---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\n---\n\n```exercise\n" + block + "```\n"
	if err := os.WriteFile(filepath.Join(dir, "01-a.md"), []byte(lesson), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	// Flags after the arguments work too.
	if err := run(context.Background(), []string{"check", e.ID, writeHandler(t, e.Solution), "-lessons", dir}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
}

func TestRun_CheckBadInputExits2(t *testing.T) {
	solution := writeHandler(t, embeddedExercises(t)[0].Solution)
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "01-a.md"), []byte("no front matter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"UnknownExerciseListsTheIDs", []string{"check", "dedupe-credits", solution},
			`check: unknown exercise "dedupe-credits"; exercises are dedupe-credit, conditional-ship, race-check-then-insert, reorder-mark, dedupe-retention`},
		{"UnreadableFile", []string{"check", "dedupe-credit", filepath.Join(t.TempDir(), "missing.sql")},
			"missing.sql: no such file or directory"},
		{"MissingFile", []string{"check", "dedupe-credit"}, "check: want EXERCISE FILE (FILE - reads stdin), got 1 argument(s)"},
		{"UnknownFlag", []string{"check", "-fast", "dedupe-credit", solution}, "flag provided but not defined: -fast"},
		{"CourseThatDoesNotLoad", []string{"check", "-lessons", broken, "dedupe-credit", solution}, "does not load ("},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || exitStatus(err) != 2 {
				t.Fatalf("err = %v (exit %d), want exit 2", err, exitStatus(err))
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}
