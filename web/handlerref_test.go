package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"idemlab/playground"
	"idemlab/web/site"
)

// The exercise's reference panel lists what the engine accepts: every
// table with its columns, every parameter, every directive with an example.
func TestExerciseReference_ListsTheEnginesDefinitions(t *testing.T) {
	h := exerciseServer(t).Handler()
	doc := document(t, do(t, h, "GET", site.ExercisePath("dedupe-credit")))
	panel := doc.Find(testID("exercise") + " " + testID("handler-reference"))
	if panel.Length() != 1 {
		t.Fatalf("%d reference panels", panel.Length())
	}
	ref := playground.Reference()
	for _, tb := range ref.Tables {
		row := panel.Find(`[data-table="` + tb.Name + `"]`)
		for _, c := range tb.Columns {
			if !strings.Contains(row.Text(), c) {
				t.Errorf("table %s: column %s missing", tb.Name, c)
			}
		}
	}
	if n := panel.Find(testID("handler-ref-param")).Length(); n != len(ref.Params) {
		t.Errorf("%d parameters, the engine has %d", n, len(ref.Params))
	}
	for _, name := range []string{"on", "stop-if-no-rows", "stop-if-found", "filter"} {
		d := panel.Find(`[data-directive="` + name + `"]`)
		if d.Length() != 1 || !strings.Contains(d.Find("pre").Text(), "@"+name) {
			t.Errorf("@%s: no entry with an example", name)
		}
	}
	for _, c := range ref.Calls {
		d := panel.Find(testID("handler-ref-call") + `[data-call="` + c.Name + `"]`)
		if d.Length() != 1 || !strings.Contains(d.Find("summary").Text(), "CALL "+c.Name+"(") || !strings.Contains(d.Find("pre").Text(), "CALL "+c.Name+"(") {
			t.Errorf("CALL %s: no entry with its usage and an example", c.Name)
		}
	}
}

// "Replay it step by step" opens the playground with the learner's handler
// and a way back; the way back opens the exercise with that handler in the
// editor, without JavaScript.
func TestExerciseReplay_LeadsBackWithTheHandler(t *testing.T) {
	h := exerciseServer(t).Handler()
	spec := builtinExercise(t, "dedupe-credit")
	handler := spec.Start + "\n-- my attempt\n"
	resp := postForm(t, h, site.ExerciseCheckPath(spec.ID), url.Values{"handler": {handler}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("check: status %d", resp.StatusCode)
	}
	replay, ok := document(t, resp).Find(testID("exercise-open-playground")).Attr("href")
	if !ok || !strings.Contains(replay, "exercise="+spec.ID) {
		t.Fatalf("replay link %q does not name the exercise", replay)
	}
	resp = do(t, h, "GET", replay)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("replay: status %d", resp.StatusCode)
	}
	pg := document(t, resp)
	if pg.Find(`[data-testid="pg-ledger"][data-handler="mine"]`).Length() != 1 || pg.Find(testID("pg-figure")).Length() == 0 {
		t.Error("the replay does not show the learner's handler with its figures")
	}
	back, ok := pg.Find(testID("pg-exercise-back") + " a").Attr("href")
	if !ok {
		t.Fatal("no way back to the exercise")
	}
	if self := pg.Find(testID("pg-permalink")).AttrOr("href", ""); !strings.Contains(self, "exercise="+spec.ID) {
		t.Errorf("the permalink %q loses the way back", self)
	}
	back, _, _ = strings.Cut(back, "#")
	resp = do(t, h, "GET", back)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("back: status %d", resp.StatusCode)
	}
	if got := document(t, resp).Find(testID("exercise-editor")).Text(); got != strings.TrimSpace(handler) {
		t.Errorf("the editor holds %q, want the learner's handler %q", got, handler)
	}
	if resp := do(t, h, "GET", "/playground?scenario=lost-ack&exercise=no-such"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown exercise=: status %d, want 400", resp.StatusCode)
	}
}
