package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// TestBrowser_RedriveBringsTheMessageBack: a learner whose message sits in
// the dead-letter queue clicks Redrive (with JavaScript, and without it),
// or reaches it with Tab and presses Enter, and sees the message come
// back: the script gains "redrive pay-1", pay-1 no longer reads
// dead-lettered, and dedupe-tx, whose ids were pruned, applied it again.
func TestBrowser_RedriveBringsTheMessageBack(t *testing.T) {
	srv := startCourseServer(t, Config{})
	redrive := `#playground [data-message="pay-1"] [data-testid="pg-redrive"]`
	status := `document.querySelector('#playground [data-message="pay-1"] [data-testid="pg-message-status"]').textContent.trim()`
	for _, tc := range []struct {
		name       string
		javaScript bool
		keyboard   bool
	}{{"click", true, false}, {"keyboard", true, true}, {"without JavaScript", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := browsertest.New(t)
			if !tc.javaScript {
				run(t, ctx, browsertest.DisableJavaScript())
			}
			run(t, ctx, chromedp.Navigate(srv.URL+dlqURL(dlqBeforeRedrive)), chromedp.WaitVisible(chromedp.CSS(redrive)))
			if got := eval[string](t, ctx, status); !strings.Contains(got, "dead") {
				t.Errorf("before the redrive pay-1 reads %q", got)
			}
			if tc.keyboard {
				run(t, ctx, chromedp.Focus(chromedp.CSS(redrive)), chromedp.KeyEvent(kb.Enter))
			} else {
				click(t, ctx, redrive)
			}
			waitScript(t, ctx, "playground", dlqBeforeRedrive+"; redrive pay-1")
			if got := eval[string](t, ctx, status); strings.Contains(got, "dead") {
				t.Errorf("after the redrive pay-1 still reads %q", got)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll('`+redrive+`').length`); n != 0 {
				t.Error("Redrive is still offered for a message back in the queue")
			}
			if got := verdictText(t, ctx, "playground", "dedupe-tx"); !strings.Contains(got, "twice") {
				t.Errorf("dedupe-tx reads %q; want the redriven copy applied a second time", got)
			}
			if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
				t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
			}
		})
	}
}
