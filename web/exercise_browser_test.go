package web

import (
	"context"
	"fmt"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

// Browser tests of the exercise editor, as a learner uses it.

const (
	exPhoneWidth  = 390
	exPhoneHeight = 844
)

func exServe(t *testing.T) *httptest.Server {
	t.Helper()
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// exWait evaluates expr until it is true; errors (a document being
// replaced) are retried.
func exWait(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && !!(`+expr+`)`))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exClick clicks the element css selects, in the page: chromedp's own
// node queries miss a document that history.back restored.
func exClick(t *testing.T, ctx context.Context, css string) {
	t.Helper()
	exWait(t, ctx, css, fmt.Sprintf(`document.querySelector(%q)`, css))
	eval[bool](t, ctx, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.scrollIntoView({block: "center"}); el.click(); return true })()`, css))
}

// exShot saves a picture of the element css selects. It clips a page
// screenshot to the element's box, measured in the page, so that it also
// works in a document history.back restored.
func exShot(t *testing.T, ctx context.Context, css, name string) {
	t.Helper()
	box := eval[[]float64](t, ctx, fmt.Sprintf(`(() => { scrollTo(0, 0); const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + scrollX, r.y + scrollY, r.width, r.height] })()`, css))
	var png []byte
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		beyond := true
		res, err := cdp.Call(ctx, tgt, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
			Clip:                  &cdppage.Viewport{X: box[0], Y: box[1], Width: box[2], Height: box[3], Scale: 1},
			CaptureBeyondViewport: &beyond,
		})
		png = res.Data
		return err
	}))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path, err := browsertest.SaveScreenshot(t.Name(), name, png)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s: %s", name, path)
}

// exResultState is the result area's data-state of the exercise.
func exResultState(id string) string {
	return fmt.Sprintf(`(document.querySelector('[data-exercise=%q] [data-testid="exercise-result"]') || {dataset: {}}).dataset.state`, id)
}

// TestBrowser_ExerciseFromCounterexampleToPass is the learner's path: open
// the exercise, check the starting handler and read the counterexample,
// open it in the playground and come back, paste the solution and see it
// hold in every schedule; the course index then marks the exercise passed.
func TestBrowser_ExerciseFromCounterexampleToPass(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "dedupe-credit")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	lesson := playurl.LessonPath(spec.Lesson)

	run(t, ctx,
		browsertest.ColorScheme("light"),
		chromedp.Navigate(srv.URL+lesson+"#ex-"+spec.ID),
		chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid="exercise-editor"]`)),
	)
	eval[bool](t, ctx, `window.__sameDocument = true`)
	if got := eval[int](t, ctx, `document.querySelectorAll('`+sel+` [data-gutter] span').length`); got != strings.Count(spec.Start, "\n")+1 {
		t.Errorf("the gutter numbers %d lines", got)
	}

	// Hints come one at a time.
	exClick(t, ctx, sel+` [data-next-hint]`)
	if n := eval[int](t, ctx, `[...document.querySelectorAll('`+sel+` [data-testid="exercise-hint"]')].filter(d => !d.hidden).length`); n != 1 {
		t.Errorf("after one click %d hints show, want 1", n)
	}

	// The starting handler breaks: a counterexample, in place.
	exClick(t, ctx, sel+` [data-testid="exercise-check"]`)
	exWait(t, ctx, "the counterexample", exResultState(spec.ID)+` === "fail"`)
	story := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-counterexample"]').textContent.replace(/\s+/g, " ")`)
	if !strings.Contains(story, "lose") && !strings.Contains(story, "lost") {
		t.Errorf("the counterexample does not tell the lost ack: %q", story)
	}
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page reloaded: with JavaScript the result should swap in place")
	}
	exShot(t, ctx, sel, "counterexample-light")

	// Open it in the playground, then come back.
	href := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-open-playground"]').getAttribute("href")`)
	if !strings.HasPrefix(href, "/playground?") || !strings.Contains(href, "handler=") {
		t.Errorf("playground link %q", href)
	}
	exClick(t, ctx, sel+` [data-testid="exercise-open-playground"]`)
	if err := browsertest.WaitForPath(ctx, "/playground"); err != nil {
		t.Fatal(err)
	}
	exWait(t, ctx, "the playground", `document.querySelector('[data-testid="error-page"], [data-testid="pg-verdict"]')`)
	if msg := eval[string](t, ctx, `(document.querySelector('[data-testid="error-message"]') || {}).textContent || ""`); msg != "" {
		t.Fatalf("the playground refused the counterexample: %s", strings.TrimSpace(msg))
	}
	// The learner's handler runs there as "mine", and breaks the same way.
	if v := eval[string](t, ctx, `(document.querySelector('[data-testid="pg-verdict"][data-handler="mine"]') || {dataset: {}}).dataset.verdict || "(none)"`); v != "duplicate-effect" {
		t.Errorf("in the playground the learner's handler has verdict %q, want duplicate-effect", v)
	}
	browsertest.Screenshot(t, ctx, "playground-from-exercise")
	eval[bool](t, ctx, `history.back(), true`)
	if err := browsertest.WaitForPath(ctx, lesson); err != nil {
		t.Fatal(err)
	}

	// Paste the solution and check again.
	exWait(t, ctx, "the editor", `document.querySelector('`+sel+` textarea')`)
	eval[bool](t, ctx, fmt.Sprintf(`(() => { const a = document.querySelector('%s textarea'); a.focus(); a.value = %s; a.dispatchEvent(new Event("input", {bubbles: true})); return true })()`,
		sel, strconv.Quote(spec.Solution)))
	exClick(t, ctx, sel+` [data-testid="exercise-check"]`)
	exWait(t, ctx, "the pass", exResultState(spec.ID)+` === "pass"`)
	verdict := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-result"]').textContent.replace(/\s+/g, " ")`)
	if !strings.Contains(verdict, "Holds in all") || !strings.Contains(verdict, "distinct states explored") {
		t.Errorf("the pass reads %q", verdict)
	}
	if eval[bool](t, ctx, `document.querySelector('`+sel+` [data-exercise-badge]').hidden`) {
		t.Error("the exercise is not marked passed on the lesson")
	}
	exShot(t, ctx, sel, "pass-light")

	// Reset brings the starting handler back.
	exClick(t, ctx, sel+` [data-testid="exercise-reset"]`)
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` textarea').value`); got != spec.Start {
		t.Errorf("after Reset the editor holds %q", got)
	}

	// The course index marks the exercise passed.
	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	exWait(t, ctx, "the index mark", fmt.Sprintf(`document.querySelector('[data-testid="exercise-mark"][data-exercise-ids~=%q][data-passed="true"]')`, spec.ID))
	item := fmt.Sprintf(`[data-testid="lesson-item"][data-lesson-slug=%q]`, spec.Lesson)
	if got := eval[string](t, ctx, `document.querySelector('`+item+` [data-testid="exercise-mark"]').textContent.trim()`); got != "Exercise passed" {
		t.Errorf("the index mark reads %q", got)
	}
	exShot(t, ctx, item, "index-mark-light")

	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowser_ExerciseErrorLine: a handler with a bad parameter names its
