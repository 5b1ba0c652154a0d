package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
	"idemlab/lessons"
)

// The browser tests drive the real binary's server (started through run, as
// `go run .` would) with headless Chromium, and look only at what a learner
// sees: elements found by data-testid, the URL, the theme, the layout width.

const (
	phoneWidth  = 390
	phoneHeight = 844
)

// themeState is what the page shows of its theme: the attribute the toggle
// sets and the body's computed background, which proves the CSS follows.
type themeState struct {
	Attribute  string `json:"attribute"`
	Background string `json:"background"`
}

const readTheme = `({
	attribute: document.documentElement.getAttribute("data-theme") || "",
	background: getComputedStyle(document.body).backgroundColor
})`

func TestBrowser_ReadTheCourse(t *testing.T) {
	ctx := browsertest.New(t)
	server := startServe(t)
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(course.Lessons) < 2 {
		t.Fatalf("the course has %d lessons; this test needs two", len(course.Lessons))
	}
	first, second := course.Lessons[0], course.Lessons[1]

	// The index lists every lesson, in order.
	must(t, chromedp.Do(ctx,
		browsertest.ColorScheme("light"),
		chromedp.Navigate(server.URL+"/"),
		chromedp.WaitVisible(browsertest.TestID("lesson-list")),
	))
	// Reference pages (the glossary) are listed apart, after the lessons.
	numbered, references := countLessons(course)
	items, err := chromedp.Run(ctx, chromedp.Nodes(browsertest.TestIDAll("lesson-item")))
	must(t, err)
	if len(items) != numbered {
		t.Errorf("the index lists %d lessons, want %d", len(items), numbered)
	}
	refs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="reference-list"] [data-testid="reference-item"]').length`))
	must(t, err)
	if refs != references {
		t.Errorf("the index lists %d reference pages, want %d", refs, references)
	}
	browsertest.Screenshot(t, ctx, "index-light")

	// Follow the first lesson's link.
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-item"] a[href$="/lessons/`+first.Slug+`"]`))))
	must(t, browsertest.WaitForPath(ctx, "/lessons/"+first.Slug))
	expectText(t, ctx, "lesson-title", first.Title)
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(browsertest.TestID("toc"))))
	browsertest.Screenshot(t, ctx, "lesson-light")

	// → goes to the next lesson.
	must(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)))
	must(t, browsertest.WaitForPath(ctx, "/lessons/"+second.Slug))
	expectText(t, ctx, "lesson-title", second.Title)

	// The toggle switches to dark, and a reload keeps it.
	light, err := chromedp.Run(ctx, chromedp.Evaluate[themeState](readTheme))
	must(t, err)
	must(t, chromedp.Do(ctx, chromedp.Click(browsertest.TestID("theme-toggle"))))
	dark, err := chromedp.Run(ctx, chromedp.Evaluate[themeState](readTheme))
	must(t, err)
	if dark.Attribute != "dark" {
		t.Errorf("after the toggle data-theme = %q, want dark", dark.Attribute)
	}
	if dark.Background == light.Background {
		t.Errorf("the toggle left the background at %s", light.Background)
	}
	browsertest.Screenshot(t, ctx, "lesson-dark")

	must(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(browsertest.TestID("lesson-title"))))
	reloaded, err := chromedp.Run(ctx, chromedp.Evaluate[themeState](readTheme))
	must(t, err)
	if reloaded != dark {
		t.Errorf("after a reload the theme is %+v, want %+v", reloaded, dark)
	}

	// Back to light, then the same lesson at a phone's width: nothing may
	// stick out sideways.
	must(t, chromedp.Do(ctx, chromedp.Click(browsertest.TestID("theme-toggle"))))
	must(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile),
		chromedp.Reload(),
		chromedp.WaitVisible(browsertest.TestID("lesson-title")),
	))
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	must(t, err)
	if width > phoneWidth {
		t.Errorf("at %dpx the page is %dpx wide: something overflows sideways", phoneWidth, width)
	}
	browsertest.Screenshot(t, ctx, "lesson-phone")

	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors (CSP violations, exceptions, console.error):\n%s", strings.Join(errs, "\n"))
	}
}

// countLessons splits the course into numbered lessons and reference pages.
func countLessons(course *lessons.Course) (numbered, references int) {
	for _, l := range course.Lessons {
		if l.IsReference() {
			references++
		} else {
			numbered++
		}
	}
	return numbered, references
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expectText(t testing.TB, ctx context.Context, testID, want string) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Text(browsertest.TestID(testID)))
	must(t, err)
	if strings.TrimSpace(got) != want {
		t.Errorf("%s = %q, want %q", testID, got, want)
	}
}

func TestBrowser_DoneMarkSurvivesReload(t *testing.T) {
	ctx := browsertest.New(t)
	server := startServe(t)
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	must(t, err)
	total, _ := countLessons(course) // reference pages are not part of the progress

	must(t, chromedp.Do(ctx,
		chromedp.Navigate(server.URL+"/"),
		chromedp.WaitVisible(browsertest.TestID("progress")),
	))
	expectText(t, ctx, "progress", fmt.Sprintf("0 of %d lessons done", total))

	firstToggle := chromedp.CSS(`[data-testid="lesson-item"] [data-testid="done-toggle"]`)
	must(t, chromedp.Do(ctx, chromedp.Click(firstToggle)))
	expectText(t, ctx, "progress", fmt.Sprintf("1 of %d lessons done", total))

	must(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(browsertest.TestID("progress"))))
	expectText(t, ctx, "progress", fmt.Sprintf("1 of %d lessons done", total))
	checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`document.querySelector('[data-testid="lesson-item"] [data-testid="done-toggle"]').checked`))
	must(t, err)
	if !checked {
		t.Error("after a reload the first lesson is no longer marked done")
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowser_WorksWithoutJavaScript follows the course with the page's
// scripts off: every control that matters is a plain link, and what only
// works with scripts (the done marks) is hidden rather than broken.
func TestBrowser_WorksWithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	server := startServe(t)
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	must(t, err)
	first, second := course.Lessons[0], course.Lessons[1]

	must(t, chromedp.Do(ctx,
		browsertest.DisableJavaScript(),
		chromedp.Navigate(server.URL+"/"),
		chromedp.WaitVisible(browsertest.TestID("lesson-list")),
		chromedp.WaitNotVisible(browsertest.TestID("done-toggle")),
		chromedp.Click(chromedp.CSS(`[data-testid="lesson-item"] a[href$="/lessons/`+first.Slug+`"]`)),
	))
	must(t, browsertest.WaitForPath(ctx, "/lessons/"+first.Slug))
	expectText(t, ctx, "lesson-title", first.Title)

	must(t, chromedp.Do(ctx, chromedp.Click(browsertest.TestID("next"))))
	must(t, browsertest.WaitForPath(ctx, "/lessons/"+second.Slug))
	expectText(t, ctx, "lesson-title", second.Title)
	browsertest.Screenshot(t, ctx, "lesson-no-js")
}
