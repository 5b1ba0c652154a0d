package web

import (
	"bytes"
	"idemlab/web/playurl"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

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

func TestServer_CleanPathRedirectPassesThrough(t *testing.T) {
	resp := do(t, newTestServer(t, Config{}).Handler(), "GET", "/lessons/../lessons/why-twice")
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("status = %d, want 307", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/lessons/why-twice" {
		t.Errorf("Location = %q", loc)
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
		for _, target := range []string{playurl.LessonPath(l.Slug), playurl.EmbedPath(l.Slug)} {
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
