package web

import (
	"idemlab/web/admit"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRateLimiter_BurstThenRefillAtTheRate(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := admit.NewRateLimiter(2, 5, false)
	l.Now = func() time.Time { return now }
	for i := range 5 {
		if ok, _ := l.Take("a", 1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, retry := l.Take("a", 1)
	if ok || retry != 1 {
		t.Fatalf("the 6th request: ok %v, retry %d; want refused, retry in 1 s", ok, retry)
	}
	if ok, _ := l.Take("b", 1); !ok {
		t.Error("another client was refused: buckets are per client")
	}
	now = now.Add(500 * time.Millisecond) // one token back at 2/s
	if ok, _ := l.Take("a", 1); !ok {
		t.Error("refused after the bucket refilled one token")
	}
	l.Charge("a", 6) // an expensive run, paid afterwards
	ok, retry = l.Take("a", 1)
	if ok || retry != 4 {
		t.Errorf("after an expensive run: ok %v, retry %d; want refused for 4 s (6 tokens owed, 2/s)", ok, retry)
	}
	now = now.Add(time.Hour)
	if ok, _ := l.Take("a", 1); !ok {
		t.Error("refused after an hour")
	}
}

func TestRateLimiter_ClientIsTheRemoteAddressUnlessBehindATrustedProxy(t *testing.T) {
	req := httptest.NewRequest("GET", "/playground", nil)
	req.RemoteAddr = "198.51.100.7:5123"
	req.Header.Add("X-Forwarded-For", "203.0.113.9, 192.0.2.44")
	if got := admit.NewRateLimiter(1, 1, false).ClientOf(req); got != "198.51.100.7" {
		t.Errorf("without -trust-proxy the client is %q; want the remote address", got)
	}
	if got := admit.NewRateLimiter(1, 1, true).ClientOf(req); got != "192.0.2.44" {
		t.Errorf("behind a trusted proxy the client is %q; want the last X-Forwarded-For address", got)
	}
	req.Header.Set("X-Forwarded-For", "not an address")
	if got := admit.NewRateLimiter(1, 1, true).ClientOf(req); got != "198.51.100.7" {
		t.Errorf("with a garbled X-Forwarded-For the client is %q; want the remote address", got)
	}
}

// Over HTTP: a client past its share gets 429 with Retry-After, on pages
// and on the API; another client is served; lesson pages without a run are
// not counted.
func TestRateLimiter_RefusesAClientOverItsShare(t *testing.T) {
	s := newTestServer(t, Config{})
	// The clock stands still, so no token comes back while the runs take
	// their time (on a loaded machine twenty runs can take seconds).
	frozen := time.Now()
	s.limiter.Now = func() time.Time { return frozen }
	h := s.Handler()
	for i := range int(admit.RateLimitBurst) + 5 {
		do(t, h, "GET", "/lessons/why-twice") // pre-rendered: free
		resp := do(t, h, "GET", "/playground?scenario=lost-ack&seed="+itoa(i))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("run %d: status %d within the burst", i+1, resp.StatusCode)
		}
		if i+1 == int(admit.RateLimitBurst) {
			break
		}
	}
	resp := do(t, h, "GET", "/playground?scenario=lost-ack&seed=999")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the burst: status %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp = do(t, h, "GET", "/api/v1/run?scenario=lost-ack")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("API past the burst: status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	other := httptest.NewRequest("GET", "/playground?scenario=lost-ack", nil)
	other.RemoteAddr = "198.51.100.8:4000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, other)
	if rec.Code != http.StatusOK {
		t.Errorf("another client: status %d", rec.Code)
	}
}
