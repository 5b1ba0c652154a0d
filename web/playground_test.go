package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"idemlab/web/admit"
	"idemlab/web/playurl"
	"idemlab/web/playview"
	"idemlab/web/site"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/lessons"
	"idemlab/playground"
)

// livePlayground runs a request and renders the playground component.
func livePlayground(t *testing.T, place func(*playground.Scenario) playurl.Place, state playurl.State) (*playview.View, *goquery.Document) {
	t.Helper()
	v := testView(t)
	sc, err := playground.LookupScenario(state.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	req, err := state.Request(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := playground.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	pv := playview.NewView(v, place(sc), state, tr, sc)
	return pv, render(t, playview.LivePlayground(pv))
}

func pagePlaceOf(sc *playground.Scenario) playurl.Place { return playurl.PagePlace(sc, false) }

// eventsOf parses a script the test knows to be valid.
func eventsOf(text string) []playground.Event {
	s, err := playground.ParseScript(text)
	if err != nil {
		panic(err)
	}
	return s.Events
}

// lostAckState is a state of the full-size playground, with its panels.
func lostAckState(at int) playurl.State {
	return playurl.State{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"},
		Events: eventsOf("deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1"), At: at,
		Panels: playurl.PanelRows | playurl.PanelChart | playurl.PanelDiagram | playurl.PanelSteps}
}

func TestLivePlayground_ShowsTwoLedgersDiverging(t *testing.T) {
	_, doc := livePlayground(t, pagePlaceOf, lostAckState(-1).Toggled(playurl.PanelSQL))
	fig := doc.Find("figure" + testID("playground"))
	if fig.Length() != 1 {
		t.Fatal("no figure[data-testid=playground]")
	}
	ledgers := fig.Find(testID("pg-ledger"))
	if ledgers.Length() != 2 {
		t.Fatalf("%d ledgers, want 2", ledgers.Length())
	}
	want := map[string]struct{ verdict, figure, label string }{
		"increment": {"duplicate-effect", "220", "Duplicate effect"},
		"dedupe-tx": {"ok", "170", "Correct"},
	}
	ledgers.Each(func(_ int, l *goquery.Selection) {
		name := l.AttrOr("data-handler", "")
		w, ok := want[name]
		if !ok {
			t.Errorf("unexpected ledger %q", name)
			return
		}
		if got := l.AttrOr("data-verdict", ""); got != w.verdict {
			t.Errorf("%s: ledger verdict %q, want %q", name, got, w.verdict)
		}
		if got := strings.TrimSpace(l.Find(testID("pg-figure-actual")).Text()); got != w.figure {
			t.Errorf("%s: balance %q, want %q", name, got, w.figure)
		}
		if l.Find(`table[data-table="accounts"] tr.is-changed`).Length() == 0 && name == "increment" {
			t.Errorf("%s: the row the last event changed is not highlighted", name)
		}
		if l.Find("svg"+testID("pg-chart")+" polyline").Length() != 2 {
			t.Errorf("%s: the chart lacks its expected and actual lines", name)
		}
	})
	verdicts := map[string]string{}
	fig.Find(testID("pg-verdict")).Each(func(_ int, s *goquery.Selection) {
		verdicts[s.AttrOr("data-handler", "")] = strings.Join(strings.Fields(s.Text()), " ")
	})
	if got := verdicts["increment"]; !strings.Contains(got, "Duplicate effect") || !strings.Contains(got, "credited twice: msg-1 applied at events 1 and 3") {
		t.Errorf("increment verdict = %q", got)
	}
	if got := verdicts["dedupe-tx"]; !strings.Contains(got, "Correct") {
		t.Errorf("dedupe-tx verdict = %q", got)
	}
	// One verdict icon per handler: never colour alone.
	if n := fig.Find(testID("pg-verdict") + " svg.pg-icon").Length(); n != 2 {
		t.Errorf("%d verdict icons, want 2", n)
	}

	// The first divergence, marked everywhere.
	div := fig.Find(testID("pg-divergence"))
	if div.AttrOr("data-event", "") != "3" || !strings.Contains(div.Text(), "redeliver msg-1") {
		t.Errorf("divergence mark = %q (event %s)", div.Text(), div.AttrOr("data-event", ""))
	}
	for _, where := range []string{
		testID("pg-event") + `[data-divergent][data-event="3"]`, // the timeline
		`svg` + testID("pg-diagram") + ` .dg-band[data-divergent][data-event="3"]`,
		`svg` + testID("pg-diagram") + ` .dg-row[data-divergent][data-step="10"]`,
		testID("pg-ledger") + `[data-handler="increment"] [data-divergence]`,
		`svg` + testID("pg-chart") + ` line.ch-div`,
		testID("pg-steps") + ` .pg-step[data-divergent]`,
	} {
		if fig.Find(where).Length() == 0 {
			t.Errorf("the divergence is not marked at %s", where)
		}
	}

	// The sequence diagram: lanes for the broker, two workers, two ledgers.
	svg := fig.Find("svg" + testID("pg-diagram"))
	if n := svg.Find(".dg-lane").Length(); n != 5 {
		t.Errorf("%d lanes, want 5 (broker, A, B, two ledgers)", n)
	}
	if n := svg.Find(".dg-row").Length(); n != 11+19 {
		t.Errorf("%d diagram rows, want one per step (30)", n)
	}
	if svg.Find(`[data-kind="ack-lost"] .dg-cross`).Length() != 2 {
		t.Error("the lost acks are not crossed out")
	}

	// The step list: the SQL with its bound values, on demand.
	sql := fig.Find(testID("pg-step") + ":has(" + testID("pg-sql") + ")").First()
	if !strings.Contains(sql.Find(testID("pg-sql")).Text(), "UPDATE accounts SET balance = balance + :amount") ||
		!strings.Contains(sql.Text(), "amount = 50, account_id = acc-1") || !strings.Contains(sql.Text(), "1 row changed") {
		t.Errorf("first SQL step = %q", strings.Join(strings.Fields(sql.Text()), " "))
	}
	if got := fig.Find(testID("pg-announce")).Text(); !strings.Contains(got, "increment: Duplicate effect") {
		t.Errorf("live region text = %q", got)
	}
}

func TestLivePlayground_CursorShowsAnEarlierState(t *testing.T) {
	_, doc := livePlayground(t, pagePlaceOf, lostAckState(1))
	fig := doc.Find(testID("playground"))
	if got := fig.AttrOr("data-at", ""); got != "1" {
		t.Errorf("data-at = %q", got)
	}
	// After "deliver msg-1 lose-ack" the broker still owes a redelivery:
	// no handler is judged yet.
	fig.Find(testID("pg-verdict")).Each(func(_ int, s *goquery.Selection) {
		if s.AttrOr("data-verdict", "") != playground.VerdictPending {
			t.Errorf("%s: verdict %q after event 1, want pending", s.AttrOr("data-handler", ""), s.AttrOr("data-verdict", ""))
		}
		if got := s.Find(testID("pg-verdict-text")).Text(); !strings.Contains(got, "msg-1's ack was lost") {
			t.Errorf("%s: pending text %q does not say why", s.AttrOr("data-handler", ""), got)
		}
	})
	if fig.Find(testID("pg-divergence")).Length() != 0 {
		t.Error("a divergence is shown before it happens")
	}
	if n := fig.Find(testID("pg-event") + "[data-future]").Length(); n != 2 {
		t.Errorf("%d future events, want 2", n)
	}
	back := fig.Find(testID("pg-back")).AttrOr("href", "")
	forward := fig.Find(testID("pg-forward")).AttrOr("href", "")
	if !strings.Contains(back, "at=0") || !strings.Contains(forward, "at=2") {
		t.Errorf("back %q, forward %q", back, forward)
	}
	// A new event replaces the events after the cursor.
	deliver := fig.Find(`[data-message="msg-2"] `+testID("pg-deliver")).AttrOr("href", "")
	if q := queryOf(t, deliver); q.Get("script") != "deliver msg-1 lose-ack; deliver msg-2" || q.Has("at") {
		t.Errorf("deliver msg-2 from event 1 links to %q", deliver)
	}

	_, doc = livePlayground(t, pagePlaceOf, lostAckState(0))
	if got := strings.TrimSpace(doc.Find(testID("pg-figure-actual")).First().Text()); got != "100" {
		t.Errorf("before any event the balance is %q, want the initial 100", got)
	}
}

func TestLivePlayground_FaultsAmendTheLastDelivery(t *testing.T) {
	_, doc := livePlayground(t, pagePlaceOf, playurl.State{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"}, Events: eventsOf("deliver msg-1"), At: -1})
	faults := doc.Find(testID("pg-faults"))
	want := map[string]string{
		"pg-lose-ack":         "deliver msg-1 lose-ack",
		"pg-crash-before-ack": "deliver msg-1 crash-before-ack",
	}
	for id, script := range want {
		if q := queryOf(t, faults.Find(testID(id)).AttrOr("href", "")); q.Get("script") != script {
			t.Errorf("%s links to script %q, want %q", id, q.Get("script"), script)
		}
	}
	// dedupe-tx runs 4 statements for a credit: four crash points.
	if n := faults.Find(testID("pg-crash-after")).Length(); n != 4 {
		t.Errorf("%d crash-after choices, want 4", n)
	}
}

func TestLivePlayground_EscapesEverything(t *testing.T) {
	spec := &lessons.PlaygroundSpec{ID: "pg-1", Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"},
		Script: "deliver msg-1", Caption: `<img src=x onerror=alert(1)>`}
	_, doc := livePlayground(t, func(*playground.Scenario) playurl.Place { return playurl.LessonPlace(`x"><script>`, spec, false) }, playurl.State{Scenario: "lost-ack", Handlers: spec.Handlers, Events: eventsOf("deliver msg-1"), At: -1})
	if n := doc.Find("script, img").Length(); n != 0 {
		t.Errorf("%d elements injected", n)
	}
}

func queryOf(t *testing.T, href string) url.Values {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatalf("%q: %v", href, err)
	}
	return u.Query()
}

// ----- HTTP -----

func TestPlaygroundRoutes(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	tests := []struct {
		name, target string
		status       int
		contentType  string
		want         string // a testid that must be there, or text in the body
	}{
		{"picker", "/playground", 200, "text/html; charset=utf-8", `data-testid="pg-scenarios"`},
		{"full size", "/playground?scenario=lost-ack", 200, "text/html; charset=utf-8", `data-testid="pg-diagram"`},
		{"full state", "/playground?scenario=concurrent-duplicate&handlers=check-then-insert,dedupe-tx&script=start+msg-1+on+A%3B+start+msg-1+on+B%3B+step+A%3B+step+B&at=3&to=B", 200, "text/html; charset=utf-8", `data-testid="pg-ledger"`},
		{"embed", "/embed/playground?scenario=webhook-retry", 200, "text/html; charset=utf-8", `data-testid="embed-main"`},
		{"fragment", "/playground?scenario=lost-ack&fragment=1", 200, "text/html; charset=utf-8", `<figure`},
		{"lesson state", "/lessons/why-twice?pg=pg-1&handlers=increment,dedupe-tx&script=deliver+msg-1", 200, "text/html; charset=utf-8", `data-script="deliver msg-1"`},
		{"embed lesson state", "/embed/lessons/why-twice?pg=pg-1&script=deliver+msg-1&at=0", 200, "text/html; charset=utf-8", `data-at="0"`},
		{"api", "/api/v1/run?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1", 200, "application/json; charset=utf-8", `"verdict":"duplicate-effect"`},
		{"api default script", "/api/v1/run?scenario=topic-replay", 200, "application/json; charset=utf-8", `"scenario":"topic-replay"`},
		{"head playground", "/playground?scenario=lost-ack", 200, "text/html; charset=utf-8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := "GET"
			if strings.HasPrefix(tt.name, "head") {
				method = "HEAD"
			}
			resp := do(t, h, method, tt.target)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, body)
			}
			if got := resp.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if method == "HEAD" && len(body) != 0 {
				t.Errorf("HEAD sent %d bytes", len(body))
			}
			if tt.want != "" && !strings.Contains(string(body), tt.want) {
				t.Errorf("body lacks %s", tt.want)
			}
			if tt.name == "fragment" && strings.Contains(string(body), "<html") {
				t.Error("a fragment came with the page around it")
			}
		})
	}
}

