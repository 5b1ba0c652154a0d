package lessons

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// describeLesson prints everything Load produced for a lesson, in a form that
// diffs well: metadata as comments, then each block.
func describeLesson(l *Lesson) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- slug=%q title=%q order=%d minutes=%d path=%q -->\n", l.Slug, l.Title, l.Order, l.Minutes, l.Path)
	fmt.Fprintf(&b, "<!-- summary=%q -->\n", l.Summary)
	for _, o := range l.Objectives {
		fmt.Fprintf(&b, "<!-- objective=%q -->\n", o)
	}
	for _, s := range l.Sources {
		fmt.Fprintf(&b, "<!-- source=%q url=%q -->\n", s.Title, s.URL)
	}
	for _, h := range l.TOC {
		fmt.Fprintf(&b, "<!-- toc h%d #%s %q -->\n", h.Level, h.ID, h.Text)
	}
	for i, block := range l.Body {
		switch {
		case block.Playground != nil:
			p := block.Playground
			var expect []string
			for h, v := range p.Expect {
				expect = append(expect, h+"="+v)
			}
			slices.Sort(expect)
			fmt.Fprintf(&b, "<!-- block %d: playground id=%s scenario=%q handlers=%q script=%q caption=%q expect=%q at %s:%d -->\n",
				i+1, p.ID, p.Scenario, p.Handlers, p.Script, p.Caption, expect, p.File, p.Line)
		case block.Exercise != nil:
			e := block.Exercise
			fmt.Fprintf(&b, "<!-- block %d: exercise id=%q title=%q lesson=%q scenarios=%q invariants=%q hints=%d at %s:%d -->\n",
				i+1, e.ID, e.Title, e.Lesson, e.Scenarios, e.Invariants, len(e.Hints), e.File, e.Line)
		default:
			fmt.Fprintf(&b, "<!-- block %d: html -->\n%s", i+1, block.HTML)
		}
	}
	return b.String()
}

func TestLoad_FixtureMatchesGolden(t *testing.T) {
	course, err := Load(os.DirFS("testdata/render"), Options{})
	if err != nil {
		t.Fatalf("Load(testdata/render):\n%v", err)
	}
	for _, l := range course.Lessons {
		golden := filepath.Join("testdata", "render", l.Slug+".golden.html")
		got := describeLesson(l)
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
		}
		if got != string(want) {
			t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", l.Slug, golden, lineDiff(string(want), got))
		}
	}
}

// lineDiff lists the first lines that differ, enough to see what changed.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := 0; i < max(len(w), len(g)) && len(out) < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			out = append(out, fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, wl, gl))
		}
	}
	return strings.Join(out, "\n")
}

func TestRender_Safety(t *testing.T) {
	course, err := Load(os.DirFS("testdata/render"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	for _, b := range course.Lesson("fixture").Body {
		html.WriteString(b.HTML)
	}
	for _, banned := range []string{"<script", "<b>", `<div class="raw">`, "javascript:", "<em>\n"} {
		if strings.Contains(html.String(), banned) {
			t.Errorf("rendered HTML contains %q: raw HTML must stay off", banned)
		}
	}
	for _, want := range []string{
		`<aside class="callout callout-note" role="note">`,
		`<aside class="callout callout-tip" role="note">`,
		`<aside class="callout callout-warning" role="note">`,
		`<blockquote>`, // the ordinary quote stays a quote
		`href="/lessons/other#part-two"`,
		`<table>`,
		`<del>strikethrough</del>`,
		`<pre tabindex="0" class="chroma">`,
		`<a class="heading-anchor" href="#third-level"`,
	} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("rendered HTML lacks %q", want)
		}
	}
}

func TestCourse_Neighbours(t *testing.T) {
	course, err := Load(fstest.MapFS{
		"01-a.md": {Data: []byte(minimalLesson("A", 1, ""))},
		"b.md":    {Data: []byte(minimalLesson("B", 2, ""))},
		"c.md":    {Data: []byte(minimalLesson("C", 3, ""))},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	slugOf := func(l *Lesson) string {
		if l == nil {
			return "-"
		}
		return l.Slug
	}
	for _, tc := range []struct{ slug, prev, next string }{
		{"a", "-", "b"}, {"b", "a", "c"}, {"c", "b", "-"}, {"nope", "-", "-"},
	} {
		prev, next := course.Neighbours(tc.slug)
		if slugOf(prev) != tc.prev || slugOf(next) != tc.next {
			t.Errorf("Neighbours(%q) = %s, %s; want %s, %s", tc.slug, slugOf(prev), slugOf(next), tc.prev, tc.next)
		}
	}
	if course.Lesson("nope") != nil {
		t.Error(`Lesson("nope") is not nil`)
	}
	byHand := &Course{Lessons: course.Lessons}
	if byHand.Lesson("b") != course.Lessons[1] || byHand.Lesson("nope") != nil {
		t.Error("Lesson does not work on a Course built by hand")
	}
}

// minimalLesson is a valid lesson with the given title and order, and body.
func minimalLesson(title string, order int, body string) string {
	return fmt.Sprintf("---\ntitle: %s\nsummary: S.\norder: %d\nminutes: 1\nobjectives: [O.]\n---\n\n%s", title, order, body)
}

func TestHighlightCSS_ScopesDarkTheme(t *testing.T) {
	css := string(HighlightCSS())
	for _, want := range []string{
		"\n.chroma { ",
		"\n.chroma .k { ",
		"\n:root[data-theme=dark] .chroma { ",
		"\n:root[data-theme=dark] .chroma .k { ",
		"@media (prefers-color-scheme: dark) {\n  :root:not([data-theme=light]) .chroma { ",
	} {
		if !strings.Contains(css, want) {
			t.Errorf("HighlightCSS lacks %q", want)
		}
	}
	if strings.Contains(css, "\n.bg ") {
		t.Error("HighlightCSS has a bare .bg rule, which would style the site")
	}
	if strings.Count(css, "{") != strings.Count(css, "}") {
		t.Error("HighlightCSS has unbalanced braces")
	}
}
