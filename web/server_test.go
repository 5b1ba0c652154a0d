package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"idemlab/lessons"
)

func TestServer_Routes(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	tests := []struct {
		name        string
		method      string
		target      string
		wantStatus  int
		contentType string
	}{
		{"index", "GET", "/", 200, "text/html; charset=utf-8"},
		{"lesson", "GET", "/lessons/why-twice", 200, "text/html; charset=utf-8"},
		{"last lesson", "GET", "/lessons/dedupe-table", 200, "text/html; charset=utf-8"},
		{"embed", "GET", "/embed/lessons/idempotent", 200, "text/html; charset=utf-8"},
		{"health", "GET", "/healthz", 200, "text/plain; charset=utf-8"},
		{"unknown lesson", "GET", "/lessons/nope", 404, "text/html; charset=utf-8"},
		{"unknown embed", "GET", "/embed/lessons/nope", 404, "text/html; charset=utf-8"},
		{"unknown path", "GET", "/nowhere/at/all", 404, "text/html; charset=utf-8"},
		{"lessons without slug", "GET", "/lessons/", 404, "text/html; charset=utf-8"},
		{"unhashed static", "GET", "/static/app.css", 404, "text/html; charset=utf-8"},
		{"post to lesson", "POST", "/lessons/why-twice", 405, "text/html; charset=utf-8"},
		{"delete index", "DELETE", "/", 405, "text/html; charset=utf-8"},
		{"head lesson", "HEAD", "/lessons/why-twice", 200, "text/html; charset=utf-8"},
		{"head health", "HEAD", "/healthz", 200, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, h, tt.method, tt.target)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if got := resp.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
			}
		})
	}
}

func TestServer_Healthz(t *testing.T) {
	resp := do(t, newTestServer(t, Config{}).Handler(), "GET", "/healthz")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("GET /healthz = %d %q, want 200 \"ok\"", resp.StatusCode, body)
	}
}

func TestServer_SecurityHeaders(t *testing.T) {
	h := newTestServer(t, Config{FrameAncestors: []string{"'self'", "https://docs.example.org"}}).Handler()
	tests := []struct {
		target        string
		wantAncestors string
		wantXFO       string
	}{
		{"/", "frame-ancestors 'self';", "SAMEORIGIN"},
		{"/lessons/why-twice", "frame-ancestors 'self';", "SAMEORIGIN"},
		{"/lessons/nope", "frame-ancestors 'self';", "SAMEORIGIN"},
		{"/embed/lessons/why-twice", "frame-ancestors 'self' https://docs.example.org;", ""},
		{"/embed/lessons/nope", "frame-ancestors 'self' https://docs.example.org;", ""},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			resp := do(t, h, "GET", tt.target)
			csp := resp.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self';",
				"img-src 'self' data:", "base-uri 'none'", "form-action 'self'", tt.wantAncestors} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") {
				t.Errorf("CSP allows unsafe-inline: %q", csp)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if got := resp.Header.Get("Referrer-Policy"); got != "strict-origin-when-cross-origin" {
				t.Errorf("Referrer-Policy = %q", got)
			}
			if got := resp.Header.Get("X-Frame-Options"); got != tt.wantXFO {
				t.Errorf("X-Frame-Options = %q, want %q", got, tt.wantXFO)
			}
		})
	}
}

func TestServer_DefaultFrameAncestorsIsSelf(t *testing.T) {
	resp := do(t, newTestServer(t, Config{}).Handler(), "GET", "/embed/lessons/why-twice")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'self';") {
		t.Errorf("CSP = %q, want frame-ancestors 'self'", csp)
	}
}

func TestServer_PagesHaveNoInlineScriptOrStyle(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	for _, target := range []string{"/", "/lessons/why-twice", "/embed/lessons/why-twice", "/lessons/nope"} {
		doc := document(t, do(t, h, "GET", target))
		doc.Find("script").Each(func(_ int, s *goquerySelection) {
			if src, _ := s.Attr("src"); src == "" || strings.TrimSpace(s.Text()) != "" {
				t.Errorf("%s: inline script %q", target, s.Text())
			}
		})
		if n := doc.Find("style, [style]").Length(); n > 0 {
			t.Errorf("%s: %d inline styles; the CSP forbids them", target, n)
		}
		if n := doc.Find("[onclick], [onload], [onchange]").Length(); n > 0 {
			t.Errorf("%s: %d inline event handlers", target, n)
		}
	}
}

