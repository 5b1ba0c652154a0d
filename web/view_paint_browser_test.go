package web

import (
	"log/slog"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/lessons"
	"idemlab/web/admit"
)

// BenchmarkClickToPaint measures a playground click in headless Chromium,
// as issue 30 asks: from the click to the second animation frame after the
// swap (the frame that paints it), as a ratio to the page's own frame (its
// requestAnimationFrame interval, measured in the same run), median and
// p90. It alternates ‹ and › on lesson 1's first playground.
//
//	go test ./web -run '^$' -bench ClickToPaint -benchtime 60x
func BenchmarkClickToPaint(b *testing.B) {
	ctx := browsertest.New(b)
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, course)
	if err != nil {
		b.Fatal(err)
	}
	// One learner clicking 60 times in a few seconds: no rate limit.
	unlimited := admit.NewRateLimiter(1e12, 1e12, false)
	s.limiter, s.adm.Limiter = unlimited, unlimited
	srv := httptest.NewServer(s.Handler())
	b.Cleanup(srv.Close)
	b.StopTimer()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(srv.URL+"/lessons/"+lostAckSlug),
		chromedp.WaitVisible(chromedp.CSS(`#pg-1`)),
	); err != nil {
		b.Fatal(err)
	}
	frame, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`new Promise(r => { const ts = []; const f = t => { ts.push(t); if (ts.length < 61) { requestAnimationFrame(f); return; } const d = ts.slice(1).map((t, i) => t - ts[i]).sort((a, b) => a - b); r(d[d.length >> 1]); }; requestAnimationFrame(f); })`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.Fatal(err)
	}
	const click = `(i) => new Promise((resolve, reject) => {
		const fig = document.getElementById("pg-1");
		const link = fig.querySelector(i % 2 ? '[data-testid="pg-forward"]' : '[data-testid="pg-back"]');
		if (!link) { reject(new Error("no control")); return; }
		const parent = fig.parentNode;
		let swapped = 0;
		const mo = new MutationObserver(() => {
			if (swapped || document.getElementById("pg-1") === fig) return;
			swapped = performance.now();
			mo.disconnect();
			requestAnimationFrame(() => requestAnimationFrame(() => resolve([performance.now() - t0, swapped - t0])));
		});
		mo.observe(parent, {childList: true});
		const t0 = performance.now();
		link.click();
	})`
	var total, swap []float64
	i := 0
	b.StartTimer()
	for b.Loop() {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64]("("+click+")("+strconv.Itoa(i)+")", chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		total, swap = append(total, v[0]), append(swap, v[1])
		i++
	}
	b.StopTimer()
	slices.Sort(total)
	slices.Sort(swap)
	pct := func(s []float64, p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	b.ReportMetric(frame, "ms/frame")
	b.ReportMetric(pct(total, 0.5)/frame, "frames-median")
	b.ReportMetric(pct(total, 0.9)/frame, "frames-p90")
	b.ReportMetric(pct(swap, 0.5), "ms-to-swap-median")
	b.Logf("%d clicks: click to paint median %.1f ms, p90 %.1f ms; click to swap median %.1f ms; frame %.1f ms", len(total), pct(total, 0.5), pct(total, 0.9), pct(swap, 0.5), frame)
}
