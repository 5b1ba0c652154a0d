package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"idemlab/playground"
)

// BenchmarkPlaygroundFragment is one click: the request that re-runs a
// scenario's default script and renders the playground fragment, through
// the whole handler stack. The target is under 10 ms.
func BenchmarkPlaygroundFragment(b *testing.B) {
	s := newTestServer(b, Config{})
	h := s.Handler()
	for _, sc := range playground.Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/playground?scenario="+sc.Name+"&fragment=1", nil)
			w := &discardWriter{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				w.status, w.bytes = 0, 0
				h.ServeHTTP(w, req)
			}
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			b.ReportMetric(float64(w.bytes), "bytes/response")
		})
	}
}

// BenchmarkPlaygroundPage is the same with the page around it, gzipped, as
// a browser without JavaScript asks for it.
func BenchmarkPlaygroundPage(b *testing.B) {
	h := newTestServer(b, Config{}).Handler()
	req := httptest.NewRequest(http.MethodGet, "/playground?scenario=lost-ack", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		w.status, w.bytes = 0, 0
		h.ServeHTTP(w, req)
	}
	if w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
}
