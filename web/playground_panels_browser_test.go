package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

// With JavaScript, a panel's toggle draws the panel in place: the URL
// names it (a reload keeps it) without a new history entry (Undo undoes
// events, not views), the focus stays on the toggle, and the next control
// keeps the panel open.
func TestBrowser_PanelOpensInPlace(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	entries := eval[int](t, ctx, `history.length`)
	click(t, ctx, `#pg-1 [data-testid="pg-show-steps"]`)
	if err := poll(ctx, `!!document.querySelector('#pg-1 [data-testid="pg-steps"]')`); err != nil {
		t.Fatalf("the step list did not open: %v", err)
	}
	if got := eval[string](t, ctx, `location.search`); !strings.Contains(got, "show=steps") {
		t.Errorf("the URL %q does not name the open panel", got)
	}
	if n := eval[int](t, ctx, `history.length`); n != entries {
		t.Errorf("opening a panel added %d history entries, want 0", n-entries)
	}
	if got := eval[string](t, ctx, `document.activeElement.getAttribute("data-testid") || ""`); got != "pg-show-steps" {
		t.Errorf("after the toggle the focus is on %q, want the toggle", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-show-steps"]').getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("the open panel's toggle has aria-expanded=%q", got)
	}
	click(t, ctx, `#pg-1 [data-message="msg-2"] [data-testid="pg-deliver"]`)
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1; deliver msg-2")
	if !eval[bool](t, ctx, `!!document.querySelector('#pg-1 [data-testid="pg-steps"]')`) {
		t.Error("Deliver closed the step list")
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// Without JavaScript, a panel's toggle is a link to the lesson with that
// panel drawn, and the open panel's toggle links back.
func TestBrowser_PanelWithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		browsertest.DisableJavaScript(),
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	click(t, ctx, `#pg-1 [data-testid="pg-show-diagram"]`)
	if err := poll(ctx, `document.readyState === "complete" && !!document.querySelector('#pg-1 [data-testid="pg-diagram"]')`); err != nil {
		t.Fatalf("the diagram link did not lead to the lesson with the diagram: %v", err)
	}
	if got := eval[string](t, ctx, `location.pathname`); got != "/lessons/"+lostAckSlug {
		t.Errorf("the toggle left the lesson for %s", got)
	}
	click(t, ctx, `#pg-1 [data-testid="pg-show-diagram"]`)
	if err := poll(ctx, `document.readyState === "complete" && location.search === "" && !document.querySelector('#pg-1 [data-testid="pg-diagram"]')`); err != nil {
		t.Errorf("the open diagram's toggle did not close it: %v", err)
	}
}
