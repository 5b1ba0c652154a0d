// Package loadtest plays virtual learners against an Idemlab server on the
// loopback interface and measures what they get: requests per second,
// latency percentiles, errors, and the server's peak memory and CPU (read
// from its /metrics). It is what `idemlab load` runs; the README's load
// figures come from it.
//
// A learner opens a lesson, then clicks through the playground's controls
// as app.js does (the link's URL with fragment=1), thinking between clicks,
// and now and then opens another lesson. Behind -trust-proxy each learner
// is its own client (X-Forwarded-For), as it would be on the internet.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config is one load scenario.
type Config struct {
	Target   string        // the server's base URL; must be on the loopback interface
	Learners int           // virtual learners clicking with think time
	ThinkMin time.Duration // think time between a learner's clicks, uniform in [ThinkMin, ThinkMax]
	ThinkMax time.Duration
	Duration time.Duration // how long the learners click
	// Expensive clients send the costliest requests they can, one after
	// another: long replay loops, a slow learner handler, the JSON API.
	Expensive int
	// Lessons are the lesson slugs learners open.
	Lessons []string
}

// Latencies summarises a set of request durations.
type Latencies struct {
	Count              int
	P50, P90, P99, Max time.Duration
}

func summarise(d []time.Duration) Latencies {
	if len(d) == 0 {
		return Latencies{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return Latencies{Count: len(d), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: d[len(d)-1]}
}

func (l Latencies) String() string {
	return fmt.Sprintf("n=%d p50=%v p90=%v p99=%v max=%v", l.Count, l.P50.Round(100*time.Microsecond), l.P90.Round(100*time.Microsecond), l.P99.Round(100*time.Microsecond), l.Max.Round(100*time.Microsecond))
}

// Result is what one scenario measured.
type Result struct {
	Elapsed       time.Duration
	Clicks        Latencies // learners' requests (lesson pages and fragments)
	RPS           float64   // learners' requests per second
	Errors        int       // learners' requests that failed or answered other than 200
	ErrorSample   string
	Expensive     Latencies   // expensive clients' requests that ran (not refused at once)
	Refusals      map[int]int // expensive clients' answers by status
	PeakRSS       float64     // the server's peak resident memory, bytes (sampled from /metrics)
	CPUSeconds    float64     // the server's CPU time during the run
	StatusCounts  map[int]int // learners' answers by status
	ServerMetrics map[string]float64
}

// CheckLoopback refuses a target that is not on the loopback interface: the
// harness must never load someone else's server.
func CheckLoopback(target string) error {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" {
		return fmt.Errorf("target %q: want http://127.0.0.1:PORT", target)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("target %q is not on the loopback interface; the load harness only loads a local server", target)
	}
	return nil
}

// newClient is an HTTP client with enough idle connections for every
// virtual learner.
func newClient(conns int) *http.Client {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute, DisableCompression: false}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// asSent is a transport that asks for gzip, as browsers do, and leaves
// the answer as the server sent it: compressed when the server chose to.
type asSent struct{ *http.Transport }

func newAsSent(tr *http.Transport) asSent {
	tr.DisableCompression = true
	return asSent{tr}
}

func (t asSent) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper leaves its request as given
	r.Header.Set("Accept-Encoding", "gzip")
	return t.Transport.RoundTrip(r)
}

// Links returns the playground controls of a page or fragment, as app.js
// would fetch them (fragment=1).
func Links(body []byte) []string {
	l := links(body)
	for i := range l {
		l[i] += "&fragment=1"
	}
	return l
}

// controlLink finds the playground controls in a page or fragment: links
// to a lesson block's state or to a playground state.
var controlLink = regexp.MustCompile(`href="(/(?:embed/)?(?:lessons/[a-z0-9-]+\?pg=|playground\?scenario=)[^"#]*)`)

func links(body []byte) []string {
	var out []string
	for _, m := range controlLink.FindAllSubmatch(body, -1) {
		out = append(out, html.UnescapeString(string(m[1])))
	}
	return out
}

