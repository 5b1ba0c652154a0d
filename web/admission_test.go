package web

import (
	"context"
	"encoding/json"
	"idemlab/web/admit"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"idemlab/playground"
)

// replayLoopScript makes the broker work hard: every publish grows the log
// that each following replay delivers again.
func replayLoopScript(n int) string {
	var b strings.Builder
	b.WriteString("deliver msg-1; deliver msg-2; deliver msg-3")
	for i := 0; i < n; i++ {
		b.WriteString("; publish msg-1; replay")
	}
	return b.String()
}

func replayLoopPath(n int) string {
	return "/playground?scenario=topic-replay&handlers=increment,dedupe-tx&script=" + url.QueryEscape(replayLoopScript(n))
}

// Each limit of the budget, crossed, shows the playground in place with a
// message naming it: a 422 fragment (app.js swaps it in), never a 500.
func TestAdmission_EachBudgetCrossedShowsItsMessageInPlace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int // replays in the script
		set    func(*admit.Admission)
		limit  string
		phrase string
	}{
		{"deliveries", 10, func(a *admit.Admission) { a.Budget.Deliveries = 30 }, playground.LimitDeliveries, "30 deliveries"},
		{"steps", 10, func(a *admit.Admission) { a.Budget.Steps = 60 }, playground.LimitSteps, "60 steps"},
		{"rows", 10, func(a *admit.Admission) { a.Budget.RowsChanged = 10 }, playground.LimitRows, "changing 10 rows"},
		{"trace bytes", 10, func(a *admit.Admission) { a.Budget.TraceBytes = 8 << 10 }, playground.LimitTraceBytes, "8 KiB"},
		// The CPU case lifts the count limits, so that CPU time is the only
		// one this run (thousands of deliveries) can cross, whether the
		// binary is the fast one or the -race one.
		{"cpu", 60, func(a *admit.Admission) {
			a.Budget.CPU = 10 * time.Millisecond
			a.Budget.Deliveries, a.Budget.Steps, a.Budget.RowsChanged, a.Budget.TraceBytes = 1e9, 1e9, 1e9, 1<<40
		}, playground.LimitCPU, "10ms of CPU time"},
		{"rendered bytes", 10, func(a *admit.Admission) { a.RenderCap = 20 << 10 }, "rendered-bytes", "larger than 20 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Config{})
			tc.set(s.adm)
			resp := do(t, s.Handler(), "GET", replayLoopPath(tc.n)+"&fragment=1")
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", resp.StatusCode)
			}
			doc := document(t, resp)
			fig := doc.Find("figure[data-pg]")
			if fig.Length() != 1 || fig.AttrOr("data-refused", "") != tc.limit {
				t.Fatalf("want one playground figure refused for %s; got %d with data-refused=%q", tc.limit, fig.Length(), fig.AttrOr("data-refused", ""))
			}
			msg := fig.Find(testID("pg-refusal")).Text()
			if !strings.Contains(msg, tc.phrase) {
				t.Errorf("the refusal says %q; want it to name the limit (%q)", msg, tc.phrase)
			}
			if fig.Find(testID("pg-refusal-home")).AttrOr("href", "") == "" || fig.Find(testID("pg-refusal-undo")).AttrOr("href", "") == "" {
				t.Errorf("the refusal has no way back (home and undo links)")
			}
			if got := testutil.ToFloat64(s.metrics.Refusals.WithLabelValues("budget")); got != 1 {
				t.Errorf("refusals{reason=budget} = %v, want 1", got)
			}
		})
	}
}

