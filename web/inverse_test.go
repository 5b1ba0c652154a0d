package web

import (
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/url"
	"strings"
	"testing"

	"idemlab/playground"
)

func TestInverse_PageShowsTheHandlerAndHidesTheShortest(t *testing.T) {
	h := exerciseServer(t).Handler()
	for _, id := range []string{"break-message-id", "break-shipping"} {
		spec := builtinExercise(t, id)
		resp := do(t, h, "GET", site.ExercisePath(id))
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", id, resp.StatusCode)
		}
		doc := document(t, resp)
		ex := doc.Find(`[data-exercise="` + id + `"]`)
		if _, ok := ex.Attr("data-inverse"); !ok {
			t.Fatalf("%s: not drawn as an inverse exercise", id)
		}
		handler := ex.Find(testID("inverse-handler")).Text()
		if !strings.Contains(handler, "processed_messages") && !strings.Contains(handler, "shipments") {
			t.Errorf("%s: the handler to break is not shown: %q", id, handler)
		}
		form := ex.Find("form")
		if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != site.ExerciseCheckPath(id)+"#ex-"+id+"-result" {
			t.Errorf("%s: form %s %s", id, form.AttrOr("method", ""), form.AttrOr("action", ""))
		}
		if got := ex.Find(`textarea[name="script"]`).Text(); got != spec.Start {
			t.Errorf("%s: the editor starts with %q, want %q", id, got, spec.Start)
		}
		if ex.Find(`label[for="`+ex.Find("textarea").AttrOr("id", "")+`"]`).Length() != 1 {
			t.Errorf("%s: the script editor has no label", id)
		}
		first := spec.Scenarios[0]
		if sc, err := playground.LookupScenario(first); err != nil || !strings.Contains(ex.Find(".exercise-help").Text(), "deliver "+sc.Messages[0].ID+" lose-ack") {
			t.Errorf("%s: the editor's help does not use the scenario's own messages: %q", id, ex.Find(".exercise-help").Text())
		}
		if ex.Find(`button[name="reveal"][value="shortest"]`).Length() != 1 {
			t.Errorf("%s: no way to ask for the shortest script", id)
		}
		if ex.Find(testID("inverse-shortest")).Length() != 0 {
			t.Errorf("%s: the shortest script is shown before it was asked for", id)
		}
	}
}

func TestInverse_CheckForm(t *testing.T) {
	h := exerciseServer(t).Handler()
	cases := []struct {
		name, exercise, script string
		reveal                 bool
		status                 int
		state                  string
		says                   string // in the result's text
		shortestShown          bool
		asShort                string // data-shortest, or "" when no length is compared
	}{
		{"BreaksItShortest", "break-message-id", "deliver msg-1\ndeliver msg-2", false, 200, "pass",
			"It breaks it: payment pay-7 credited 2 times to acc-1 (msg-1 and msg-2 carry it), expected once.", true, "true"},
		{"BreaksItLonger", "break-message-id", "deliver msg-1 lose-ack; redeliver msg-1; deliver msg-2", false, 200, "pass",
			"Your script has 3 events; the shortest the checker finds has 2.", true, "false"},
		{"DoesNotBreakIt", "break-message-id", "deliver msg-1 lose-ack; redeliver msg-1", false, 200, "fail",
			"This script does not break it: every message took effect once.", false, ""},
		{"AskedForTheShortest", "break-message-id", "deliver msg-1", true, 200, "fail",
			"The shortest breaking script the checker finds (2 events)", true, ""},
		{"OnlyTheShortest", "break-message-id", "", true, 200, "empty", "deliver msg-1 to A; deliver msg-2 to A", true, ""},
		{"ParseErrorWithLine", "break-message-id", "deliver msg-1\ndelivr msg-2", false, 200, "error",
			`Line 2: event 2: unknown event "delivr"`, false, ""},
		{"OutOfBounds", "break-shipping", "deliver ship-1; replay", false, 200, "error",
			"Line 1: event 2 (replay): this exercise allows no replays", false, ""},
		{"CrashBetweenTheWrites", "break-shipping", "deliver ship-1 crash-after 2\nredeliver ship-1", false, 200, "pass",
			"It breaks it: order ord-1 paid but not shipped", true, "true"},
		{"Empty", "break-shipping", "  ", false, 400, "notice", "the script is empty", false, ""},
		{"TooLarge", "break-shipping", strings.Repeat("deliver ship-1\n", playground.MaxScriptBytes/10), false, 400, "notice",
			"the limit is 8192", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			form := url.Values{"exercise": {c.exercise}, "script": {c.script}}
			if c.reveal {
				form.Set("reveal", "shortest")
			}
			resp := postForm(t, h, site.ExerciseCheckPath(c.exercise), form)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			doc := document(t, resp)
			result := doc.Find(testID("exercise-result"))
			if got := result.AttrOr("data-state", ""); got != c.state {
				t.Errorf("state %q, want %q", got, c.state)
			}
			text := strings.Join(strings.Fields(result.Text()), " ")
			if !strings.Contains(text, c.says) {
				t.Errorf("the result reads %q, want it to contain %q", text, c.says)
			}
			if got := result.Find(testID("inverse-shortest")).Length() == 1; got != c.shortestShown {
				t.Errorf("shortest shown %v, want %v", got, c.shortestShown)
			}
			if got := result.Find(testID("inverse-length")).AttrOr("data-shortest", ""); got != c.asShort {
				t.Errorf("as short as the shortest: %q, want %q", got, c.asShort)
			}
			if got := doc.Find(testID("exercise-editor")).Text(); c.status == 200 && got != c.script {
				t.Errorf("the editor lost the learner's script: %q", got)
			}
			if (c.state == "pass") != (result.AttrOr("data-passed", "") == c.exercise) {
				t.Errorf("data-passed %q in state %s", result.AttrOr("data-passed", ""), c.state)
			}
		})
	}
}

