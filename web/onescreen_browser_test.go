package web

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

// pgHeights is the playground's height and its parts', for a message
// that says where the height goes.
const pgHeights = `(() => { const f = document.getElementById("pg-1"); const parts = Array.from(f.children).map(c => (c.className || c.tagName) + "=" + Math.round(c.getBoundingClientRect().height)); return Math.round(f.getBoundingClientRect().height) + " (" + parts.join(", ") + ")" })()`

// A lesson playground's default state on a laptop (1280×800) fits the
// screen: the controls beside the verdicts and the ledgers; the rows, the
// charts, the diagram and the step list are panels not even drawn until
// their toggle is followed.
func TestBrowser_LessonPlaygroundOneScreen(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	// The goals panel above the controls (playview/goals.templ) counts in the
	// whole, and is held to a bound of its own: one task, a way to help.
	const maxHeight, maxGoals = 800, 90
	if goals := eval[float64](t, ctx, `document.querySelector('#pg-1 [data-testid="pg-goals"]').getBoundingClientRect().height`); goals > maxGoals {
		t.Errorf("the goals panel is %.0f px tall, want at most %d", goals, maxGoals)
	}
	if h := eval[float64](t, ctx, `document.getElementById("pg-1").getBoundingClientRect().height`); h > maxHeight {
		t.Errorf("the lesson playground is %s px tall, want at most %d", eval[string](t, ctx, pgHeights), maxHeight)
	}
	beside := eval[bool](t, ctx, `(() => {
		const box = id => document.querySelector('#pg-1 [data-testid="' + id + '"]').getBoundingClientRect();
		const c = box("pg-controls"), l = box("pg-ledgers"), v = box("playground-handlers");
		const overlaps = r => r.top < c.bottom && c.top < r.bottom;
		return c.left >= l.right - 1 && c.left >= v.right - 1 && overlaps(l) && overlaps(v) })()`)
	if !beside {
		t.Error("the controls are not beside the verdicts and the ledgers")
	}
	for _, id := range []string{"pg-rows", "pg-chart-panel", "pg-diagram-panel", "pg-steps", "pg-sql"} {
		if n := eval[int](t, ctx, `document.querySelectorAll('#pg-1 [data-testid="`+id+`"]').length`); n != 0 {
			t.Errorf("%s is drawn %d times in the default state, want 0 (a closed panel)", id, n)
		}
	}
	for _, id := range []string{"pg-show-rows", "pg-show-chart", "pg-show-diagram", "pg-show-steps"} {
		if got := eval[string](t, ctx, `document.querySelector('#pg-1 [data-testid="`+id+`"]').getAttribute("aria-expanded")`); got != "false" {
			t.Errorf("%s: aria-expanded=%q, want false", id, got)
		}
	}
	t.Logf("playground: %s", eval[string](t, ctx, pgHeights))
	viewportShot(t, ctx, "#pg-1", "lesson-playground-1280x800")
}

// viewportShot scrolls css to the top of the screen, under the site's
// header, and saves what the screen shows (docs/ holds copies).
func viewportShot(t *testing.T, ctx context.Context, css, name string) {
	t.Helper()
	eval[bool](t, ctx, `(() => { const el = document.querySelector(`+"`"+css+"`"+`); window.scrollTo({top: el.getBoundingClientRect().top + window.scrollY - document.querySelector(".site-header").offsetHeight - 8, behavior: "instant"}); return true })()`)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path, err := browsertest.SaveScreenshot(t.Name(), name, png)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s: %s", name, path)
}

// On a phone, the verdicts stay in view after a control is tapped far
// below them.
func TestBrowser_PhoneVerdictsStayInView(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.EmulateViewport(pgPhoneW, pgPhoneH, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	viewportShot(t, ctx, "#pg-1", "lesson-playground-390x844")
	click(t, ctx, `#pg-1 [data-message="msg-2"] [data-testid="pg-deliver"]`)
	waitScript(t, ctx, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1; deliver msg-2")
	inView := `(() => { const r = document.querySelector('#pg-1 [data-testid="playground-handlers"]').getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight })()`
	if err := poll(ctx, inView); err != nil {
		t.Errorf("after tapping Deliver the verdicts are off screen: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if path, err := browsertest.SaveScreenshot(t.Name(), "lesson-playground-390x844-after-deliver", png); err == nil {
		t.Logf("screenshot after Deliver: %s", path)
	}
}

// The sequence diagram opens at its top (never pre-scrolled), fits the
// lesson's width, keeps its lane names in view while it scrolls, and no
// text in it, or in the charts, is drawn under 12 px.
// Lesson 6's race has the tallest diagram of a lesson.
func TestBrowser_SequenceDiagramIsReadable(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/check-then-insert-race"),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	click(t, ctx, `#pg-1 [data-testid="pg-show-diagram"]`)
	scroller := `document.querySelector('#pg-1 [data-testid="pg-diagram-scroll"]')`
	if err := poll(ctx, `!!`+scroller); err != nil {
		t.Fatalf("the diagram did not open: %v", err)
	}
	if sideways := eval[float64](t, ctx, scroller+`.scrollWidth - `+scroller+`.clientWidth`); sideways > 1 {
		t.Errorf("the diagram is %v px wider than its box: it should fit the lesson's width", sideways)
	}
	if top := eval[float64](t, ctx, scroller+`.scrollTop`); top != 0 {
		t.Errorf("the diagram opened scrolled by %v px", top)
	}
	smallest := eval[float64](t, ctx, `Math.min(...Array.from(document.querySelectorAll('#pg-1 svg.pg-dg text')).map(e => parseFloat(getComputedStyle(e).fontSize)))`)
	if smallest < 12 {
		t.Errorf("the smallest diagram text is %v px, want at least 12", smallest)
	}
	if !eval[bool](t, ctx, scroller+`.scrollHeight > `+scroller+`.clientHeight + 20`) {
		t.Fatal("the diagram does not scroll: this test needs a taller one")
	}
	gap := eval[float64](t, ctx, `(() => { const s = `+scroller+`; s.scrollTop = s.scrollHeight; const lanes = s.querySelector('[data-testid="pg-diagram-lanes"]'); return Math.abs(lanes.getBoundingClientRect().top - s.getBoundingClientRect().top) })()`)
	if gap > 2 {
		t.Errorf("after scrolling, the lane names are %v px from the top of the diagram", gap)
	}
	eval[bool](t, ctx, scroller+`.scrollTop = 0; true`)
	saveElement(t, ctx, `#pg-1 [data-testid="pg-diagram-panel"]`, "lesson-diagram")

	// The charts, scaled to their ledger's width, keep their text at 12 px
	// or more too.
	click(t, ctx, `#pg-1 [data-testid="pg-show-chart"]`)
	if err := poll(ctx, `!!document.querySelector('#pg-1 svg[data-testid="pg-chart"]')`); err != nil {
		t.Fatalf("the charts did not open: %v", err)
	}
	chartText := eval[float64](t, ctx, `Math.min(...Array.from(document.querySelectorAll('#pg-1 svg[data-testid="pg-chart"]')).flatMap(svg => {
		const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
		return Array.from(svg.querySelectorAll("text")).map(e => parseFloat(getComputedStyle(e).fontSize) * scale) }))`)
	if chartText < 12 {
		t.Errorf("the smallest chart text is drawn at %.1f px, want at least 12", chartText)
	}
}
