package web

import (
	"idemlab/web/playurl"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/playground"
)

// A closed control panel is its summary and a link to the same state with
// it open; none of its controls is drawn, in a page or in a fragment, in
// the full-size playground or in a lesson's block.
func TestMorePanels_ClosedHoldOnlyALink(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	for _, target := range []string{
		"/playground?scenario=lost-ack",
		"/playground?scenario=lost-ack&fragment=1",
		"/lessons/why-twice",
		"/lessons/why-twice?pg=pg-1&script=deliver+msg-1&fragment=1",
	} {
		doc := document(t, do(t, h, "GET", target))
		panels := doc.Find(testID("pg-more"))
		if panels.Length() != len(playurl.MoreNames) {
			t.Fatalf("%s: %d control panels; want %d", target, panels.Length(), len(playurl.MoreNames))
		}
		panels.Each(func(i int, d *goquery.Selection) {
			name := d.AttrOr("data-more", "")
			if name != playurl.MoreNames[i].Name || d.Is("[open]") {
				t.Errorf("%s: panel %d is %q (open %v); want %q, closed", target, i, name, d.Is("[open]"), playurl.MoreNames[i].Name)
			}
			link := d.Find(testID("pg-more-open"))
			u, err := url.Parse(link.AttrOr("href", ""))
			if link.Length() != 1 || err != nil || u.Query().Get(playurl.KeyOpen) != name {
				t.Errorf("%s: panel %s's link is %q; want one with open=%s", target, name, link.AttrOr("href", ""), name)
			}
			if n := d.Find("a").Length(); n != 1 {
				t.Errorf("%s: closed panel %s draws %d links; want only its own", target, name, n)
			}
		})
		for _, id := range []string{"pg-step", "pg-expire", "pg-start", "pg-replay", "pg-prune", "pg-advance-form", "pg-handler-form"} {
			if n := doc.Find(testID("pg-controls")).Find(testID(id)).Length(); n != 0 {
				t.Errorf("%s: %d %s drawn with every panel closed", target, n, id)
			}
		}
		if doc.Find(testID("pg-script-form")).Length() != 1 {
			t.Errorf("%s: the script editor is not drawn (a workshop's chaos and a rejected script need it)", target)
		}
	}
}

// open=NAME draws that panel open with its controls, and every link and
// form of the state keeps it open.
func TestMorePanels_OpenDrawsThePanelAndLinksKeepIt(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	for _, c := range []struct {
		open string
		ids  []string
	}{
		{"workers", []string{"pg-step", "pg-finish", "pg-restart", "pg-start", "pg-expire"}},
		{"broker", []string{"pg-replay", "pg-prune", "pg-advance", "pg-advance-form", "pg-prune-form"}},
		{"handlers", []string{"pg-handler-form"}},
		{"workers,broker,handlers", []string{"pg-step", "pg-replay", "pg-handler-form"}},
	} {
		target := "/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack&open=" + c.open + "&fragment=1"
		resp := do(t, h, "GET", target)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", target, resp.StatusCode)
		}
		doc := document(t, resp)
		for _, id := range c.ids {
			if doc.Find(testID(id)).Length() == 0 {
				t.Errorf("open=%s: no %s drawn", c.open, id)
			}
		}
		for name := range strings.SplitSeq(c.open, ",") {
			if !doc.Find(`details[data-more="` + name + `"]`).Is("[open]") {
				t.Errorf("open=%s: panel %s is not open", c.open, name)
			}
		}
		redeliver := doc.Find(testID("pg-redeliver")).AttrOr("href", "")
		if u, _ := url.Parse(redeliver); u == nil || u.Query().Get(playurl.KeyOpen) != c.open {
			t.Errorf("open=%s: Redeliver links to %q, which does not keep the panels open", c.open, redeliver)
		}
		doc.Find("form[method=get] input[name=" + playurl.KeyOpen + "]").Each(func(_ int, in *goquery.Selection) {
			if in.AttrOr("value", "") != c.open {
				t.Errorf("open=%s: a form carries open=%s", c.open, in.AttrOr("value", ""))
			}
		})
	}
}

