package web

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/lessons"
)

// Browser tests of a run stopped at its budget: the learner sees the
// refusal inside the playground, naming the limit, stays on the lesson, and
// the undo link brings the playground back.

// startBudgetServer is the course with a budget of six deliveries per
// run (three for each of the lesson's two handlers), so a short script
// crosses it.
func startBudgetServer(t *testing.T) *httptest.Server {
	t.Helper()
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{}, course)
	if err != nil {
		t.Fatal(err)
	}
	s.adm.Budget.Deliveries = 6 // two handlers: three deliveries each
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// overBudgetScript needs four deliveries of msg-1 per handler.
const overBudgetScript = "deliver msg-1 lose-ack\nredeliver msg-1 lose-ack\nredeliver msg-1 lose-ack\nredeliver msg-1"

func runOverBudget(t *testing.T, ctx context.Context) {
	t.Helper()
	eval[bool](t, ctx, `(() => { document.querySelector('#pg-1 [data-testid="pg-script-form"]').closest('details').open = true; return true })()`)
	run(t, ctx, chromedp.SetValue(chromedp.CSS(`#pg-1 [data-testid="pg-script-form"] textarea`), overBudgetScript))
	click(t, ctx, `#pg-1 [data-testid="pg-script-form"] button[type=submit]`)
}

func checkRefusedInPlace(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := poll(ctx, `document.readyState === "complete" && !!document.querySelector('#pg-1 [data-testid="pg-refusal"]')`); err != nil {
		t.Fatalf("no refusal shown in the playground: %v", err)
	}
	if path := eval[string](t, ctx, `location.pathname`); path != "/lessons/"+lostAckSlug {
		t.Errorf("the learner left the lesson for %s", path)
	}
	if !eval[bool](t, ctx, `!!document.querySelector('[data-testid="lesson-body"]')`) || eval[bool](t, ctx, `!!document.querySelector('[data-testid="error-message"]')`) {
		t.Error("the lesson was replaced by an error page")
	}
	msg := eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-refusal"]').textContent.replace(/\s+/g, " ")`)
	if !strings.Contains(msg, "6 deliveries") {
		t.Errorf("the refusal %q does not name the limit (6 deliveries)", msg)
	}
	// The other playgrounds of the lesson are untouched.
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="pg-refusal"]').length`); n != 1 {
		t.Errorf("%d playgrounds show a refusal, want 1", n)
	}
}

// followUndo takes the refusal's undo link and waits for the playground to
// run again, one event shorter.
func followUndo(t *testing.T, ctx context.Context) {
	t.Helper()
	click(t, ctx, `#pg-1 [data-testid="pg-refusal-undo"]`)
	if err := poll(ctx, `document.readyState === "complete" && !!document.querySelector('#pg-1') && !document.querySelector('#pg-1 [data-testid="pg-refusal"]') && !!document.querySelector('#pg-1 [data-testid="pg-verdict"]')`); err != nil {
		t.Fatalf("after Undo the playground did not run again: %v", err)
	}
	if got := eval[string](t, ctx, `document.getElementById("pg-1").dataset.script`); got != "deliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1 lose-ack" {
		t.Errorf("after Undo the playground shows %q, want the script without its last event", got)
	}
	if path := eval[string](t, ctx, `location.pathname`); path != "/lessons/"+lostAckSlug {
		t.Errorf("Undo left the lesson for %s", path)
	}
}

func TestBrowser_OverBudgetShownInPlace_WithJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startBudgetServer(t)
	run(t, ctx, chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug), chromedp.WaitVisible(chromedp.CSS(`#pg-1`)))
	runOverBudget(t, ctx)
	checkRefusedInPlace(t, ctx)
	followUndo(t, ctx)
	// The one 422 is the refused run's answer; nothing else may fail.
	for _, e := range browsertest.PageErrors(ctx) {
		if !strings.Contains(e, "status of 422") {
			t.Errorf("the page reported an error: %s", e)
		}
	}
}

func TestBrowser_OverBudgetShownInPlace_WithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startBudgetServer(t)
	run(t, ctx,
		browsertest.DisableJavaScript(),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	runOverBudget(t, ctx)
	checkRefusedInPlace(t, ctx)
	followUndo(t, ctx)
}