func TestServer_NotFoundIsFriendly(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "GET", "/lessons/<b>nope</b>")
	if resp.StatusCode != 404 {
		t.Fatalf("status = %d, want 404", resp.StatusCode)
	}
	doc := document(t, resp)
	page := doc.Find(testID("error-page"))
	if page.Length() != 1 || page.AttrOr("data-status", "") != "404" {
		t.Fatalf("no error-page with data-status 404")
	}
	if msg := doc.Find(testID("error-message")).Text(); !strings.Contains(msg, "<b>nope</b>") {
		t.Errorf("message %q does not name the slug (escaped)", msg)
	}
	if doc.Find("b").Length() != 0 {
		t.Error("the slug was not escaped")
	}
	if doc.Find(testID("site-header")).Length() != 1 || doc.Find(testID("site-footer")).Length() != 1 {
		t.Error("the 404 page is not inside the site layout")
	}
	if n := doc.Find(".error-suggestions li").Length(); n != 3 {
		t.Errorf("404 page suggests %d lessons, want 3", n)
	}
}

func TestServer_MethodNotAllowed(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "POST", "/lessons/why-twice")
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("status = %d, want 405", resp.StatusCode)
	}
	if allow := resp.Header.Get("Allow"); allow != "GET, HEAD" {
		t.Errorf("Allow = %q, want \"GET, HEAD\"", allow)
	}
	doc := document(t, resp)
	if doc.Find(testID("error-page")).AttrOr("data-status", "") != "405" {
		t.Error("405 body is not the friendly error page")
	}
	if msg := doc.Find(testID("error-message")).Text(); !strings.Contains(msg, "POST") || !strings.Contains(msg, "GET, HEAD") {
		t.Errorf("message %q should name the method and the allowed ones", msg)
	}
}

func TestServer_CleanPathRedirectPassesThrough(t *testing.T) {
	resp := do(t, newTestServer(t, Config{}).Handler(), "GET", "/lessons/../lessons/why-twice")
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("status = %d, want 307", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/lessons/why-twice" {
		t.Errorf("Location = %q", loc)
	}
}

func TestServer_CrossOriginPostIsRefused(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "POST", "/lessons/why-twice", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status = %d, want 403", resp.StatusCode)
	}
	if document(t, resp).Find(testID("error-page")).AttrOr("data-status", "") != "403" {
		t.Error("403 body is not the friendly error page")
	}
	// A cross-site GET is a normal visit (a link from elsewhere).
	if resp := do(t, h, "GET", "/lessons/why-twice", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != 200 {
		t.Errorf("cross-site GET status = %d, want 200", resp.StatusCode)
	}
}

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

