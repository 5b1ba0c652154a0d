package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// Browser tests of the learner never being thrown off the lesson: a typo
// in the script editor, Undo, Back and the arrow keys all keep them on the
// lesson, in the playground, with the focus there too.

// typeBadScript opens pg-1's script editor, types a script whose line 2 is
// wrong and runs it.
func typeBadScript(t *testing.T, ctx context.Context) {
	t.Helper()
	eval[bool](t, ctx, `(() => { document.querySelector('#pg-1 [data-testid="pg-script-form"]').closest('details').open = true; return true })()`)
	area := `#pg-1 [data-testid="pg-script-form"] textarea`
	run(t, ctx, chromedp.SetValue(chromedp.CSS(area), "deliver msg-1 lose-ack\ndelivr msg-1"))
	click(t, ctx, `#pg-1 [data-testid="pg-script-form"] button[type=submit]`)
}

func checkProblemInPlace(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := poll(ctx, `document.readyState === "complete" && !!document.querySelector('#pg-1 [data-testid="pg-problem"]')`); err != nil {
		t.Fatalf("no problem shown in the playground: %v", err)
	}
	if path := eval[string](t, ctx, `location.pathname`); path != "/lessons/"+lostAckSlug {
		t.Errorf("the learner left the lesson for %s", path)
	}
	if eval[bool](t, ctx, `!!document.querySelector('[data-testid="error-message"]')`) || !eval[bool](t, ctx, `!!document.querySelector('[data-testid="lesson-body"]')`) {
		t.Error("the lesson was replaced by an error page")
	}
	msg := eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-problem"]').textContent.replace(/\s+/g, " ")`)
	for _, want := range []string{"line 2", `unknown event "delivr"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("problem %q lacks %q", msg, want)
		}
	}
	if got := eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-script-form"] textarea').value`); got != "deliver msg-1 lose-ack\ndelivr msg-1" {
		t.Errorf("the editor lost the learner's text: %q", got)
	}
	// The playground keeps its last good state: the lesson's script.
	if got := eval[string](t, ctx, `document.getElementById("pg-1").dataset.script`); got != "deliver msg-1 lose-ack; redeliver msg-1" {
		t.Errorf("the playground shows %q, want its last good state", got)
	}
}

func TestBrowser_BadScriptStaysOnTheLesson_WithJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug), chromedp.WaitVisible(chromedp.CSS(`#pg-1`)))
	typeBadScript(t, ctx)
	checkProblemInPlace(t, ctx)
	// The caret is on the wrong line, ready to fix it.
	if err := poll(ctx, `document.activeElement && document.activeElement.matches('#pg-1 textarea[aria-invalid="true"]')`); err != nil {
		t.Fatalf("the focus is not in the script editor: %v", err)
	}
	sel := eval[string](t, ctx, `(() => { const a = document.activeElement; return a.value.slice(a.selectionStart, a.selectionEnd) })()`)
	if sel != "delivr msg-1" {
		t.Errorf("selected %q, want the wrong line", sel)
	}
	// The one 400 is the rejected script's answer; nothing else may fail.
	for _, e := range browsertest.PageErrors(ctx) {
		if !strings.Contains(e, "status of 400") {
			t.Errorf("the page reported an error: %s", e)
		}
	}
}

func TestBrowser_BadScriptStaysOnTheLesson_WithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		browsertest.DisableJavaScript(),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	typeBadScript(t, ctx)
	checkProblemInPlace(t, ctx)
}

// After a control, Undo and Back, the focus is still inside the
// playground, so the next arrow key moves through its events instead of
// opening the next lesson.
func TestBrowser_KeysStayInThePlayground(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug), chromedp.WaitVisible(chromedp.CSS(`#pg-1`)))
	focusedInPg := `document.activeElement && document.activeElement !== document.body && !!document.activeElement.closest('#pg-1')`

	click(t, ctx, `#pg-1 [data-message="msg-1"] [data-testid="pg-publish"]`)
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1; publish msg-1")
	if err := poll(ctx, focusedInPg); err != nil {
		t.Fatalf("after a control the focus left the playground: %v", err)
	}
	run(t, ctx, chromedp.KeyEvent("u"))
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1")
	if err := poll(ctx, focusedInPg); err != nil {
		t.Fatalf("after Undo the focus is on %s: %v", eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 80)`), err)
	}
	// ← inside the playground is its "back one event", not the previous lesson.
	run(t, ctx, chromedp.KeyEvent(kb.ArrowLeft))
	if err := poll(ctx, `document.getElementById("pg-1").dataset.at === "1"`); err != nil {
		t.Fatalf("← did not step the playground back: %v", err)
	}
	if err := poll(ctx, focusedInPg); err != nil {
		t.Fatalf("after Back the focus left the playground: %v", err)
	}
	run(t, ctx, chromedp.KeyEvent(kb.ArrowRight))
	if err := poll(ctx, `document.getElementById("pg-1").dataset.at === "2"`); err != nil {
		t.Fatalf("→ did not step the playground forward: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // a navigation would have started by now
	if path := eval[string](t, ctx, `location.pathname`); path != "/lessons/"+lostAckSlug {
		t.Fatalf("an arrow key inside the playground opened %s", path)
	}
}

// Each playground has a skip link, first in its tab order, that moves the
// focus past it.
func TestBrowser_SkipLinkPassesThePlayground(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug), chromedp.WaitVisible(chromedp.CSS(`#pg-1`)))
	first := eval[string](t, ctx, `document.querySelector('#pg-1').querySelector('a[href], button, summary, textarea, input').dataset.testid`)
	if first != "pg-skip" {
		t.Errorf("the first stop in the playground is %q, want the skip link", first)
	}
	run(t, ctx, chromedp.Focus(chromedp.CSS(`#pg-1 [data-testid="pg-skip"]`)), chromedp.KeyEvent("\r"))
	if err := poll(ctx, `document.activeElement && document.activeElement.id === "pg-1-end"`); err != nil {
		t.Fatalf("the skip link did not move the focus past the playground: %v", err)
	}
}
