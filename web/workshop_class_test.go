package web

import (
	"encoding/json"
	"idemlab/web/playurl"
	"idemlab/web/workshopweb"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/workshop"
)

// classDoc fetches the class view as the instructor sees it.
func (ws *workshopSite) classDoc(t *testing.T, inst *http.Client, id int64) *goquery.Document {
	t.Helper()
	resp := get(t, inst, ws.srv.URL+workshopweb.RoomPath(id))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("class view: %d", resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestWorkshop_ShowItToTheClassOpensTheCounterexample(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	spec := builtinExercise(t, builtinCourse(t).Exercises()[0].ID)
	ce := checkResultFor(t, spec, spec.Start).Counterexample
	if ce == nil {
		t.Fatal("the exercise's start passes")
	}
	// What the learner's page links to.
	href := playurl.CounterexampleHref(ce, spec.Start, spec.ID)
	ada, bob, cy := ws.join(t, code, "Ada"), ws.join(t, code, "Bob"), ws.join(t, code, "Cy")
	// Ada and Bob check the start; the server records what it found.
	ws.check(t, ada, spec.ID, spec.Start, false)
	ws.check(t, bob, spec.ID, "\n"+spec.Start+"\n", false)
	// A page can no longer send a check of its own, counterexample or not.
	b, _ := json.Marshal(map[string]any{"kind": "exercise_checked", "exercise": spec.ID, "passed": false, "counterexample": ce.Script, "playground": href})
	if status, body, _ := ws.sendEvent(t, cy, "cy-check-key-1", string(b)); status != http.StatusBadRequest || !strings.Contains(body, `"field":"kind"`) {
		t.Errorf("a browser's check: %d %s, want 400 naming kind", status, body)
	}
	doc := ws.classDoc(t, inst, id)
	group := doc.Find(testID("ws-counterexample"))
	if count := group.Find(testID("ws-counterexample-count")); group.Length() != 1 || count.AttrOr("data-learners", "") != "2" || count.Text() != "2 learners" {
		t.Fatalf("counterexamples: %d groups, %q; want one group of 2 learners", group.Length(), count.Text())
	}
	show := group.Find(testID("ws-show-class")).AttrOr("href", "")
	u, err := url.Parse(show)
	if err != nil || u.Path != "/playground" || u.Query().Get("script") != ce.Script || u.Query().Get("scenario") != ce.Scenario ||
		u.Query().Get("handler") != strings.TrimSpace(spec.Start) || u.Query().Has("at") {
		t.Errorf("show it to the class links %q, want the learner's counterexample %q (without a cursor)", show, href)
	}
	resp := get(t, inst, ws.srv.URL+show)
	pg, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the link answers %d", resp.StatusCode)
	}
	if pg.Find(testID("pg-verdict")+`[data-handler="`+playurl.LearnerHandlerName+`"]`).Length() != 1 || pg.Find(testID("playground")).AttrOr("data-script", "") != ce.Script {
		t.Errorf("the link does not open the counterexample with the learner's handler")
	}
}

func TestWorkshop_ChaosSurvivorsAreCounted(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	ada, bob := ws.join(t, code, "Ada"), ws.join(t, code, "Bob")
	if doc := ws.classDoc(t, inst, id); doc.Find(testID("ws-chaos-survivors")).Length() != 0 {
		t.Error("survivors shown before any chaos push")
	}
	resp := post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/push", url.Values{"key": {"form-key-chaos-1"}, "kind": {"chaos"}, "fault": {"lose-ack"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("chaos push: %d %s", resp.StatusCode, readBody(t, resp))
	}
	pushes, err := ws.store.Events(t.Context(), id, 0, true, 10)
	if err != nil || len(pushes) != 1 || pushes[0].Kind != workshop.KindChaos {
		t.Fatalf("pushes %+v, %v", pushes, err)
	}
	run := func(c *http.Client, key, handler string, survived bool) {
		b, _ := json.Marshal(map[string]any{"kind": "chaos_run", "push": pushes[0].ID, "handler": handler, "survived": survived})
		if status, body, _ := ws.sendEvent(t, c, key, string(b)); status != http.StatusCreated {
			t.Fatalf("chaos_run: %d %s", status, body)
		}
	}
	run(ada, "ada-chaos-key-1", "pg-1.idempotent", true)
	run(ada, "ada-chaos-key-1", "pg-1.idempotent", true) // a retry counts once
	run(bob, "bob-chaos-key-1", "pg-1.idempotent", true)
	run(bob, "bob-chaos-key-2", "pg-2.mine", false)
	got := ws.classDoc(t, inst, id).Find(testID("ws-chaos-survivors"))
	if got.AttrOr("data-survived", "") != "2" || got.AttrOr("data-ran", "") != "3" || !strings.Contains(got.Text(), "2 of 3 handlers survived") {
		t.Errorf("survivors: %s of %s, %q; want 2 of 3", got.AttrOr("data-survived", ""), got.AttrOr("data-ran", ""), strings.TrimSpace(got.Text()))
	}
}

func TestWorkshop_OpenUpToLocksLaterLessonsForTheRoomOnly(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	if len(room.Lessons) != 2 {
		t.Fatalf("room lessons %v", room.Lessons)
	}
	first, second := room.Lessons[0], room.Lessons[1]
	ada, outsider := ws.join(t, code, "Ada"), ws.client(t)
	pace := func(key, mode, n string) {
		resp := post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/push", url.Values{"key": {key}, "kind": {"pace"}, "mode": {mode}, "lesson": {n}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("pace %s %s: %d %s", mode, n, resp.StatusCode, readBody(t, resp))
		}
	}
	locked := func(c *http.Client, path string) bool {
		t.Helper()
		resp := get(t, c, ws.srv.URL+path)
		doc, err := goquery.NewDocumentFromReader(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		isLocked := doc.Find(testID("ws-locked")).Length() == 1
		if isLocked == (doc.Find(testID("lesson-body")).Length() == 1) {
			t.Fatalf("%s: a lock page shows no lesson, a lesson no lock", path)
		}
		if isLocked && resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: a lock page is Cache-Control %q, want no-store", path, resp.Header.Get("Cache-Control"))
		}
		return isLocked
	}
	if locked(ada, playurl.LessonPath(second)) {
		t.Error("locked before any pace push")
	}
	pace("form-key-pace-1", workshop.PaceOpen, "1")
	if !locked(ada, playurl.LessonPath(second)) || !locked(ada, playurl.LessonPath(second)+"?pg=pg-1") {
		t.Error("open up to lesson 1 leaves lesson 2 open to the room")
	}
	if locked(ada, playurl.LessonPath(first)) || locked(outsider, playurl.LessonPath(second)) {
		t.Error("lesson 1, or lesson 2 for someone outside the room, is locked")
	}
	// In an embed the learner's token travels in the URL, and so do the lock page's links.
	var token string
	for _, c := range ada.Jar.Cookies(mustURL(t, ws.srv.URL)) {
		if c.Name == workshopweb.LearnerCookie {
			token = c.Value
		}
	}
	resp := get(t, ws.client(t), ws.srv.URL+"/embed"+playurl.LessonPath(second)+"?ws="+token)
	if body := readBody(t, resp); !strings.Contains(body, `data-testid="ws-locked"`) || !strings.Contains(body, playurl.LessonPath(first)+"?ws="+token) {
		t.Errorf("the embedded lesson is not locked, or its link loses the token")
	}
	pace("form-key-pace-2", workshop.PaceGoto, "2")
	if locked(ada, playurl.LessonPath(second)) {
		t.Error("everyone to lesson 2 leaves it locked")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