func TestServer_StaticAssets(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	doc := document(t, do(t, h, "GET", "/"))
	assets := map[string]string{}
	doc.Find(`link[rel="stylesheet"], link[rel="icon"], script[src]`).Each(func(_ int, s *goquerySelection) {
		u := s.AttrOr("href", s.AttrOr("src", ""))
		assets[u] = ""
	})
	hashed := regexp.MustCompile(`^/static/(app|theme|highlight|favicon|exercise)\.[0-9a-f]{10}\.(css|js|svg)$`)
	wantTypes := map[string]string{"css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml"}
	if len(assets) != 7 {
		t.Errorf("page links %d assets, want 7 (3 css, 3 js, icon): %v", len(assets), assets)
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

func TestServer_LessonPage(t *testing.T) {
	doc := document(t, do(t, newTestServer(t, Config{}).Handler(), "GET", "/lessons/idempotent"))
	if got := doc.Find(testID("lesson-title")).Text(); got != "What idempotent means" {
		t.Errorf("lesson-title = %q", got)
	}
	if got := doc.Find("title").Text(); got != "What idempotent means · Idemlab" {
		t.Errorf("<title> = %q", got)
	}
	prev, next := doc.Find(testID("prev")), doc.Find(testID("next"))
	if prev.AttrOr("href", "") != "/lessons/why-twice" || prev.AttrOr("rel", "") != "prev" {
		t.Errorf("prev link: href %q rel %q", prev.AttrOr("href", ""), prev.AttrOr("rel", ""))
	}
	if next.AttrOr("href", "") != "/lessons/dedupe-table" || next.AttrOr("rel", "") != "next" {
		t.Errorf("next link: href %q rel %q", next.AttrOr("href", ""), next.AttrOr("rel", ""))
	}
	if doc.Find(`head link[rel="prev"]`).AttrOr("href", "") != "/lessons/why-twice" ||
		doc.Find(`head link[rel="next"]`).AttrOr("href", "") != "/lessons/dedupe-table" {
		t.Error("head lacks link rel=prev/next")
	}
	if doc.Find(testID("toc")+` a[href="#definition"]`).Length() != 1 {
		t.Error("TOC lacks its heading link")
	}
	if got := doc.Find(testID("course-nav")+` a[aria-current="page"]`).AttrOr("href", ""); got != "/lessons/idempotent" {
		t.Errorf("course nav marks %q as current", got)
	}
	if doc.Find(`link[rel="canonical"]`).Length() != 0 {
		t.Error("canonical link without a public URL: it would have to guess the host")
	}
}

func TestServer_FirstAndLastLessonNeighbours(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	first := document(t, do(t, h, "GET", "/lessons/why-twice"))
	if first.Find(testID("prev")).Length() != 0 || first.Find(testID("next")).Length() != 1 {
		t.Error("first lesson: want next only")
	}
	last := document(t, do(t, h, "GET", "/lessons/dedupe-table"))
	if last.Find(testID("next")).Length() != 0 || last.Find(testID("prev")).Length() != 1 {
		t.Error("last lesson: want prev only")
	}
	if last.Find(testID("back-to-course")).Length() != 1 {
		t.Error("last lesson: no way back to the course")
	}
}

func TestServer_EmbedHasNoChrome(t *testing.T) {
	doc := document(t, do(t, newTestServer(t, Config{}).Handler(), "GET", "/embed/lessons/why-twice"))
	if got := doc.Find(testID("lesson-title")).Text(); got != "Why messages arrive twice" {
		t.Errorf("lesson-title = %q", got)
	}
	if doc.Find(testID("lesson-body")).Length() != 1 || doc.Find(testID("playground")).Length() != 1 {
		t.Error("embed lacks the lesson body or its playground")
	}
	for _, id := range []string{"site-header", "site-footer", "course-nav", "toc", "prev", "next", "pager", "theme-toggle"} {
		if doc.Find(testID(id)).Length() != 0 {
			t.Errorf("embed contains %s", id)
		}
	}
	if n := doc.Find("header, nav, footer, link[rel=prev], link[rel=next]").Length(); n != 0 {
		t.Errorf("embed has %d header/nav/footer/rel links", n)
	}
	if !doc.Find("body").HasClass("embed-body") {
		t.Error("embed body lacks the embed-body class app.js looks for")
	}
}

func TestServer_IndexListsLessonsInOrder(t *testing.T) {
	doc := document(t, do(t, newTestServer(t, Config{}).Handler(), "GET", "/"))
	items := doc.Find(testID("lesson-list") + " " + testID("lesson-item"))
	var slugs []string
	items.Each(func(_ int, s *goquerySelection) { slugs = append(slugs, s.AttrOr("data-lesson-slug", "")) })
	if strings.Join(slugs, ",") != "why-twice,idempotent,dedupe-table" {
		t.Errorf("lesson order = %v", slugs)
	}
	first := items.First()
	if got := first.Find(testID("lesson-facts")).Text(); !strings.Contains(got, "8 min read") || !strings.Contains(got, "3 objectives") {
		t.Errorf("facts = %q", got)
	}
	if first.Find(testID("done-toggle")).AttrOr("data-slug", "") != "why-twice" {
		t.Error("no done toggle for the first lesson")
	}
}

func TestServer_PublicURL(t *testing.T) {
	h := newTestServer(t, Config{PublicURL: "https://learn.example.org/idemlab/"}).Handler()
	doc := document(t, do(t, h, "GET", "/lessons/idempotent"))
	if got := doc.Find(`link[rel="canonical"]`).AttrOr("href", ""); got != "https://learn.example.org/idemlab/lessons/idempotent" {
		t.Errorf("canonical = %q", got)
	}
	if got := doc.Find(testID("next")).AttrOr("href", ""); got != "/idemlab/lessons/dedupe-table" {
		t.Errorf("next href = %q, want the path prefix", got)
	}
	if got := doc.Find(`link[rel="stylesheet"][href*="/app."]`).AttrOr("href", ""); !strings.HasPrefix(got, "/idemlab/static/app.") {
		t.Errorf("stylesheet href = %q", got)
	}
	embed := document(t, do(t, h, "GET", "/embed/lessons/idempotent"))
	if got := embed.Find(testID("embed-source")+" a").AttrOr("href", ""); got != "https://learn.example.org/idemlab/lessons/idempotent" {
		t.Errorf("embed link to the full lesson = %q", got)
	}
}

func TestNewServer_BadConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"relative public URL", Config{PublicURL: "learn.example.org"}, "must start with http:// or https://"},
		{"public URL without host", Config{PublicURL: "https://"}, "has no host"},
		{"public URL with query", Config{PublicURL: "https://x.org/?a=1"}, "without user, query or fragment"},
		{"unquoted self", Config{FrameAncestors: []string{"self"}}, "did you mean 'self'"},
		{"injection", Config{FrameAncestors: []string{"https://a.org; script-src *"}}, "frame ancestor 1"},
		{"none with others", Config{FrameAncestors: []string{"'none'", "https://a.org"}}, "cannot be combined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewServer(tt.cfg, sampleCourse())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := NewServer(Config{}, nil); err == nil {
		t.Error("nil course accepted")
	}
}

