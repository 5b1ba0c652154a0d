package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
	"idemlab/web/playurl"
	"idemlab/web/site"
)

// Browser tests of issue 30's "the answer where the eyes are": after
// Check (the button or Ctrl+Enter) the result is on the screen and the
// focus is on its first line; while the check runs the focus stays on
// Check; passing counts for the lesson on the index.

// resultInView says whether the exercise's result starts on the screen,
// below the sticky header.
func resultInView(sel string) string {
	return fmt.Sprintf(`(() => {
		const r = document.querySelector('%s [data-testid="exercise-result"]').getBoundingClientRect();
		const h = document.querySelector(".site-header");
		const top = h ? Math.max(0, h.getBoundingClientRect().bottom) : 0;
		return r.top >= top - 1 && r.top < innerHeight - 40;
	})()`, sel)
}

func focusInResult(sel string) string {
	return fmt.Sprintf(`!!document.activeElement && !!document.activeElement.closest('%s [data-testid="exercise-result"]') && document.activeElement.matches("h3[data-result-heading]")`, sel)
}

func TestExerciseCheck_ResultInViewAndFocused(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "dedupe-credit")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	for _, size := range []struct {
		name string
		w, h int64
	}{{"laptop", 1280, 800}, {"phone", exPhoneWidth, exPhoneHeight}} {
		t.Run(size.name, func(t *testing.T) {
			// A fresh browser: no handler kept from the last run.
			run(t, ctx, chromedp.Navigate(srv.URL+"/"))
			eval[bool](t, ctx, `localStorage.clear(), true`)
			run(t, ctx,
				chromedp.EmulateViewport(size.w, size.h),
				chromedp.Navigate(srv.URL+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID),
				chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid="exercise-editor"]`)),
			)
			// The button, used with the keyboard: it keeps the focus while the
			// check runs (a disabled button would drop it to <body>).
			stays := eval[bool](t, ctx, `(() => {
				const b = document.querySelector('`+sel+` [data-testid="exercise-check"]');
				b.scrollIntoView({block: "center", behavior: "instant"});
				b.focus();
				b.click();
				document.body.getBoundingClientRect();
				return document.querySelector('`+sel+`').getAttribute("aria-busy") === "true" && !b.disabled && document.activeElement === b;
			})()`)
			if !stays {
				t.Errorf("while the check runs the focus is on %s, want Check", activeDesc(t, ctx))
			}
			exWait(t, ctx, "the counterexample", exResultState(spec.ID)+` === "fail"`)
			if err := poll(ctx, resultInView(sel)+" && "+focusInResult(sel)); err != nil {
				t.Errorf("after Check the result is not in view with the focus on it (focus on %s, result top %v, viewport %d): %v",
					activeDesc(t, ctx), eval[float64](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-result"]').getBoundingClientRect().top`), size.h, err)
			}

			// Ctrl+Enter in the editor, with the solution: the pass is in view.
			run(t, ctx, chromedp.SetValue(chromedp.CSS(sel+` [data-testid="exercise-editor"]`), spec.Solution))
			eval[bool](t, ctx, `(() => { const a = document.querySelector('`+sel+` [data-testid="exercise-editor"]'); a.scrollIntoView({block: "start", behavior: "instant"}); a.focus(); return true })()`)
			run(t, ctx, chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
			exWait(t, ctx, "the pass", exResultState(spec.ID)+` === "pass"`)
			if err := poll(ctx, resultInView(sel)+" && "+focusInResult(sel)); err != nil {
				t.Errorf("after Ctrl+Enter the pass is not in view with the focus on it (focus on %s): %v", activeDesc(t, ctx), err)
			}
		})
	}
	// Passing the lesson's exercise counts for the lesson on the index.
	run(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="lesson-item"]`)))
	exWait(t, ctx, "the lesson done", fmt.Sprintf(`document.querySelector('[data-testid="lesson-item"][data-lesson-slug=%q][data-done="true"]')`, spec.Lesson))
	if got := eval[string](t, ctx, `(document.querySelector("[data-progress-text]") || {}).textContent || ""`); got != "" && !strings.HasPrefix(got, "1 of ") {
		t.Errorf("the index says %q after one lesson's exercise passed", got)
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// An inverse exercise answers in place with JavaScript: no page load, the
// verdict in view and focused.
func TestExerciseCheck_InverseAnswersInPlace(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "break-message-id")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	area := sel + ` textarea[name="script"]`
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID),
		chromedp.WaitVisible(chromedp.CSS(area)),
	)
	eval[bool](t, ctx, `window.__sameDocument = true`)
	run(t, ctx, chromedp.SetValue(chromedp.CSS(area), "deliver msg-1\ndeliver msg-2"))
	eval[bool](t, ctx, `(() => { const a = document.querySelector('`+area+`'); a.scrollIntoView({block: "start", behavior: "instant"}); a.focus(); return true })()`)
	run(t, ctx, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	exWait(t, ctx, "the break", exResultState(spec.ID)+` === "pass"`)
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page reloaded: with JavaScript an inverse exercise should answer in place")
	}
	if path := eval[string](t, ctx, `location.pathname`); path != playurl.LessonPath(spec.Lesson) {
		t.Errorf("the check left the lesson for %s", path)
	}
	if err := poll(ctx, resultInView(sel)+" && "+focusInResult(sel)); err != nil {
		t.Errorf("the break is not in view with the focus on it (focus on %s): %v", activeDesc(t, ctx), err)
	}
	// Show the shortest fills the editor, still in place.
	exClick(t, ctx, sel+` [data-testid="exercise-reveal"]`)
	exWait(t, ctx, "the shortest", `document.querySelector('`+sel+` [data-testid="inverse-shortest"]')`)
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("Show the shortest reloaded the page")
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// The result page (the form's answer, as from an embed, which opens it in
// a new tab) shows the answer, not the top of the exercise, and a pass
// there counts for the lesson too.
func TestExerciseCheck_ResultPageOpensAtTheAnswer(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "dedupe-credit")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	eval[bool](t, ctx, `localStorage.clear(), true`)
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)),
		chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid="exercise-editor"]`)),
	)
	run(t, ctx, chromedp.SetValue(chromedp.CSS(sel+` [data-testid="exercise-editor"]`), spec.Solution))
	// form.submit() skips the script's submit handler: the page's own answer.
	eval[bool](t, ctx, `document.querySelector('`+sel+` form[data-exercise-form]').submit(), true`)
	if err := browsertest.WaitForPath(ctx, site.ExerciseCheckPath(spec.ID)); err != nil {
		t.Fatal(err)
	}
	exWait(t, ctx, "the pass", exResultState(spec.ID)+` === "pass"`)
	if err := poll(ctx, resultInView(sel)+" && "+focusInResult(sel)); err != nil {
		t.Errorf("the result page does not open at the answer (focus on %s; %s): %v", activeDesc(t, ctx), eval[string](t, ctx, `location.pathname + " " + !!document.querySelector("[data-focus-heading]") + " " + document.querySelector('`+sel+` [data-result]').childElementCount + " " + scrollY`), err)
		t.Log(browsertest.PageErrors(ctx))
	}
	run(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="lesson-item"]`)))
	exWait(t, ctx, "the lesson done", fmt.Sprintf(`document.querySelector('[data-testid="lesson-item"][data-lesson-slug=%q][data-done="true"]')`, spec.Lesson))
}

// The result page is a page of its own: one h1 (axe's page-has-heading-one),
// and the result's first line is a heading the focus lands on, with
// JavaScript (exercise.js focuses it) and without (the form's #fragment
// opens the page at the result).
func TestExerciseCheck_ResultPageHasHeadings(t *testing.T) {
	srv := exServe(t)
	for _, tc := range []struct {
		name, exercise, field, value, state string
		js                                  bool
	}{
		{"pass, with JavaScript", "dedupe-credit", "handler", "", "pass", true},
		{"counterexample, without JavaScript", "dedupe-credit", "handler", "start", "fail", false},
		{"inverse break, without JavaScript", "break-message-id", "script", "deliver msg-1\ndeliver msg-2", "pass", false},
		{"inverse, with JavaScript", "break-message-id", "script", "deliver msg-1", "fail", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := browsertest.New(t)
			spec := builtinExercise(t, tc.exercise)
			sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
			area := sel + fmt.Sprintf(` textarea[name=%q]`, tc.field)
			value := tc.value
			switch value {
			case "":
				value = spec.Solution
			case "start":
				value = spec.Start
			}
			var actions []chromedp.Action[chromedp.Void]
			if !tc.js {
				actions = append(actions, browsertest.DisableJavaScript())
			}
			actions = append(actions,
				chromedp.EmulateViewport(1280, 800),
				chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)),
				chromedp.WaitVisible(chromedp.CSS(area)),
				chromedp.SetValue(chromedp.CSS(area), value),
			)
			run(t, ctx, actions...)
			// form.submit() skips exercise.js's submit handler: the page's answer.
			eval[bool](t, ctx, `document.querySelector('`+area+`').form.submit(), true`)
			if err := browsertest.WaitForPath(ctx, site.ExerciseCheckPath(spec.ID)); err != nil {
				t.Fatal(err)
			}
			exWait(t, ctx, "the result", exResultState(spec.ID)+` === "`+tc.state+`"`)
			if n := eval[int](t, ctx, `document.querySelectorAll("h1").length`); n != 1 {
				t.Errorf("the result page has %d h1, want 1", n)
			}
			result := sel + ` [data-testid="exercise-result"]`
			heading := result + ` [data-result-heading]`
			if got := eval[string](t, ctx, `(() => {
				const h = document.querySelector('`+heading+`');
				if (!h) return "none";
				const first = document.querySelector('`+result+`').textContent.trim().startsWith(h.textContent.trim());
				return h.tagName + " " + h.getAttribute("tabindex") + " " + first;
			})()`); got != "H3 -1 true" {
				t.Errorf("the result's heading is %q, want its first line as an h3 with tabindex -1 (below the exercise's h2)", got)
			}
			if !tc.js {
				// Without a script the fragment names the result: the page
				// opens there.
				if got := eval[string](t, ctx, `location.hash`); got != "#ex-"+spec.ID+"-result" {
					t.Errorf("the result page's fragment is %q", got)
				}
				if err := poll(ctx, resultInView(sel)); err != nil {
					t.Errorf("without JavaScript the result page does not open at the result (top %v, scrollY %v): %v",
						eval[float64](t, ctx, `document.querySelector('`+result+`').getBoundingClientRect().top`), eval[float64](t, ctx, `scrollY`), err)
				}
				return
			}
			if err := poll(ctx, resultInView(sel)+` && document.activeElement === document.querySelector('`+heading+`')`); err != nil {
				t.Errorf("the focus is on %s, not the result's heading: %v", activeDesc(t, ctx), err)
			}
		})
	}
}
