package web

import (
	"bytes"
	"compress/gzip"
	"idemlab/web/site"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// An answer made for a request that takes gzip keeps only its compressed
// bytes, which inflate to the body; one made for a request that does not
// keeps a copy of the body. Neither shares the caller's buffer, which is
// reused for the next answer.
func TestAnswerPayload_KeepsOneVariantApartFromTheBuffer(t *testing.T) {
	body := []byte(strings.Repeat("<li>an answer worth compressing</li>\n", 40))
	want := string(body)
	for _, tt := range []struct {
		name       string
		gzip       bool
		compressed bool
	}{{"gzip", true, true}, {"plain", false, false}} {
		t.Run(tt.name, func(t *testing.T) {
			buf := bytes.Clone(body)
			p := site.AnswerPayload(buf, "s1-0", tt.gzip)
			clear(buf) // the render buffer is reused
			if compressed := p.Identity.Body == nil; compressed != tt.compressed {
				t.Fatalf("held compressed only: %v, want %v", compressed, tt.compressed)
			}
			if tt.compressed && p.BytesHeld() != int64(len(p.Gzip.Body)) {
				t.Errorf("bytesHeld %d, want the %d compressed bytes", p.BytesHeld(), len(p.Gzip.Body))
			}
			plain := p.Plain()
			if string(plain.Body) != want || plain.Etag[0] != `"s1-0"` {
				t.Errorf("plain variant: %d bytes, ETag %v; want the body and \"s1-0\"", len(plain.Body), plain.Etag)
			}
			gz := p.Gzipped()
			if gz == nil || gz.Etag[0] != `"s1-0-gz"` {
				t.Fatalf("gzip variant %v", gz)
			}
			zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := io.ReadAll(zr); string(got) != want {
				t.Error("the gzip variant does not inflate to the body")
			}
		})
	}
	small := site.AnswerPayload([]byte("tiny"), "", true)
	if string(small.Plain().Body) != "tiny" || small.Gzipped() != nil {
		t.Error("a body under minGzipSize was compressed")
	}
}

// A click computed for a browser (gzip) and kept compressed in the run
// cache answers a client without gzip the same bytes, with the plain
// ETag, HEAD, 304 and ranges; and later clicks, rendered into the same
// reused buffer, leave it intact.
func TestRunCache_GzipAnswerServesEveryClient(t *testing.T) {
	s := newTestServer(t, Config{})
	s.limiter.PerSecond, s.limiter.Burst = 1e6, 1e6
	h := s.Handler()
	const target = "/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&fragment=1"
	zipped := do(t, h, "GET", target, "Accept-Encoding", "gzip")
	zbody := readBody(t, zipped)
	zr, err := gzip.NewReader(strings.NewReader(zbody))
	if err != nil || zipped.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("first click: Content-Encoding %q, %v", zipped.Header.Get("Content-Encoding"), err)
	}
	want, _ := io.ReadAll(zr)
	for _, other := range []string{"crash-before-ack", "topic-replay", "order-shipping"} {
		do(t, h, "GET", clickURL(other), "Accept-Encoding", "gzip")
		do(t, h, "GET", clickURL(other)) // computed plain: a copy kept
	}

	plain := do(t, h, "GET", target)
	body := readBody(t, plain)
	etag := plain.Header.Get("ETag")
	if body != string(want) || plain.Header.Get("Content-Encoding") != "" || plain.Header.Get("Content-Length") != itoa(len(body)) {
		t.Fatalf("plain client: %d bytes (Content-Length %q, Content-Encoding %q); want the %d bytes gzip inflates to",
			len(body), plain.Header.Get("Content-Length"), plain.Header.Get("Content-Encoding"), len(want))
	}
	if zetag := zipped.Header.Get("ETag"); etag == "" || zetag != strings.TrimSuffix(etag, `"`)+`-gz"` {
		t.Errorf("ETags: plain %q, gzip %q", etag, zetag)
	}
	if again := readBody(t, do(t, h, "GET", target, "Accept-Encoding", "gzip")); again != zbody {
		t.Error("the cached gzip answer changed after later clicks")
	}
	if head := do(t, h, "HEAD", target); head.Header.Get("Content-Length") != itoa(len(body)) || readBody(t, head) != "" {
		t.Errorf("HEAD: Content-Length %q, want %d and no body", head.Header.Get("Content-Length"), len(body))
	}
	if resp := do(t, h, "GET", target, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match the plain ETag: %d, want 304", resp.StatusCode)
	}
	if ranged := do(t, h, "GET", target, "Range", "bytes=5-14"); readBody(t, ranged) != body[5:15] || ranged.StatusCode != http.StatusPartialContent {
		t.Errorf("Range: %d", ranged.StatusCode)
	}
	if miss := testutil.ToFloat64(s.metrics.Cache.WithLabelValues("miss")); miss != 4 {
		t.Errorf("%v runs; want 4 (each state once, answered from the cache after)", miss)
	}
}
