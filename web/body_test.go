package web

import (
	"bytes"
	"compress/gzip"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"idemlab/lessons"
)

func TestServer_Head(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	for _, target := range []string{"/", "/lessons/why-twice", "/embed/lessons/why-twice", "/lessons/nope", "/nowhere", "/healthz"} {
		get := do(t, h, "GET", target)
		getBody, _ := io.ReadAll(get.Body)
		head := do(t, h, "HEAD", target)
		headBody, _ := io.ReadAll(head.Body)
		if head.StatusCode != get.StatusCode {
			t.Errorf("%s: HEAD status %d, GET %d", target, head.StatusCode, get.StatusCode)
		}
		if len(headBody) != 0 {
			t.Errorf("%s: HEAD wrote a %d-byte body", target, len(headBody))
		}
		if head.Header.Get("Content-Length") != get.Header.Get("Content-Length") || get.Header.Get("Content-Length") != itoa(len(getBody)) {
			t.Errorf("%s: Content-Length HEAD %q, GET %q, body %d", target,
				head.Header.Get("Content-Length"), get.Header.Get("Content-Length"), len(getBody))
		}
	}
}

func TestServer_ETag(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	first := do(t, h, "GET", "/lessons/why-twice")
	etag := first.Header.Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(etag) {
		t.Fatalf("ETag = %q", etag)
	}
	if cc := first.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", cc)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		resp := do(t, h, "GET", "/lessons/why-twice", "If-None-Match", inm)
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s: status = %d, want 304", inm, resp.StatusCode)
		}
	}
	if resp := do(t, h, "GET", "/lessons/why-twice", "If-None-Match", `"stale"`); resp.StatusCode != 200 {
		t.Errorf("stale ETag: status = %d, want 200", resp.StatusCode)
	}
}

func TestServer_Gzip(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.Handler()
	for _, target := range []string{"/lessons/why-twice", s.assets.URL("app.css"), s.assets.URL("app.js")} {
		plain := do(t, h, "GET", target)
		plainBody, _ := io.ReadAll(plain.Body)
		zipped := do(t, h, "GET", target, "Accept-Encoding", "gzip, deflate, br")
		if zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Vary") != "Accept-Encoding" || plain.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: Content-Encoding %q, Vary %q/%q", target, zipped.Header.Get("Content-Encoding"), zipped.Header.Get("Vary"), plain.Header.Get("Vary"))
			continue
		}
		zr, err := gzip.NewReader(zipped.Body)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		unzipped, _ := io.ReadAll(zr)
		if !bytes.Equal(unzipped, plainBody) {
			t.Errorf("%s: gzip body does not decompress to the plain one", target)
		}
		if zipped.Header.Get("ETag") == plain.Header.Get("ETag") {
			t.Errorf("%s: both encodings share the ETag %s", target, plain.Header.Get("ETag"))
		}
		if resp := do(t, h, "GET", target, "Accept-Encoding", "gzip", "If-None-Match", zipped.Header.Get("ETag")); resp.StatusCode != 304 || resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: revalidating the gzip variant: %d, Content-Encoding %q", target, resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
	}
	if resp := do(t, h, "GET", "/healthz", "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "" {
		t.Error("a two-byte body should not be compressed")
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip;q=1.0, *;q=0.5", true},
		{"GZIP", true},
		{"br", false},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"gzip;q=0.5", true},
		{"*", true},
		{"identity", false},
	}
	for _, tt := range tests {
		if got := site.AcceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestServer_StaticAssets(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	doc := document(t, do(t, h, "GET", "/"))
	assets := map[string]string{}
	doc.Find(`link[rel="stylesheet"], link[rel="icon"], script[src]`).Each(func(_ int, s *goquerySelection) {
		u := s.AttrOr("href", s.AttrOr("src", ""))
		assets[u] = ""
	})
	hashed := regexp.MustCompile(`^/static/(app|playground|theme|highlight|favicon|exercise|workshop)\.[0-9a-f]{10}\.(css|js|svg)$`)
	wantTypes := map[string]string{"css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml"}
	if len(assets) != 8 {
		t.Errorf("page links %d assets, want 8 (3 css, 4 js, icon; the workshop's only on workshop pages): %v", len(assets), assets)
	}
	for u := range assets {
		m := hashed.FindStringSubmatch(u)
		if m == nil {
			t.Errorf("asset URL %q is not content-hashed", u)
			continue
		}
		resp := do(t, h, "GET", u)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s = %d", u, resp.StatusCode)
		}
		if got := resp.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control = %q", u, got)
		}
		if got := resp.Header.Get("Content-Type"); got != wantTypes[m[2]] {
			t.Errorf("%s: Content-Type = %q, want %q", u, got, wantTypes[m[2]])
		}
		if etag := resp.Header.Get("ETag"); do(t, h, "GET", u, "If-None-Match", etag).StatusCode != 304 {
			t.Errorf("%s: If-None-Match %s did not give 304", u, etag)
		}
	}
	if resp := do(t, h, "GET", "/static/app.0000000000.css"); resp.StatusCode != 404 {
		t.Errorf("stale hash: status %d, want 404", resp.StatusCode)
	}
}

