package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/web/playurl"
	"idemlab/web/site"
)

// Browser tests of issue 30's layout items that the stylesheets and the
// small scripts hold: an editor to write in, a sticky "On this page", a
// phone verdict bar of one height, touch wording, and the axe findings on
// scrollable regions and dark line numbers.

// TestExerciseEditor_TakesTheWidth: from 1200 px the editor is at least 60%
// of the content width, its long lines scroll rather than being cut, and
// the handler reference is a collapsible aside of bounded height (closed
// on a phone), so Check's result is not a page away.
func TestExerciseEditor_TakesTheWidth(t *testing.T) {
	ctx := browsertest.New(t)
	srv := exServe(t)
	spec := builtinExercise(t, "dedupe-credit")
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	for _, w := range []int64{1200, 1280, 1440, 1920} {
		run(t, ctx,
			chromedp.EmulateViewport(w, 800),
			chromedp.Navigate(srv.URL+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID),
			chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid="exercise-editor"]`)),
		)
		got := eval[[]float64](t, ctx, `(() => {
			const a = document.querySelector('`+sel+` [data-testid="exercise-editor"]');
			const main = document.querySelector("main").getBoundingClientRect().width;
			const ref = document.querySelector('`+sel+` [data-testid="handler-reference"]').getBoundingClientRect().height;
			const check = document.querySelector('`+sel+` [data-testid="exercise-check"]').getBoundingClientRect().bottom;
			// The result (empty before a check) comes right after the workbench.
			const result = document.querySelector('`+sel+` .exercise-workbench').getBoundingClientRect().bottom;
			return [a.getBoundingClientRect().width, main, ref, result - check];
		})()`)
		editor, main, ref, gap := got[0], got[1], got[2], got[3]
		t.Logf("at %d px: editor %.0f of %.0f px (%.0f%%), handler reference %.0f px tall, Check to result %.0f px", w, editor, main, 100*editor/main, ref, gap)
		if editor < 0.6*main {
			t.Errorf("at %d px the editor is %.0f px of %.0f: under 60%%", w, editor, main)
		}
		if ref > 0.65*800 {
			t.Errorf("at %d px the handler reference is %.0f px tall", w, ref)
		}
		if gap > 800 {
			t.Errorf("at %d px the result is %.0f px below Check", w, gap)
		}
		cut := eval[bool](t, ctx, `(() => {
			const a = document.querySelector('`+sel+` [data-testid="exercise-editor"]'), s = getComputedStyle(a);
			return a.scrollWidth > a.clientWidth && s.overflowX !== "auto" && s.overflowX !== "scroll" && s.whiteSpace !== "pre-wrap";
		})()`)
		if cut {
			t.Errorf("at %d px long lines of the editor are cut off", w)
		}
	}
	// On a phone the reference starts closed. (A new URL: the same one with
	// its #fragment would not load the page again.)
	run(t, ctx,
		chromedp.EmulateViewport(exPhoneWidth, exPhoneHeight, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(srv.URL+playurl.LessonPath(spec.Lesson)),
		chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid="exercise-editor"]`)),
	)
	if eval[bool](t, ctx, `document.querySelector('`+sel+` [data-testid="handler-reference"] details').open`) {
		t.Error("on a phone the handler reference is open")
	}
	// "Ctrl+Enter checks" is not said on a touch screen.
	if eval[bool](t, ctx, `(() => { const k = document.querySelector('`+sel+` .exercise-help kbd'); return !!k && k.getClientRects().length > 0 })()`) {
		t.Error("on a touch screen the exercise says Ctrl+Enter checks")
	}
	run(t, ctx, chromedp.EmulateViewport(1280, 800, chromedp.EmulateLandscape), chromedp.Navigate(srv.URL+playurl.LessonPath(spec.Lesson)+"?desk=1"),
		chromedp.WaitVisible(chromedp.CSS(sel+` [data-testid="exercise-editor"]`)))
	if !eval[bool](t, ctx, `document.querySelector('`+sel+` .exercise-help kbd').getClientRects().length > 0`) {
		t.Error("with a mouse and a keyboard the Ctrl+Enter hint is hidden")
	}
}

