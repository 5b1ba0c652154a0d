package lessons

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

// checkLoadError asserts the contract of a failed Load: a *LoadError whose
// problems name the file and a line that exists (0 for whole-file problems).
func checkLoadError(t *testing.T, err error, file string, maxLine int) {
	t.Helper()
	var loadErr *LoadError
	if !errors.As(err, &loadErr) {
		t.Fatalf("error is %T, want *LoadError: %v", err, err)
	}
	if len(loadErr.Problems) == 0 {
		t.Fatal("*LoadError with no problems")
	}
	for _, p := range loadErr.Problems {
		if p.File != file || p.Line < 0 || p.Line > maxLine || p.Msg == "" {
			t.Errorf("bad problem %+v (file %q, %d lines)", p, file, maxLine)
		}
	}
}

func FuzzFrontMatter(f *testing.F) {
	for _, name := range []string{"01-why-messages-arrive-twice.md", "02-what-idempotent-means.md"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	invalid, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*", "*.md"))
	for _, name := range invalid {
		data, _ := os.ReadFile(name)
		f.Add(data)
	}
	f.Add([]byte("---\ntitle: &a [*a]\n---\n"))
	f.Add([]byte("\xef\xbb\xbf---\r\ntitle: A\r\n---\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		course, err := Load(fstest.MapFS{"01-a.md": {Data: data}}, Options{})
		lines := bytes.Count(normalizeNewlines(data), []byte("\n")) + 1
		if err != nil {
			checkLoadError(t, err, "01-a.md", lines)
			return
		}
		l := course.Lessons[0]
		if l.Title == "" || l.Summary == "" || l.Order < 1 || l.Minutes < 1 || len(l.Objectives) == 0 || slices.Contains(l.Objectives, "") {
			t.Errorf("loaded an incomplete lesson: %+v", l)
		}
	})
}

func FuzzPlaygroundSpec(f *testing.F) {
	f.Add([]byte("scenario: lost-ack\nhandlers: [increment, dedupe-tx]\nscript: deliver msg-1 lose-ack; redeliver msg-1\ncaption: C.\nexpect: {increment: duplicate-effect, dedupe-tx: ok}\n"))
	f.Add([]byte("scenario: a\nhandlers:\n  - b\nscript: |\n  deliver m\ncaption: c\n"))
	f.Add([]byte("scenario: [\n"))
	f.Add([]byte("handlers: &h [x, *h]\n"))
	f.Add([]byte("expect: {a: b}\nexpect: 1\n"))
	f.Add([]byte("- 1\n- 2\n"))
	f.Add([]byte(""))
	const fenceLine = 10
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, err := ParsePlaygroundSpec(body, "a.md", fenceLine)
		if err != nil {
			checkLoadError(t, err, "a.md", fenceLine+bytes.Count(normalizeNewlines(body), []byte("\n"))+1)
			if spec != nil {
				t.Error("a spec returned with an error")
			}
			return
		}
		if spec.Scenario == "" || spec.Script == "" || spec.Caption == "" || len(spec.Handlers) == 0 || spec.File != "a.md" || spec.Line != fenceLine {
			t.Errorf("incomplete spec accepted: %+v", spec)
		}
		for h, v := range spec.Expect {
			if !slices.Contains(spec.Handlers, h) || !slices.Contains(Verdicts, v) {
				t.Errorf("bad expect %s: %s accepted", h, v)
			}
		}
		for i, h := range spec.Handlers {
			if h == "" || slices.Contains(spec.Handlers[:i], h) {
				t.Errorf("bad handlers accepted: %q", spec.Handlers)
			}
		}
	})
}

// BenchmarkLoad_Embedded measures startup: load, validate and render the
// whole embedded course.
func BenchmarkLoad_Embedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(Embedded(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
