package web

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// startPostgresCourseServer serves the built-in course with PostgreSQL
// ledgers of the test's own, as `idemlab serve -ledger-database` does.
func startPostgresCourseServer(t *testing.T) string {
	t.Helper()
	pg := testLedgers(t, 2)
	return startCourseServer(t, Config{Ledgers: pg}).URL
}

// stepsText is a playground's step list, whitespace folded.
func stepsText(t *testing.T, ctx context.Context, pg string) string {
	t.Helper()
	return eval[string](t, ctx, `(document.querySelector('#`+pg+` [data-testid="pg-steps"]') || {textContent: ""}).textContent.replace(/\s+/g, " ")`)
}

// A keyboard-only learner switches a playground from SQLite to PostgreSQL
// READ COMMITTED, steps B (which has begun) into the INSERT that A's open transaction holds,
// and reads PostgreSQL's wait in the step list and the diagram; then
// finishes A, then B, and sees B's INSERT come back with 0 rows. No mouse event is
// sent; the playground swaps in place.
func TestBrowser_KeyboardLearnerSwitchesToPostgresAndSeesTheWait(t *testing.T) {
	ctx := browsertest.New(t)
	base := startPostgresCourseServer(t)
	const start = "start msg-1 on A; start msg-1 on B; step A 2; step B"
	run(t, ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/playground?scenario=concurrent-duplicate&handlers=dedupe-tx,check-then-insert&script="+url.QueryEscape(start)),
		chromedp.WaitVisible(browsertest.TestID("pg-ledger-switch")),
	)
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="pg-ledger-switch"] [aria-current]').dataset.testid`); got != "pg-ledger-sqlite" {
		t.Fatalf("the playground starts on %s, want SQLite", got)
	}
	tabTo(t, ctx, `#playground [data-testid="pg-ledger-postgres-rc"]`)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `#playground[data-swapped] [data-testid="pg-ledger-postgres-rc"][aria-current]`)
	if strings.Contains(stepsText(t, ctx, "playground"), "SQLITE_BUSY") {
		t.Error("the PostgreSQL run speaks of SQLITE_BUSY")
	}

	// The workers' panel is closed: its controls are fetched when it opens.
	tabTo(t, ctx, `#playground details[data-more="workers"] > summary`)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `#playground [data-worker="B"] [data-testid="pg-step"]`)
	tabTo(t, ctx, `#playground [data-worker="B"] [data-testid="pg-step"]`)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitScript(t, ctx, "playground", start+"; step B")
	steps := stepsText(t, ctx, "playground")
	for _, want := range []string{"B runs INSERT processed_messages, and PostgreSQL makes it wait", "B waits on A's transaction", "pg_blocking_pids"} {
		if !strings.Contains(steps, want) {
			t.Errorf("after B's step the step list lacks %q:\n%s", want, steps)
		}
	}
	if !eval[bool](t, ctx, `document.querySelector('#playground [data-testid="pg-diagram"]').textContent.includes("waits")`) {
		t.Error("the diagram does not show B's statement waiting")
	}
	if !eval[bool](t, ctx, `!!document.activeElement && !!document.activeElement.closest('#playground')`) {
		t.Error("after the swap the focus left the playground")
	}

	tabTo(t, ctx, `#playground [data-worker="A"] [data-testid="pg-finish"]`)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitScript(t, ctx, "playground", start+"; step B; finish A")
	tabTo(t, ctx, `#playground [data-worker="B"] [data-testid="pg-finish"]`)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitScript(t, ctx, "playground", start+"; step B; finish A; finish B")
	if got := eval[string](t, ctx, `document.querySelector('#playground [data-testid="pg-verdict"][data-handler="dedupe-tx"]').dataset.verdict`); got != "ok" {
		t.Errorf("dedupe-tx on READ COMMITTED: %s, want ok", got)
	}
	if steps := stepsText(t, ctx, "playground"); !strings.Contains(steps, "B runs INSERT processed_messages — 0 rows changed") {
		t.Errorf("after A commits, B's INSERT does not come back with 0 rows:\n%s", steps)
	}
	saveElement(t, ctx, "#playground", "postgres-wait")
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// Lesson 6's READ COMMITTED block is live on a server with PostgreSQL: the
// switch reads READ COMMITTED, the verdicts are the lesson's, and opening
// the step list by keyboard shows B's INSERT waiting on A's transaction.
// On a phone, the page is no wider than the screen.
func TestBrowser_LessonPostgresBlockIsLive(t *testing.T) {
	ctx := browsertest.New(t)
	base := startPostgresCourseServer(t)
	spec := lessonPostgresBlock(t)
	block := "#" + spec.ID
	run(t, ctx,
		chromedp.EmulateViewport(pgPhoneW, pgPhoneH, chromedp.EmulateMobile),
		chromedp.Navigate(base+raceLesson),
		chromedp.WaitVisible(chromedp.CSS(block+"[data-pg]")),
	)
	if got := eval[string](t, ctx, `document.querySelector('`+block+` [data-testid="pg-ledger-switch"] [aria-current]').dataset.testid`); got != "pg-ledger-postgres-rc" {
		t.Errorf("the block's current ledger is %s", got)
	}
	for h, want := range spec.Expect {
		if got := eval[string](t, ctx, `document.querySelector('`+block+` [data-testid="pg-verdict"][data-handler="`+h+`"]').dataset.verdict`); got != want {
			t.Errorf("%s: %s, the lesson expects %s", h, got, want)
		}
	}
	run(t, ctx, chromedp.Focus(chromedp.CSS(block+` [data-testid="pg-show-steps"]`)), chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, block+`[data-swapped] [data-testid="pg-steps"]`)
	if steps := stepsText(t, ctx, spec.ID); !strings.Contains(steps, "B waits on A's transaction") || !strings.Contains(steps, "SQLSTATE 23505") && !strings.Contains(steps, "0 rows changed") {
		t.Errorf("the live block's steps:\n%s", steps)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > pgPhoneW {
		t.Errorf("the lesson is %d px wide on a %d px phone", w, pgPhoneW)
	}
	saveElement(t, ctx, block, "lesson-postgres-block-phone")
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// On a server without PostgreSQL the same block is the recorded run, in
// light and dark, and its SQLite link opens a live SQLite playground.
func TestBrowser_LessonPostgresBlockWithoutPostgresIsRecorded(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	spec := lessonPostgresBlock(t)
	block := "#" + spec.ID
	for _, scheme := range []string{"light", "dark"} {
		run(t, ctx,
			browsertest.ColorScheme(scheme),
			chromedp.EmulateViewport(pgPhoneW, pgPhoneH, chromedp.EmulateMobile),
			chromedp.Navigate(srv.URL+raceLesson),
			chromedp.WaitVisible(chromedp.CSS(block+` [data-testid="pg-recorded"]`)),
		)
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > pgPhoneW {
			t.Errorf("%s: the lesson is %d px wide on a %d px phone", scheme, w, pgPhoneW)
		}
		saveElement(t, ctx, block+` [data-testid="pg-recorded"]`, "lesson-postgres-recorded-"+scheme)
	}
	if eval[bool](t, ctx, `document.querySelector('`+block+`').hasAttribute("data-pg")`) {
		t.Error("the recorded block is a live playground")
	}
	run(t, ctx, chromedp.Focus(chromedp.CSS(block+` [data-testid="pg-recorded-sqlite"]`)), chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, block+`[data-pg]`)
	if eval[bool](t, ctx, `!!document.querySelector('`+block+` [data-testid="playground-expect"]')`) {
		t.Error("the SQLite run of a PostgreSQL block shows the lesson's PostgreSQL expectations")
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