// line in the result and marks it in the editor's gutter.
func TestBrowser_ExerciseErrorLine(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "dedupe-credit")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	run(t, ctx,
		browsertest.ColorScheme("dark"),
		chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)),
		chromedp.WaitVisible(chromedp.CSS(sel+` textarea`)),
	)
	eval[bool](t, ctx, fmt.Sprintf(`(() => { const a = document.querySelector('%s textarea'); a.value = %s; a.dispatchEvent(new Event("input", {bubbles: true})); return true })()`,
		sel, strconv.Quote("BEGIN;\nUPDATE accounts SET balance = balance + :amout WHERE id = :account_id;\nCOMMIT;\n")))
	exClick(t, ctx, sel+` [data-testid="exercise-check"]`)
	exWait(t, ctx, "the error", exResultState(spec.ID)+` === "error"`)
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-error"]').dataset.line`); got != "2" {
		t.Errorf("error line = %q", got)
	}
	if got := eval[string](t, ctx, `(document.querySelector('`+sel+` [data-gutter] .is-error') || {}).textContent || ""`); got != "2" {
		t.Errorf("the gutter marks line %q, want 2", got)
	}
	exShot(t, ctx, sel, "error-dark")
	browsertest.Screenshot(t, ctx, "exercise-page-dark")
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowser_ExerciseWithoutJavaScript: the form posts and the result page
// keeps the learner's text; at a phone's width nothing overflows.
func TestBrowser_ExerciseWithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "conditional-ship")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	run(t, ctx,
		browsertest.DisableJavaScript(),
		browsertest.ColorScheme("light"),
		chromedp.EmulateViewport(exPhoneWidth, exPhoneHeight, chromedp.EmulateMobile),
		chromedp.Navigate(srv.URL+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID),
		chromedp.WaitVisible(chromedp.CSS(sel+` textarea`)),
	)
	if n := eval[int](t, ctx, `document.querySelectorAll('`+sel+` [data-testid="exercise-hint"]').length`); n != len(spec.Hints) {
		t.Errorf("without JavaScript %d hints show, want all %d as <details>", n, len(spec.Hints))
	}
	exShot(t, ctx, sel, "lesson-exercise-phone")
	exClick(t, ctx, sel+` [data-testid="exercise-check"]`)
	if err := browsertest.WaitForPath(ctx, site.ExerciseCheckPath(spec.ID)); err != nil {
		t.Fatal(err)
	}
	exWait(t, ctx, "the result page", exResultState(spec.ID)+` === "fail"`)
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` textarea').value`); got != spec.Start {
		t.Errorf("the result page holds %q", got)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > exPhoneWidth {
		t.Errorf("at %dpx the result page is %dpx wide", exPhoneWidth, w)
	}
	browsertest.Screenshot(t, ctx, "result-page-phone-no-js")
}
