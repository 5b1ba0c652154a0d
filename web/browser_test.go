package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/lessons"
)

// Browser tests of the live playground, as a learner uses it: on the lesson
// about lost acks, deliver msg-1, lose the ack, redeliver, and read the two
// ledgers; with JavaScript (swaps in place) and without (page loads).

const (
	lostAckSlug = "why-messages-arrive-twice"
	pgPhoneW    = 390
	pgPhoneH    = 844
)

// startCourseServer serves the embedded course like `idemlab serve`.
func startCourseServer(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(cfg, course)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// poll evaluates expr until it is true. Errors are retried: with
// JavaScript off every control loads a new page, and an evaluation can
// land in the document being torn down.
func poll(ctx context.Context, expr string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("still false after 15s")
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitFor waits until an element matches css in a loaded document.
func waitFor(t *testing.T, ctx context.Context, css string) {
	t.Helper()
	if err := poll(ctx, fmt.Sprintf(`document.readyState === "complete" && document.querySelector(%q) !== null`, css)); err != nil {
		t.Fatalf("waiting for %s: %v", css, err)
	}
}

// waitScript waits until the playground shows the script (its data-script).
func waitScript(t *testing.T, ctx context.Context, pg, script string) {
	t.Helper()
	expr := fmt.Sprintf(`document.readyState === "complete" && (document.getElementById(%q) || {dataset: {}}).dataset.script === %q`, pg, script)
	if err := poll(ctx, expr); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("`+pg+`") || {dataset: {}}).dataset.script || "(none)"`))
		t.Fatalf("waiting for %s to show %q: %v (it shows %q)", pg, script, err, got)
	}
}

// ledgerFigure reads the big figure of a handler's ledger.
func ledgerFigure(t *testing.T, ctx context.Context, pg, handler string) string {
	t.Helper()
	return strings.TrimSpace(eval[string](t, ctx, fmt.Sprintf(
		`document.querySelector('#%s [data-testid="pg-ledger"][data-handler="%s"] [data-testid="pg-figure-actual"]').textContent`, pg, handler)))
}

func verdictText(t *testing.T, ctx context.Context, pg, handler string) string {
	t.Helper()
	return strings.TrimSpace(eval[string](t, ctx, fmt.Sprintf(
		`document.querySelector('#%s [data-testid="pg-verdict"][data-handler="%s"]').textContent.replace(/\s+/g, " ")`, pg, handler)))
}

func click(t *testing.T, ctx context.Context, css string) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// Scroll without animation (the site scrolls smoothly when focus is in
	// the page), so the click lands where the element is.
	if err := poll(cctx, fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el || document.readyState !== "complete") return false; el.scrollIntoView({block: "center", behavior: "instant"}); return true })()`, css)); err != nil {
		t.Fatalf("click %s: %v", css, err)
	}
	if err := chromedp.Do(cctx, chromedp.Click(chromedp.CSS(css))); err != nil {
		t.Fatalf("click %s: %v", css, err)
	}
}

func saveElement(t *testing.T, ctx context.Context, css, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path, err := browsertest.SaveScreenshot(t.Name(), name, png)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s: %s", name, path)
}

