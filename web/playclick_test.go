package web

import (
	"idemlab/web/admit"
	"net/http"
	"strings"
	"testing"

	"idemlab/playground"
)

// TestPlaygroundClick_ParsesAndLooksUpOnce: one click (the request for a
// playground fragment) parses its script once, when its URL is read, and
// looks its scenario up once; the engine and the view work on what was
// decoded. It runs on the built-in course, whose lesson blocks have goals
// (each with a solution script, parsed once per course, not per click).
func TestPlaygroundClick_ParsesAndLooksUpOnce(t *testing.T) {
	cached := exerciseServer(t)
	uncached := exerciseServer(t) // every click computed: the handler's decoding is the run's
	uncached.adm.Cache = admit.NewRunCache(0)
	for _, h := range []http.Handler{cached.Handler(), uncached.Handler()} {
		clickParsesAndLooksUpOnce(t, h)
	}
}

func clickParsesAndLooksUpOnce(t *testing.T, h http.Handler) {
	for _, target := range []string{
		"/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&at=1&fragment=1",
		"/playground?scenario=concurrent-duplicate&handlers=check-then-insert,dedupe-tx&script=start+msg-1+on+A%3B+start+msg-1+on+B%3B+step+A&to=B&fragment=1",
		"/lessons/why-messages-arrive-twice?pg=pg-1&handlers=increment,dedupe-tx&script=deliver+msg-1%3B+redeliver+msg-1&fragment=1",
	} {
		do(t, h, "GET", target) // warms what is built once per process (the scenario's default script)
		parses, lookups := playground.WorkCounts()
		resp := do(t, h, "GET", target)
		p, l := playground.WorkCounts()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", target, resp.StatusCode)
		}
		if strings.HasPrefix(target, "/lessons/") && document(t, resp).Find(testID("pg-goal")).Length() == 0 {
			t.Fatalf("%s: the block has no goals; the test means to count their solutions' parses", target)
		}
		if p-parses != 1 || l-lookups != 1 {
			t.Errorf("%s: %d script parses and %d scenario look-ups, want 1 and 1", target, p-parses, l-lookups)
		}
	}
}
