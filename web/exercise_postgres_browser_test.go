package web

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// A keyboard-only learner on the race exercise's page picks "Check on:
// PostgreSQL READ COMMITTED" (Tab to the choice, the arrow key), Tabs to
// Check and presses Enter, and reads PostgreSQL's verdict on the starting
// handler in place: it breaks on PostgreSQL at READ COMMITTED, and its
// counterexample opens in the playground on the same ledger. No mouse
// event is sent.
func TestBrowser_KeyboardLearnerChecksAnExerciseOnPostgres(t *testing.T) {
	ctx := browsertest.New(t)
	srv := httptest.NewServer(exercisePostgresServer(t).Handler())
	t.Cleanup(srv.Close)
	const id = "race-check-then-insert"
	sel := `[data-exercise="` + id + `"]`
	run(t, ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/exercises/"+id),
		chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid="exercise-ledger"]`)),
	)
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-ledger"]').value`); got != "sqlite" {
		t.Fatalf("the exercise starts checking on %q, want sqlite", got)
	}
	eval[bool](t, ctx, `window.__sameDocument = true`)
	tabTo(t, ctx, sel+` [data-testid="exercise-ledger"]`)
	run(t, ctx, chromedp.KeyEvent(kb.ArrowDown))
	choice := eval[string](t, ctx, `(() => { const s = document.querySelector('`+sel+` [data-testid="exercise-ledger"]'); return s.value + "|" + s.selectedOptions[0].textContent })()`)
	if !strings.HasPrefix(choice, "postgres-rc|") || !strings.Contains(choice, "READ COMMITTED") {
		t.Fatalf("after the arrow key the choice is %q, want PostgreSQL READ COMMITTED", choice)
	}
	tabTo(t, ctx, sel+` [data-testid="exercise-check"]`)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	exWait(t, ctx, "PostgreSQL's verdict", exResultState(id)+` === "fail"`)
	result := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-result"]').textContent.replace(/\s+/g, " ")`)
	if !strings.Contains(result, "breaks it on PostgreSQL, READ COMMITTED") {
		t.Errorf("the verdict does not name PostgreSQL READ COMMITTED: %q", result)
	}
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page reloaded: with JavaScript the result should swap in place")
	}
	href := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-open-playground"]').getAttribute("href")`)
	if u, err := url.Parse(href); err != nil || u.Query().Get("ledger") != "postgres-rc" {
		t.Errorf("the counterexample's playground link %q leaves PostgreSQL READ COMMITTED", href)
	}
	if got := eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="exercise-ledger"]').value`); got != "postgres-rc" {
		t.Errorf("after the check the choice reads %q", got)
	}
	exShot(t, ctx, sel, "exercise-postgres-verdict")
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