// The same refusal on the other routes that run SQL: the full page, a
// lesson's block, and the API (JSON naming the limit).
func TestAdmission_OverBudgetOnEveryRoute(t *testing.T) {
	s := newTestServer(t, Config{})
	s.adm.Budget.Deliveries = 3
	s.limiter.PerSecond, s.limiter.Burst = 1e6, 1e6 // each refusal costs tokens (TestAdmission_OverBudgetCostsTheClient)
	h := s.Handler()
	for _, target := range []string{
		replayLoopPath(5),
		"/embed" + replayLoopPath(5),
		"/lessons/why-twice?pg=pg-1&script=" + url.QueryEscape("deliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1"),
	} {
		resp := do(t, h, "GET", target)
		doc := document(t, resp)
		if resp.StatusCode != http.StatusUnprocessableEntity || doc.Find(testID("pg-refusal")).Length() != 1 {
			t.Errorf("%s: status %d, %d refusals; want 422 with the refusal in the page", target, resp.StatusCode, doc.Find(testID("pg-refusal")).Length())
		}
	}
	resp := do(t, h, "GET", "/api/v1/run?scenario=topic-replay&script="+url.QueryEscape(replayLoopScript(5)))
	var body site.APIError
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnprocessableEntity || body.Limit != playground.LimitDeliveries || !strings.Contains(body.Error, "3 deliveries") {
		t.Errorf("API: status %d, %+v; want 422 naming deliveries", resp.StatusCode, body)
	}
}

// A client whose runs go over the budget soon has to wait its turn, while
// another client is served.
func TestAdmission_OverBudgetCostsTheClient(t *testing.T) {
	s := newTestServer(t, Config{})
	s.adm.Budget.Deliveries = 3
	h := s.Handler()
	statuses := []int{}
	for i := range 4 {
		statuses = append(statuses, do(t, h, "GET", replayLoopPath(5)+"&seed="+itoa(i)).StatusCode)
	}
	if statuses[0] != http.StatusUnprocessableEntity || statuses[3] != http.StatusTooManyRequests {
		t.Errorf("four runs over the budget answered %v; want 422 first and 429 by the fourth", statuses)
	}
	other := httptest.NewRequest("GET", "/playground?scenario=lost-ack&script=deliver+msg-1", nil)
	other.RemoteAddr = "198.51.100.8:4000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, other)
	if rec.Code != http.StatusOK {
		t.Errorf("another client: status %d", rec.Code)
	}
}

// A run stopped by the wall clock alone (the server is overloaded, the run
// may be cheap) is answered as busy, not blamed on the learner or cached.
func TestAdmission_WallClockStopIsBusyNotOverBudget(t *testing.T) {
	s := newTestServer(t, Config{})
	s.adm.Budget.Wall = 5 * time.Millisecond
	resp := do(t, s.Handler(), "GET", replayLoopPath(60)+"&fragment=1")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := s.adm.Cache.Len(); n != 0 {
		t.Errorf("%d answers cached", n)
	}
}

