package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

// TestBrowser_PendingAndDeadLetteredInWords: what a learner sees when a run
// has not settled, and when the broker gave up. After "deliver msg-1
// crash-after 2" the broker still owes msg-1: both handlers read "Not
// finished yet" with the reason in words, in the neutral colour (not the
// red of a divergence), and nothing says "Diverged". A handler that fails on
// every delivery reads "dead-lettered after 5 failed deliveries".
func TestBrowser_PendingAndDeadLetteredInWords(t *testing.T) {
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	pending := srv.URL + "/playground?" + url.Values{"scenario": {"crash-mid-handler"}, "handlers": {"mark-before,dedupe-tx"},
		"script": {"deliver msg-1 crash-after 2"}}.Encode()
	run(t, ctx, browsertest.ColorScheme("light"), chromedp.Navigate(pending), chromedp.WaitVisible(browsertest.TestID("pg-verdict")))
	for _, h := range []string{"mark-before", "dedupe-tx"} {
		sel := fmt.Sprintf(`[data-testid="pg-verdict"][data-handler="%s"]`, h)
		if got := eval[string](t, ctx, `document.querySelector('`+sel+`').dataset.verdict`); got != "pending" {
			t.Errorf("%s: verdict %q, want pending", h, got)
		}
		label := strings.TrimSpace(eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="pg-verdict-label"]').innerText`))
		text := strings.Join(strings.Fields(eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="pg-verdict-text"]').innerText`)), " ")
		if label != "Not finished yet" || !strings.Contains(text, "the broker still owes a delivery") || !strings.Contains(text, "crashed before acking msg-1") {
			t.Errorf("%s reads %q: %q; want it not finished, with the crash in words", h, label, text)
		}
		// Neutral: neither the label's colour nor the card's background is
		// the one a divergence gets (--bad, --bad-bg).
		neutral := eval[bool](t, ctx, `(() => {
			const el = document.querySelector('`+sel+`'), label = el.querySelector('[data-testid="pg-verdict-label"]');
			const probe = document.createElement('span');
			probe.style.color = 'var(--bad)'; probe.style.backgroundColor = 'var(--bad-bg)';
			el.appendChild(probe);
			const bad = getComputedStyle(probe), ok = getComputedStyle(label).color !== bad.color && getComputedStyle(el).backgroundColor !== bad.backgroundColor;
			probe.remove();
			return ok;
		})()`)
		if !neutral {
			t.Errorf("%s: the pending verdict is drawn in the divergence colours", h)
		}
	}
	if body := eval[string](t, ctx, `document.querySelector('#playground').innerText`); strings.Contains(body, "Diverged") {
		t.Error(`a run that has not settled says "Diverged"`)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#playground [data-divergence], #playground [data-testid="pg-divergence"]').length`); n != 0 {
		t.Errorf("%d divergence marks in a run that has not settled", n)
	}

	// Dead-lettered: a learner's handler whose INSERT fails on every
	// delivery (processed_at is NOT NULL), delivered six times.
	script := "deliver msg-1" + strings.Repeat("; redeliver msg-1", 5)
	dead := srv.URL + "/playground?" + url.Values{"scenario": {"lost-ack"}, "script": {script},
		"handler": {"@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, NULL);\n"}}.Encode()
	run(t, ctx, chromedp.Navigate(dead), chromedp.WaitVisible(browsertest.TestID("pg-verdict")))
	sel := `[data-testid="pg-verdict"][data-handler="mine"]`
	if got := eval[string](t, ctx, `(document.querySelector('`+sel+`') || {dataset: {}}).dataset.verdict || "(none)"`); got != "dead-lettered" {
		t.Fatalf("the failing handler's verdict is %q, want dead-lettered", got)
	}
	label := strings.TrimSpace(eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="pg-verdict-label"]').innerText`))
	text := strings.Join(strings.Fields(eval[string](t, ctx, `document.querySelector('`+sel+` [data-testid="pg-verdict-text"]').innerText`)), " ")
	if label != "Gave up: dead-lettered" || !strings.Contains(text, "msg-1 was dead-lettered after 5 failed deliveries") || !strings.Contains(text, "dead-letter queue") {
		t.Errorf("the failing handler reads %q: %q; want dead-lettered after 5 failed deliveries, in words", label, text)
	}
	if errs := browsertest.PageErrors(ctx); len(errs) > 0 {
		t.Errorf("the pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