func TestServer_HighlightCSSIsServed(t *testing.T) {
	s := newTestServer(t, Config{})
	resp := do(t, s.Handler(), "GET", s.assets.URL("highlight.css"))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Equal(body, lessons.HighlightCSS()) {
		t.Errorf("highlight.css: status %d, body %q", resp.StatusCode, body)
	}
}

// The budget for a page with its assets is 150 KB over the wire;
// lesson pages must leave the playground most of it.
func TestServer_LessonPageWeight(t *testing.T) {
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{}, course)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	heaviest, heaviestSlug := 0, ""
	for _, l := range course.Lessons {
		total := 0
		get := func(target string) []byte {
			resp := do(t, h, "GET", target, "Accept-Encoding", "gzip")
			body, _ := io.ReadAll(resp.Body)
			total += len(body)
			if resp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				body, _ = io.ReadAll(zr)
			}
			return body
		}
		doc, _ := goqueryDocument(get(playurl.LessonPath(l.Slug)))
		doc.Find(`link[rel="stylesheet"], link[rel="icon"], script[src]`).Each(func(_ int, sel *goquerySelection) {
			get(sel.AttrOr("href", sel.AttrOr("src", "")))
		})
		if total > heaviest {
			heaviest, heaviestSlug = total, l.Slug
		}
	}
	t.Logf("heaviest lesson: %s, %d bytes with its assets, gzipped", heaviestSlug, heaviest)
	if heaviest > 80_000 {
		t.Errorf("%s weighs %d bytes over the wire; keep lessons under 80 KB so a playground fits in 150 KB", heaviestSlug, heaviest)
	}
}

// TestWriteBody_EveryKindOfBody asks a pre-rendered page, a page and a
// fragment rendered per request, the JSON API and a static file for each
// thing the one body writer promises: HEAD, Content-Length, an ETag per
// encoding, 304, gzip and ranges.
func TestWriteBody_EveryKindOfBody(t *testing.T) {
	s := newTestServer(t, Config{})
	s.limiter.PerSecond, s.limiter.Burst = 1e6, 1e6 // one test client asks for every kind of body, many times
	h := s.Handler()
	for _, target := range []string{
		"/lessons/why-twice",
		"/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1",
		"/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&fragment=1",
		"/api/v1/run?scenario=lost-ack&handlers=increment,dedupe-tx",
		s.assets.URL("app.css"),
	} {
		t.Run(target, func(t *testing.T) {
			get := do(t, h, "GET", target)
			body := readBody(t, get)
			etag := get.Header.Get("ETag")
			if get.StatusCode != 200 || etag == "" || get.Header.Get("Content-Length") != itoa(len(body)) || get.Header.Get("Vary") != "Accept-Encoding" {
				t.Fatalf("GET: %d, ETag %q, Content-Length %q for %d bytes, Vary %q", get.StatusCode, etag, get.Header.Get("Content-Length"), len(body), get.Header.Get("Vary"))
			}

			head := do(t, h, "HEAD", target)
			if head.StatusCode != 200 || readBody(t, head) != "" || head.Header.Get("Content-Length") != itoa(len(body)) || head.Header.Get("ETag") != etag {
				t.Errorf("HEAD: %d, Content-Length %q, ETag %q; want GET's headers and no body", head.StatusCode, head.Header.Get("Content-Length"), head.Header.Get("ETag"))
			}

			for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag} {
				resp := do(t, h, "GET", target, "If-None-Match", inm)
				if resp.StatusCode != http.StatusNotModified || readBody(t, resp) != "" {
					t.Errorf("If-None-Match %s: %d, want 304 without a body", inm, resp.StatusCode)
				}
			}

			zipped := do(t, h, "GET", target, "Accept-Encoding", "gzip")
			zbody := readBody(t, zipped)
			zetag := zipped.Header.Get("ETag")
			if zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Content-Length") != itoa(len(zbody)) || zetag == etag || zetag == "" {
				t.Fatalf("gzip: Content-Encoding %q, Content-Length %q for %d bytes, ETag %q (plain %q)", zipped.Header.Get("Content-Encoding"), zipped.Header.Get("Content-Length"), len(zbody), zetag, etag)
			}
			zr, err := gzip.NewReader(strings.NewReader(zbody))
			if err != nil {
				t.Fatal(err)
			}
			if unzipped, _ := io.ReadAll(zr); string(unzipped) != body {
				t.Error("the gzip body does not decompress to the plain one")
			}
			if resp := do(t, h, "GET", target, "Accept-Encoding", "gzip", "If-None-Match", zetag); resp.StatusCode != 304 || resp.Header.Get("Content-Encoding") != "" {
				t.Errorf("revalidating the gzip variant: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
			}
			if resp := do(t, h, "GET", target, "If-None-Match", zetag); resp.StatusCode != 200 {
				t.Errorf("the gzip ETag revalidated the plain body: %d", resp.StatusCode)
			}
			if head := do(t, h, "HEAD", target, "Accept-Encoding", "gzip"); head.Header.Get("Content-Length") != itoa(len(zbody)) || readBody(t, head) != "" {
				t.Errorf("HEAD with gzip: Content-Length %q, want %d and no body", head.Header.Get("Content-Length"), len(zbody))
			}

			ranged := do(t, h, "GET", target, "Range", "bytes=5-14")
			if got := readBody(t, ranged); ranged.StatusCode != http.StatusPartialContent || got != body[5:15] || ranged.Header.Get("Content-Length") != "10" {
				t.Errorf("Range bytes=5-14: %d %q (Content-Length %q), want 206 %q", ranged.StatusCode, got, ranged.Header.Get("Content-Length"), body[5:15])
			}
			ranges := do(t, h, "GET", target, "Range", "bytes=0-1,20-29")
			if got := readBody(t, ranges); ranges.StatusCode != http.StatusPartialContent || !strings.HasPrefix(ranges.Header.Get("Content-Type"), "multipart/byteranges") ||
				!strings.Contains(got, body[:2]) || !strings.Contains(got, body[20:30]) {
				t.Errorf("Range bytes=0-1,20-29: %d %s %q", ranges.StatusCode, ranges.Header.Get("Content-Type"), got)
			}
		})
	}
}

