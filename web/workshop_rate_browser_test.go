package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/web/admit"
)

// A click past the learner's fair share is never a whole error page: the
// playground keeps its state and says when to try again.
func TestBrowser_RateRefusalKeepsThePlayground(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{Share: admit.Share{PerSecond: 0.001, Burst: 2}})
	run(t, ctx, chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug), chromedp.WaitVisible(chromedp.CSS(`#pg-1`)))
	scripts := []string{"deliver msg-1", "deliver msg-1 lose-ack", "deliver msg-1 lose-ack\nredeliver msg-1"}
	for i, script := range scripts {
		eval[bool](t, ctx, `(() => { document.querySelector('#pg-1 [data-testid="pg-script-form"]').closest('details').open = true; return true })()`)
		run(t, ctx, chromedp.SetValue(chromedp.CSS(`#pg-1 [data-testid="pg-script-form"] textarea`), script))
		click(t, ctx, `#pg-1 [data-testid="pg-script-form"] button[type=submit]`)
		if i < 2 {
			waitScript(t, ctx, "pg-1", strings.ReplaceAll(script, "\n", "; "))
		}
	}
	if err := poll(ctx, `!!document.querySelector('#pg-1 [data-rate-notice]')`); err != nil {
		t.Fatalf("no notice in the playground after a refused click: %v", err)
	}
	if eval[bool](t, ctx, `!!document.querySelector('[data-testid="error-message"]')`) || eval[string](t, ctx, `location.pathname`) != "/lessons/"+lostAckSlug {
		t.Error("the refused click left the lesson for an error page")
	}
	if got := eval[string](t, ctx, `document.getElementById("pg-1").dataset.script`); got != "deliver msg-1 lose-ack" {
		t.Errorf("the playground shows %q, want its last state", got)
	}
	note := eval[string](t, ctx, `document.querySelector('#pg-1 [data-rate-notice]').textContent`)
	if !strings.Contains(note, "try again in") {
		t.Errorf("notice %q does not say when to try again", note)
	}
	for _, e := range browsertest.PageErrors(ctx) {
		if !strings.Contains(e, "status of 429") {
			t.Errorf("the page reported an error: %s", e)
		}
	}
}
