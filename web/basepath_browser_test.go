package web

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

// Under -base-path /learn, behind a proxy that passes the prefix on, a
// learner reads a lesson (its stylesheet and scripts load), plays a goal
// through the in-place swap (app.js fetches the fragment), and checks an
// exercise (exercise.js posts to the API), without one request leaving the
// prefix.
func TestBrowser_BasePathHoldsForEveryRequest(t *testing.T) {
	ctx := browsertest.New(t)
	site := newPrefixedSite(t, false)
	srv := httptest.NewServer(site.h)
	t.Cleanup(srv.Close)
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/learn/lessons/why-messages-arrive-twice"),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-goals"]`)),
	)
	if w := eval[string](t, ctx, `getComputedStyle(document.querySelector('#pg-1 [data-testid="pg-goals"]')).borderLeftWidth`); w != "4px" {
		t.Errorf("the stylesheet did not load under the prefix (goal panel border %q)", w)
	}
	click(t, ctx, `#pg-1 [data-goal="three-copies"] .pg-goal-help summary`)
	click(t, ctx, `#pg-1 [data-goal="three-copies"] [data-testid="pg-goal-solution"]`)
	waitFor(t, ctx, `#pg-1[data-swapped] [data-goal-met="three-copies"]`)
	if path := eval[string](t, ctx, `location.pathname`); path != "/learn/lessons/why-messages-arrive-twice" {
		t.Errorf("after the swap the address is %q", path)
	}
	run(t, ctx,
		chromedp.Navigate(srv.URL+"/learn/exercises/dedupe-credit"),
		chromedp.WaitVisible(browsertest.TestID("exercise-check")),
	)
	click(t, ctx, `[data-testid="exercise-check"]`)
	if err := poll(ctx, exResultState("dedupe-credit")+` === "fail"`); err != nil {
		t.Fatalf("the check under the prefix: %v", err)
	}
	if m := site.misses(); len(m) > 0 {
		t.Errorf("requests outside /learn: %v", m)
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
