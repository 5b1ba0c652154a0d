package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"
)

// discardWriter is the cheapest ResponseWriter: both sides of the benchmark
// pay the same for it, so the ratio measures the handlers.
type discardWriter struct {
	header http.Header
	status int
	bytes  int
}

func (d *discardWriter) Header() http.Header { return d.header }
func (d *discardWriter) WriteHeader(status int) {
	d.status = status
}
func (d *discardWriter) Write(b []byte) (int, error) {
	d.bytes += len(b)
	return len(b), nil
}

// BenchmarkServeLesson serves one pre-rendered lesson through the whole
// handler stack (request log, recovery, security headers, cross-origin
// protection, mux, handler) and, in the same run, the same bytes through
// http.FileServer over an in-memory file system. The fileserver result also
// reports stack/fileserver: the target is at most 1.5.
func BenchmarkServeLesson(b *testing.B) {
	s := newTestServer(b, Config{})
	const slug = "why-twice"
	body := s.site.Load().lessons[slug].Identity.Body
	files := fstest.MapFS{"lessons/" + slug + ".html": {Data: body, ModTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}

	nsPerOp := map[string]float64{}
	serve := func(name string, h http.Handler, target string) {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			w := &discardWriter{header: http.Header{}}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				w.status, w.bytes = 0, 0
				h.ServeHTTP(w, req)
			}
			if w.status != http.StatusOK || w.bytes != len(body) {
				b.Fatalf("%s: status %d, %d bytes; want 200 and %d bytes", target, w.status, w.bytes, len(body))
			}
			nsPerOp[name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if name == "fileserver" && nsPerOp["stack"] > 0 {
				b.ReportMetric(nsPerOp["stack"]/nsPerOp["fileserver"], "stack/fileserver")
			}
		})
	}
	serve("stack", s.Handler(), "/lessons/"+slug)
	serve("fileserver", http.FileServer(http.FS(files)), "/lessons/"+slug+".html")
}
