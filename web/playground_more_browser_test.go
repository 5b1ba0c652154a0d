package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// TestBrowser_ControlPanelOpensWhenAsked: a closed control panel holds no
// controls. A learner opens the workers' panel, with JavaScript by the
// keyboard (its summary focused, Enter) and without JavaScript by its
// summary and then its link, and sees the workers' controls; then
// delivers a message, and the panel is still open with its controls.
func TestBrowser_ControlPanelOpensWhenAsked(t *testing.T) {
	srv := startCourseServer(t, Config{})
	workers := `#playground details[data-more="workers"]`
	step := workers + ` [data-testid="pg-step"]`
	for _, tc := range []struct {
		name       string
		javaScript bool
	}{{"keyboard, with JavaScript", true}, {"without JavaScript", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := browsertest.New(t)
			if !tc.javaScript {
				run(t, ctx, browsertest.DisableJavaScript())
			}
			run(t, ctx, chromedp.Navigate(srv.URL+"/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack"))
			waitScript(t, ctx, "playground", "deliver msg-1 lose-ack")
			if n := eval[int](t, ctx, `document.querySelectorAll('`+step+`').length`); n != 0 {
				t.Fatalf("the closed panel holds %d Step controls; want none drawn", n)
			}
			if tc.javaScript {
				run(t, ctx, chromedp.Focus(chromedp.CSS(workers+` > summary`)), chromedp.KeyEvent(kb.Enter))
			} else {
				click(t, ctx, workers+` > summary`)
				click(t, ctx, workers+` [data-testid="pg-more-open"]`)
			}
			waitFor(t, ctx, step)
			if got := eval[string](t, ctx, `document.querySelector('`+workers+`').textContent.replace(/\s+/g, " ")`); !strings.Contains(got, "Worker A") || !strings.Contains(got, "Start on A") {
				t.Errorf("the open panel reads %q; want worker A's controls", got)
			}
			if tc.javaScript {
				if got := eval[string](t, ctx, `document.activeElement.textContent`); got != "Workers, leases and interleaving" {
					t.Errorf("the focus moved to %q; want it on the panel's summary", got)
				}
				// The state with the panel open, from the panel's own link
				// (playurl's): in place of the history entry, not a new one.
				if err := poll(ctx, `location.search.includes("open=workers") && history.length === `+itoa(eval[int](t, ctx, `history.length`))); err != nil {
					t.Errorf("after opening the panel the URL is %q: %v", eval[string](t, ctx, `location.search`), err)
				}
			}
			redeliver := `#playground [data-message="msg-1"] [data-testid="pg-redeliver"]`
			if tc.javaScript {
				// By the keyboard, as the learner opened the panel: a mouse
				// click's coordinates could miss while the fetched panel
				// settles, and a missed click would be a flake, not a bug.
				run(t, ctx, chromedp.Focus(chromedp.CSS(redeliver)), chromedp.KeyEvent(kb.Enter))
			} else {
				click(t, ctx, redeliver)
			}
			waitScript(t, ctx, "playground", "deliver msg-1 lose-ack; redeliver msg-1")
			waitFor(t, ctx, step)
			if !eval[bool](t, ctx, `document.querySelector('`+workers+`').open`) {
				t.Error("after a click the workers' panel is closed")
			}
			if got := eval[string](t, ctx, `location.search`); !strings.Contains(got, "open=workers") {
				t.Errorf("the state shown is at %q; want open=workers in it", got)
			}
			if tc.javaScript {
				// A reload keeps it open; closing it is part of the state too.
				run(t, ctx, chromedp.Reload())
				waitFor(t, ctx, step)
				run(t, ctx, chromedp.Focus(chromedp.CSS(workers+` > summary`)), chromedp.KeyEvent(kb.Enter))
				if err := poll(ctx, `!location.search.includes("open=") && !document.querySelector('`+step+`')`); err != nil {
					t.Errorf("after closing the panel the URL is %q: %v", eval[string](t, ctx, `location.search`), err)
				}
				run(t, ctx, chromedp.Focus(chromedp.CSS(`#playground [data-message="msg-2"] [data-testid="pg-deliver"]`)), chromedp.KeyEvent(kb.Enter))
				waitScript(t, ctx, "playground", "deliver msg-1 lose-ack; redeliver msg-1; deliver msg-2")
				if eval[bool](t, ctx, `document.querySelector('`+workers+`').open`) {
					t.Error("a panel closed came back open after a click")
				}
			}
			if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
				t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
			}
		})
	}
}