// TestLessonToc_StickyOnWideScreens: "On this page" stays in view while a
// long lesson scrolls, from 1280 px.
func TestLessonToc_StickyOnWideScreens(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	for _, w := range []int64{1280, 1440} {
		run(t, ctx,
			chromedp.EmulateViewport(w, 800),
			chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="toc"]`)),
		)
		got := eval[[]float64](t, ctx, `(() => {
			scrollTo({top: document.documentElement.scrollHeight / 2, behavior: "instant"});
			const r = document.querySelector('[data-testid="toc"]').getBoundingClientRect();
			const body = document.querySelector('[data-testid="lesson-body"]').getBoundingClientRect();
			return [r.top, r.bottom, r.left, body.right, scrollY];
		})()`)
		if got[0] < 0 || got[1] > 800 || got[0] > 400 {
			t.Errorf("at %d px, scrolled to %.0f, the table of contents is at %.0f–%.0f: not in view", w, got[4], got[0], got[1])
		}
		if got[2] < got[3] {
			t.Errorf("at %d px the table of contents (left %.0f) overlaps the text (right %.0f)", w, got[2], got[3])
		}
	}
}

// TestPhoneVerdictBar_KeepsItsHeight: the sticky verdict bar is as tall
// stuck under the header as in place, so the controls under it do not jump.
func TestPhoneVerdictBar_KeepsItsHeight(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		chromedp.EmulateViewport(pgPhoneW, pgPhoneH, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	)
	bar := `document.querySelector('#pg-1 [data-testid="playground-handlers"]')`
	heightAt := func(where string) (float64, float64) {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(async () => {
			const b = `+bar+`;
			`+where+`
			await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
			const c = document.querySelector('#pg-1 [data-testid="pg-controls"]');
			return [b.getBoundingClientRect().height, c.getBoundingClientRect().top + scrollY];
		})()`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		return v[0], v[1]
	}
	placed, ctlPlaced := heightAt(`scrollTo({top: b.getBoundingClientRect().top + scrollY - 300, behavior: "instant"});`)
	stuck, ctlStuck := heightAt(`scrollTo({top: b.getBoundingClientRect().top + scrollY + 200, behavior: "instant"});`)
	t.Logf("verdict bar: %.0f px in place, %.0f px stuck", placed, stuck)
	if d := placed - stuck; d > 1 || d < -1 {
		t.Errorf("the verdict bar is %.0f px in place and %.0f px stuck: the controls jump", placed, stuck)
	}
	if d := ctlPlaced - ctlStuck; d > 1 || d < -1 {
		t.Errorf("the controls moved %.0f px in the page when the bar stuck", d)
	}
}

// axeRules runs the named axe rules on the page and returns their
// violations, one line each.
func axeRules(t *testing.T, ctx context.Context, src string, rules ...string) []string {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+";true")); err != nil {
		t.Fatalf("loading axe: %v", err)
	}
	q := fmt.Sprintf(`axe.run(document, {runOnly: {type: "rule", values: ["%s"]}, resultTypes: ["violations"]}).then(r => r.violations
		.map(v => v.impact + " " + v.id + ": " + v.nodes.slice(0, 3).map(n => n.target.join(" ") + " " + (n.any[0] || {message: ""}).message).join(" | ")))`, strings.Join(rules, `", "`))
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](q, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("running axe: %v", err)
	}
	return found
}

// TestAxe_ScrollableRegionsAndDarkLineNumbers: the serious findings of the
// issue's axe run: lesson 14's exercise source and lesson 6's recorded
// step table scroll by keyboard, and code line numbers have 4.5:1 in the
// dark theme.
func TestAxe_ScrollableRegionsAndDarkLineNumbers(t *testing.T) {
	src := axeSource(t)
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	for _, p := range []struct {
		slug   string
		w, h   int64
		scheme string
	}{
		{"producer-duplicates-and-business-keys", 1280, 800, "dark"},
		{"producer-duplicates-and-business-keys", 390, 844, "dark"},
		{"producer-duplicates-and-business-keys", 1280, 800, "light"},
		{"check-then-insert-race", 390, 844, "light"},
		{"check-then-insert-race", 390, 844, "dark"},
	} {
		run(t, ctx,
			browsertest.ColorScheme(p.scheme),
			chromedp.EmulateViewport(p.w, p.h),
			chromedp.Navigate(srv.URL+"/lessons/"+p.slug),
		)
		waitFor(t, ctx, `[data-testid="lesson-body"]`)
		for _, v := range axeRules(t, ctx, src, "scrollable-region-focusable", "color-contrast") {
			t.Errorf("%s at %d px, %s: %s", p.slug, p.w, p.scheme, v)
		}
	}
}

// TestAxe_PlaygroundLandmarksUnique: on a lesson with three playgrounds
// each one's Ledgers and Controls regions have a name of their own, after
// a swap too, and in the server's markup (without JavaScript), named by
// the block.
func TestAxe_PlaygroundLandmarksUnique(t *testing.T) {
	src := axeSource(t)
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug))
	waitFor(t, ctx, `#pg-3`)
	for _, v := range axeRules(t, ctx, src, "landmark-unique") {
		t.Errorf("on load: %s", v)
	}
	click(t, ctx, `#pg-2 [data-testid="pg-start-over"]`)
	waitAt(t, ctx, "pg-2", "0")
	for _, v := range axeRules(t, ctx, src, "landmark-unique") {
		t.Errorf("after a swap: %s", v)
	}

	noJS := browsertest.New(t)
	run(t, noJS, browsertest.DisableJavaScript(), chromedp.EmulateViewport(1280, 800), chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug))
	waitFor(t, noJS, `#pg-3`)
	// axe's promise cannot settle with scripts off: the rule's test, by hand.
	labels := eval[[]string](t, noJS, `[...document.querySelectorAll("[data-pg] section[aria-label]")].map(s => s.getAttribute("aria-label"))`)
	seen := map[string]bool{}
	for _, l := range labels {
		if seen[l] {
			t.Errorf("without JavaScript two playground regions are both named %q", l)
		}
		seen[l] = true
	}
	if len(labels) < 6 {
		t.Errorf("without JavaScript the page's playgrounds name %d regions, want Ledgers and Controls for each of 3: %q", len(labels), labels)
	}
	if got := eval[string](t, noJS, `document.querySelector('#pg-2 [data-testid="pg-ledgers"]').getAttribute("aria-label")`); !strings.HasPrefix(got, "Ledgers, playground 2: ") {
		t.Errorf("pg-2's ledgers are named %q, want them named by the block", got)
	}
}

