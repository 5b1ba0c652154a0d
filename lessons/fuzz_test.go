package lessons

import (
	"bytes"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"idemlab/playground"
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
	f.Add([]byte("---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\nsources:\n  - {title: T, url: 'https://example.com/a'}\n  - &s {title: U, url: https://h:1/b?c#d}\n  - *s\n---\n"))
	f.Add([]byte("---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\nsources: [{title: T, url: 'https://[::1]:80/'}, {title: U, url: 'https://%zz'}, {url: javascript:alert(1)}]\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		course, err := Load(fstest.MapFS{"01-a.md": {Data: data}}, Options{RequireSources: true})
		lines := bytes.Count(normalizeNewlines(data), []byte("\n")) + 1
		if err != nil {
			checkLoadError(t, err, "01-a.md", lines)
			return
		}
		l := course.Lessons[0]
		if l.Title == "" || l.Summary == "" || l.Order < 1 || l.Minutes < 1 || len(l.Objectives) == 0 || slices.Contains(l.Objectives, "") {
			t.Errorf("loaded an incomplete lesson: %+v", l)
		}
		if len(l.Sources) == 0 && !l.IsReference() {
			t.Errorf("loaded a lesson without sources: %+v", l)
		}
		for i, s := range l.Sources {
			u, err := url.Parse(s.URL)
			if s.Title == "" || err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || strings.ContainsAny(s.URL, " \t\n\x00") {
				t.Errorf("accepted source %+v (%v)", s, err)
			}
			for _, earlier := range l.Sources[:i] {
				if earlier.URL == s.URL {
					t.Errorf("accepted %s twice", s.URL)
				}
			}
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
	f.Add([]byte("scenario: lost-ack\nhandlers: [increment]\nscript: deliver msg-1\ncaption: C.\ngoals:\n  - id: a\n    task: T.\n    check: increment applies msg-1 twice\n    solution: deliver msg-1 lose-ack; redeliver msg-1\n    done: D.\n"))
	f.Add([]byte("goals:\n  - id: A\n    check: x is\n  - 1\n  - {id: a}\n  - {id: a, hint: b}\n"))
	f.Add([]byte("goals: []\n"))
	f.Add([]byte("predict:\n  question: Q?\n  choices:\n    - {choice: A, correct: true, check: increment is ok, why: W}\n    - {choice: B, why: W, check: x}\n"))
	f.Add([]byte("predict: {question: [1], choices: 3, x: 1}\n"))
	f.Add([]byte("scenario: concurrent-duplicate\nhandlers: [check-then-insert, dedupe-tx]\nledger: postgres-rc\nscript: start msg-1 on A; start msg-1 on B; step A 2; finish A; finish B\ncaption: C.\n"))
	f.Add([]byte("ledger: sqlite\nledger: [postgres-rr]\nledgr: postgres-serializable\n"))
	f.Add([]byte("ledger: ~\n"))
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
		if spec.Ledger != "" && !slices.Contains(playground.LedgerNames()[1:], spec.Ledger) {
			t.Errorf("bad ledger accepted: %q", spec.Ledger)
		}
	})
}

// BenchmarkLoad_Embedded measures startup: load, validate and render the
// whole embedded course, with and without running every playground block
// through the engine.
func BenchmarkLoad_Embedded(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"EngineCheck", Options{}},
		{"NoEngineCheck", Options{CheckPlayground: func(*PlaygroundSpec) error { return nil }}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(Embedded(), bc.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func FuzzQuiz(f *testing.F) {
	f.Add([]byte("- q: Why?\n  a: Because.\n"))
	f.Add([]byte("- q: Why?\n  choices:\n    - {choice: A, correct: true, why: W}\n    - {choice: B, why: \"[x](02-b.md)\"}\n"))
	f.Add([]byte("- q: A [link](02-b.md)\n  choices:\n    - choice: |\n        One.\n\n        Two <b>x</b>.\n      correct: yes\n"))
	f.Add([]byte("- q: |\n    one\n\n    two\n  a: x\n"))
	f.Add([]byte("q: x\n"))
	f.Add([]byte("- [unclosed\n"))
	f.Add([]byte("- &a {q: x, a: *a}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, body []byte) {
		if bytes.Contains(body, []byte("`````")) {
			return // would close the fence this test wraps the body in
		}
		lesson := minimalLesson("A", 1, "`````quiz\n"+string(body)+"\n`````\n")
		course, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(lesson)}, "02-b.md": {Data: []byte(minimalLesson("B", 2, "B.\n"))}}, Options{})
		if err != nil {
			var loadErr *LoadError
			if !errors.As(err, &loadErr) {
				t.Fatalf("error is %T, want *LoadError: %v", err, err)
			}
			return
		}
		html := course.Lessons[0].Body[0].HTML
		if !bytes.Contains([]byte(html), []byte(`<ol class="quiz"`)) {
			t.Errorf("quiz accepted but not rendered: %s", html)
		}
		if bytes.Contains(bytes.ToLower([]byte(html)), []byte("<script")) {
			t.Errorf("raw HTML got through: %s", html)
		}
	})
}

func FuzzIncludeInfo(f *testing.F) {
	for _, info := range []string{"include=examples/a/main.go", "include=a.go lines=3-9", "include=a.go lines=3-", "include=a.go lines=4",
		"include=../x", "include=/etc/passwd", "include= lines=1-2", "lines=1-2", "include=a include=b", "include=a.go lines=9-1", "title=x"} {
		f.Add(info)
	}
	f.Fuzz(func(t *testing.T, info string) {
		req, isInclude, err := parseIncludeInfo(info)
		if !isInclude || err != nil {
			return
		}
		if !fs.ValidPath(req.Path) || req.Path == "." || req.From < 0 || (req.To != 0 && req.To < req.From) || (req.From == 0 && req.To != 0) {
			t.Errorf("parseIncludeInfo(%q) accepted %+v", info, req)
		}
	})
}
