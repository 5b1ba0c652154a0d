package playurl

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"idemlab/playground"
)

// TestPlaygroundURL_Encoder: the encoder writes a state in one fixed order,
// the hidden fields of a form are the same fields, and a counterexample's
// link carries its schedule and the learner's handler.
func TestPlaygroundURL_Encoder(t *testing.T) {
	sc, _ := playground.LookupScenario("lost-ack")
	p := PagePlace(sc, false)
	s := State{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"}, Events: eventsOf("deliver msg-1 lose-ack;redeliver msg-1"),
		Custom: "SELECT 1;", Seed: 7, At: 1, To: "B", Panels: p.Home.Panels}
	want := "scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&handler=SELECT+1%3B&seed=7&at=1&to=B"
	if got := p.Query(s); got != want {
		t.Errorf("query\n got %s\nwant %s", got, want)
	}
	var names []string
	for _, f := range p.FormFields(s, KeyScript, KeyAt) {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "scenario,handlers,handler,seed,to" {
		t.Errorf("form fields %s", got)
	}
	// The panels are written only when they are not the place's own.
	if got := p.Query(s.Toggled(PanelSQL)); got != want+"&show=rows,chart,diagram,steps,sql" {
		t.Errorf("query with the SQL shown: %s", got)
	}
	lesson := Place{Kind: PlaceLesson, Path: "/lessons/x", Block: "pg-1", Home: State{Scenario: "lost-ack"}}
	if got := lesson.Query(State{Scenario: "lost-ack", Panels: PanelDiagram, At: -1}); !strings.HasSuffix(got, "&show=diagram") {
		t.Errorf("a lesson block's state with the diagram open: %s", got)
	}
	ce := &playground.Counterexample{Scenario: "lost-ack", Script: "deliver msg-1 lose-ack; redeliver msg-1", Schedule: eventsOf("deliver msg-1 lose-ack; redeliver msg-1")}
	u, err := url.Parse(CounterexampleHref(ce, "SELECT 1;\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Path != "/playground" || q.Get("scenario") != "lost-ack" || q.Get("script") != ce.Script || q.Get("handler") != "SELECT 1;\n" || q.Get("handlers") != strings.Join(Beside(sc.Handlers), ",") {
		t.Errorf("counterexample link %s", u)
	}
	if PlaygroundLink(ce, "SELECT 1;\n") != u.String() {
		t.Error("the CLI's link differs from the page's")
	}
}

// TestRequestFromQuery_SameDecoder: the JSON API reads its query with the
// page's decoder, on top of the scenario's defaults.
func TestRequestFromQuery_SameDecoder(t *testing.T) {
	req, err := RequestFromQuery(url.Values{"scenario": {"lost-ack"}, "handlers": {"increment, dedupe-tx"}, "script": {"deliver msg-1"}, "seed": {"3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Scenario != "lost-ack" || !reflect.DeepEqual(req.Handlers, []string{"increment", "dedupe-tx"}) || req.Seed != 3 || len(req.Events) != 1 || req.Events[0].Kind != playground.EventDeliver {
		t.Errorf("request %+v", req)
	}
	req, err = RequestFromQuery(url.Values{"scenario": {"lost-ack"}}, nil)
	sc, _ := playground.LookupScenario("lost-ack")
	if err != nil || !reflect.DeepEqual(req.Handlers, sc.Handlers) || !reflect.DeepEqual(req.Events, sc.DefaultEvents()) {
		t.Errorf("defaults: %+v %v", req, err)
	}
	for _, c := range []struct{ q, field string }{
		{"", "scenario"}, {"scenario=nope", "scenario"}, {"scenario=lost-ack&seed=x", "seed"}, {"scenario=lost-ack&script=step", "script"},
		{"scenario=lost-ack&show=diagram,charts", "show"},
	} {
		q, _ := url.ParseQuery(c.q)
		_, err := RequestFromQuery(q, nil)
		if ie, ok := err.(*playground.InputError); !ok || ie.Field != c.field {
			t.Errorf("%q: error %v, want one on %s", c.q, err, c.field)
		}
	}
}

// FuzzPlaygroundState decodes any query as a playground state: the decoder
// answers a state or an *InputError, never a panic, and a decoded state
// written by the encoder reads back, settling on one state (a script of
// comments only is written as script=, which reads as the place's own).
func FuzzPlaygroundState(f *testing.F) {
	for _, seed := range []string{
		"scenario=lost-ack",
		"handlers=increment,dedupe-tx&script=deliver+msg-1%3B+redeliver+msg-1&at=1&to=B",
		"h=increment&h=dedupe-tx&op=advance&n=3",
		"handler=+SELECT+1%3B+&op=prune&n=0",
		"script=deliver+msg-1+%23+note%0Acrash+A&seed=-4",
		"at=-1&seed=9&to=Z",
		"show=steps,diagram,,sql",
		"open=handlers,,workers&show=rows",
		"open=broker&open=nope",
		"ledger=postgres-rr&script=deliver+msg-1",
		"ledger=sqlite&ledger=postgres-rc",
		"ledger=+postgres-serializable+",
		"guess=skip&guess=3",
		"guess=+skip",
	} {
		f.Add(seed)
	}
	sc, _ := playground.LookupScenario("lost-ack")
	p := PagePlace(sc, false)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		s, _, err := StateFromQuery(q, p.Home, sc.Workers)
		if err != nil {
			if _, ok := err.(*playground.InputError); !ok {
				t.Fatalf("%q: error %v is not an *InputError", raw, err)
			}
			return
		}
		// Written and read back, a state settles at once: the second
		// reading gives the state the first one did.
		var states []State
		for range 2 {
			written := p.Query(s)
			q, err := url.ParseQuery(written)
			if err != nil {
				t.Fatalf("the encoder wrote an unreadable query %q: %v", written, err)
			}
			if s, _, err = StateFromQuery(q, p.Home, sc.Workers); err != nil {
				t.Fatalf("%q: the encoder wrote %q, which does not read back: %v", raw, written, err)
			}
			states = append(states, s)
		}
		if !states[0].Equal(states[1]) {
			t.Errorf("%q: written and read back twice gives %+v, then %+v", raw, states[0], states[1])
		}
	})
}

// TestPlaygroundURL_Panels: show= reads a set of panels in any order; one
// spelled otherwise than the encoder writes it (or the place's own set,
// spelled out) redirects to the canonical URL; an unknown panel is the
// learner's mistake, said with the names there are.
func TestPlaygroundURL_Panels(t *testing.T) {
	sc, _ := playground.LookupScenario("lost-ack")
	p := PagePlace(sc, false)
	for _, c := range []struct {
		q        string
		want     Panels
		redirect bool
	}{
		{"", p.Home.Panels, false},
		{"show=", 0, false},
		{"show=diagram", PanelDiagram, false},
		{"show=steps,diagram", PanelDiagram | PanelSteps, true},
		{"show=diagram,diagram", PanelDiagram, true},
		{"show=rows,chart,diagram,steps", p.Home.Panels, true},
		{"show=sql&show=rows", PanelSQL, true},
	} {
		q, _ := url.ParseQuery(c.q)
		s, redirect, err := StateFromQuery(q, p.Home, sc.Workers)
		if err != nil || s.Panels != c.want || redirect != c.redirect {
			t.Errorf("%q: panels %q, redirect %v, error %v; want %q, %v", c.q, s.Panels, redirect, err, c.want, c.redirect)
		}
	}
	_, _, err := StateFromQuery(url.Values{KeyShow: {"diagram,charts"}}, p.Home, sc.Workers)
	if ie, ok := err.(*playground.InputError); !ok || ie.Field != KeyShow || !strings.Contains(ie.Msg, `"charts"`) || !strings.Contains(ie.Msg, "rows, chart, diagram, steps and sql") {
		t.Errorf("an unknown panel: %v", err)
	}
}

// queryEscape is url.QueryEscape keeping commas readable, for every byte.
func TestQueryEscape_IsQueryEscapeKeepingCommas(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "deliver msg-1 to A; crash A", "a,b c+d&e=f%g#h/é", string(all)} {
		if got, want := QueryEscape(s), strings.ReplaceAll(url.QueryEscape(s), "%2C", ","); got != want {
			t.Errorf("queryEscape(%q) = %q, want %q", s, got, want)
		}
	}
}

// eventsOf parses a script the test knows to be valid.
func eventsOf(text string) []playground.Event {
	s, err := playground.ParseScript(text)
	if err != nil {
		panic(err)
	}
	return s.Events
}