// get fetches base+path as client ip and returns status, body and time.
func get(ctx context.Context, c *http.Client, base, path, ip string) (int, []byte, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("X-Forwarded-For", ip)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, body, time.Since(start), err
}

// learnerIP is the address of virtual learner i (10.0.0.0/8).
func learnerIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

// recorder collects the learners' measurements.
type recorder struct {
	mu       sync.Mutex
	lat      []time.Duration
	errors   int
	sample   string
	statuses map[int]int
}

func (r *recorder) add(status int, d time.Duration, err error, path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat = append(r.lat, d)
	r.statuses[status]++
	if err != nil || status != http.StatusOK {
		r.errors++
		if r.sample == "" {
			r.sample = fmt.Sprintf("GET %.120s: status %d, err %v", path, status, err)
		}
	}
}

// thinker is a learner's pause between clicks: a time drawn between lo
// and hi; it says false when ctx ended first.
func thinker(ctx context.Context, rng *rand.Rand, lo, hi time.Duration) func() bool {
	return func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(lo + time.Duration(rng.Int64N(int64(hi-lo)+1))):
			return true
		}
	}
}

// learner opens a lesson and clicks through its playground until ctx ends.
func learner(ctx context.Context, c *http.Client, cfg Config, i int, rec *recorder) {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	ip := learnerIP(i)
	think := thinker(ctx, rng, cfg.ThinkMin, cfg.ThinkMax)
	// Learners arrive over the first think time, not all at once.
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(rng.Int64N(int64(cfg.ThinkMax) + 1))):
	}
	for ctx.Err() == nil {
		page := "/lessons/" + cfg.Lessons[rng.IntN(len(cfg.Lessons))]
		status, body, d, err := get(ctx, c, cfg.Target, page, ip)
		if ctx.Err() != nil {
			return
		}
		rec.add(status, d, err, page)
		next := links(body)
		for clicks := 0; clicks < 12 && len(next) > 0; clicks++ {
			if !think() {
				return
			}
			target := next[rng.IntN(len(next))]
			status, body, d, err := get(ctx, c, cfg.Target, target+"&fragment=1", ip)
			if ctx.Err() != nil {
				return
			}
			rec.add(status, d, err, target)
			if l := links(body); len(l) > 0 {
				next = l
			}
		}
		if !think() {
			return
		}
	}
}

// expensiveTargets are the costliest requests a client can send: each
// crosses a limit of the run budget unless the budget stops it first.
func expensiveTargets(rng *rand.Rand) string {
	seed := rng.Int64N(1 << 40) // a new seed each time, so that the cache cannot answer
	var replay strings.Builder
	replay.WriteString("deliver msg-1; deliver msg-2; deliver msg-3")
	for range 98 {
		replay.WriteString("; publish msg-1; replay")
	}
	slow := "@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n" +
		strings.Repeat("INSERT INTO processed_messages SELECT message_id || '.' || (SELECT count(*) FROM processed_messages), :now FROM processed_messages;\n", 8) +
		"SELECT count(*) FROM processed_messages a, processed_messages b, processed_messages c, processed_messages d;\n"
	var slowScript strings.Builder
	slowScript.WriteString("deliver msg-1 lose-ack")
	for range 60 {
		slowScript.WriteString("; redeliver msg-1 lose-ack")
	}
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("/playground?scenario=topic-replay&handlers=increment,dedupe-tx,mark-after,set-value&script=%s&seed=%d", url.QueryEscape(replay.String()), seed)
	case 1:
		return fmt.Sprintf("/playground?scenario=lost-ack&handlers=increment,dedupe-tx,set-value&handler=%s&script=%s&seed=%d", url.QueryEscape(slow), url.QueryEscape(slowScript.String()), seed)
	}
	return fmt.Sprintf("/api/v1/run?scenario=topic-replay&handlers=increment,dedupe-tx,mark-after,set-value&script=%s&seed=%d", url.QueryEscape(replay.String()), seed)
}

