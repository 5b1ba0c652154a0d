package web

import (
	"context"
	"encoding/json"
	"idemlab/web/exercise"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/lessons"
	"idemlab/playground"
)

// The built-in course, loaded once: its five exercises are the fixtures.
var exerciseCourse = sync.OnceValues(func() (*lessons.Course, error) {
	return lessons.Load(lessons.Embedded(), lessons.Options{})
})

func builtinCourse(t testing.TB) *lessons.Course {
	t.Helper()
	course, err := exerciseCourse()
	if err != nil {
		t.Fatal(err)
	}
	if len(course.Exercises()) < 5 {
		t.Fatalf("the built-in course has %d exercises, want at least 5", len(course.Exercises()))
	}
	return course
}

func builtinExercise(t testing.TB, id string) *lessons.ExerciseSpec {
	t.Helper()
	spec := builtinCourse(t).Exercise(id)
	if spec == nil {
		t.Fatalf("no exercise %s in the built-in course", id)
	}
	return spec
}

func exerciseServer(t testing.TB) *Server {
	t.Helper()
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// postForm sends a form POST through h.
func postForm(t testing.TB, h http.Handler, target string, form url.Values, headers ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("POST", target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func readBody(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// apiCheck is the JSON of POST /api/v1/check as a client reads it.
type apiCheck struct {
	Exercise       string `json:"exercise"`
	Passed         bool   `json:"passed"`
	Schedules      int    `json:"schedules"`
	DistinctStates int    `json:"distinct_states"`
	NaiveSchedules int64  `json:"naive_schedules"`
	Counterexample *struct {
		Script    string `json:"script"`
		Story     string `json:"story"`
		Violation string `json:"violation"`
		Query     string `json:"query"`
	} `json:"counterexample"`
	Error *struct {
		Line    int    `json:"line"`
		Message string `json:"message"`
	} `json:"error"`
	Unfinished string `json:"unfinished"`
	Playground string `json:"playground"`
	HTML       string `json:"html"`
}

func decodeCheck(t testing.TB, body string) apiCheck {
	t.Helper()
	var out apiCheck
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	return out
}

func checkResultFor(t testing.TB, spec *lessons.ExerciseSpec, handler string) *playground.CheckResult {
	t.Helper()
	res, err := playground.Check(context.Background(), spec.Exercise, handler)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ----- Components -----

func TestExerciseBlock_HasEveryPart(t *testing.T) {
	v := &site.View{Course: builtinCourse(t), Assets: testView(t).Assets}
	spec := builtinExercise(t, "dedupe-credit")
	doc := render(t, exercise.ExerciseBlock(v, exercise.StartExercise(spec, false)))

	ex := doc.Find(testID("exercise"))
	if ex.Length() != 1 || ex.AttrOr("id", "") != "ex-dedupe-credit" || ex.AttrOr("data-exercise", "") != "dedupe-credit" {
		t.Fatalf("exercise section: %d, id %q", ex.Length(), ex.AttrOr("id", ""))
	}
	if got := strings.TrimSpace(doc.Find(testID("exercise-goal")).Text()); got != strings.TrimSpace(spec.Goal) {
		t.Errorf("goal = %q, want %q", got, spec.Goal)
	}
	form := doc.Find("form")
	if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/exercises/dedupe-credit/check#ex-dedupe-credit-result" {
		t.Errorf("form: method %q action %q", form.AttrOr("method", ""), form.AttrOr("action", ""))
	}
	editor := doc.Find(testID("exercise-editor"))
	if !editor.Is("textarea") || editor.AttrOr("name", "") != "handler" || editor.Text() != spec.Start {
		t.Errorf("editor: textarea %v, name %q, text %q", editor.Is("textarea"), editor.AttrOr("name", ""), editor.Text())
	}
	if id := editor.AttrOr("id", ""); doc.Find(`label[for="`+id+`"]`).Length() != 1 {
		t.Errorf("the editor %q has no label", id)
	}
	if !doc.Find(testID("exercise-check")).Is(`button[type="submit"]`) {
		t.Error("Check is not a submit button")
	}
	if got := doc.Find(testID("exercise-reset")).AttrOr("href", ""); got != "/exercises/dedupe-credit#ex-dedupe-credit" {
		t.Errorf("reset href = %q", got)
	}
	hints := doc.Find(testID("exercise-hint"))
	if hints.Length() != len(spec.Hints) || hints.Length() == 0 {
		t.Errorf("%d hints, want %d", hints.Length(), len(spec.Hints))
	}
	hints.Each(func(i int, h *goquerySelection) {
		if !h.Is("details") || h.Is("[open]") {
			t.Errorf("hint %d must be a closed <details>", i+1)
		}
	})
	sol := doc.Find(testID("exercise-solution"))
	if !sol.Is("details") || sol.Is("[open]") || !strings.Contains(sol.Find("pre").Text(), "processed_messages") {
		t.Errorf("solution: details %v, text %q", sol.Is("details"), sol.Find("pre").Text())
	}
	res := doc.Find(testID("exercise-result"))
	if res.AttrOr("aria-live", "") != "polite" || res.AttrOr("data-state", "") != "empty" || strings.TrimSpace(res.Text()) != "" {
		t.Errorf("result before a check: live %q state %q text %q", res.AttrOr("aria-live", ""), res.AttrOr("data-state", ""), res.Text())
	}
}

func TestExerciseResult_Pass(t *testing.T) {
	v := testView(t)
	spec := builtinExercise(t, "dedupe-credit")
	res := checkResultFor(t, spec, spec.Solution)
	doc := render(t, exercise.ExerciseResult(v, &exercise.ExerciseView{Spec: spec, Handler: spec.Solution, Outcome: &exercise.ExerciseOutcome{Result: res}}))
	r := doc.Find(testID("exercise-result"))
	if r.AttrOr("data-state", "") != "pass" || r.AttrOr("data-passed", "") != "dedupe-credit" {
		t.Errorf("state %q passed %q", r.AttrOr("data-state", ""), r.AttrOr("data-passed", ""))
	}
	text := strings.Join(strings.Fields(r.Text()), " ")
	want := "Holds in all " + itoa(int(res.NaiveSchedules)) + " schedules — " + itoa(res.DistinctStates) + " distinct states explored."
	if !strings.Contains(text, want) {
		t.Errorf("result %q does not say %q", text, want)
	}
	if doc.Find(testID("exercise-counterexample")).Length() != 0 || doc.Find(testID("exercise-error")).Length() != 0 {
		t.Error("a pass shows a counterexample or an error")
	}
}

func TestExerciseResult_Counterexample(t *testing.T) {
	v := testView(t)
	spec := builtinExercise(t, "dedupe-credit")
	res := checkResultFor(t, spec, spec.Start)
	ce := res.Counterexample
	if ce == nil {
		t.Fatalf("the start passes: %+v", res)
	}
	doc := render(t, exercise.ExerciseResult(v, &exercise.ExerciseView{Spec: spec, Handler: spec.Start, Outcome: &exercise.ExerciseOutcome{Result: res}}))
	if got := doc.Find(testID("exercise-result")).AttrOr("data-state", ""); got != "fail" {
		t.Errorf("state = %q", got)
	}
	story := doc.Find(testID("exercise-story") + " li")
	if story.Length() != len(exercise.StorySteps(ce)) || story.Length() < 2 {
		t.Errorf("story has %d steps: %q", story.Length(), ce.Story)
	}
	if got := doc.Find(testID("exercise-violation")).Text(); !strings.Contains(got, ce.Violation) {
		t.Errorf("violation %q missing from %q", ce.Violation, got)
	}
	if got := doc.Find(testID("exercise-script")).Text(); got != ce.Script {
		t.Errorf("script = %q, want %q", got, ce.Script)
	}
	link := doc.Find(testID("exercise-open-playground")).AttrOr("href", "")
	u, err := url.Parse(link)
	if err != nil || u.Path != "/playground" {
		t.Fatalf("playground link %q", link)
	}
	q := u.Query()
	if q.Get("scenario") != ce.Scenario || q.Get("script") != ce.Script || q.Get("handler") != spec.Start {
		t.Errorf("playground link carries %v", q)
	}
}

func TestExerciseResult_ErrorMarksTheLine(t *testing.T) {
	v := testView(t)
	spec := builtinExercise(t, "dedupe-credit")
	handler := "BEGIN;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nDROP TABLE accounts;\nCOMMIT;\n"
	res := checkResultFor(t, spec, handler)
	if res.Error == nil || res.Error.Line != 3 {
		t.Fatalf("want an error on line 3, got %+v", res.Error)
	}
	doc := render(t, exercise.ExerciseResult(v, &exercise.ExerciseView{Spec: spec, Handler: handler, Outcome: &exercise.ExerciseOutcome{Result: res}}))
	e := doc.Find(testID("exercise-error"))
	if e.AttrOr("data-line", "") != "3" || !strings.Contains(e.Text(), "Line 3") || !strings.Contains(e.Text(), res.Error.Message) {
		t.Errorf("error: line %q text %q", e.AttrOr("data-line", ""), e.Text())
	}
	if got := strings.TrimSpace(e.Find(".hl").Text()); !strings.Contains(got, "DROP TABLE accounts") {
		t.Errorf("highlighted line = %q", got)
	}
}

func TestExerciseBlock_EscapesTheLearnersText(t *testing.T) {
	v := testView(t)
	spec := builtinExercise(t, "dedupe-credit")
	hostile := "</textarea><script>alert(1)</script>\nSELECT '<b>';"
	res := &playground.CheckResult{Error: &playground.HandlerError{Line: 2, Message: "<img src=x onerror=alert(1)>"}}
	doc := render(t, exercise.ExerciseBlock(v, &exercise.ExerciseView{Spec: spec, Handler: hostile, Outcome: &exercise.ExerciseOutcome{Result: res}}))
	if doc.Find("script, img, b").Length() != 0 {
		t.Error("the learner's text became markup")
	}
	if got := doc.Find(testID("exercise-editor")).Text(); got != hostile {
		t.Errorf("editor text = %q", got)
	}
}

func TestExerciseMark_OnlyForLessonsWithExercises(t *testing.T) {
	course := builtinCourse(t)
	doc := render(t, indexPage(&site.View{Course: course, Assets: testView(t).Assets}))
	marks := doc.Find(testID("exercise-mark"))
	want := 0
	for _, l := range course.Lessons {
		if len(l.Exercises) > 0 {
			want++
			m := doc.Find(`[data-testid="lesson-item"][data-lesson-slug="` + l.Slug + `"] ` + testID("exercise-mark"))
			if m.AttrOr("data-exercise-ids", "") != exercise.ExerciseIDs(l) || m.AttrOr("data-passed", "") != "false" {
				t.Errorf("%s: mark ids %q passed %q", l.Slug, m.AttrOr("data-exercise-ids", ""), m.AttrOr("data-passed", ""))
			}
		}
	}
	if marks.Length() != want || want < 5 {
		t.Errorf("%d marks, want %d", marks.Length(), want)
	}
}

// ----- HTTP -----

func TestCheckAPI_Answers(t *testing.T) {
	h := exerciseServer(t).Handler()
	spec := builtinExercise(t, "dedupe-credit")
	huge := strings.Repeat("-- padding\n", 500)
	tests := []struct {
		name   string
		form   url.Values
		status int
		check  func(t *testing.T, got apiCheck, body string)
	}{
		{"solution passes", url.Values{"exercise": {spec.ID}, "handler": {spec.Solution}}, 200, func(t *testing.T, got apiCheck, _ string) {
			if !got.Passed || got.NaiveSchedules < 1 || got.Schedules < 1 || got.Counterexample != nil || got.Error != nil {
				t.Errorf("%+v", got)
			}
			if !strings.Contains(got.HTML, `data-state="pass"`) {
				t.Errorf("html: %s", got.HTML)
			}
		}},
		{"start fails with a counterexample", url.Values{"exercise": {spec.ID}, "handler": {spec.Start}}, 200, func(t *testing.T, got apiCheck, _ string) {
			if got.Passed || got.Counterexample == nil || got.Counterexample.Script == "" || got.Counterexample.Violation == "" {
				t.Fatalf("%+v", got)
			}
			u, err := url.Parse(got.Playground)
			if err != nil || u.Path != "/playground" || u.Query().Get("script") != got.Counterexample.Script || u.Query().Get("handler") != spec.Start {
				t.Errorf("playground = %q", got.Playground)
			}
		}},
		{"parse error names the line", url.Values{"exercise": {spec.ID}, "handler": {"BEGIN;\nUPDATE accounts SET balance = balance + :amout WHERE id = :account_id;\nCOMMIT;"}}, 200, func(t *testing.T, got apiCheck, _ string) {
			if got.Passed || got.Error == nil || got.Error.Line != 2 || !strings.Contains(got.Error.Message, "amout") {
				t.Errorf("%+v %+v", got, got.Error)
			}
		}},
		{"unknown exercise", url.Values{"exercise": {"no-such"}, "handler": {"SELECT 1;"}}, 404, nil},
		{"missing exercise", url.Values{"handler": {"SELECT 1;"}}, 400, nil},
		{"missing handler", url.Values{"exercise": {spec.ID}}, 400, nil},
		{"blank handler", url.Values{"exercise": {spec.ID}, "handler": {"  \n "}}, 400, nil},
		{"oversized handler", url.Values{"exercise": {spec.ID}, "handler": {huge}}, 400, func(t *testing.T, _ apiCheck, body string) {
			if !strings.Contains(body, "limit is 4096") {
				t.Errorf("body %s", body)
			}
		}},
		{"oversized body", url.Values{"exercise": {spec.ID}, "handler": {strings.Repeat("x", 100<<10)}}, 400, func(t *testing.T, _ apiCheck, body string) {
			if !strings.Contains(body, "larger than 64 KiB") {
				t.Errorf("body %s", body)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := postForm(t, h, "/api/v1/check", tc.form)
			body := readBody(t, resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			if tc.status != 200 {
				var e site.APIError
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
					t.Errorf("error body %q: %v", body, err)
				}
				if tc.check != nil {
					tc.check(t, apiCheck{}, body)
				}
				return
			}
			if !strings.HasPrefix(resp.Header.Get("Server-Timing"), "check;dur=") {
				t.Errorf("Server-Timing %q", resp.Header.Get("Server-Timing"))
			}
			if tc.check != nil {
				tc.check(t, decodeCheck(t, body), body)
			}
		})
	}
}

func TestCheckAPI_GetIsNotAllowed(t *testing.T) {
	h := exerciseServer(t).Handler()
	resp := do(t, h, "GET", "/api/v1/check?exercise=dedupe-credit")
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestCheckForm_RendersTheResultPage(t *testing.T) {
	h := exerciseServer(t).Handler()
	spec := builtinExercise(t, "dedupe-credit")
	tests := []struct {
		name, handler string
		status        int
		state         string
		testid        string
	}{
		{"pass", spec.Solution, 200, "pass", "exercise-pass"},
		{"counterexample", spec.Start, 200, "fail", "exercise-counterexample"},
		{"parse error", "UPDATE accounts SET balance = :nope;", 200, "error", "exercise-error"},
		{"empty", "   ", 400, "notice", "exercise-result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := postForm(t, h, "/exercises/"+spec.ID+"/check", url.Values{"handler": {tc.handler}})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			doc := document(t, resp)
			if got := doc.Find(testID("exercise-editor")).Text(); got != tc.handler {
				t.Errorf("the editor lost the learner's text: %q", got)
			}
			if got := doc.Find(testID("exercise-result")).AttrOr("data-state", ""); got != tc.state {
				t.Errorf("state %q, want %q", got, tc.state)
			}
			if doc.Find(testID(tc.testid)).Length() == 0 {
				t.Errorf("no %s", tc.testid)
			}
			if got := doc.Find(testID("exercise-lesson")+" a").AttrOr("href", ""); got != playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID {
				t.Errorf("link back to the lesson = %q", got)
			}
		})
	}
	if resp := postForm(t, h, "/exercises/no-such/check", url.Values{"handler": {"SELECT 1;"}}); resp.StatusCode != 404 {
		t.Errorf("unknown exercise: %d", resp.StatusCode)
	}
	if resp := do(t, h, "GET", "/exercises/"+spec.ID); resp.StatusCode != 200 {
		t.Errorf("GET the exercise page: %d", resp.StatusCode)
	} else if got := document(t, resp).Find(testID("exercise-editor")).Text(); got != spec.Start {
		t.Errorf("the exercise page starts with %q", got)
	}
	if resp := do(t, h, "GET", "/exercises/no-such"); resp.StatusCode != 404 {
		t.Errorf("GET an unknown exercise: %d", resp.StatusCode)
	}
}

func TestCheck_CrossOriginPostIsRefused(t *testing.T) {
	h := exerciseServer(t).Handler()
	form := url.Values{"exercise": {"dedupe-credit"}, "handler": {"SELECT 1;"}}
	for _, target := range []string{"/api/v1/check", "/exercises/dedupe-credit/check"} {
		resp := postForm(t, h, target, form, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s cross-site: %d, want 403", target, resp.StatusCode)
		}
		if resp := postForm(t, h, target, form, "Sec-Fetch-Site", "same-origin"); resp.StatusCode != 200 {
			t.Errorf("%s same-origin: %d, want 200", target, resp.StatusCode)
		}
	}
}

func TestCheck_BusyAnswers429(t *testing.T) {
	s := exerciseServer(t)
	s.adm.QueueWait = 10 * time.Millisecond // a check waits this long for a slot
	ex := newExerciseChecker(s, 1)
	api, form := s.handle(ex.ServeCheckAPI), s.handle(ex.ServeCheckForm)
	spec := builtinExercise(t, "dedupe-credit")
	values := url.Values{"exercise": {spec.ID}, "handler": {spec.Start}}

	ex.Slots <- struct{}{} // another learner's check is running
	resp := postForm(t, api, "/api/v1/check", values)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("API while busy: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	req := httptest.NewRequest("POST", "/exercises/"+spec.ID+"/check", strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetPathValue("id", spec.ID)
	rec := httptest.NewRecorder()
	form.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("form while busy: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if doc, _ := goqueryDocument(rec.Body.Bytes()); doc == nil || doc.Find(testID("exercise-editor")).Text() != spec.Start {
		t.Error("the busy page lost the learner's text")
	}
	<-ex.Slots // it finished

	resp = postForm(t, api, "/api/v1/check", values)
	if resp.StatusCode != 200 {
		t.Fatalf("after the slot freed: %d", resp.StatusCode)
	}
	if len(ex.Slots) != 0 {
		t.Errorf("a finished check kept its slot")
	}
}

func TestCheck_DeadlineStopsACheck(t *testing.T) {
	s := exerciseServer(t)
	ex := newExerciseChecker(s, 1)
	ex.Timeout = time.Nanosecond
	spec := builtinExercise(t, "race-check-then-insert")
	resp := postForm(t, s.handle(ex.ServeCheckAPI), "/api/v1/check", url.Values{"exercise": {spec.ID}, "handler": {spec.Solution}})
	body := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	got := decodeCheck(t, body)
	if got.Passed || got.Error != nil || got.Counterexample != nil || !strings.Contains(got.Unfinished, "stopped after") {
		t.Errorf("a check its deadline stopped: %+v, want unfinished, no verdict and no error in the handler", got)
	}
}

// Practise what we teach: a check is a pure function of its input, so a
// retried or double-clicked POST gives the same answer and changes nothing.
func TestCheck_ReplayedPostIsIdentical(t *testing.T) {
	s := exerciseServer(t)
	h := s.Handler()
	spec := builtinExercise(t, "dedupe-credit")
	pagesBefore := []string{readBody(t, do(t, h, "GET", "/")), readBody(t, do(t, h, "GET", playurl.LessonPath(spec.Lesson)))}
	cur := s.site.Load()
	for _, handler := range []string{spec.Start, spec.Solution} {
		for _, target := range []string{"/api/v1/check", "/exercises/" + spec.ID + "/check"} {
			form := url.Values{"exercise": {spec.ID}, "handler": {handler}}
			first := postForm(t, h, target, form)
			firstBody := readBody(t, first)
			second := postForm(t, h, target, form)
			secondBody := readBody(t, second)
			if first.StatusCode != 200 || second.StatusCode != first.StatusCode || firstBody != secondBody {
				t.Errorf("%s: the replayed POST answered differently (%d, %d)", target, first.StatusCode, second.StatusCode)
			}
			for _, k := range []string{"Set-Cookie", "Location"} {
				if first.Header.Get(k) != "" {
					t.Errorf("%s: a check sets %s", target, k)
				}
			}
		}
	}
	if s.site.Load() != cur {
		t.Error("a check changed the rendered site")
	}
	pagesAfter := []string{readBody(t, do(t, h, "GET", "/")), readBody(t, do(t, h, "GET", playurl.LessonPath(spec.Lesson)))}
	for i := range pagesBefore {
		if pagesBefore[i] != pagesAfter[i] {
			t.Errorf("page %d changed after the checks", i)
		}
	}
}

func TestLessonPage_ShowsItsExercise(t *testing.T) {
	h := exerciseServer(t).Handler()
	for _, spec := range builtinCourse(t).Exercises() {
		doc := document(t, do(t, h, "GET", playurl.LessonPath(spec.Lesson)))
		ex := doc.Find(`[data-testid="lesson-body"] [data-exercise="` + spec.ID + `"]`)
		if ex.Length() != 1 {
			t.Errorf("%s: lesson %s shows the exercise %d times", spec.ID, spec.Lesson, ex.Length())
		}
		// Its bounds in words, every set of them: a second copy while the
		// first runs in each exercise, storage for the retention one.
		rules := strings.Join(strings.Fields(ex.Find(testID("exercise-rules")).Text()), " ")
		if spec.IsInverse() { // what a script may use, in the engine's words
			if rules != spec.DescribeBreak() {
				t.Errorf("%s: the page states its rules as %q", spec.ID, rules)
			}
		} else if !strings.HasPrefix(rules, spec.DescribeChecks()) ||
			!strings.Contains(rules, "while the first is still being handled") && !strings.Contains(rules, "second copy") {
			t.Errorf("%s: the page states its bounds as %q", spec.ID, rules)
		}
		if spec.ID == "dedupe-retention" && (!strings.Contains(rules, "Separately, it tries") || !strings.Contains(rules, "Storage is bounded: once the handler runs 192 ticks")) {
			t.Errorf("%s: the page does not state its overlap and storage bounds: %q", spec.ID, rules)
		}
		embed := document(t, do(t, h, "GET", playurl.EmbedPath(spec.Lesson)))
		if embed.Find(`[data-exercise="`+spec.ID+`"] form`).AttrOr("target", "") != "_blank" {
			t.Errorf("%s: the embed's form does not open its result outside the iframe", spec.ID)
		}
	}
}

// FuzzCheckEndpoint: whatever the exercise id and handler, the endpoint
// answers 200, 400 or 404 with JSON: never a 500 or a panic.
func FuzzCheckEndpoint(f *testing.F) {
	course := builtinCourse(f)
	for _, spec := range course.Exercises() {
		f.Add(spec.ID, spec.Start)
	}
	f.Add("dedupe-credit", "BEGIN;\nSELECT * FROM sqlite_master;\nCOMMIT;")
	f.Add("dedupe-credit", "ATTACH 'file:x?vfs=memdb' AS x;")
	f.Add("dedupe-credit", "@on\n@stop-if-no-rows\n;;;")
	f.Add("dedupe-credit", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c;")
	f.Add("", "")
	f.Add("../../etc", "\x00\xff")
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, course)
	if err != nil {
		f.Fatal(err)
	}
	ex := newExerciseChecker(s, 64) // no 429s: the fuzzer is the only learner
	h := s.handle(ex.ServeCheckAPI)
	f.Fuzz(func(t *testing.T, id, handler string) {
		resp := postForm(t, h, "/api/v1/check", url.Values{"exercise": {id}, "handler": {handler}})
		body := readBody(t, resp)
		switch resp.StatusCode {
		case 200, 400, 404:
		default:
			t.Fatalf("status %d for %q / %q: %s", resp.StatusCode, id, handler, body)
		}
		if !json.Valid([]byte(body)) {
			t.Fatalf("not JSON: %s", body)
		}
	})
}

// BenchmarkCheckEndpoint: a check through the handler stack, for each
// built-in exercise's starting script (a counterexample) and solution
// (every schedule).
func BenchmarkCheckEndpoint(b *testing.B) {
	s := exerciseServer(b)
	ex := newExerciseChecker(s, 64)
	h := s.handle(ex.ServeCheckAPI)
	for _, spec := range builtinCourse(b).Exercises() {
		if spec.IsInverse() {
			continue // BenchmarkCheckBreak, in playground
		}
		for _, which := range []struct{ name, text string }{{"start", spec.Start}, {"solution", spec.Solution}} {
			b.Run(spec.ID+"/"+which.name, func(b *testing.B) {
				form := url.Values{"exercise": {spec.ID}, "handler": {which.text}}
				var got apiCheck
				for b.Loop() {
					resp := postForm(b, h, "/api/v1/check", form)
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
					got = decodeCheck(b, readBody(b, resp))
				}
				b.ReportMetric(float64(got.Schedules), "schedules")
				b.ReportMetric(float64(got.DistinctStates), "states")
				b.ReportMetric(float64(got.NaiveSchedules), "naive-schedules")
			})
		}
	}
}
