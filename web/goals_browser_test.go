package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// tabTo presses Tab (nothing else) until the focused element matches css,
// and returns how many presses it took.
func tabTo(t *testing.T, ctx context.Context, css string) int {
	t.Helper()
	for n := 1; n <= 400; n++ {
		run(t, ctx, chromedp.KeyEvent(kb.Tab))
		if eval[bool](t, ctx, fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, css)) {
			return n
		}
	}
	t.Fatalf("400 Tab presses never reached %s (focus is on %s)", css,
		eval[string](t, ctx, `document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : "nothing"`))
	return 0
}

// A keyboard-only learner plays lesson 1's first goal: Tab to the script
// editor, open it with Enter, replace the script, run it with Enter. The
// goal ticks (the engine's check, redrawn by the swap), the panel counts
// it, and the focus stays in the playground. No mouse event is sent.
func TestBrowser_KeyboardOnlyLearnerMeetsAGoal(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-goals"]`)),
	)
	if eval[int](t, ctx, `document.querySelectorAll('#pg-1 [data-goal-met]').length`) != 0 {
		t.Fatal("a goal is met before the learner did anything")
	}
	summary := `#pg-1 details:has([data-testid="pg-script-form"]) > summary`
	presses := tabTo(t, ctx, summary)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	presses += tabTo(t, ctx, `#pg-1-script`)
	run(t, ctx,
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent(kb.Delete),
		chromedp.KeyEvent("deliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1"),
	)
	presses += tabTo(t, ctx, `#pg-1 [data-testid="pg-script-form"] button[type=submit]`)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `#pg-1[data-swapped] [data-goal-met="three-copies"]`)
	if got := strings.TrimSpace(eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-goals-count"]').textContent`)); got != "1 of 2 done" {
		t.Errorf("the goal panel says %q", got)
	}
	if !eval[bool](t, ctx, `!!document.activeElement && !!document.activeElement.closest('#pg-1')`) {
		t.Errorf("after the run the focus left the playground for %s", eval[string](t, ctx, `document.activeElement ? document.activeElement.tagName : "nothing"`))
	}
	// The next goal is now the one in view, reachable by Tab as well.
	if !eval[bool](t, ctx, `!document.querySelector('#pg-1 [data-goal="no-lost-ack"]').hidden`) {
		t.Error("the second goal is not shown once the first is met")
	}
	t.Logf("%d Tab presses from the top of the page to Run this script", presses)
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// With JavaScript off, a quiz grades a pick (the why of the picked choice
// shows, the others stay hidden) and a prediction is a form: pick, submit,
// and the page comes back with the verdicts and the why.
func TestBrowser_QuizAndPredictionWorkWithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		browsertest.DisableJavaScript(),
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/what-idempotent-means"),
		chromedp.WaitVisible(chromedp.CSS(".quiz")),
	)
	shown := `Array.from(document.querySelectorAll('.quiz li:first-child [data-testid="choice-why"]')).map(w => getComputedStyle(w).display !== "none")`
	if got := eval[[]bool](t, ctx, shown); strings.Contains(fmt.Sprint(got), "true") {
		t.Fatalf("whys shown before a pick: %v", got)
	}
	click(t, ctx, `.quiz li:first-child [data-correct="false"] label`)
	got := eval[[]bool](t, ctx, shown)
	wrong := eval[int](t, ctx, `Array.from(document.querySelectorAll('.quiz li:first-child [data-testid="choice"]')).findIndex(c => c.dataset.correct === "false")`)
	for i, on := range got {
		if on != (i == wrong) {
			t.Errorf("after picking choice %d the whys shown are %v", wrong+1, got)
			break
		}
	}
	if !strings.Contains(eval[string](t, ctx, `document.querySelectorAll('.quiz li:first-child [data-testid="choice-why"]')[`+fmt.Sprint(wrong)+`].textContent`), "Not quite.") {
		t.Error("the wrong pick is not graded as wrong")
	}

	if !eval[bool](t, ctx, `getComputedStyle(document.querySelector('#pg-1 .pg-verdicts')).display === "none"`) {
		t.Error("the verdicts show before the prediction")
	}
	click(t, ctx, `#pg-1 [data-testid="pg-predict-choice"]:nth-of-type(2) label`)
	click(t, ctx, `#pg-1 [data-testid="pg-predict-submit"]`)
	waitFor(t, ctx, `#pg-1 [data-testid="pg-predict-result"]`)
	result := eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-predict-result"]').textContent.replace(/\s+/g, " ")`)
	if !strings.Contains(result, "Not quite.") || !strings.Contains(result, "The answer is") {
		t.Errorf("the prediction's answer says %q", result)
	}
	if !eval[bool](t, ctx, `getComputedStyle(document.querySelector('#pg-1 .pg-verdicts')).display !== "none"`) {
		t.Error("the verdicts stay hidden after the answer")
	}
}