// lostAckSteps plays the story on the lesson's first playground
// and checks what the learner sees at each step.
func lostAckSteps(t *testing.T, ctx context.Context) {
	const pg = "pg-1"
	// Start from nothing: the cursor before the lesson's first event.
	click(t, ctx, `#pg-1 [data-testid="pg-start-over"]`)
	waitFor(t, ctx, `#pg-1[data-at="0"]`)
	if got := ledgerFigure(t, ctx, pg, "increment"); got != "100" {
		t.Errorf("before any event increment shows %s, want the initial 100", got)
	}

	click(t, ctx, `#pg-1 [data-message="msg-1"] [data-testid="pg-deliver"]`)
	waitScript(t, ctx, pg, "deliver msg-1")
	click(t, ctx, `#pg-1 [data-testid="pg-lose-ack"]`)
	waitScript(t, ctx, pg, "deliver msg-1 lose-ack")
	if a, b := ledgerFigure(t, ctx, pg, "increment"), ledgerFigure(t, ctx, pg, "dedupe-tx"); a != "150" || b != "150" {
		t.Errorf("after the lost ack the ledgers show %s and %s, want 150 and 150", a, b)
	}
	href := eval[string](t, ctx, `location.pathname + location.search + location.hash`)
	if !strings.HasPrefix(href, "/lessons/"+lostAckSlug+"?pg=pg-1&") || !strings.Contains(href, "script=deliver+msg-1+lose-ack") || !strings.HasSuffix(href, "#pg-1") {
		t.Errorf("the URL does not hold the state: %s", href)
	}
	click(t, ctx, `#pg-1 [data-message="msg-1"] [data-testid="pg-redeliver"]`)
	waitScript(t, ctx, pg, "deliver msg-1 lose-ack; redeliver msg-1")

	if got := ledgerFigure(t, ctx, pg, "increment"); got != "200" {
		t.Errorf("after the redelivery increment shows %s, want the doubled 200", got)
	}
	if got := ledgerFigure(t, ctx, pg, "dedupe-tx"); got != "150" {
		t.Errorf("after the redelivery dedupe-tx shows %s, want the single credit 150", got)
	}
	if got := verdictText(t, ctx, pg, "increment"); !strings.Contains(got, "Duplicate effect") || !strings.Contains(got, "credited twice: msg-1 applied at events 1 and 2") {
		t.Errorf("increment's verdict reads %q", got)
	}
	if got := verdictText(t, ctx, pg, "dedupe-tx"); !strings.Contains(got, "Correct") {
		t.Errorf("dedupe-tx's verdict reads %q", got)
	}
	// Marked in every view shown (the note, the timeline, the ledger; the
	// closed panels are not drawn, TestLivePlayground_ShowsTwoLedgersDiverging
	// covers them).
	if n := eval[int](t, ctx, `document.querySelectorAll('#pg-1 [data-testid="pg-divergence"], #pg-1 [data-divergence], #pg-1 [data-divergent]').length`); n < 3 {
		t.Errorf("the divergence is marked in %d places, want it in every view shown", n)
	}
	// This state is the lesson's own starting point: its URL is the lesson.
	if href := eval[string](t, ctx, `location.pathname + location.search + location.hash`); href != "/lessons/"+lostAckSlug+"#pg-1" {
		t.Errorf("the lesson's starting state is at %s, want the lesson itself", href)
	}

	// Back is undo. (history.back, not chromedp.NavigateBack, which waits
	// for a page load that a swap never makes.)
	eval[bool](t, ctx, `history.back(), true`)
	waitScript(t, ctx, pg, "deliver msg-1 lose-ack")
	if got := ledgerFigure(t, ctx, pg, "increment"); got != "150" {
		t.Errorf("after Back increment shows %s, want 150", got)
	}
}

func TestBrowser_PlaygroundLostAck_WithJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		browsertest.ColorScheme("light"),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	// A marker on window survives swaps, not page loads.
	eval[bool](t, ctx, `window.__sameDocument = true`)
	lostAckSteps(t, ctx)
	if !eval[bool](t, ctx, `window.__sameDocument === true`) {
		t.Error("the page reloaded: with JavaScript the playground should swap in place")
	}
	// Forward again, then screenshots of the doubled state.
	eval[bool](t, ctx, `history.forward(), true`)
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1")
	saveElement(t, ctx, "#pg-1", "lesson-playground-light")

	// The shortcut help opens with "?".
	run(t, ctx, chromedp.Focus(chromedp.CSS(`#pg-1 [data-testid="pg-permalink"]`)), chromedp.KeyEvent("?"))
	if !eval[bool](t, ctx, `document.querySelector('#pg-1 [popover]').matches(':popover-open')`) {
		t.Error("? did not open the keyboard help")
	}
	run(t, ctx, chromedp.KeyEvent("?"))

	// The key "l" on a fresh delivery loses its ack.
	click(t, ctx, `#pg-1 [data-message="msg-2"] [data-testid="pg-deliver"]`)
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1; deliver msg-2")
	run(t, ctx, chromedp.KeyEvent("l"))
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1; deliver msg-2 lose-ack")

	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

func TestBrowser_PlaygroundLostAck_WithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		browsertest.DisableJavaScript(),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	lostAckSteps(t, ctx)
	// A fresh load of the current URL, so that chromedp's DOM queries see
	// the document history.back brought back.
	here := eval[string](t, ctx, `location.href.split("#")[0]`)
	run(t, ctx, chromedp.Navigate(here), chromedp.WaitVisible(chromedp.CSS(`#pg-1`)))
	saveElement(t, ctx, "#pg-1", "lesson-playground-no-js")
}

