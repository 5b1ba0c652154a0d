package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func oembedOf(t *testing.T, h http.Handler, target string) (int, map[string]any) {
	t.Helper()
	resp := do(t, h, "GET", target)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("%s: Content-Type %q", target, ct)
	}
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	return resp.StatusCode, body
}

// A lesson or playground address becomes a "rich" oEmbed answer whose
// iframe points at the embed view of the same state, on the public origin.
func TestOEmbed_LessonsAndPlaygrounds(t *testing.T) {
	h := newTestServer(t, Config{PublicURL: "https://learn.example.org/idemlab"}).Handler()
	tests := []struct {
		name, url, src, title string
		width                 float64
	}{
		{"lesson", "https://learn.example.org/idemlab/lessons/why-twice", "https://learn.example.org/idemlab/embed/lessons/why-twice", "Why messages arrive twice", 760},
		{"lesson block state", "https://learn.example.org/idemlab/lessons/why-twice?pg=pg-1&script=deliver+msg-1#pg-1", "https://learn.example.org/idemlab/embed/lessons/why-twice?pg=pg-1&amp;script=deliver+msg-1#pg-1", "", 760},
		{"playground state", "https://learn.example.org/idemlab/playground?scenario=lost-ack&script=deliver+msg-1", "https://learn.example.org/idemlab/embed/playground?scenario=lost-ack&amp;script=deliver+msg-1", "The ack that never arrived · Playground", 960},
		{"an embed address", "https://learn.example.org/idemlab/embed/lessons/why-twice", "https://learn.example.org/idemlab/embed/lessons/why-twice", "", 760},
		{"a site path", "/idemlab/lessons/why-twice", "https://learn.example.org/idemlab/embed/lessons/why-twice", "", 760},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := oembedOf(t, h, "/oembed?format=json&url="+url.QueryEscape(tt.url))
			if status != 200 {
				t.Fatalf("status %d: %v", status, body)
			}
			if body["version"] != "1.0" || body["type"] != "rich" || body["provider_name"] != "Idemlab" || body["provider_url"] != "https://learn.example.org/idemlab/" {
				t.Errorf("answer %v", body)
			}
			html, _ := body["html"].(string)
			if !strings.HasPrefix(html, `<iframe src="`+tt.src+`"`) {
				t.Errorf("html %q does not frame %q", html, tt.src)
			}
			if !strings.Contains(html, `e.origin!=="https://learn.example.org"`) || !strings.Contains(html, "idemlab:resize") {
				t.Errorf("html %q lacks the resize script for this origin", html)
			}
			if tt.title != "" && body["title"] != tt.title {
				t.Errorf("title %v, want %q", body["title"], tt.title)
			}
			if body["width"] != tt.width || body["height"] == nil {
				t.Errorf("size %v×%v", body["width"], body["height"])
			}
		})
	}
	_, body := oembedOf(t, h, "/oembed?url="+url.QueryEscape(tests[0].url)+"&maxwidth=500&maxheight=400")
	if body["width"] != 500.0 || body["height"] != 400.0 || !strings.Contains(body["html"].(string), `width="500" height="400"`) {
		t.Errorf("maxwidth/maxheight not honoured: %v", body)
	}
}

// The specification's errors: 404 for an address it has nothing for, 501
// for another format, 400 for bad sizes; never another site's address.
func TestOEmbed_BadRequests(t *testing.T) {
	h := newTestServer(t, Config{PublicURL: "https://learn.example.org"}).Handler()
	tests := []struct {
		target string
		status int
		field  string
	}{
		{"/oembed?format=json", 400, "url"},
		{"/oembed?format=xml&url=%2Flessons%2Fwhy-twice", 501, "format"},
		{"/oembed?url=https%3A%2F%2Fevil.example%2Flessons%2Fwhy-twice", 404, "url"},
		{"/oembed?url=javascript%3Aalert(1)", 404, "url"},
		{"/oembed?url=%2Flessons%2Fnope", 404, "url"},
		{"/oembed?url=%2Fplayground%3Fscenario%3Dnope", 404, "url"},
		{"/oembed?url=%2Fexercises%2Fx", 404, "url"},
		{"/oembed?url=%2Flessons%2Fwhy-twice&maxwidth=wide", 400, "maxwidth"},
		{"/oembed?url=%2Flessons%2Fwhy-twice&maxheight=3", 400, "maxheight"},
	}
	for _, tt := range tests {
		status, body := oembedOf(t, h, tt.target)
		if status != tt.status || body["field"] != tt.field || body["error"] == "" {
			t.Errorf("%s: %d %v, want %d on %s", tt.target, status, body, tt.status, tt.field)
		}
	}
}

// Lesson and playground pages name the endpoint for discovery; the
// playground's Embed button links to the answer for its current state.
func TestOEmbed_Discovery(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	for _, page := range []string{"/lessons/why-twice", "/playground?scenario=lost-ack&script=deliver+msg-1"} {
		doc := document(t, do(t, h, "GET", page))
		href, ok := doc.Find(`link[rel="alternate"][type="application/json+oembed"]`).Attr("href")
		if !ok {
			t.Fatalf("%s: no oEmbed discovery link", page)
		}
		status, body := oembedOf(t, h, href)
		if status != 200 || !strings.Contains(body["html"].(string), "/embed/") {
			t.Errorf("%s: discovery link %s answers %d %v", page, href, status, body)
		}
		embed := doc.Find(testID("pg-embed")).First().AttrOr("href", "")
		if status, body := oembedOf(t, h, embed); status != 200 || body["type"] != "rich" {
			t.Errorf("%s: the Embed button's %s answers %d %v", page, embed, status, body)
		}
	}
	if doc := document(t, do(t, h, "GET", "/")); doc.Find(`link[type="application/json+oembed"]`).Length() != 0 {
		t.Error("the index offers an embed")
	}
}

// FuzzOEmbed checks that whatever address is asked about, the endpoint
// answers 200, 400 or 404 with JSON, and that an answer only ever frames
// this site's embed pages in one iframe and one script.
func FuzzOEmbed(f *testing.F) {
	for _, seed := range []string{"/lessons/why-twice", "https://learn.example.org/playground?scenario=lost-ack&script=x", "/embed/lessons/why-twice#\"><script>", "//evil.example/lessons/why-twice", "/lessons/why-twice?pg=\"'<>", "https://learn.example.org/playground?scenario=lost-ack&x=</script>"} {
		f.Add(seed, "")
	}
	h := newTestServer(f, Config{PublicURL: "https://learn.example.org"}).Handler()
	quotes := strings.Count(embedSnippet("https://learn.example.org", "/embed/x", "a title", 1, 1), `"`) // no attribute was broken out of
	f.Fuzz(func(t *testing.T, target, maxwidth string) {
		q := url.Values{"url": {target}}
		if maxwidth != "" {
			q.Set("maxwidth", maxwidth)
		}
		status, body := oembedOf(t, h, "/oembed?"+q.Encode())
		switch status {
		case 200:
			html, _ := body["html"].(string)
			if !strings.HasPrefix(html, `<iframe src="https://learn.example.org/embed/`) || strings.Count(html, "<iframe") != 1 ||
				strings.Count(html, "<script") != 1 || strings.Count(html, "</script") != 1 || strings.Count(html, `"`) != quotes {
				t.Errorf("url %q: unsafe snippet %q", target, html)
			}
		case 400, 404:
		default:
			t.Errorf("url %q: status %d", target, status)
		}
	})
}