// A link that names no playground gets a 400 page that quotes the problem
// and links to a way back, never a 500.
func TestPlaygroundRoutes_BadURLs(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	tests := []struct {
		name, target, message, action string
	}{
		{"unknown scenario", "/playground?scenario=nope", `unknown scenario "nope"`, "/playground"},
		{"embed without scenario", "/embed/playground", "needs a scenario", "/playground"},
		{"lesson block unknown", "/lessons/why-twice?pg=pg-9", `no playground called “pg-9”`, "/lessons/why-twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, h, "GET", tt.target)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", resp.StatusCode)
			}
			doc := document(t, resp)
			if got := doc.Find(testID("error-message")).Text(); !strings.Contains(got, tt.message) {
				t.Errorf("message %q lacks %q", got, tt.message)
			}
			if action := doc.Find(testID("error-action")).AttrOr("href", ""); action != tt.action {
				t.Errorf("action %q, want %q", action, tt.action)
			}
		})
	}
}

// A learner's mistake in a playground it names (a script, a handler, a
// number, a hand-edited parameter) keeps them on the page: a 400 that is the
// playground (or the whole lesson) in its last good state, with the problem
// said under the editor it came from, and the line when there is one.
func TestPlaygroundRoutes_BadInputStaysInPlace(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	long := strings.Repeat("deliver msg-1; ", playground.MaxScriptEvents+1)
	lostAck := "deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1"
	tests := []struct {
		name, target, field, message string
		line                         int
		script                       string // the script the playground kept
	}{
		{"script does not parse", "/playground?scenario=lost-ack&script=deliver+msg-1%0Adelivr+msg-2", "script", "event 2: unknown event \"delivr\"", 2, lostAck},
		{"edited script falls back to the one it replaced", "/playground?scenario=lost-ack&was=deliver+msg-2&script=delivr", "script", `unknown event "delivr"`, 1, "deliver msg-2"},
		{"unknown message", "/playground?scenario=lost-ack&script=deliver+msg-9", "script", "event 1: unknown message msg-9", 0, lostAck},
		{"over a limit", "/playground?scenario=lost-ack&script=" + url.QueryEscape(long), "script", "more than 200 events", 1, lostAck},
		{"too many handlers", "/playground?scenario=lost-ack&handlers=increment,set-value,dedupe-tx,conditional,mark-after", "handlers", "5 handlers; the limit is 4", 0, lostAck},
		{"unknown handler", "/playground?scenario=lost-ack&handlers=increment,nope", "handlers", `unknown handler "nope"`, 0, lostAck},
		{"cursor past the end", "/playground?scenario=lost-ack&at=9", "at", "there is no event 9", 0, lostAck},
		{"cursor not a number", "/playground?scenario=lost-ack&at=x", "at", `"x" is not an event number`, 0, lostAck},
		{"unknown worker", "/playground?scenario=lost-ack&to=Z", "to", "unknown worker Z", 0, lostAck},
		{"bad form number", "/playground?scenario=lost-ack&script=deliver+msg-2&op=advance&n=-3", "n", `"-3" is not a number of ticks`, 0, "deliver msg-2"},
		{"one handler chosen", "/playground?scenario=lost-ack&h=increment", "handlers", "1 chosen; compare between 2 and 4", 0, lostAck},
		{"learner handler does not parse", "/playground?scenario=lost-ack&handler=--+mine%0ABEGIN", "handler", "handler mine, line 2", 2, lostAck},
		{"lesson block bad script", "/lessons/why-twice?pg=pg-1&script=crash", "script", "event 1:", 1, ""},
		{"embedded block bad script", "/embed/lessons/why-twice?pg=pg-1&script=crash", "script", "event 1:", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, h, "GET", tt.target)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", resp.StatusCode)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			doc := document(t, resp)
			if doc.Find(testID("error-message")).Length() != 0 {
				t.Fatal("the learner was sent to the error page")
			}
			problem := doc.Find(testID("pg-problem"))
			if problem.Length() != 1 {
				t.Fatalf("%d problems shown, want 1", problem.Length())
			}
			if got := problem.AttrOr("data-field", ""); got != tt.field {
				t.Errorf("problem on %q, want %q", got, tt.field)
			}
			if got := problem.Find(testID("pg-problem-message")).Text(); !strings.Contains(got, tt.message) {
				t.Errorf("message %q lacks %q", got, tt.message)
			}
			line := problem.Find(testID("pg-problem-line"))
			if tt.line == 0 && line.Length() != 0 || tt.line > 0 && !strings.Contains(line.Text(), fmt.Sprintf("line %d", tt.line)) {
				t.Errorf("line %q, want line %d", line.Text(), tt.line)
			}
			fig := problem.Closest(testID("playground"))
			if fig.Length() != 1 {
				t.Fatal("the problem is not inside its playground")
			}
			if tt.script != "" && fig.AttrOr("data-script", "") != tt.script {
				t.Errorf("kept script %q, want %q", fig.AttrOr("data-script", ""), tt.script)
			}
			if tt.field == "script" {
				area := fig.Find(`textarea[name="script"]`)
				if area.AttrOr("aria-invalid", "") != "true" || area.AttrOr("aria-describedby", "") != problem.AttrOr("id", "?") {
					t.Error("the script editor is not marked invalid and described by the problem")
				}
				if !area.Closest("details").Is("[open]") {
					t.Error("the script editor is closed")
				}
			}
			if strings.Contains(tt.target, "/lessons/") && doc.Find(testID("lesson-body")+" p").Length() < 3 {
				t.Error("the rest of the lesson is gone")
			}
		})
	}
}