func TestServer_SetCourse(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.Handler()
	before := do(t, h, "GET", "/lessons/why-twice").Header.Get("ETag")

	course := sampleCourse()
	course.Lessons[0].Title = "Why messages come back"
	course.Lessons = course.Lessons[:2]
	s.SetCourse(course)

	resp := do(t, h, "GET", "/lessons/why-twice")
	if resp.Header.Get("ETag") == before {
		t.Error("ETag unchanged after the lesson changed")
	}
	if got := document(t, resp).Find(testID("lesson-title")).Text(); got != "Why messages come back" {
		t.Errorf("title after SetCourse = %q", got)
	}
	if resp := do(t, h, "GET", "/lessons/dedupe-table"); resp.StatusCode != 404 {
		t.Errorf("removed lesson: status %d, want 404", resp.StatusCode)
	}
	if n := document(t, do(t, h, "GET", "/")).Find(testID("lesson-item")).Length(); n != 2 {
		t.Errorf("index lists %d lessons, want 2", n)
	}

	s.SetCourse(nil) // ignored, logged
	if resp := do(t, h, "GET", "/lessons/why-twice"); resp.StatusCode != 200 {
		t.Errorf("after SetCourse(nil): status %d", resp.StatusCode)
	}
	dup := sampleCourse()
	dup.Lessons[1].Slug = dup.Lessons[0].Slug
	s.SetCourse(dup) // rejected, the previous course stays
	if resp := do(t, h, "GET", "/lessons/idempotent"); resp.StatusCode != 200 {
		t.Errorf("after a rejected course: status %d", resp.StatusCode)
	}
}