// TestBrowser_PlaygroundScreenshots takes the full-size playground in light
// and dark, and a lesson's playground at a phone's width.
func TestBrowser_PlaygroundScreenshots(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	target := srv.URL + "/playground?scenario=lost-ack"
	for _, scheme := range []string{"light", "dark"} {
		run(t, ctx,
			browsertest.ColorScheme(scheme),
			chromedp.Navigate(target),
			chromedp.WaitVisible(browsertest.TestID("pg-diagram")),
		)
		browsertest.Screenshot(t, ctx, "playground-"+scheme)
	}
	run(t, ctx,
		browsertest.ColorScheme("light"),
		chromedp.EmulateViewport(pgPhoneW, pgPhoneH, chromedp.EmulateMobile),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug+"#pg-1"),
		chromedp.WaitVisible(chromedp.CSS("#pg-1")),
	)
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > pgPhoneW {
		t.Errorf("at %dpx the lesson is %dpx wide: the playground overflows sideways", pgPhoneW, w)
	}
	saveElement(t, ctx, "#pg-1", "lesson-playground-phone")
	run(t, ctx, chromedp.Navigate(target), chromedp.WaitVisible(browsertest.TestID("pg-diagram")))
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > pgPhoneW {
		t.Errorf("at %dpx /playground is %dpx wide: something overflows sideways", pgPhoneW, w)
	}
	browsertest.Screenshot(t, ctx, "playground-phone")
	run(t, ctx, browsertest.ColorScheme("dark"), chromedp.Reload(), chromedp.WaitVisible(browsertest.TestID("pg-diagram")))
	browsertest.Screenshot(t, ctx, "playground-phone-dark")
	// The quiz blocks the lessons render ("Check yourself"), one choice picked.
	run(t, ctx,
		chromedp.EmulateViewport(1100, 900),
		browsertest.ColorScheme("light"),
		chromedp.Navigate(srv.URL+"/lessons/the-dedupe-table"),
		chromedp.WaitVisible(chromedp.CSS(".quiz")),
	)
	click(t, ctx, `.quiz li:first-child [data-correct="false"] label`)
	saveElement(t, ctx, ".quiz", "quiz-light")
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowser_PlaygroundEmbedGrows frames /embed/playground in a page served
// from another origin and waits for the iframe to take its content's height.
func TestBrowser_PlaygroundEmbedGrows(t *testing.T) {
	ctx := browsertest.New(t)
	var siteURL string
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Host</title></head><body>
<h1>Our runbook</h1>
<iframe id="pg" src="%[1]s/embed/playground?scenario=lost-ack" title="Idemlab playground" style="width:100%%;height:150px;border:0"></iframe>
<script>
addEventListener("message", function (e) {
  if (e.origin !== %[1]q || !e.data || e.data.type !== "idemlab:resize") return;
  var f = document.getElementById("pg");
  if (f.contentWindow === e.source) f.style.height = e.data.height + "px";
});
</script></body></html>`, siteURL)
	}))
	t.Cleanup(host.Close)
	srv := startCourseServer(t, Config{FrameAncestors: []string{host.URL}})
	siteURL = srv.URL

	run(t, ctx, chromedp.Navigate(host.URL), chromedp.WaitVisible(chromedp.CSS("#pg")))
	height, err := chromedp.Run(ctx, chromedp.Poll[int](`(function () {
		var h = document.getElementById("pg").getBoundingClientRect().height;
		return h > 600 ? Math.round(h) : 0;
	})()`, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		t.Fatalf("the iframe never grew past 150px: %v", err)
	}
	t.Logf("the embedded playground grew to %dpx", height)
	browsertest.Screenshot(t, ctx, "embed-host")
}

// Undo is the browser's Back only for states the page pushed itself: on the
// state a visitor opened, it says there is nothing to undo instead of
// leaving the playground.
func TestBrowser_PlaygroundUndoStaysOnThePage(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.Navigate(srv.URL+"/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1"),
		chromedp.WaitVisible(chromedp.CSS(`#playground`)),
	)
	waitScript(t, ctx, "playground", "deliver msg-1")
	if got := eval[string](t, ctx, `document.querySelector('#playground [data-undo]').getAttribute('aria-disabled')`); got != "true" {
		t.Errorf("Undo on the opened state: aria-disabled=%q, want true", got)
	}
	click(t, ctx, `#playground [data-undo]`)
	if err := poll(ctx, `(document.querySelector('[data-testid="announcer"]') || {}).textContent === "Nothing to undo: this is the state you opened."`); err != nil {
		t.Fatalf("Undo on the opened state did not say there is nothing to undo: %v", err)
	}
	if path := eval[string](t, ctx, `location.pathname`); path != "/playground" {
		t.Fatalf("Undo left the playground for %s", path)
	}

	click(t, ctx, `#playground [data-message="msg-2"] [data-testid="pg-deliver"]`)
	waitScript(t, ctx, "playground", "deliver msg-1; deliver msg-2")
	if got := eval[string](t, ctx, `document.querySelector('#playground [data-undo]').getAttribute('aria-disabled')`); got != "false" {
		t.Errorf("Undo after a click: aria-disabled=%q, want false", got)
	}
	click(t, ctx, `#playground [data-undo]`)
	waitScript(t, ctx, "playground", "deliver msg-1")
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
