package web

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// Browser tests of issue 30's "focus that stays": after every playground
// action, shortcut and Check the focus is on the control the learner used
// (or, when that control is gone in the new state, the nearest one that
// does the same), never on the whole figure or <body>.

// activeDesc says where the focus is, for failure messages.
func activeDesc(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `(() => { const a = document.activeElement; if (!a) return "nothing"; const m = a.closest && a.closest("[data-message]"); return a.tagName.toLowerCase() + (a.id ? "#" + a.id : "") + " testid=" + (a.getAttribute("data-testid") || "") + (m ? " in " + m.getAttribute("data-message") : "") + " " + (a.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40) })()`)
}

// focusIs waits until the focused element matches css.
func focusIs(t *testing.T, ctx context.Context, after, css string) {
	t.Helper()
	if err := poll(ctx, fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, css)); err != nil {
		t.Errorf("after %s the focus is on %s, want %s", after, activeDesc(t, ctx), css)
	}
}

// waitSwap waits until pg's script and cursor are what the action leads to.
func waitAt(t *testing.T, ctx context.Context, pg, at string) {
	t.Helper()
	if err := poll(ctx, fmt.Sprintf(`document.getElementById(%q).dataset.at === %q && document.getElementById(%q).getAttribute("aria-busy") !== "true"`, pg, at, pg)); err != nil {
		t.Fatalf("waiting for %s at %s: %v (at %s)", pg, at, err, eval[string](t, ctx, `document.getElementById("`+pg+`").dataset.at`))
	}
}