// TestWriteBody_NoStoreAnswers: answers that must not be stored (a POST's
// answer, an error) carry no ETag, so nothing revalidates them, and are
// still compressed and answer HEAD.
func TestWriteBody_NoStoreAnswers(t *testing.T) {
	s := exerciseServer(t)
	h := s.Handler()
	spec := builtinExercise(t, "dedupe-credit")
	check := postForm(t, h, "/api/v1/check", url.Values{"exercise": {spec.ID}, "handler": {spec.Start}}, "Accept-Encoding", "gzip")
	zbody := readBody(t, check)
	if check.StatusCode != 200 || check.Header.Get("ETag") != "" || check.Header.Get("Cache-Control") != "no-store" ||
		check.Header.Get("Content-Encoding") != "gzip" || check.Header.Get("Content-Length") != itoa(len(zbody)) {
		t.Errorf("check API: %d, ETag %q, Cache-Control %q, Content-Encoding %q, Content-Length %q for %d bytes", check.StatusCode,
			check.Header.Get("ETag"), check.Header.Get("Cache-Control"), check.Header.Get("Content-Encoding"), check.Header.Get("Content-Length"), len(zbody))
	}
	for _, target := range []string{"/lessons/nope", "/api/v1/run?scenario=nope"} {
		get := do(t, h, "GET", target)
		body := readBody(t, get)
		head := do(t, h, "HEAD", target)
		if get.Header.Get("ETag") != "" || get.Header.Get("Cache-Control") != "no-store" || get.Header.Get("Content-Length") != itoa(len(body)) {
			t.Errorf("%s: ETag %q, Cache-Control %q, Content-Length %q for %d bytes", target, get.Header.Get("ETag"), get.Header.Get("Cache-Control"), get.Header.Get("Content-Length"), len(body))
		}
		if head.StatusCode != get.StatusCode || readBody(t, head) != "" || head.Header.Get("Content-Length") != get.Header.Get("Content-Length") {
			t.Errorf("%s: HEAD %d with Content-Length %q, GET %d with %q", target, head.StatusCode, head.Header.Get("Content-Length"), get.StatusCode, get.Header.Get("Content-Length"))
		}
		if resp := do(t, h, "GET", target, "If-None-Match", "*"); resp.StatusCode != get.StatusCode {
			t.Errorf("%s: If-None-Match * answered %d, want %d", target, resp.StatusCode, get.StatusCode)
		}
	}
}

// TestWriteBody_OverTheWire: through a real connection (where the response
// writer copies bodies its own way) a page and a range of it arrive whole.
func TestWriteBody_OverTheWire(t *testing.T) {
	s := newTestServer(t, Config{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	want := readBody(t, do(t, s.Handler(), "GET", "/lessons/why-twice"))
	for _, tt := range []struct{ rangeHeader, want string }{{"", want}, {"bytes=100-", want[100:]}} {
		req, _ := http.NewRequest("GET", srv.URL+"/lessons/why-twice", nil)
		if tt.rangeHeader != "" {
			req.Header.Set("Range", tt.rangeHeader)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := readBody(t, resp); got != tt.want || resp.ContentLength != int64(len(tt.want)) {
			t.Errorf("Range %q: %d bytes (Content-Length %d), want %d", tt.rangeHeader, len(got), resp.ContentLength, len(tt.want))
		}
		resp.Body.Close()
	}
}
