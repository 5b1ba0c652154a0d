package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

// Browser tests of issue 30's "progress that lasts": a goal once met stays
// met when the learner steps back in time, clicks on or reloads; every
// playground on a page keeps its state across a reload, not only the one
// in the URL.

func TestPlaygroundProgress_GoalMetStaysMet(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	eval[bool](t, ctx, `localStorage.clear(), sessionStorage.clear(), true`)
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-goals"]`)),
	)
	count := func() string {
		return strings.TrimSpace(eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-goals-count"]').textContent`))
	}
	// Meet the first goal through its "Show a state that meets it".
	eval[bool](t, ctx, `(() => { document.querySelector('#pg-1 [data-goal="three-copies"] details').open = true; return true })()`)
	click(t, ctx, `#pg-1 [data-goal="three-copies"] [data-testid="pg-goal-solution"]`)
	waitFor(t, ctx, `#pg-1 [data-goal-met="three-copies"]`)
	if got := count(); got != "1 of 2 done" {
		t.Fatalf("with the goal met the panel says %q", got)
	}
	// Step back to event 1: the state no longer meets it, the goal stays met.
	click(t, ctx, `#pg-1 [data-testid="pg-event"][data-event="1"] a`)
	waitAt(t, ctx, "pg-1", "1")
	if got := count(); got != "1 of 2 done" {
		t.Errorf("after stepping back to event 1 the panel says %q, want 1 of 2 done", got)
	}
	if !eval[bool](t, ctx, `!!document.querySelector('#pg-1 [data-goal-kept="three-copies"].pg-goal-met') && !document.querySelector('#pg-1 [data-goal="no-lost-ack"]').hidden`) {
		t.Error("after stepping back the first goal is not ticked, or the second not shown")
	}
	// The server's own tick (what a workshop reports) stays the server's.
	if eval[bool](t, ctx, `!!document.querySelector('#pg-1 [data-goal-met="three-copies"]')`) {
		t.Error("the kept goal claims data-goal-met, which only the server's check sets")
	}
	// A reload, and a fresh visit of the lesson, keep it.
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-goals"]`)))
	if got := count(); got != "1 of 2 done" {
		t.Errorf("after a reload the panel says %q", got)
	}
	run(t, ctx, chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug), chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-goals"]`)))
	if got := count(); got != "1 of 2 done" {
		t.Errorf("on a fresh visit the panel says %q", got)
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

func TestPlaygroundProgress_EveryPlaygroundSurvivesAReload(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	eval[bool](t, ctx, `localStorage.clear(), sessionStorage.clear(), true`)
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-2`)),
	)
	script := func(pg string) string {
		return eval[string](t, ctx, `document.getElementById("`+pg+`").dataset.script + " @" + document.getElementById("`+pg+`").dataset.at`)
	}
	home1, home2 := script("pg-1"), script("pg-2")
	click(t, ctx, `#pg-1 [data-testid="pg-start-over"]`)
	waitAt(t, ctx, "pg-1", "0")
	click(t, ctx, `#pg-2 [data-testid="pg-back"]`)
	if err := poll(ctx, `document.getElementById("pg-2").hasAttribute("data-swapped") && document.getElementById("pg-2").getAttribute("aria-busy") !== "true"`); err != nil {
		t.Fatal(err)
	}
	want1, want2 := script("pg-1"), script("pg-2")
	if want1 == home1 || want2 == home2 {
		t.Fatalf("the clicks changed nothing: %q %q", want1, want2)
	}
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#pg-2`)))
	if err := poll(ctx, `document.getElementById("pg-1").dataset.at === "0" && document.getElementById("pg-1").getAttribute("aria-busy") !== "true"`); err != nil {
		t.Errorf("after a reload pg-1 shows %q, want %q: %v", script("pg-1"), want1, err)
	}
	if got := script("pg-2"); got != want2 {
		t.Errorf("after a reload pg-2 shows %q, want %q", got, want2)
	}
	// Back to the start: a reset block is not brought back changed.
	click(t, ctx, `#pg-1 [data-testid="pg-reset"]`)
	if err := poll(ctx, `!document.querySelector('#pg-1 [data-testid="pg-reset"][href]') && document.getElementById("pg-1").getAttribute("aria-busy") !== "true"`); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#pg-2`)))
	time.Sleep(500 * time.Millisecond) // a restore, if any, has landed
	if got := script("pg-1"); got != home1 {
		t.Errorf("after Reset and a reload pg-1 shows %q, want its start %q", got, home1)
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
