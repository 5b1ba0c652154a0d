package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/lessons"
)

// sampleCourse is a hand-built course shaped like what the lessons package
// renders: HTML segments (headings with ids, a callout, highlighted code, a
// table) with a playground block between them.
func sampleCourse() *lessons.Course {
	pg := &lessons.PlaygroundSpec{
		ID:       "pg-1",
		Scenario: "lost-ack",
		Handlers: []string{"increment", "dedupe-tx"},
		Script:   "deliver msg-1 lose-ack; redeliver msg-1 # the broker retries",
		Caption:  "The ack is lost, the broker redelivers, and the naive handler credits the account twice.",
		Expect:   map[string]string{"increment": "duplicate-effect", "dedupe-tx": "ok"},
		File:     "why-twice.md",
		Line:     30,
	}
	return &lessons.Course{Lessons: []*lessons.Lesson{
		{
			Slug:    "why-twice",
			Title:   "Why messages arrive twice",
			Summary: "At-least-once delivery, and the three ordinary ways a message comes back.",
			Order:   1, Minutes: 8, Path: "why-twice.md",
			Objectives: []string{
				"Explain why a broker redelivers a message it already handed out",
				"Name three ways a duplicate reaches a consumer",
				"Predict what a naive handler does with a duplicate",
			},
			TOC: []lessons.Heading{
				{Level: 2, ID: "the-promise", Text: "The promise a broker makes"},
				{Level: 3, ID: "leases", Text: "Leases and acks"},
				{Level: 2, ID: "a-lost-ack", Text: "A lost ack"},
			},
			Body: []lessons.Block{
				{HTML: `<p>A message broker promises <strong>at-least-once</strong> delivery: it keeps a message until a consumer says it is done. The word that matters is <em>least</em>.</p>
<h2 id="the-promise">The promise a broker makes</h2>
<p>When a worker takes a message, the broker starts a lease. If the ack does not arrive before the lease ends, the broker assumes the worker died and hands the message to someone else. Read more in <a href="/lessons/idempotent">what idempotent means</a>.</p>
<aside class="callout callout-note" role="note"><p class="callout-title">Note</p>
<p>The broker cannot tell a slow worker from a dead one. It only sees time passing.</p>
</aside>
<h3 id="leases">Leases and acks</h3>
<table><thead><tr><th>Event</th><th>Broker sees</th><th>Consumer did</th></tr></thead><tbody><tr><td>ack lost</td><td>no ack</td><td>applied once</td></tr><tr><td>crash before ack</td><td>no ack</td><td>applied once</td></tr><tr><td>lease expired</td><td>late ack</td><td>still running</td></tr></tbody></table>
<pre class="chroma"><code><span class="line"><span class="cl"><span class="k">UPDATE</span> <span class="n">accounts</span> <span class="k">SET</span> <span class="n">balance</span> <span class="o">=</span> <span class="n">balance</span> <span class="o">+</span> <span class="mi">10</span> <span class="k">WHERE</span> <span class="n">id</span> <span class="o">=</span> <span class="s1">'alice'</span><span class="p">;</span>
</span></span></code></pre>
<h2 id="a-lost-ack">A lost ack</h2>
<p>Run it yourself: deliver the message, lose the ack, and redeliver.</p>`},
				{Playground: pg},
				{HTML: `<aside class="callout callout-tip" role="note"><p class="callout-title">Tip</p>
<p>Every state of the playground is a link you can share.</p>
</aside>
<aside class="callout callout-warning" role="note"><p class="callout-title">Warning</p>
<p>A dedupe table pruned too early lets an old duplicate through.</p>
</aside>`},
			},
			Playgrounds: []*lessons.PlaygroundSpec{pg},
		},
		{
			Slug: "idempotent", Title: "What idempotent means", Order: 2, Minutes: 6, Path: "idempotent.md",
			Summary:    "Same message, same outcome: the property we want from a consumer.",
			Objectives: []string{"Define idempotence for a message handler"},
			TOC:        []lessons.Heading{{Level: 2, ID: "definition", Text: "A definition"}},
			Body:       []lessons.Block{{HTML: `<h2 id="definition">A definition</h2><p>Handling a message twice leaves the same state as handling it once.</p>`}},
		},
		{
			Slug: "dedupe-table", Title: "A dedupe table in the same transaction", Order: 3, Minutes: 12, Path: "dedupe-table.md",
			Summary: "Record the message id and apply the effect in one transaction.",
			Body:    []lessons.Block{{HTML: `<p>Record what you processed where you apply it.</p>`}},
		},
	}}
}

// newTestServer builds a server for the sample course, failing the test on error.
func newTestServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := NewServer(cfg, sampleCourse())
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	return s
}

// do sends one request through the whole handler stack.
func do(t testing.TB, h http.Handler, method, target string, headers ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// document parses a response body as HTML.
func document(t testing.TB, resp *http.Response) *goquery.Document {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing HTML: %v", err)
	}
	return doc
}

// testID selects elements by their data-testid.
func testID(id string) string { return `[data-testid="` + id + `"]` }

type goquerySelection = goquery.Selection

func itoa(n int) string { return strconv.Itoa(n) }

func goqueryDocument(body []byte) (*goquery.Document, error) {
	return goquery.NewDocumentFromReader(strings.NewReader(string(body)))
}
