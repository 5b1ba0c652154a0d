package web

import (
	"idemlab/web/site"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// prefixedSite is the built-in course under /learn behind a proxy that
// passes the prefix on (strip: or strips it), and records every request
// that missed the prefix: a link, asset, form or fetch that forgot it.
type prefixedSite struct {
	mu     sync.Mutex
	missed []string
	h      http.Handler
}

func newPrefixedSite(t testing.TB, strip bool) *prefixedSite {
	t.Helper()
	s, err := NewServer(Config{PublicURL: "/learn", Logger: slog.New(slog.DiscardHandler)}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	site := &prefixedSite{}
	mux := http.NewServeMux()
	app := s.Handler()
	if strip {
		app = http.StripPrefix("/learn", app)
	}
	mux.Handle("/learn/", app)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		site.mu.Lock()
		site.missed = append(site.missed, r.URL.Path)
		site.mu.Unlock()
		http.NotFound(w, r)
	})
	site.h = mux
	return site
}

func (p *prefixedSite) misses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.missed...)
}

// unprefixed lists the URLs of a page that leave the prefix: links,
// assets, forms and the data attributes app.js and exercise.js fetch.
func unprefixed(doc *goquery.Document) []string {
	var out []string
	for _, attr := range []string{"href", "src", "action", "data-url", "data-home", "data-api"} {
		doc.Find("[" + attr + "]").Each(func(_ int, s *goquerySelection) {
			v := s.AttrOr(attr, "")
			if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "/learn/") && v != "/learn" {
				out = append(out, attr+"="+v)
			}
		})
	}
	return out
}

// Under -base-path /learn every page's links, assets, forms and fetch
// targets carry the prefix, whether the proxy strips it or passes it on.
func TestBasePath_EveryURLCarriesThePrefix(t *testing.T) {
	for _, strip := range []bool{false, true} {
		site := newPrefixedSite(t, strip)
		for _, target := range []string{"/learn/", "/learn/lessons/why-messages-arrive-twice", "/learn/lessons/what-idempotent-means",
			"/learn/playground?scenario=lost-ack", "/learn/exercises/dedupe-credit", "/learn/embed/lessons/why-messages-arrive-twice",
			"/learn/lessons/why-messages-arrive-twice?pg=pg-1&handlers=increment,dedupe-tx&script=deliver+msg-1&fragment=1"} {
			resp := do(t, site.h, "GET", target)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("strip=%v %s: status %d", strip, target, resp.StatusCode)
			}
			if bad := unprefixed(document(t, resp)); len(bad) > 0 {
				t.Errorf("strip=%v %s: URLs outside /learn: %v", strip, target, bad)
			}
		}
		if resp := do(t, site.h, "GET", "/learn/static/app.js"); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusOK {
			t.Errorf("an asset: status %d", resp.StatusCode)
		}
		if m := site.misses(); len(m) > 0 {
			t.Errorf("strip=%v: requests outside the prefix: %v", strip, m)
		}
	}
}

func TestSiteHTML_PrefixesSitePathsOnly(t *testing.T) {
	v := &site.View{Base: "/learn"}
	in := `<a href="/lessons/a">a</a> <a href="//cdn.example/x">b</a> <a href="https://x.example/">c</a> <a href="#top">d</a><a href="/">e</a>`
	want := `<a href="/learn/lessons/a">a</a> <a href="//cdn.example/x">b</a> <a href="https://x.example/">c</a> <a href="#top">d</a><a href="/learn/">e</a>`
	if got := v.SiteHTML(in); got != want {
		t.Errorf("siteHTML:\n got %s\nwant %s", got, want)
	}
	if got := (&site.View{}).SiteHTML(in); got != in {
		t.Errorf("at the root siteHTML changed %s", got)
	}
}

// JoinBasePath is the one rule for a base path: it becomes the public
// URL's path, and must agree with a public URL given beside it.
func TestJoinBasePath_IsThePublicURLsPath(t *testing.T) {
	for _, tc := range []struct {
		public, base, want, err string
	}{
		{"", "", "", ""},
		{"", "/learn", "/learn", ""},
		{"", "/learn/", "/learn", ""},
		{"https://x.example/learn", "/learn", "https://x.example/learn", ""},
		{"https://x.example", "", "https://x.example", ""},
		{"", "learn", "", "must start with /"},
		{"", "/a/../learn", "", "plain path"},
		{"", "/learn?x=1", "", "plain path"},
		{"", "//evil.example", "", "must start with http"},
		{"https://x.example/docs", "/learn", "", "disagree"},
	} {
		got, err := JoinBasePath(tc.public, tc.base)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("JoinBasePath(%q, %q) = %q, %v; want an error with %q", tc.public, tc.base, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("JoinBasePath(%q, %q) = %q, %v; want %q", tc.public, tc.base, got, err, tc.want)
		}
	}
}