// panel=NAME answers that panel alone, open, its links keeping it open;
// the answer is cached and tagged like a fragment, with an entity tag of
// its own per panel and per set of open panels.
func TestMorePanels_PanelParamAnswersThePanelAlone(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	state := "/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack"
	etags := map[string]string{}
	for _, target := range []string{
		state + "&fragment=1",
		state + "&open=workers&fragment=1",
		state + "&open=broker&fragment=1",
		state + "&panel=workers",
		state + "&panel=broker",
		state + "&open=broker&panel=workers",
		"/lessons/why-twice?pg=pg-1&panel=handlers",
	} {
		resp := do(t, h, "GET", target)
		body, _ := io.ReadAll(resp.Body)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || etag == "" || resp.Header.Get("Cache-Control") == "" {
			t.Fatalf("%s: status %d, ETag %q, Cache-Control %q", target, resp.StatusCode, etag, resp.Header.Get("Cache-Control"))
		}
		if other, seen := etags[etag]; seen {
			t.Errorf("%s and %s share the entity tag %s", target, other, etag)
		}
		etags[etag] = target
		if again := do(t, h, "GET", target, "If-None-Match", etag); again.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidated with its own tag, status %d; want 304", target, again.StatusCode)
		}
		q, _ := url.ParseQuery(target[strings.Index(target, "?")+1:])
		name := q.Get(playurl.KeyPanel)
		if name == "" {
			continue
		}
		if !strings.HasPrefix(string(body), `<details`) {
			t.Errorf("%s: the answer starts %.60q; want the panel alone", target, body)
		}
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
		d := doc.Find(testID("pg-more"))
		if d.Length() != 1 || d.AttrOr("data-more", "") != name || !d.Is("[open]") || d.Find(testID("pg-more-open")).Length() != 0 {
			t.Errorf("%s: answered %d panels (%q, open %v); want %s alone, open, drawn", target, d.Length(), d.AttrOr("data-more", ""), d.Is("[open]"), name)
		}
		if doc.Find(testID("playground")).Length() != 0 {
			t.Errorf("%s: the whole playground came with the panel", target)
		}
		d.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
			u, _ := url.Parse(a.AttrOr("href", ""))
			if u != nil && u.Query().Has(playurl.KeyPanel) {
				t.Errorf("%s: a link in the panel asks panel= again: %s", target, a.AttrOr("href", ""))
			}
			if u != nil && !strings.Contains(u.Query().Get(playurl.KeyOpen), name) {
				t.Errorf("%s: a link in the panel does not keep it open: %s", target, a.AttrOr("href", ""))
			}
		})
	}
}

// A bad panel= is a 400 that names the panels there are; a bad open= is
// the learner's mistake shown in place (the playground in its last good
// state, with what was wrong), like any other field of a state.
func TestMorePanels_BadValuesSayWhatIsThere(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	for _, c := range []struct{ target, want string }{
		{"/playground?scenario=lost-ack&panel=nope", `unknown panel "nope"; panels are workers, broker and handlers`},
		{"/playground?scenario=lost-ack&panel=rows&fragment=1", `unknown panel "rows"`},
		{"/playground?scenario=lost-ack&panel=workers,broker", "names more than one panel; ask for one of workers, broker and handlers"},
		{"/playground?scenario=lost-ack&panel=workers&panel=broker", "names more than one panel"},
		{"/playground?scenario=lost-ack&panel=", "names no panel; ask for one of workers, broker and handlers"},
		{"/lessons/why-twice?pg=pg-1&panel=script", `unknown panel "script"`},
		{"/playground?scenario=lost-ack&open=workers,leases", `unknown panel "leases"; panels are workers, broker and handlers`},
	} {
		resp := do(t, h, "GET", c.target)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d; want 400", c.target, resp.StatusCode)
			continue
		}
		doc := document(t, resp)
		msg := doc.Find(testID("error-message")).Text() + doc.Find(testID("pg-problem-message")).Text()
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: says %q; want %q", c.target, msg, c.want)
		}
	}
}

// A panel= request for a state spelled otherwise than its canonical URL
// is redirected there, still asking for the panel alone.
func TestMorePanels_RedirectKeepsThePanel(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "GET", "/playground?scenario=lost-ack&open=handlers,workers&panel=broker")
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "open=workers,handlers") || !strings.HasSuffix(loc, "&panel=broker") {
		t.Fatalf("status %d to %q; want 303 to the canonical state with panel=broker", resp.StatusCode, loc)
	}
	if resp := do(t, h, "GET", loc); resp.StatusCode != http.StatusOK {
		t.Errorf("%s: status %d", loc, resp.StatusCode)
	}
}

// TestPlaygroundURL_Open: open= reads a set of control panels in any
// order; one spelled otherwise than the encoder writes it redirects to the
// canonical URL, and the encoder writes it back.
func TestPlaygroundURL_Open(t *testing.T) {
	sc, _ := playground.LookupScenario("lost-ack")
	p := playurl.PagePlace(sc, false)
	for _, c := range []struct {
		q        string
		want     playurl.MorePanels
		redirect bool
	}{
		{"", 0, false},
		{"open=", 0, true},
		{"open=broker", playurl.MoreBroker, false},
		{"open=handlers,workers", playurl.MoreWorkers | playurl.MoreHandlers, true},
		{"open=workers,handlers", playurl.MoreWorkers | playurl.MoreHandlers, false},
		{"open=workers&open=broker", playurl.MoreWorkers, true},
		{"open=+broker+", playurl.MoreBroker, true},
	} {
		q, _ := url.ParseQuery(c.q)
		s, redirect, err := playurl.StateFromQuery(q, p.Home, sc.Workers)
		if err != nil || s.Open != c.want || redirect != c.redirect {
			t.Errorf("%q: open %q, redirect %v, error %v; want %q, %v", c.q, s.Open, redirect, err, c.want, c.redirect)
			continue
		}
		back, _, err := playurl.StateFromQuery(mustParseQuery(t, p.Query(s)), p.Home, sc.Workers)
		if err != nil || !back.Equal(s) {
			t.Errorf("%q: written as %q, reads back as open %q (%v)", c.q, p.Query(s), back.Open, err)
		}
	}
}

func mustParseQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