// attacker sends expensive requests back to back until ctx ends; refused
// ones (429, 503) are retried after Retry-After or a short pause.
func attacker(ctx context.Context, c *http.Client, cfg Config, i int, mu *sync.Mutex, lat *[]time.Duration, statuses map[int]int) {
	rng := rand.New(rand.NewPCG(uint64(i), 99))
	ip := fmt.Sprintf("192.0.2.%d", i+1)
	for ctx.Err() == nil {
		status, _, d, err := get(ctx, c, cfg.Target, expensiveTargets(rng), ip)
		if ctx.Err() != nil {
			return
		}
		mu.Lock()
		statuses[status]++
		if err == nil && status != http.StatusTooManyRequests {
			*lat = append(*lat, d)
		}
		mu.Unlock()
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// Run plays one scenario and measures it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := CheckLoopback(cfg.Target); err != nil {
		return nil, err
	}
	if len(cfg.Lessons) == 0 || cfg.Learners < 0 || cfg.ThinkMax < cfg.ThinkMin || cfg.Duration <= 0 {
		return nil, errors.New("loadtest: need lessons, a duration and ThinkMin <= ThinkMax")
	}
	c := newClient(cfg.Learners + cfg.Expensive + 8)
	defer c.CloseIdleConnections()
	before, err := ScrapeMetrics(ctx, c, cfg.Target)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	rec := &recorder{statuses: map[int]int{}}
	var wg sync.WaitGroup
	for i := range cfg.Learners {
		wg.Go(func() { learner(runCtx, c, cfg, i, rec) })
	}
	var mu sync.Mutex
	var expensive []time.Duration
	refusals := map[int]int{}
	for i := range cfg.Expensive {
		wg.Go(func() { attacker(runCtx, c, cfg, i, &mu, &expensive, refusals) })
	}
	peak := before["process_resident_memory_bytes"]
	sampler := time.NewTicker(250 * time.Millisecond)
	start := time.Now()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var last map[string]float64
wait:
	for {
		select {
		case <-done:
			break wait
		case <-sampler.C:
			if m, err := ScrapeMetrics(ctx, c, cfg.Target); err == nil {
				peak = max(peak, m["process_resident_memory_bytes"])
			}
		}
	}
	sampler.Stop()
	elapsed := time.Since(start)
	last, err = ScrapeMetrics(ctx, c, cfg.Target)
	if err != nil {
		return nil, err
	}
	peak = max(peak, last["process_resident_memory_bytes"])
	res := &Result{
		Elapsed: elapsed, Clicks: summarise(rec.lat), Errors: rec.errors, ErrorSample: rec.sample,
		RPS: float64(len(rec.lat)) / elapsed.Seconds(), Expensive: summarise(expensive), Refusals: refusals,
		PeakRSS: peak, CPUSeconds: last["process_cpu_seconds_total"] - before["process_cpu_seconds_total"],
		StatusCounts: rec.statuses, ServerMetrics: last,
	}
	return res, nil
}

// ClosedLoop sends requests back to back from workers for d and returns
// requests per second and errors: request i asks for pathFor(i), each from
// its own client address. Its clients ask for gzip and read the answers as
// sent (asSent): the loop measures servers on this machine, and inflating
// a click, about a fifth of the server's CPU for it, is the browser's work
// on its own device, which a static file's answer does not need.
func ClosedLoop(ctx context.Context, base string, pathFor func(i int) string, workers int, d time.Duration) (float64, int, error) {
	if err := CheckLoopback(base); err != nil {
		return 0, 0, err
	}
	c := newClient(workers)
	c.Transport = newAsSent(c.Transport.(*http.Transport))
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	n, errs := 0, 0
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i += workers {
				status, _, _, err := get(ctx, c, base, pathFor(i), learnerIP(i%60000+100000))
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				n++
				if err != nil || status != http.StatusOK {
					errs++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), errs, nil
}

// ScrapeMetrics reads the server's /metrics into name → value for the
// series without labels (process_*, go_*, idemlab_runs_in_flight) and
// name{labels} → value for the others.
func ScrapeMetrics(ctx context.Context, c *http.Client, base string) (map[string]float64, error) {
	status, body, _, err := get(ctx, c, base, "/metrics", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: status %d", status)
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[i+1:], &v); err == nil {
			out[line[:i]] = v
		}
	}
	return out, nil
}
