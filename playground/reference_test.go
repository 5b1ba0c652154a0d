package playground

import (
	"slices"
	"strings"
	"testing"
)

// The reference lists what the engine accepts, and nothing else: every
// parameter has a meaning, every table its schema, every directive an
// example that the parser accepts and that uses the directive.
func TestReference_MatchesWhatTheEngineAccepts(t *testing.T) {
	ref := Reference()
	if len(ref.Tables) != len(tableOrder) || len(ref.Params) != len(handlerParams) {
		t.Fatalf("%d tables, %d params", len(ref.Tables), len(ref.Params))
	}
	for _, tb := range ref.Tables {
		if !strings.HasPrefix(tb.Schema, "CREATE TABLE "+tb.Name+"(") {
			t.Errorf("table %s: schema %q", tb.Name, tb.Schema)
		}
		for _, c := range tb.Columns {
			if !strings.Contains(tb.Schema, c+" ") {
				t.Errorf("table %s: column %s is not in its schema", tb.Name, c)
			}
		}
	}
	for _, p := range ref.Params {
		if p.Meaning == "" {
			t.Errorf("parameter :%s has no meaning", p.Name)
		}
	}
	for _, name := range []string{"on", "stop-if-no-rows", "stop-if-found", "filter"} {
		if !slices.ContainsFunc(ref.Directives, func(d DirectiveReference) bool { return d.Name == name }) {
			t.Errorf("@%s is missing", name)
		}
	}
	for _, d := range ref.Directives {
		if _, err := ParseHandler("example", d.Example); err != nil {
			t.Errorf("@%s: its example does not parse: %v", d.Name, err)
		}
		if !strings.Contains(d.Example, "@"+d.Name) {
			t.Errorf("@%s: its example does not use it", d.Name)
		}
		// A directive the parser does not know would be refused.
		if _, err := ParseHandler("example", "@"+d.Name+"\nSELECT 1;"); err != nil && strings.Contains(err.Error(), "unknown directive") {
			t.Errorf("@%s: the parser does not know it: %v", d.Name, err)
		}
	}
	if _, err := ParseHandler("example", "@nope\nSELECT 1;"); err == nil || !strings.Contains(err.Error(), directiveNames()) {
		t.Errorf("an unknown directive's message does not list the reference's: %v", err)
	}
}
