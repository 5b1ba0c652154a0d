package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzPlaygroundQuery sends any query to the playground routes: the answer
// is a page, a redirect to the canonical URL, a 400 that explains or a
// refusal of the admission path (429, 503, 422), never a 500; and a
// redirect never leads to a 500 either.
func FuzzPlaygroundQuery(f *testing.F) {
	for _, seed := range []string{
		"scenario=lost-ack",
		"scenario=lost-ack&script=deliver+msg-1%3B+redeliver+msg-1&at=1&to=B",
		"scenario=concurrent-duplicate&h=increment&h=dedupe-tx&op=advance&n=3",
		"scenario=lost-ack&handler=BEGIN%3B&op=prune&n=0",
		"pg=pg-1&script=crash+A&at=0",
		"scenario=lost-ack&at=-1&seed=9",
		"pg=pg-1&show=steps,diagram,sql",
		"scenario=lost-ack&show=&show=chart",
		"scenario=lost-ack&open=handlers,workers&panel=broker&fragment=1",
		"pg=pg-1&panel=workers&panel=",
		"scenario=lost-ack&open=workers,x",
		"pg=pg-1&guess=2",
		"pg=pg-1&guess=skip&guess=2",
		"pg=pg-1&guess=9&script=deliver+msg-1",
		"scenario=lost-ack&exercise=dedupe-credit&handler=SELECT+1%3B",
		"scenario=lost-ack&exercise=nope&guess=x",
		"scenario=lost-ack&ledger=postgres-rc",
		"scenario=lost-ack&ledger=oracle",
	} {
		f.Add("/playground", seed)
		f.Add("/lessons/why-twice", seed)
	}
	s := newTestServer(f, Config{})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, path, rawQuery string) {
		switch path {
		case "/playground", "/embed/playground", "/lessons/why-twice", "/embed/lessons/why-twice", "/api/v1/run":
		default:
			path = "/playground"
		}
		if _, err := url.ParseQuery(rawQuery); err != nil {
			return
		}
		target := path + "?" + rawQuery
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.URL.RawQuery = rawQuery
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest:
		case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusUnprocessableEntity:
			// The admission path's answers: a fuzzer is a client far over
			// its share, and some inputs ask for a run over its budget.
		case http.StatusSeeOther:
			loc := rec.Header().Get("Location")
			next := httptest.NewRecorder()
			u, err := url.Parse(strings.SplitN(loc, "#", 2)[0])
			if err != nil {
				t.Fatalf("%s redirects to %q: %v", target, loc, err)
			}
			nreq := httptest.NewRequest(http.MethodGet, u.Path, nil)
			nreq.URL.RawQuery = u.RawQuery
			h.ServeHTTP(next, nreq)
			if next.Code != http.StatusOK && next.Code != http.StatusBadRequest && next.Code != http.StatusTooManyRequests {
				t.Errorf("%s redirects to %s, which answers %d", target, loc, next.Code)
			}
		default:
			t.Errorf("%s answers %d: %.300s", target, rec.Code, rec.Body.String())
		}
	})
}
