package web

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/web/site"
)

// The learner's last handler is kept in the browser per exercise: a reload
// brings it back (with a word saying so), Reset forgets it, and another
// exercise keeps its own starting handler.
func TestBrowser_ExerciseKeepsTheLastHandler(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "dedupe-credit")
	other := builtinExercise(t, "conditional-ship")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	mine := "-- my attempt\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n"
	run(t, ctx, chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)), chromedp.WaitVisible(chromedp.CSS(sel+` textarea`)))
	eval[bool](t, ctx, fmt.Sprintf(`(() => { const a = document.querySelector('%s textarea'); a.value = %s; a.dispatchEvent(new Event("input", {bubbles: true})); return true })()`, sel, strconv.Quote(mine)))

	run(t, ctx, chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)), chromedp.WaitVisible(chromedp.CSS(sel+` textarea`)))
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` textarea').value`); got != mine {
		t.Fatalf("after a reload the editor holds %q, want the learner's handler", got)
	}
	if state := eval[string](t, ctx, exResultState(spec.ID)); state != "notice" {
		t.Errorf("no word that the handler was kept (result state %q)", state)
	}

	run(t, ctx, chromedp.Navigate(srv.URL+site.ExercisePath(other.ID)), chromedp.WaitVisible(chromedp.CSS(`[data-exercise="`+other.ID+`"] textarea`)))
	if got := eval[string](t, ctx, `document.querySelector('[data-exercise="`+other.ID+`"] textarea').value`); got == mine {
		t.Error("another exercise got this exercise's handler")
	}

	run(t, ctx, chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)), chromedp.WaitVisible(chromedp.CSS(sel+` textarea`)))
	exClick(t, ctx, sel+` [data-testid="exercise-reset"]`)
	run(t, ctx, chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)), chromedp.WaitVisible(chromedp.CSS(sel+` textarea`)))
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` textarea').value`); got == mine {
		t.Error("Reset did not forget the kept handler")
	}
}