// TestInverse_RunLinkRoundTrip: the result links to the playground replaying
// the learner's script with the handler to break, and the playground links
// back to the exercise with the script in the editor.
func TestInverse_RunLinkRoundTrip(t *testing.T) {
	h := exerciseServer(t).Handler()
	for _, c := range []struct{ exercise, script, handlerParam string }{
		{"break-message-id", "deliver msg-1 lose-ack; redeliver msg-1", "handlers"},
		{"break-shipping", "deliver ship-1 crash-after 2; redeliver ship-1", "handler"},
	} {
		doc := document(t, postForm(t, h, site.ExerciseCheckPath(c.exercise), url.Values{"script": {c.script}}))
		href := doc.Find(testID("exercise-open-playground")).AttrOr("href", "")
		u, err := url.Parse(href)
		if err != nil || u.Path != "/playground" || !strings.Contains(u.Query().Get("script"), "redeliver") || u.Query().Get(c.handlerParam) == "" {
			t.Fatalf("%s: run link %q", c.exercise, href)
		}
		page := do(t, h, "GET", href)
		if page.StatusCode != 200 {
			t.Fatalf("%s: the run link answers %d", c.exercise, page.StatusCode)
		}
		back := document(t, page).Find(`a[href^="/exercises/`+c.exercise+`?script="]`).AttrOr("href", "")
		if back == "" {
			t.Fatalf("%s: the playground has no link back with the script", c.exercise)
		}
		again := document(t, do(t, h, "GET", back))
		if got := strings.Fields(again.Find(testID("exercise-editor")).Text()); len(got) < 4 || got[0] != "deliver" {
			t.Errorf("%s: back in the exercise, the editor holds %q", c.exercise, got)
		}
	}
}

// Practise what we teach: checking a script stores nothing, so the same
// POST twice answers the same bytes and leaves every page as it was.
func TestInverse_CheckIsIdempotent(t *testing.T) {
	s := exerciseServer(t)
	h := s.Handler()
	spec := builtinExercise(t, "break-message-id")
	pages := func() []string {
		return []string{readBody(t, do(t, h, "GET", "/")), readBody(t, do(t, h, "GET", playurl.LessonPath(spec.Lesson))), readBody(t, do(t, h, "GET", site.ExercisePath(spec.ID)))}
	}
	before := pages()
	cur := s.site.Load()
	for _, form := range []url.Values{
		{"script": {"deliver msg-1; deliver msg-2"}},
		{"script": {"deliver msg-1"}, "reveal": {"shortest"}},
	} {
		first := postForm(t, h, site.ExerciseCheckPath(spec.ID), form)
		firstBody := readBody(t, first)
		second := postForm(t, h, site.ExerciseCheckPath(spec.ID), form)
		if secondBody := readBody(t, second); first.StatusCode != 200 || second.StatusCode != 200 || firstBody != secondBody {
			t.Errorf("%v: the replayed POST answered differently (%d, %d)", form, first.StatusCode, second.StatusCode)
		}
		if first.Header.Get("Set-Cookie") != "" || first.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%v: Set-Cookie %q, Cache-Control %q", form, first.Header.Get("Set-Cookie"), first.Header.Get("Cache-Control"))
		}
	}
	if s.site.Load() != cur {
		t.Error("a check changed the rendered site")
	}
	for i, after := range pages() {
		if after != before[i] {
			t.Errorf("page %d changed after the checks", i)
		}
	}
}

func TestInverse_CheckAPIRefusesWithAHelpfulMessage(t *testing.T) {
	h := exerciseServer(t).Handler()
	resp := postForm(t, h, "/api/v1/check", url.Values{"exercise": {"break-shipping"}, "handler": {"SELECT 1;"}})
	body := readBody(t, resp)
	if resp.StatusCode != 400 || !strings.Contains(body, "asks for a script that breaks its handler") {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
}
