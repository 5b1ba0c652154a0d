package web

import (
	"fmt"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// TestBrowser_InverseLearnerBreaksTheHandler is the learner's path through
// an inverse exercise, with the keyboard only: type a script that does not
// break dedupe-tx and read why, then type one that does, press Tab to the
// Check button and Enter, and see the break confirmed, with the shortest
// script beside it; the course index then marks the exercise done.
func TestBrowser_InverseLearnerBreaksTheHandler(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "break-message-id")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	area := sel + ` textarea[name="script"]`

	typeAndCheck := func(script string) {
		t.Helper()
		exWait(t, ctx, "the editor", `document.querySelector('`+area+`')`)
		eval[bool](t, ctx, `(() => { const a = document.querySelector('`+area+`'); a.value = ""; a.focus(); return true })()`)
		run(t, ctx, chromedp.SendKeys(chromedp.CSS(area), script), chromedp.KeyEvent(kb.Tab))
		if got := eval[string](t, ctx, `document.activeElement.dataset.testid || ""`); got != "exercise-check" {
			t.Fatalf("Tab from the editor lands on %q, want the Check button", got)
		}
		run(t, ctx, chromedp.KeyEvent(kb.Enter))
		// With JavaScript the answer comes in place (issue 30): no page load.
		exWait(t, ctx, "the check to end", `document.querySelector('`+sel+`').getAttribute("aria-busy") !== "true"`)
	}
	resultText := func() string {
		return eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-result"]').textContent.replace(/\s+/g, " ")`)
	}

	run(t, ctx,
		browsertest.ColorScheme("light"),
		chromedp.Navigate(srv.URL+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID),
		chromedp.WaitVisible(chromedp.CSS(area)),
	)
	if eval[bool](t, ctx, `!!document.querySelector('`+sel+` [data-testid="inverse-shortest"]')`) {
		t.Error("the lesson gives the shortest script away")
	}

	typeAndCheck("deliver msg-1 lose-ack\nredeliver msg-1")
	exWait(t, ctx, "the verdict", exResultState(spec.ID)+` === "fail"`)
	if got := resultText(); !strings.Contains(got, "This script does not break it: every message took effect once") {
		t.Errorf("a script that does not break it reads %q", got)
	}
	if eval[bool](t, ctx, `!!document.querySelector('`+sel+` [data-testid="inverse-shortest"]')`) {
		t.Error("the shortest script is shown before the learner broke the handler")
	}

	typeAndCheck("deliver msg-1\ndeliver msg-2")
	exWait(t, ctx, "the break", exResultState(spec.ID)+` === "pass"`)
	got := resultText()
	for _, want := range []string{"It breaks it: payment pay-7 credited 2 times to acc-1", "as short as the shortest the checker finds", "deliver msg-1 to A; deliver msg-2 to A"} {
		if !strings.Contains(got, want) {
			t.Errorf("the confirmation reads %q, want %q in it", got, want)
		}
	}
	if v := eval[string](t, ctx, `document.querySelector('`+area+`').value`); v != "deliver msg-1\ndeliver msg-2" {
		t.Errorf("the editor holds %q after the check", v)
	}
	exShot(t, ctx, sel, "broken-light")

	// The run link replays the learner's script in the playground, where
	// dedupe-tx diverges and dedupe-key does not.
	exClick(t, ctx, sel+` [data-testid="exercise-open-playground"]`)
	if err := browsertest.WaitForPath(ctx, "/playground"); err != nil {
		t.Fatal(err)
	}
	exWait(t, ctx, "the playground", `document.querySelector('[data-testid="pg-verdict"][data-handler="dedupe-tx"]')`)
	if v := eval[string](t, ctx, `document.querySelector('[data-testid="pg-verdict"][data-handler="dedupe-tx"]').dataset.verdict`); v != "duplicate-effect" {
		t.Errorf("in the playground dedupe-tx has verdict %q", v)
	}

	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	exWait(t, ctx, "the index mark", fmt.Sprintf(`document.querySelector('[data-testid="exercise-mark"][data-exercise-ids~=%q][data-passed="true"]')`, spec.ID))
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowser_InverseWithoutJavaScript: at a phone's width with JavaScript
// off, a learner asks for the shortest script and gets it, and nothing
// overflows.
func TestBrowser_InverseWithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "break-shipping")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	run(t, ctx,
		browsertest.DisableJavaScript(),
		browsertest.ColorScheme("dark"),
		chromedp.EmulateViewport(exPhoneWidth, exPhoneHeight, chromedp.EmulateMobile),
		chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)),
		chromedp.WaitVisible(chromedp.CSS(sel+` textarea`)),
	)
	exClick(t, ctx, sel+` [data-testid="exercise-reveal"]`)
	if err := browsertest.WaitForPath(ctx, site.ExerciseCheckPath(spec.ID)); err != nil {
		t.Fatal(err)
	}
	exWait(t, ctx, "the shortest", `document.querySelector('`+sel+` [data-testid="inverse-shortest"]')`)
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="inverse-shortest"] code').textContent`); !strings.Contains(got, "crash-after 2") {
		t.Errorf("the shortest script reads %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` textarea').value`); got != spec.Start {
		t.Errorf("the result page holds %q", got)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > exPhoneWidth {
		t.Errorf("at %dpx the result page is %dpx wide", exPhoneWidth, w)
	}
	browsertest.Screenshot(t, ctx, "inverse-phone-dark-no-js")
}

// TestBrowser_InverseLessonsRead saves the two lessons with inverse
// exercises whole, at a desktop's and a phone's width, for a reader to
// look at; at the phone's width nothing overflows.
func TestBrowser_InverseLessonsRead(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	for _, slug := range []string{"producer-duplicates-and-business-keys", "testing-a-consumer"} {
		for _, width := range []int64{1280, exPhoneWidth} {
			run(t, ctx,
				chromedp.EmulateViewport(width, 900),
				chromedp.Navigate(srv.URL+playurl.LessonPath(slug)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="lesson-body"]`)),
			)
			if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > int(width) {
				t.Errorf("%s at %dpx is %dpx wide", slug, width, w)
			}
			browsertest.Screenshot(t, ctx, fmt.Sprintf("%s-%d", slug, width))
		}
	}
}
