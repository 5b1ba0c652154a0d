package lessons

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// exampleNames lists the Go examples: lessons/examples/NAME/main.go.
func exampleNames(t *testing.T) []string {
	t.Helper()
	entries, err := fs.ReadDir(Embedded(), "examples")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no examples under lessons/examples")
	}
	return names
}

// expectedOutput returns the text of the trailing "// Output:" comment block
// of a Go file, as `go test` reads an example's: the comment markers removed,
// surrounding space trimmed. ok is false when there is no such block.
func expectedOutput(src string) (want string, ok bool, err error) {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "// Output:" })
	if i < 0 {
		return "", false, nil
	}
	var out []string
	for n, l := range lines[i+1:] {
		text, isComment := strings.CutPrefix(strings.TrimSpace(l), "//")
		if !isComment {
			return "", true, fmt.Errorf("line %d: the // Output: block must end the file, every line a // comment", i+2+n)
		}
		out = append(out, strings.TrimPrefix(text, " "))
	}
	return strings.TrimSpace(strings.Join(out, "\n")), true, nil
}

// TestExamples_OutputMatches builds every example once (one `go build` for
// all, so the linker runs in parallel and the build cache is shared), runs
// each and compares its stdout with its // Output: block, so that the code a
// lesson shows is code that compiles and prints what the lesson says.
func TestExamples_OutputMatches(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every example; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	names := exampleNames(t)
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// One `go build` per flavour, both at once: examples that start
	// goroutines are built with -race when the tests run with it (they must
	// be race-clean too), the rest without, which links much faster.
	var plain, concurrent []string
	for _, name := range names {
		src, _ := fs.ReadFile(Embedded(), path.Join("examples", name, "main.go"))
		if raceEnabled && bytes.Contains(src, []byte("go func")) {
			concurrent = append(concurrent, "./examples/"+name)
		} else {
			plain = append(plain, "./examples/"+name)
		}
	}
	builds := make(chan error, 2)
	build := func(pkgs []string, flags ...string) {
		if len(pkgs) == 0 {
			builds <- nil
			return
		}
		args := append([]string{"build", "-o", bin + string(filepath.Separator)}, flags...)
		out, err := exec.CommandContext(ctx, goTool, append(args, pkgs...)...).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("go %s: %v\n%s", strings.Join(append(args, pkgs...), " "), err, out)
		}
		builds <- err
	}
	go build(plain)
	go build(concurrent, "-race")
	for range 2 {
		if err := <-builds; err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := fs.ReadFile(Embedded(), path.Join("examples", name, "main.go"))
			if err != nil {
				t.Fatal(err)
			}
			want, ok, err := expectedOutput(string(src))
			if err != nil {
				t.Fatalf("examples/%s/main.go: %v", name, err)
			}
			if !ok {
				t.Fatalf("examples/%s/main.go has no // Output: block: every example states what it prints", name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			run := exec.CommandContext(ctx, filepath.Join(bin, name))
			run.Dir = t.TempDir()
			run.Stdout, run.Stderr = &stdout, &stderr
			if err := run.Run(); err != nil {
				t.Fatalf("examples/%s: %v\nstderr:\n%s", name, err, stderr.String())
			}
			if got := strings.TrimSpace(stdout.String()); got != want {
				t.Errorf("examples/%s prints:\n%s\n\nits // Output: block says:\n%s", name, got, want)
			}
		})
	}
}

var includeWord = regexp.MustCompile(`include=(\S+)`)

// Every example and SQL file is shown by some lesson: a file nobody includes
// is untested prose waiting to drift, or a lesson that lost its code.
func TestExamples_EveryFileIsIncluded(t *testing.T) {
	included := map[string]bool{}
	lessonFiles, _ := fs.Glob(Embedded(), "*.md")
	for _, f := range lessonFiles {
		src, err := fs.ReadFile(Embedded(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range includeWord.FindAllStringSubmatch(string(src), -1) {
			included[path.Clean(m[1])] = true
		}
	}
	for _, name := range exampleNames(t) {
		if p := path.Join("examples", name, "main.go"); !included[p] {
			t.Errorf("%s is not included by any lesson", p)
		}
	}
	sqlFiles, _ := fs.Glob(Embedded(), "sql/*.sql")
	for _, p := range sqlFiles {
		if !included[p] {
			t.Errorf("%s is not included by any lesson", p)
		}
	}
}

func TestExpectedOutput_Parses(t *testing.T) {
	cases := []struct {
		name, src, want string
		ok, bad         bool
	}{
		{"Block", "package main\n\n// Output:\n// a  b\n//\n// c\n", "a  b\n\nc", true, false},
		{"None", "package main\n", "", false, false},
		{"CodeAfterTheBlock", "// Output:\n// a\nfunc f() {}\n", "", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := expectedOutput(tc.src)
			if ok != tc.ok || (err != nil) != tc.bad || (err == nil && got != tc.want) {
				t.Errorf("expectedOutput = %q, %v, %v; want %q, %v, error %v", got, ok, err, tc.want, tc.ok, tc.bad)
			}
		})
	}
}