// TestScrollers_FocusableInMarkup: lesson 14's inverse exercise source and
// lesson 6's recorded step list scroll, and the server's markup (no
// JavaScript to add a tabindex) puts each in the tab order with a name.
func TestScrollers_FocusableInMarkup(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	for _, p := range []struct{ slug, sel string }{
		{"producer-duplicates-and-business-keys", `.exercise-source[data-testid="inverse-handler"]`},
		{"check-then-insert-race", `[data-recorded] [data-testid="pg-recorded-steps"]`},
	} {
		run(t, ctx, browsertest.DisableJavaScript(), chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/lessons/"+p.slug))
		waitFor(t, ctx, `[data-testid="lesson-body"]`)
		got := eval[string](t, ctx, `(() => {
			const e = document.querySelector('`+p.sel+`');
			if (!e) return "missing";
			const scrolls = e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1;
			return "scrolls=" + scrolls + " tabindex=" + e.getAttribute("tabindex") + " named=" + !!(e.getAttribute("aria-label") || "").trim();
		})()`)
		if got != "scrolls=true tabindex=0 named=true" {
			t.Errorf("%s %s: %s, want a scrolling box in the tab order with a name", p.slug, p.sel, got)
		}
		// Nothing inside scrolls on its own, out of the keyboard's reach.
		inner := eval[[]string](t, ctx, `[...document.querySelectorAll('`+p.sel+` *')].filter(e => {
			const s = getComputedStyle(e);
			return /(auto|scroll)/.test(s.overflowX + s.overflowY) && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1) && !e.hasAttribute("tabindex");
		}).map(e => e.tagName + "." + e.className)`)
		if len(inner) > 0 {
			t.Errorf("%s: inside %s these scroll out of the keyboard's reach: %q", p.slug, p.sel, inner)
		}
	}
}

// TestAxe_PagesOfTheThirdEdition: the pages issue 30's template changes
// touch, at a laptop's width and a phone's, with no violation of any
// impact but minor: the check's result page (the form's answer, with its
// h1 and result heading), lesson 17's partition controls, lesson 2 after a
// skip, lesson 6's recorded block and lesson 14's inverse exercise.
func TestAxe_PagesOfTheThirdEdition(t *testing.T) {
	src := axeSource(t)
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	spec := builtinExercise(t, "dedupe-credit")
	notMinor := `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact !== "minor")
		.map(v => v.impact + " " + v.id + ": " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")))`
	for _, w := range []int64{1280, 390} {
		for _, p := range []struct{ name, path, ready string }{
			{"lesson 17", "/lessons/offsets-and-exactly-once", `#pg-1 [data-testid="pg-poll"]`},
			{"lesson 2, skipped", "/lessons/what-idempotent-means?pg=pg-1&guess=skip#pg-1", `#pg-1 [data-testid="pg-predict-result"]`},
			{"lesson 6", "/lessons/check-then-insert-race", `[data-testid="pg-recorded-steps"]`},
			{"lesson 14", "/lessons/producer-duplicates-and-business-keys", `[data-testid="inverse-handler"]`},
			{"result page", site.ExercisePath(spec.ID), `[data-testid="exercise-editor"]`},
		} {
			run(t, ctx, chromedp.EmulateViewport(w, 844), chromedp.Navigate(srv.URL+p.path))
			waitFor(t, ctx, p.ready)
			if p.name == "result page" {
				eval[bool](t, ctx, `document.querySelector('[data-exercise-form]').submit(), true`)
				if err := browsertest.WaitForPath(ctx, site.ExerciseCheckPath(spec.ID)); err != nil {
					t.Fatal(err)
				}
				exWait(t, ctx, "the counterexample", exResultState(spec.ID)+` === "fail"`)
			}
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+";true")); err != nil {
				t.Fatalf("loading axe: %v", err)
			}
			found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](notMinor, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("%s at %d: running axe: %v", p.name, w, err)
			}
			for _, v := range found {
				t.Errorf("%s at %d px: %s", p.name, w, v)
			}
		}
	}
}