func TestRunAPI_BadInput(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	tests := []struct{ target, field, message string }{
		{"/api/v1/run", "scenario", "scenario: missing"},
		{"/api/v1/run?scenario=nope", "scenario", `unknown scenario "nope"`},
		{"/api/v1/run?scenario=lost-ack&script=deliver+msg-1%3B+step", "script", "script: event 2:"},
		{"/api/v1/run?scenario=lost-ack&handlers=nope", "handlers", `unknown handler "nope"`},
		{"/api/v1/run?scenario=lost-ack&seed=x", "seed", "seed:"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			resp := do(t, h, "GET", tt.target)
			if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Fatalf("%d %s, want 400 JSON", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			var body site.APIError
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if body.Field != tt.field || !strings.Contains(body.Error, tt.message) {
				t.Errorf("got %+v, want field %s and %q", body, tt.field, tt.message)
			}
		})
	}
}

// The contract: handlers with name, ok, violations (kind,
// message_id, step) and steps.
func TestRunAPI_Schema(t *testing.T) {
	resp := do(t, newTestServer(t, Config{}).Handler(), "GET", "/api/v1/run?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1")
	var body struct {
		Handlers []struct {
			Name       string `json:"name"`
			OK         *bool  `json:"ok"`
			Violations []struct {
				Kind      string `json:"kind"`
				MessageID string `json:"message_id"`
				Step      int    `json:"step"`
			} `json:"violations"`
			Steps []json.RawMessage `json:"steps"`
		} `json:"handlers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if len(body.Handlers) != 2 {
		t.Fatalf("%d handlers", len(body.Handlers))
	}
	inc, dedupe := body.Handlers[0], body.Handlers[1]
	if inc.Name != "increment" || inc.OK == nil || *inc.OK || len(inc.Violations) != 1 ||
		inc.Violations[0].Kind != "duplicate-effect" || inc.Violations[0].MessageID != "msg-1" || inc.Violations[0].Step == 0 || len(inc.Steps) == 0 {
		t.Errorf("increment = %+v", inc)
	}
	if dedupe.Name != "dedupe-tx" || dedupe.OK == nil || !*dedupe.OK || len(dedupe.Violations) != 0 {
		t.Errorf("dedupe-tx = %+v", dedupe)
	}
}

func TestPlaygroundForms_RedirectToTheCanonicalURL(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	tests := []struct{ name, target, location string }{
		{"advance", "/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1&op=advance&n=5",
			"/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1%3B+advance+5"},
		{"prune at the cursor", "/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1%3B+deliver+msg-2&at=1&op=prune&n=0",
			"/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1%3B+prune+older-than+0"},
		{"checkboxes", "/playground?scenario=lost-ack&script=deliver+msg-1&h=increment&h=set-value",
			"/playground?scenario=lost-ack&handlers=increment,set-value&script=deliver+msg-1"},
		{"script from the textarea", "/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1%0D%0Aredeliver+msg-1",
			"/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1%3B+redeliver+msg-1"},
		{"fragment stays a fragment", "/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1&op=advance&n=5&fragment=1",
			"/playground?scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1%3B+advance+5&fragment=1"},
		{"lesson block", "/lessons/why-twice?pg=pg-1&handlers=increment,dedupe-tx&script=deliver+msg-1&op=advance&n=5",
			"/lessons/why-twice?pg=pg-1&handlers=increment,dedupe-tx&script=deliver+msg-1%3B+advance+5#pg-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, h, "GET", tt.target)
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("status %d, want 303", resp.StatusCode)
			}
			if got := resp.Header.Get("Location"); got != tt.location {
				t.Errorf("Location\n got %s\nwant %s", got, tt.location)
			}
		})
	}
}

// Every control of a rendered playground leads to a state that renders:
// the links are the playground's whole interface without JavaScript.
func TestPlaygroundControls_EveryLinkWorks(t *testing.T) {
	s := newTestServer(t, Config{})
	// One test client follows every control at once, far faster than a
	// learner clicks: lift its share (ratelimit_test.go tests the limit).
	s.limiter.PerSecond, s.limiter.Burst = 1e6, 1e6
	h := s.Handler()
	for _, start := range []string{
		"/playground?scenario=lost-ack",
		"/playground?scenario=concurrent-duplicate&at=2",
		"/playground?scenario=order-shipping",
		"/lessons/why-twice?pg=pg-1&script=deliver+msg-1",
	} {
		doc := document(t, do(t, h, "GET", start))
		seen := map[string]bool{}
		doc.Find(testID("playground") + " a[href]").Each(func(_ int, a *goquery.Selection) {
			href := a.AttrOr("href", "")
			if a.Is("[data-no-swap]") || seen[href] {
				return
			}
			seen[href] = true
			resp := do(t, h, "GET", strings.SplitN(href, "#", 2)[0])
			if resp.StatusCode != 200 {
				body, _ := io.ReadAll(resp.Body)
				t.Errorf("from %s, %q (%s) answers %d: %.200s", start, strings.TrimSpace(a.Text()), href, resp.StatusCode, body)
			}
		})
		if len(seen) < 15 {
			t.Errorf("%s: only %d distinct controls", start, len(seen))
		}
	}
}

// The budget: the playground page with its assets under 150 KB
// over the wire, and nothing loaded from outside the server.
func TestPlaygroundPage_WeightAndNothingExternal(t *testing.T) {
	// One client opens every scenario: more than a share's burst.
	h := newTestServer(t, Config{Share: admit.Share{PerSecond: 1000, Burst: 1000}}).Handler()
	for _, sc := range playground.Scenarios() {
		target := "/playground?scenario=" + sc.Name
		total := 0
		get := func(target string) []byte {
			resp := do(t, h, "GET", target, "Accept-Encoding", "gzip")
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", target, resp.StatusCode)
			}
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
		page := get(target)
		doc, err := goqueryDocument(page)
		if err != nil {
			t.Fatal(err)
		}
		doc.Find(`link[href], script[src], img[src], iframe[src]`).Each(func(_ int, s *goquery.Selection) {
			ref := s.AttrOr("href", s.AttrOr("src", ""))
			if !strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "//") {
				t.Errorf("%s references %s, outside the server", target, ref)
				return
			}
			if s.Is(`link[rel="stylesheet"], link[rel="icon"], script[src]`) {
				get(ref)
			}
		})
		if bytes.Contains(page, []byte("http://")) || bytes.Contains(page, []byte("https://")) {
			if i := bytes.Index(page, []byte("http")); !bytes.Contains(page[i:min(i+40, len(page))], []byte("www.w3.org")) {
				t.Errorf("%s contains an absolute URL near %q", target, page[i:min(i+60, len(page))])
			}
		}
		t.Logf("%s: %d bytes with its assets, gzipped", target, total)
		if total > 150_000 {
			t.Errorf("%s weighs %d bytes over the wire; the budget is 150 KB", target, total)
		}
	}
}

// Mid-race, the workers hold the message: the ledgers differ from the
// expected ones because nothing has committed yet, which is not a loss.
func TestLivePlayground_InFlightIsNotLost(t *testing.T) {
	state := playurl.State{Scenario: "concurrent-duplicate", Handlers: []string{"check-then-insert", "dedupe-tx"},
		Events: eventsOf("start msg-1 on A; start msg-1 on B; step A; step B; finish A; finish B"), At: 4}
	_, doc := livePlayground(t, pagePlaceOf, state)
	doc.Find(testID("pg-verdict")).Each(func(_ int, s *goquery.Selection) {
		if got := s.AttrOr("data-verdict", ""); got != playground.VerdictPending {
			t.Errorf("%s: verdict %q mid-race, want %s", s.AttrOr("data-handler", ""), got, playground.VerdictPending)
		}
		if got := s.Find(testID("pg-verdict-text")).Text(); !strings.Contains(got, "msg-1 is still being handled by A") {
			t.Errorf("in-flight text = %q", got)
		}
	})
	state.At = -1
	_, doc = livePlayground(t, pagePlaceOf, state)
	if got := doc.Find(testID("pg-verdict")+`[data-handler="check-then-insert"]`).AttrOr("data-verdict", ""); got != "duplicate-effect" {
		t.Errorf("after the race check-then-insert is %q, want duplicate-effect", got)
	}
}

// TestLivePlayground_APaymentPublishedTwiceReadsAsOnePayment: on
// producer-retry, the messages name their payment, and dedupe-tx's verdict
// says that the payment (not a message) was credited twice, by which
// messages, at which steps; dedupe-key's says every message took effect once.
func TestLivePlayground_APaymentPublishedTwiceReadsAsOnePayment(t *testing.T) {
	_, doc := livePlayground(t, pagePlaceOf, playurl.State{Scenario: "producer-retry", Handlers: []string{"dedupe-tx", "dedupe-key"},
		Events: eventsOf("deliver msg-1; deliver msg-2; deliver msg-3"), At: -1})
	fig := doc.Find(testID("playground"))
	if got := strings.Join(strings.Fields(fig.Find(`[data-message="msg-2"]`).Text()), " "); !strings.Contains(got, "credit 75 to acc-1 (payment pay-7)") {
		t.Errorf("msg-2 reads %q; want its payment named", got)
	}
	text := func(h string) string {
		return strings.Join(strings.Fields(fig.Find(testID("pg-verdict")+`[data-handler="`+h+`"] `+testID("pg-verdict-text")).Text()), " ")
	}
	if got := text("dedupe-tx"); !strings.Contains(got, "credited payment pay-7 twice: msg-1 and msg-2 applied it at events ") {
		t.Errorf("dedupe-tx reads %q", got)
	}
	if got := text("dedupe-key"); got != "every message took effect exactly once" {
		t.Errorf("dedupe-key reads %q", got)
	}
}

// TestLivePlayground_AStaleAbsoluteWriteIsNotCreditedTwice: set-value's
// redelivered msg-1 writes its absolute 150 over msg-2's 170. The verdict
// names msg-2's overwritten effect and never says msg-1 was credited
// twice: nothing was applied twice. increment, on the same script, was.
func TestLivePlayground_AStaleAbsoluteWriteIsNotCreditedTwice(t *testing.T) {
	_, doc := livePlayground(t, pagePlaceOf, playurl.State{Scenario: "lost-ack", Handlers: []string{"set-value", "increment"},
		Events: eventsOf("deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1"), At: -1})
	fig := doc.Find(testID("playground"))
	text := func(h string) string {
		return strings.Join(strings.Fields(fig.Find(testID("pg-verdict")+`[data-handler="`+h+`"] `+testID("pg-verdict-text")).Text()), " ")
	}
	got := text("set-value")
	if strings.Contains(got, "twice") || !strings.Contains(got, "lost the effect of msg-2 (msg-2's effect was overwritten by msg-1") {
		t.Errorf("set-value reads %q", got)
	}
	if got := text("increment"); !strings.Contains(got, "credited twice: msg-1 applied at events 1 and 3") {
		t.Errorf("increment reads %q", got)
	}
}

// TestLivePlayground_ARepublishedCopyIsNamed: when the producer publishes a
// message again, the sequence diagram and the step list name the new copy,
// so its own lease and ack can be told from the first copy's.
func TestLivePlayground_ARepublishedCopyIsNamed(t *testing.T) {
	_, doc := livePlayground(t, pagePlaceOf, playurl.State{Scenario: "webhook-retry", Handlers: []string{"dedupe-tx"},
		Events: eventsOf("start evt-1 on A; step A 2; publish evt-1 to B; finish A"), At: -1, Panels: playurl.PanelDiagram | playurl.PanelSteps})
	fig := doc.Find(testID("playground"))
	if got := fig.Find(testID("pg-diagram")).Text(); !strings.Contains(got, "evt-1 copy 2") {
		t.Errorf("the diagram does not name the second copy: %q", strings.Join(strings.Fields(got), " "))
	}
	if got := strings.Join(strings.Fields(fig.Text()), " "); !strings.Contains(got, "The broker delivers copy 2 of evt-1 to B") {
		t.Error("the step list does not name the second copy")
	}
}