// A keyboard-only learner walks the controls of lesson 2's first
// playground: Enter on Deliver, Redeliver, the timeline's ‹ and ›, and
// the shortcuts →, ←, Home, End, u and 0. After each the focus is on the
// control used (or its nearest equivalent), inside the playground.
func TestPlaygroundFocus_StaysOnTheControlUsed(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	const pg = "#pg-1"
	// Start over from the timeline, by keyboard.
	run(t, ctx, chromedp.Focus(chromedp.CSS(pg+` [data-testid="pg-start-over"]`)), chromedp.KeyEvent(kb.Enter))
	waitAt(t, ctx, "pg-1", "0")
	focusIs(t, ctx, "Enter on “0 start”", pg+` [data-testid="pg-timeline"] a, `+pg+` [data-testid="pg-timeline"] [tabindex]`)

	deliver := pg + ` [data-message="msg-1"] [data-testid="pg-deliver"]`
	run(t, ctx, chromedp.Focus(chromedp.CSS(deliver)), chromedp.KeyEvent(kb.Enter))
	waitScript(t, ctx, "pg-1", "deliver msg-1")
	// Delivered and acked, msg-1 cannot be delivered again: its Deliver,
	// greyed, keeps the focus and says why.
	focusIs(t, ctx, "Enter on Deliver msg-1", deliver)

	lose := pg + ` [data-testid="pg-lose-ack"]`
	run(t, ctx, chromedp.Focus(chromedp.CSS(lose)), chromedp.KeyEvent(kb.Enter))
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack")
	focusIs(t, ctx, "Enter on Lose the ack", lose)

	redeliver := pg + ` [data-message="msg-1"] [data-testid="pg-redeliver"]`
	run(t, ctx, chromedp.Focus(chromedp.CSS(redeliver)), chromedp.KeyEvent(kb.Enter))
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1")
	focusIs(t, ctx, "Enter on Redeliver msg-1", redeliver)

	// Shortcuts, pressed while Redeliver has the focus: it keeps it.
	for _, k := range []struct{ key, at, name string }{
		{kb.ArrowLeft, "1", "←"},
		{kb.ArrowRight, "2", "→"},
		{kb.Home, "0", "Home"},
		{kb.End, "2", "End"},
	} {
		run(t, ctx, chromedp.KeyEvent(k.key))
		waitAt(t, ctx, "pg-1", k.at)
		focusIs(t, ctx, "the shortcut "+k.name, redeliver)
	}
	run(t, ctx, chromedp.KeyEvent("u"))
	waitAt(t, ctx, "pg-1", "0")
	focusIs(t, ctx, "the shortcut u", redeliver)
	run(t, ctx, chromedp.KeyEvent("0"))
	if err := poll(ctx, `document.getElementById("pg-1").dataset.at === "2" && document.getElementById("pg-1").getAttribute("aria-busy") !== "true"`); err != nil {
		t.Fatalf("0 did not reset: %v", err)
	}
	focusIs(t, ctx, "the shortcut 0", redeliver)

	// The timeline's own links, used by Enter.
	back := pg + ` [data-testid="pg-back"]`
	run(t, ctx, chromedp.Focus(chromedp.CSS(back)), chromedp.KeyEvent(kb.Enter))
	waitAt(t, ctx, "pg-1", "1")
	focusIs(t, ctx, "Enter on ‹", back)
	fwd := pg + ` [data-testid="pg-forward"]`
	run(t, ctx, chromedp.Focus(chromedp.CSS(fwd)), chromedp.KeyEvent(kb.Enter))
	waitAt(t, ctx, "pg-1", "2")
	// At the end › is gone: the nearest control of the timeline has it.
	focusIs(t, ctx, "Enter on › to the last event", pg+` [data-testid="pg-timeline"] a, `+pg+` [data-testid="pg-timeline"] [data-current] [tabindex]`)

	// Reset, used by Enter.
	run(t, ctx, chromedp.Focus(chromedp.CSS(pg+` [data-message="msg-2"] [data-testid="pg-deliver"]`)), chromedp.KeyEvent(kb.Enter))
	waitAt(t, ctx, "pg-1", "3")
	reset := pg + ` [data-testid="pg-reset"]`
	run(t, ctx, chromedp.Focus(chromedp.CSS(reset)), chromedp.KeyEvent(kb.Enter))
	waitAt(t, ctx, "pg-1", "2")
	focusIs(t, ctx, "Enter on Reset", pg+` a, `+pg+` button`)
	if got := eval[string](t, ctx, `document.activeElement.getAttribute("data-testid") || ""`); got == "pg-skip" || got == "playground" {
		t.Errorf("after Reset the focus is on %s", activeDesc(t, ctx))
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// Lesson 17's Kafka playground is played with Poll and Rebalance, in view
// with the records (no panel to open), and the focus stays on Poll.
func TestPlaygroundPartition_PollInViewAndFocused(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(srv.URL+"/lessons/offsets-and-exactly-once"), chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-poll"]`)))
	if n := eval[int](t, ctx, `document.querySelectorAll('#pg-1 [data-testid="pg-message"] [data-testid="pg-deliver"]').length`); n != 0 {
		t.Errorf("lesson 17 shows %d Deliver controls that cannot apply to a partition", n)
	}
	script := eval[string](t, ctx, `document.getElementById("pg-1").dataset.script`)
	run(t, ctx, chromedp.Focus(chromedp.CSS(`#pg-1 [data-testid="pg-poll"]`)), chromedp.KeyEvent(kb.Enter))
	if err := poll(ctx, `document.getElementById("pg-1").dataset.script !== `+strconv.Quote(script)+` && document.getElementById("pg-1").getAttribute("aria-busy") !== "true"`); err != nil {
		t.Fatalf("Poll did not add an event: %v", err)
	}
	if got := eval[string](t, ctx, `document.getElementById("pg-1").dataset.script`); !strings.HasSuffix(got, "poll") {
		t.Errorf("after Poll the script is %q", got)
	}
	if err := poll(ctx, `document.activeElement && document.activeElement.getAttribute("data-testid") === "pg-poll"`); err != nil {
		t.Errorf("after Poll the focus is on %s: %v", activeDesc(t, ctx), err)
	}
}