func TestServer_PanicBecomesLogged500(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := s.withRequestLog(s.withRecovery(s.withSecurityHeaders(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("handler exploded")
	}))))
	resp := do(t, h, "GET", "/lessons/why-twice")
	if resp.StatusCode != 500 {
		t.Fatalf("status = %d, want 500", resp.StatusCode)
	}
	doc := document(t, resp)
	if doc.Find(testID("error-page")).AttrOr("data-status", "") != "500" {
		t.Error("no friendly 500 page")
	}
	if strings.Contains(doc.Text(), "exploded") {
		t.Error("the 500 page leaks the panic value")
	}
	for _, want := range []string{"panic serving request", "handler exploded", "stack=", "status=500"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestServer_InternalErrorIsLoggedNotShown(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := s.handle(func(http.ResponseWriter, *http.Request) error { return errors.New("disk on fire") })
	resp := do(t, h, "GET", "/x")
	if resp.StatusCode != 500 {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	if body, _ := io.ReadAll(resp.Body); bytes.Contains(body, []byte("disk on fire")) {
		t.Error("the internal error reached the visitor")
	}
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Errorf("internal error not logged:\n%s", logs.String())
	}
}

func TestServer_InvalidErrorShowsMessageAndAction(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.handle(func(http.ResponseWriter, *http.Request) error {
		return invalidf(&link{Label: "Back to the start", Href: "/playground?scenario=lost-ack"}, "line 1: unknown event %q", "delivr")
	})
	resp := do(t, h, "GET", "/x")
	if resp.StatusCode != 400 {
		t.Fatalf("status = %d, want 400", resp.StatusCode)
	}
	doc := document(t, resp)
	if got := doc.Find(testID("error-message")).Text(); got != `line 1: unknown event "delivr"` {
		t.Errorf("message = %q", got)
	}
	if got := doc.Find(testID("error-action")).AttrOr("href", ""); got != "/playground?scenario=lost-ack" {
		t.Errorf("action href = %q", got)
	}
}

func TestServer_ErrorPageFallback(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s.errorContent = func(*siteView, errorView) templ.Component {
		return templ.ComponentFunc(func(context.Context, io.Writer) error { return errors.New("template broke") })
	}
	resp := do(t, s.Handler(), "GET", "/lessons/nope")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !bytes.Equal(body, []byte(fallbackErrorPage)) {
		t.Errorf("status %d, body %q; want 500 and the fallback page", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "template broke") {
		t.Errorf("render failure not logged:\n%s", logs.String())
	}
}

func TestServer_RequestLog(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	do(t, s.Handler(), "GET", "/lessons/nope")
	line := logs.String()
	for _, want := range []string{"msg=request", "method=GET", "path=/lessons/nope", "status=404", "duration="} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %q: %s", want, line)
		}
	}
}

func TestEtagMatches(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"x", "abc"`, true},
		{`"x"`, false},
		{`*`, true},
		{`abc`, false},
	}
	for _, tt := range tests {
		if got := etagMatches(tt.header, `"abc"`); got != tt.want {
			t.Errorf("etagMatches(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestServer_EmbeddedCourse(t *testing.T) {
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatalf("loading the embedded course: %v", err)
	}
	s, err := NewServer(Config{}, course)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	for _, l := range course.Lessons {
		for _, target := range []string{lessonPath(l.Slug), embedPath(l.Slug)} {
			resp := do(t, h, "GET", target)
			if resp.StatusCode != 200 {
				t.Errorf("GET %s = %d", target, resp.StatusCode)
				continue
			}
			doc := document(t, resp)
			if got := doc.Find(testID("lesson-title")).Text(); got != l.Title {
				t.Errorf("%s: lesson-title %q, want %q", target, got, l.Title)
			}
			if got, want := doc.Find(testID("playground")).Length(), len(l.Playgrounds); got != want {
				t.Errorf("%s: %d playgrounds drawn, lesson has %d", target, got, want)
			}
		}
	}
}

func TestServer_EmbedErrorKeepsEmbedLayout(t *testing.T) {
	resp := do(t, newTestServer(t, Config{}).Handler(), "GET", "/embed/lessons/nope")
	doc := document(t, resp)
	if resp.StatusCode != 404 || doc.Find(testID("error-page")).Length() != 1 {
		t.Fatalf("status %d, want the 404 page", resp.StatusCode)
	}
	if doc.Find("header, footer").Length() != 0 || !doc.Find("body").HasClass("embed-body") {
		t.Error("an error inside an iframe should keep the embed layout")
	}
}

func TestServer_SetCourseWhileServing(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.Handler()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			s.SetCourse(sampleCourse())
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		if resp := do(t, h, "GET", "/lessons/why-twice"); resp.StatusCode != 200 {
			t.Fatalf("request %d during SetCourse: status %d", i, resp.StatusCode)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"ééé", 3, "é…"}, // never cut inside a rune
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
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
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
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
		doc, _ := goqueryDocument(get(lessonPath(l.Slug)))
		doc.Find(`link[rel="stylesheet"], link[rel="icon"], script[src]`).Each(func(_ int, sel *goquerySelection) {
			get(sel.AttrOr("href", sel.AttrOr("src", "")))
		})
		if total > heaviest {
			heaviest, heaviestSlug = total, l.Slug
		}
	}
	t.Logf("heaviest lesson: %s, %d bytes with its assets, gzipped", heaviestSlug, heaviest)
	if heaviest > 75_000 {
		t.Errorf("%s weighs %d bytes over the wire; keep lessons under 75 KB so a playground fits in 150 KB", heaviestSlug, heaviest)
	}
}
