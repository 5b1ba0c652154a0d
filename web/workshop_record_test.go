package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"idemlab/web/exercise"
	"idemlab/web/site"
	"idemlab/workshop"
)

// check runs a check through the server as a learner's page does
// (POST /api/v1/check with their cookie) and wants the verdict passed.
func (ws *workshopSite) check(t *testing.T, c *http.Client, exercise, handler string, passed bool) {
	t.Helper()
	resp := post(t, c, ws.srv.URL+"/api/v1/check", url.Values{"exercise": {exercise}, "handler": {handler}})
	var got struct {
		Passed bool `json:"passed"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || got.Passed != passed {
		t.Fatalf("check of %s: %d passed %v (%v), want passed %v", exercise, resp.StatusCode, got.Passed, err, passed)
	}
}

// progressOf is a learner's record on an exercise, as the service has it.
func (ws *workshopSite) progressOf(t *testing.T, svc *workshop.Service, roomID int64, name, exercise string) *workshop.ExerciseProgress {
	t.Helper()
	class, err := svc.Class(t.Context(), roomID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range class.Joined() {
		if p.Learner.Name == name {
			if x := p.Exercises[exercise]; x != nil {
				return x
			}
			return &workshop.ExerciseProgress{}
		}
	}
	t.Fatalf("no learner %s", name)
	return nil
}

// A forged passed:true never counts; two checks on one page are two; the
// checks come from the server, through the form or the API.
func TestWorkshop_ChecksAreWhatTheServerRan(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	id, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	ex := room.Exercises[0]
	spec := builtinExercise(t, ex)
	ada := ws.join(t, code, "Ada")
	svc := workshop.NewService(ws.store, nil) // reads the same store

	forged := `{"kind":"exercise_checked","exercise":"` + ex + `","passed":true}`
	for _, key := range []string{"forged-key-0001", "forged-key-0001", "forged-key-0002"} {
		if status, body, _ := ws.sendEvent(t, ada, key, forged); status != http.StatusBadRequest {
			t.Errorf("a forged pass: %d %s, want 400", status, body)
		}
	}
	if x := ws.progressOf(t, svc, id, "Ada", ex); x.Attempts != 0 || !x.PassedAt.IsZero() {
		t.Fatalf("after a forged pass: %+v, want nothing counted", x)
	}
	// Two checks of the same failing handler, one after the other on one page.
	ws.check(t, ada, ex, spec.Start, false)
	ws.check(t, ada, ex, spec.Start, false)
	x := ws.progressOf(t, svc, id, "Ada", ex)
	if x.Attempts != 2 || !x.PassedAt.IsZero() || len(x.History) != 2 || x.History[1].Counterexample == "" || x.History[1].Playground == "" {
		t.Fatalf("after two failed checks: %+v, want two attempts with their counterexamples", x)
	}
	// The form without JavaScript counts too.
	resp := post(t, ada, ws.srv.URL+site.ExerciseCheckPath(ex), url.Values{"handler": {spec.Solution}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the check form: %d", resp.StatusCode)
	}
	x = ws.progressOf(t, svc, id, "Ada", ex)
	if x.Attempts != 3 || x.PassedAt.IsZero() || !x.History[2].Passed || x.History[2].Playground == "" {
		t.Errorf("after the form's pass: %+v, want three attempts, passed, with the handler's playground", x)
	}
	// A check outside any room records nothing, and answers all the same.
	ws.check(t, ws.client(t), ex, spec.Solution, true)
	if evs, _ := ws.store.Events(t.Context(), id, 0, false, 100); len(evs) != 4 { // joined + three checks
		t.Errorf("%d events, want 4", len(evs))
	}
}

// A check its deadline stops has no verdict: the answer says so (unfinished,
// with the form's text asking to check again), and the room records no
// attempt, so a busy server never shows a right handler as failing.
func TestWorkshop_AnUnfinishedCheckIsNoAttempt(t *testing.T) {
	saved := exercise.ExerciseCheckTimeout
	exercise.ExerciseCheckTimeout = time.Nanosecond // every check stops before its verdict
	t.Cleanup(func() { exercise.ExerciseCheckTimeout = saved })
	ws := newWorkshopSite(t, nil)
	id, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	ex := room.Exercises[0]
	spec := builtinExercise(t, ex)
	ada := ws.join(t, code, "Ada")
	svc := workshop.NewService(ws.store, nil)

	resp := post(t, ada, ws.srv.URL+"/api/v1/check", url.Values{"exercise": {ex}, "handler": {spec.Solution}})
	var got struct {
		Passed     bool            `json:"passed"`
		Unfinished string          `json:"unfinished"`
		Error      json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || got.Passed || got.Unfinished == "" || got.Error != nil {
		t.Fatalf("a stopped check: %d %+v (%v), want 200, unfinished, no error in the handler", resp.StatusCode, got, err)
	}
	form := post(t, ada, ws.srv.URL+site.ExerciseCheckPath(ex), url.Values{"handler": {spec.Solution}})
	body, _ := io.ReadAll(form.Body)
	if form.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-testid="exercise-unfinished"`) || !strings.Contains(string(body), "press Check again") {
		t.Errorf("the form's stopped check: %d, want the unfinished answer asking to check again", form.StatusCode)
	}
	if x := ws.progressOf(t, svc, id, "Ada", ex); x.Attempts != 0 || !x.PassedAt.IsZero() {
		t.Errorf("after two stopped checks: %+v, want no attempt", x)
	}
}