// With every slot taken and nobody leaving, a run waits its queue time and
// is refused as busy: a page or JSON with Retry-After.
func TestAdmission_BusyAnswers503WithRetryAfter(t *testing.T) {
	s := newTestServer(t, Config{})
	s.adm.QueueWait = 10 * time.Millisecond
	for range cap(s.adm.Slots) {
		s.adm.Slots <- struct{}{}
	}
	h := s.Handler()
	resp := do(t, h, "GET", "/playground?scenario=lost-ack")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("page: status %d, Retry-After %q; want 503 and 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if msg := document(t, resp).Find(testID("error-message")).Text(); !strings.Contains(msg, "try again in 2 seconds") {
		t.Errorf("page says %q", msg)
	}
	resp = do(t, h, "GET", "/api/v1/run?scenario=lost-ack")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" || !strings.Contains(string(b), `"error":"The server is busy`) {
		t.Errorf("API: status %d, Retry-After %q, body %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if got := testutil.ToFloat64(s.metrics.Refusals.WithLabelValues("busy")); got != 2 {
		t.Errorf("refusals{reason=busy} = %v, want 2", got)
	}
}

// processCPU is the CPU time this process has used.
func processCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skip("no getrusage here")
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A client that goes away mid-run stops the run: from the disconnection
// to the end of the run, the process uses less than 100 ms of CPU.
func TestAdmission_ClientGoneStopsTheRun(t *testing.T) {
	var log lockedBuffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	s.adm.Budget = playground.Budget{Wall: time.Minute} // unbounded work: only the client can stop it
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+replayLoopPath(98), nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(s.metrics.RunsInFlight) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run never started")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // well into the run (it would take seconds)
	before := processCPU(t)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the request finished before the client left; make the run longer")
	}
	for testutil.ToFloat64(s.metrics.RunsInFlight) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run went on after its client left")
		}
		time.Sleep(time.Millisecond)
	}
	used := processCPU(t) - before
	t.Logf("CPU from the disconnection to the end of the run: %v", used)
	if used > 100*time.Millisecond {
		t.Errorf("the run used %v of CPU after its client left; want under 100ms", used)
	}
	if n := s.adm.Cache.Len(); n != 0 {
		t.Errorf("the abandoned run was cached (%d answers)", n)
	}
	srv.Close() // waits for the handler, and so its log lines
	if text := log.String(); strings.Contains(text, "level=ERROR") || !strings.Contains(text, "client went away") || len(text) > 2000 {
		t.Errorf("the log should say the client went away, at info, briefly:\n%s", text)
	}
}

// Health checks and hashed assets log at debug; pages at info.
func TestRequestLog_QuietForProbesAndAssets(t *testing.T) {
	var log lockedBuffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	h := s.Handler()
	do(t, h, "GET", "/healthz")
	if resp := do(t, h, "GET", s.assets.URL("app.css")); resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", s.assets.URL("app.css"), resp.StatusCode)
	}
	if log.String() != "" {
		t.Errorf("probes and assets were logged at info:\n%s", log.String())
	}
	do(t, h, "GET", "/lessons/why-twice")
	if !strings.Contains(log.String(), "path=/lessons/why-twice") {
		t.Errorf("a page was not logged:\n%s", log.String())
	}
}

// lockedBuffer is a log destination that handlers on other goroutines may
// write while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The same URL gives the same bytes, computed once: identical requests in
// flight share one run, and later ones are answered from the cache.
func TestRunCache_SameURLSameBytesComputedOnce(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.Handler()
	target := "/playground?scenario=topic-replay&script=" + url.QueryEscape(replayLoopScript(8))
	bodies := make([]string, 8)
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() {
			resp := do(t, h, "GET", target)
			b, _ := io.ReadAll(resp.Body)
			bodies[i] = string(b)
		})
	}
	wg.Wait()
	again := do(t, h, "GET", target)
	b, _ := io.ReadAll(again.Body)
	for i, body := range append(bodies, string(b)) {
		if body != bodies[0] || !strings.Contains(body, "data-pg") {
			t.Fatalf("answer %d differs from the first (or is not a playground)", i)
		}
	}
	if miss := testutil.ToFloat64(s.metrics.Cache.WithLabelValues("miss")); miss != 1 {
		t.Errorf("%v runs for 9 identical requests; want 1", miss)
	}
	if hit := testutil.ToFloat64(s.metrics.Cache.WithLabelValues("hit")); hit < 1 {
		t.Errorf("the last request was not answered from the cache (hits %v)", hit)
	}
}

// A lesson reload changes what a lesson state's URL shows.
func TestRunCache_LessonReloadInvalidates(t *testing.T) {
	s := newTestServer(t, Config{})
	target := "/lessons/why-twice?pg=pg-1&script=deliver+msg-1"
	before := document(t, do(t, s.Handler(), "GET", target)).Find("h1").Text()
	course := sampleCourse()
	course.Lessons[0].Title = "Why messages come back"
	s.SetCourse(course)
	after := document(t, do(t, s.Handler(), "GET", target)).Find("h1").Text()
	if before == after || !strings.Contains(after, "Why messages come back") {
		t.Errorf("after the reload the page's title is %q (was %q)", after, before)
	}
}

func TestRunCache_EvictsLeastRecentlyUsedByBytes(t *testing.T) {
	out := func(n int) *admit.Output {
		return &admit.Output{Status: 200, Body: site.NewPayload(make([]byte, n), "")}
	}
	c := admit.NewRunCache(1000)
	for _, k := range []string{"a", "b", "c", "d"} {
		c.Put(k, out(100)) // 228 bytes with overhead
	}
	c.Get("a") // a is now the most recent
	c.Put("e", out(100))
	if _, ok := c.Get("b"); ok {
		t.Error("b, the least recently used, was kept")
	}
	for _, k := range []string{"a", "c", "d", "e"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	c.Put("huge", out(300)) // over a quarter of the cache: not kept
	if _, ok := c.Get("huge"); ok || c.Bytes > c.MaxBytes {
		t.Errorf("an answer over a quarter of the cache was kept (%d bytes)", c.Bytes)
	}
}

func TestMetrics_ExposesTheNamesTheREADMEDocuments(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.Handler()
	do(t, h, "GET", "/playground?scenario=lost-ack")
	do(t, h, "GET", "/playground?scenario=lost-ack")
	resp := do(t, h, "GET", "/metrics")
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, want := range []string{
		`idemlab_http_requests_total{route="GET /playground",status="200"} 2`,
		"idemlab_run_duration_seconds_bucket",
		"idemlab_check_duration_seconds_bucket",
		"idemlab_runs_in_flight 0",
		`idemlab_refusals_total{reason="busy"} 0`,
		`idemlab_refusals_total{reason="budget"} 0`,
		`idemlab_refusals_total{reason="rate"} 0`,
		`idemlab_run_cache_requests_total{result="hit"} 1`,
		`idemlab_run_cache_requests_total{result="miss"} 1`,
		"process_resident_memory_bytes",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// Whatever query reaches a route that runs SQL, the admission path answers
// it with a page or JSON and a status that is not 500, within the budget.
func FuzzAdmission_Query(f *testing.F) {
	s := newTestServer(f, Config{})
	s.limiter.PerSecond, s.limiter.Burst = 1e9, 1e9 // the fuzzer is one very fast client
	s.adm.Budget.CPU, s.adm.Budget.Wall = 50*time.Millisecond, 200*time.Millisecond
	h := s.Handler()
	for _, q := range []string{
		"scenario=lost-ack",
		"scenario=topic-replay&script=" + url.QueryEscape(replayLoopScript(30)),
		"scenario=lost-ack&handler=%40on+credit%0ASELECT+1%3B&at=1&fragment=1",
		"scenario=lost-ack&seed=x", "scenario=nope", "pg=pg-1&script=deliver+msg-1",
		"scenario=lost-ack&h=increment&h=dedupe-tx&op=advance&n=5",
	} {
		f.Add("/playground", q)
		f.Add("/api/v1/run", q)
	}
	f.Add("/lessons/why-twice", "pg=pg-1&script=replay")
	f.Add("/embed/playground", "scenario=order-shipping&to=B")
	paths := []string{"/playground", "/embed/playground", "/api/v1/run", "/lessons/why-twice", "/embed/lessons/why-twice"}
	f.Fuzz(func(t *testing.T, path, query string) {
		known := false
		for _, p := range paths {
			known = known || p == path
		}
		if !known {
			path = paths[len(path)%len(paths)]
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.Path, req.URL.RawQuery = path, query
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		// A run stopped by its wall clock on a loaded machine is "busy,
		// retry" (503 with Retry-After), a fair answer; any other 5xx is a bug.
		busy := rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") != ""
		if rec.Code >= 500 && !busy {
			t.Fatalf("GET %s?%s: status %d: %.300s", path, query, rec.Code, rec.Body.String())
		}
	})
}

// Every block of the built-in course, at its start, as a lesson page and as
// the fragment app.js fetches, is answered within the budget and the cap
// on rendered bytes.
func TestAdmission_BuiltinLessonStatesFitTheBudget(t *testing.T) {
	course := builtinCourse(t)
	s, err := NewServer(Config{}, course)
	if err != nil {
		t.Fatal(err)
	}
	s.limiter.PerSecond, s.limiter.Burst = 1e6, 1e6
	h := s.Handler()
	for _, l := range course.Lessons {
		for _, spec := range l.Playgrounds {
			place := playurl.LessonPlace(l.Slug, spec, false)
			for _, target := range []string{place.QueryHref(place.Home), place.QueryHref(place.Home) + "&fragment=1"} {
				resp := do(t, h, "GET", target)
				if resp.StatusCode != http.StatusOK {
					b, _ := io.ReadAll(resp.Body)
					t.Errorf("%s: status %d: %.300s", target, resp.StatusCode, b)
				}
			}
		}
	}
}
