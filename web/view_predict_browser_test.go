package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

// Browser tests of issue 30's "a prediction is asked before anything
// answers it": on lesson 2 the verdicts and ledgers stay hidden while the
// question is open, whatever the learner clicks first, until they answer
// or skip it; an answer or a skip is kept in the browser.

const predictSlug = "what-idempotent-means"

func verdictsShown(t *testing.T, ctx context.Context) bool {
	t.Helper()
	return eval[bool](t, ctx, `(() => {
		const v = document.querySelector('#pg-1 .pg-verdicts'), l = document.querySelector('#pg-1 [data-testid="pg-ledgers"]');
		return getComputedStyle(v).display !== "none" || (l && getComputedStyle(l).display !== "none");
	})()`)
}

func TestPlaygroundPredict_VerdictsWaitForAnAnswerOrSkip(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	eval[bool](t, ctx, `localStorage.clear(), true`)
	run(t, ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+predictSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-predict-form"]`)),
	)
	if verdictsShown(t, ctx) {
		t.Fatal("the verdicts show before the prediction")
	}
	// Any control first: the question is still open, the verdicts wait.
	for _, c := range []struct{ css, at string }{
		{`#pg-1 [data-testid="pg-back"]`, "2"},
		{`#pg-1 [data-testid="pg-start-over"]`, "0"},
		{`#pg-1 [data-message="msg-1"] [data-testid="pg-deliver"]`, "1"},
	} {
		click(t, ctx, c.css)
		waitAt(t, ctx, "pg-1", c.at)
		if !eval[bool](t, ctx, `!!document.querySelector('#pg-1 [data-testid="pg-predict-form"]')`) {
			t.Fatalf("after %s the question is gone", c.css)
		}
		if verdictsShown(t, ctx) {
			t.Errorf("after %s the verdicts show while the question is open", c.css)
		}
		if says := eval[string](t, ctx, `document.querySelector('#pg-1 [data-announce]').textContent`); !strings.HasPrefix(says, "Answer the question") {
			t.Errorf("after %s the live region reads the verdicts: %q", c.css, says)
		}
	}
	// Skip: the verdicts show, and stay shown after the next click and a reload.
	click(t, ctx, `#pg-1 [data-testid="pg-predict-skip"]`)
	if !verdictsShown(t, ctx) {
		t.Error("after Skip the verdicts are still hidden")
	}
	click(t, ctx, `#pg-1 [data-testid="pg-start-over"]`)
	waitAt(t, ctx, "pg-1", "0")
	if !verdictsShown(t, ctx) {
		t.Error("after Skip and a click the verdicts are hidden again")
	}
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-predict-form"]`)))
	if !verdictsShown(t, ctx) {
		t.Error("after Skip and a reload the verdicts are hidden again")
	}

	// A fresh browser answers instead: the answer is kept too.
	eval[bool](t, ctx, `localStorage.clear(), true`)
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-predict-form"]`)))
	if verdictsShown(t, ctx) {
		t.Fatal("with nothing kept the verdicts show before the prediction")
	}
	click(t, ctx, `#pg-1 [data-testid="pg-predict-choice"]:nth-of-type(1) label`)
	click(t, ctx, `#pg-1 [data-testid="pg-predict-submit"]`)
	waitFor(t, ctx, `#pg-1 [data-testid="pg-predict-result"]`)
	if !verdictsShown(t, ctx) {
		t.Error("after the answer the verdicts are hidden")
	}
	run(t, ctx, chromedp.Navigate(srv.URL+"/lessons/"+predictSlug), chromedp.WaitVisible(chromedp.CSS(`#pg-1`)))
	if !verdictsShown(t, ctx) {
		t.Error("a question answered on an earlier visit hides the verdicts again")
	}
	if got := eval[string](t, ctx, `JSON.stringify(JSON.parse(localStorage.getItem("idemlab.predictions")))`); !strings.Contains(got, fmt.Sprintf(`"/lessons/%s#pg-1":"1"`, predictSlug)) {
		t.Errorf("the answer kept is %s", got)
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// Without JavaScript the question can be skipped too (the form's Skip
// submits guess=skip), and the verdicts wait whatever is clicked first.
func TestPlaygroundPredict_SkipWithoutJavaScript(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	run(t, ctx,
		browsertest.DisableJavaScript(),
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+predictSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1 [data-testid="pg-predict-form"]`)),
	)
	// A control first: a new page, the question open, the verdicts hidden
	// by the server's own class (not only by the stylesheet's :has()).
	click(t, ctx, `#pg-1 [data-testid="pg-back"]`)
	waitFor(t, ctx, `#pg-1[data-at="2"] [data-testid="pg-predict-form"]`)
	if !eval[bool](t, ctx, `document.getElementById("pg-1").classList.contains("pg-predicting")`) || verdictsShown(t, ctx) {
		t.Error("after a click the verdicts are not hidden by the server while the question is open")
	}
	click(t, ctx, `#pg-1 [data-testid="pg-predict-skip"]`)
	waitFor(t, ctx, `#pg-1 [data-testid="pg-predict-result"][data-skipped="true"]`)
	if q := eval[string](t, ctx, `location.search`); !strings.Contains(q, "guess=skip") {
		t.Errorf("Skip led to %q, want guess=skip", q)
	}
	if !verdictsShown(t, ctx) {
		t.Error("after Skip the verdicts are hidden")
	}
	// The skip is part of the state: the next click keeps it.
	click(t, ctx, `#pg-1 [data-message="msg-1"] [data-testid="pg-deliver"]`)
	waitFor(t, ctx, `#pg-1:not([data-at="2"])`)
	if !verdictsShown(t, ctx) || !eval[bool](t, ctx, `!!document.querySelector('#pg-1 [data-testid="pg-predict-result"][data-skipped="true"]')`) {
		t.Error("after Skip and a click the question is back")
	}
}
